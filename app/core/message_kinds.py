"""Who wrote a message and where it stands: the enums the window needs to paint.

Apart from the pydantic records (app.core.models, which re-exports them) so that the
window's first paint does not import pydantic (issue 20).
"""

from __future__ import annotations

from enum import StrEnum


class Role(StrEnum):
    USER = "user"
    ASSISTANT = "assistant"


class MessageStatus(StrEnum):
    COMPLETE = "complete"
    STREAMING = "streaming"
    STOPPED = "stopped"  # the user pressed Stop; the partial text is kept
    ERROR = "error"  # the reply failed; whatever arrived is kept
    # How the API said a reply ended (app.chat.stop_reasons), other than complete:
    CUT_OFF = "cut_off"  # it reached its length limit (max_tokens); Continue goes on
    PAUSED = "paused"  # the API paused the turn (pause_turn) more often than Cairn goes on
    # Claude declined (refusal): the reply, and the question it answered, stay on screen
    # and in the archive but are no longer sent to Claude.
    DECLINED = "declined"
