"""Where the transcript offers Continue and Retry (DESIGN §8, issue 10).

Claude's latest reply, when it was cut off at its length limit, paused or stopped, offers
Continue (the same reply goes on). A question left without a reply — one that failed
before anything arrived leaves no row — offers Retry, also after a restart. Only while
the conversation is idle; the message widgets show the buttons, this decides where.
"""

from __future__ import annotations

from PySide6.QtCore import QObject
from shiboken6 import isValid

from app.chat.events import Activity
from app.chat.stop_reasons import CONTINUABLE_STATUSES
from app.core.models import MessageStatus, Role
from app.ui.controller import ChatController
from app.ui.transcript import TranscriptView
from app.ui.transcript_message import MessageWidget

CONTINUE_ACTION = "Continue"
RETRY_ACTION = "Retry"
NO_REPLY_NOTE = "No reply yet"


class ReplyActions(QObject):
    """Offers Continue or Retry on the newest message, moving the offer as it changes."""

    def __init__(
        self, transcript: TranscriptView, controller: ChatController, parent: QObject
    ) -> None:
        super().__init__(parent)
        self._transcript = transcript
        self._controller = controller
        self._offered: MessageWidget | None = None
        for signal in (
            controller.conversation_opened,
            controller.message_added,
            controller.message_updated,
            controller.message_removed,
            controller.activity_changed,
        ):
            signal.connect(self.refresh)

    def refresh(self, *_changed: object) -> None:
        """Put the offer where it belongs now (after the transcript took the change)."""
        widgets = self._transcript.message_widgets()
        newest = widgets[-1] if widgets else None
        action, note = "", ""
        if newest is not None and self._controller.activity is Activity.IDLE:
            message = newest.message
            if message.role is Role.ASSISTANT and message.status in CONTINUABLE_STATUSES:
                action = CONTINUE_ACTION
            elif message.role is Role.USER and message.status is not MessageStatus.DECLINED:
                action, note = RETRY_ACTION, NO_REPLY_NOTE
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

    def _clicked(self) -> None:
        widget = self._offered
        if widget is None or self._controller.activity is not Activity.IDLE:
            return
        if widget.message.role is Role.ASSISTANT:
            self._controller.continue_reply(widget.message)
        else:
            self._controller.retry()
