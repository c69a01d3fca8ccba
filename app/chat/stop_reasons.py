"""What each `stop_reason` of the Messages API means for a reply's row.

The values are the SDK's `anthropic.types.StopReason`; what each asks of a client is
https://platform.claude.com/docs/en/build-with-claude/handling-stop-reasons:

- `end_turn`, `stop_sequence`: the reply is complete.
- `max_tokens`: cut off at the length asked for; it can be continued (Continue).
- `model_context_window_exceeded`: cut off because the context window filled; Cairn
  condenses earlier messages and continues it once (`ReplyEndings` does).
- `pause_turn`: the API paused a long turn; "send the assistant content back to
  continue": Cairn does so by itself, at most `MAX_PAUSE_CONTINUATIONS` times, as
  Claude's turn followed by `CONTINUE_PROMPT` (never a prefill).
- `refusal`: Claude declined; the exchange is kept but no longer sent.
- `tool_use`: the archive tool's loop (app/chat/reply.py) answers it; seen here, the
  reply is complete as far as its text goes.
"""

from __future__ import annotations

import logging
from enum import StrEnum

from app.core.message_kinds import MessageStatus

log = logging.getLogger(__name__)


class StopReason(StrEnum):
    END_TURN = "end_turn"
    MAX_TOKENS = "max_tokens"
    STOP_SEQUENCE = "stop_sequence"
    TOOL_USE = "tool_use"
    PAUSE_TURN = "pause_turn"
    REFUSAL = "refusal"
    MODEL_CONTEXT_WINDOW_EXCEEDED = "model_context_window_exceeded"


# A paused turn is continued by itself at most this often; then the user decides.
MAX_PAUSE_CONTINUATIONS = 3

# The last user turn of a request that continues a reply cut off, stopped or paused.
# Not a prefill (the request ending with the partial reply): models from Claude 4.6 on
# refuse a prefilled last assistant turn with a 400
# (https://platform.claude.com/docs/en/about-claude/models/whats-new-claude-4-6#prefill-removal),
# so the partial reply is sent as Claude's turn and this asks it to go on. Sent only,
# never stored.
CONTINUE_PROMPT = (
    "Your previous reply was cut off. Continue it exactly where it stopped, "
    "without repeating anything or commenting on the interruption."
)

_STATUS = {
    StopReason.END_TURN: MessageStatus.COMPLETE,
    StopReason.STOP_SEQUENCE: MessageStatus.COMPLETE,
    StopReason.TOOL_USE: MessageStatus.COMPLETE,
    StopReason.MAX_TOKENS: MessageStatus.CUT_OFF,
    StopReason.MODEL_CONTEXT_WINDOW_EXCEEDED: MessageStatus.CUT_OFF,
    StopReason.PAUSE_TURN: MessageStatus.PAUSED,
    StopReason.REFUSAL: MessageStatus.DECLINED,
}

# What the user can do with a reply in this state: go on writing it.
CONTINUABLE_STATUSES = frozenset(
    {MessageStatus.CUT_OFF, MessageStatus.PAUSED, MessageStatus.STOPPED}
)


def status_of(stop_reason: str | None, *, cancelled: bool = False) -> MessageStatus:
    """The status a reply is saved with, from how the API said it ended."""
    if cancelled:
        return MessageStatus.STOPPED
    try:
        return _STATUS[StopReason(stop_reason or "")]
    except ValueError:
        # None (a server that leaves it out) or a value newer than this code: the
        # text that arrived is all there is, so it is kept as the reply.
        log.warning("Unknown stop reason %r; the reply is kept as complete", stop_reason)
        return MessageStatus.COMPLETE


def fills_the_window(stop_reason: str | None) -> bool:
    """The reply stopped because the context window was full (condense, then go on)."""
    return stop_reason == StopReason.MODEL_CONTEXT_WINDOW_EXCEEDED
