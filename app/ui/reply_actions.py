"""Where the transcript offers Continue and Retry (DESIGN §8, issue 10).

Claude's latest reply, when it was cut off at its length limit, paused or stopped, offers
Continue (the same reply goes on); when Claude declined it, "Ask another model" (the
next listed model, named, with the API's explanation when there is one). A question
left without a reply — one that failed before anything arrived leaves no row — offers
Retry, also after a restart. Only while
the conversation is idle; the message widgets show the buttons, this decides where.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal
from shiboken6 import isValid

from app.chat.events import Activity
from app.chat.stop_reasons import CONTINUABLE_STATUSES
from app.core.message_kinds import MessageStatus, Role

if TYPE_CHECKING:
    from app.chat.service import ChatService
    from app.ui.controller import ChatController
    from app.ui.transcript import TranscriptView
    from app.ui.transcript_message import MessageWidget

CONTINUE_ACTION = "Continue"
RETRY_ACTION = "Retry"
NO_REPLY_NOTE = "No reply yet"
ANOTHER_MODEL_ACTION = "Ask another model"


def declined_note(explanation: str | None, model_name: str) -> str:
    """What a declined reply says beside "Ask another model": the API's explanation when
    it gave one, and that another model usually answers ("retry on a fallback model":
    https://platform.claude.com/docs/build-with-claude/handling-stop-reasons)."""
    why = f"{explanation.strip()} " if explanation and explanation.strip() else ""
    return f"{why}Another model often answers: this asks {model_name} the same question."


class ReplyActions(QObject):
    """Offers Continue or Retry on the newest message, moving the offer as it changes.

    Attributes:
        offered: the action offered now ("" when none).

    Signals:
        offer_changed(str): the action offered changed (the window's banner then drops
            its own Retry: one Retry per failure).
    """

    offer_changed = Signal(str)

    def __init__(
        self, transcript: TranscriptView, controller: ChatController, parent: QObject
    ) -> None:
        super().__init__(parent)
        self._transcript = transcript
        self._controller = controller
        self._offered: MessageWidget | None = None
        self.offered = ""
        for signal in (
            controller.reply_declined,
            controller.conversation_opened,
            controller.message_added,
            controller.message_updated,
            controller.message_removed,
            controller.activity_changed,
        ):
            signal.connect(self.refresh)

    @property
    def _chat(self) -> ChatService:
        """The chat service, looked up when used: built after the first paint (issue 20)."""
        return self._controller.service

    def refresh(self, *_changed: object) -> None:
        """Put the offer where it belongs now (after the transcript took the change)."""
        widgets = self._transcript.message_widgets()
        newest = widgets[-1] if widgets else None
        action, note = "", ""
        if newest is not None and self._chat.current.state.activity is Activity.IDLE:
            message = newest.message
            if message.role is Role.ASSISTANT and message.status in CONTINUABLE_STATUSES:
                action = CONTINUE_ACTION
            elif message.role is Role.USER and message.status is not MessageStatus.DECLINED:
                action, note = RETRY_ACTION, NO_REPLY_NOTE
            elif message.status is MessageStatus.DECLINED and message.role is Role.ASSISTANT:
                model = self._chat.current.versions.another_model(message)
                if model is not None:
                    action = ANOTHER_MODEL_ACTION  # the explanation is kept with the reply
                    note = declined_note(message.refusal, model.display_name)
        target = newest if action else None
        old = self._offered
        if old is not None and old is not target and isValid(old):
            old.offer("")
            old.action_requested.disconnect(self._clicked)
        if target is not None:
            if target is not old:
                target.action_requested.connect(self._clicked)
            target.offer(action, note)
        self._offered = target
        if action != self.offered:
            self.offered = action
            self.offer_changed.emit(action)

    def _clicked(self) -> None:
        widget = self._offered
        if widget is None or self._chat.current.state.activity is not Activity.IDLE:
            return
        if widget.message.status is MessageStatus.DECLINED:
            self._chat.current.versions.ask_another_model(widget.message)
        elif widget.message.role is Role.ASSISTANT:
            self._chat.current.endings.continue_reply(widget.message)
        else:
            self._chat.current.turns.retry()
