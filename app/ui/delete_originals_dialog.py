"""Deleting archived originals, as the user meets it: a confirmation that says exactly
what goes and what stays, then the service does it (DESIGN §2: an explicit act).

`DeleteOriginalsDialog` is the question; `OriginalsDeletion` wires it to a summary
card's "Delete original messages…" button and to the conversation menu's "Delete
archived originals…" action. The outcome comes back as a notice or an error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMessageBox, QWidget

if TYPE_CHECKING:
    from app.chat.service import ChatService
    from app.ui.controller import ChatController
    from app.ui.transcript import TranscriptView

DELETE_BUTTON = "Delete messages"
CONVERSATION_ACTION = "Delete archived originals…"


def _messages(count: int) -> str:
    return f"{count} original message{'s' if count != 1 else ''}"


class DeleteOriginalsDialog(QMessageBox):
    """Asks before originals are deleted; Cancel is the default, Delete is destructive.

    Attributes:
        delete_button: the destructive answer.
    """

    def __init__(self, count: int, *, whole_conversation: bool, parent: QWidget) -> None:
        super().__init__(parent)
        self.setIcon(QMessageBox.Icon.Warning)
        self.setWindowTitle("Delete original messages?")
        if whole_conversation:
            self.setText(f"Delete the {_messages(count)} archived in this conversation?")
            self.setInformativeText(
                "These are the messages its summaries stand for. The summaries stay, "
                "and so do the newest messages; Claude keeps what the summaries say. "
                "This can't be undone."
            )
        else:
            self.setText(f"Delete the {_messages(count)} of this summary?")
            self.setInformativeText(
                "The summary stays, and Claude keeps what it says. This can't be undone."
            )
        self.delete_button = self.addButton(DELETE_BUTTON, QMessageBox.ButtonRole.DestructiveRole)
        self.delete_button.setAutoDefault(False)
        self.addButton(QMessageBox.StandardButton.Cancel)
        self.setDefaultButton(QMessageBox.StandardButton.Cancel)

    @property
    def confirmed(self) -> bool:
        return self.clickedButton() is self.delete_button


class OriginalsDeletion(QObject):
    """The two ways to delete originals, each asking first.

    Attributes:
        conversation_action: "Delete archived originals…" of the conversation on screen.
        dialog: the question on screen, if any (for tests).
    """

    def __init__(
        self, controller: ChatController, transcript: TranscriptView, window: QWidget
    ) -> None:
        super().__init__(window)
        self._controller = controller
        self._transcript = transcript
        self._window = window
        self.dialog: QMessageBox | None = None
        self.conversation_action = QAction(CONVERSATION_ACTION, window)
        self.conversation_action.triggered.connect(self.ask_for_conversation)

    @property
    def _chat(self) -> ChatService:
        """The chat service, looked up when used: built after the first paint (issue 20)."""
        return self._controller.service

    def ask_for_summary(self, summary_id: str) -> None:
        session = self._chat.current.state.session
        if session is None:
            return
        count = self._chat.backups.count_originals(summary_id)
        self._ask(count, session.id, summary_id)

    def ask_for_conversation(self) -> None:
        session = self._chat.current.state.session
        if session is None:
            self._nothing("This conversation has no archived messages yet.")
            return
        count = self._chat.backups.count_archived(session.id)
        self._ask(count, session.id, None)

    def _ask(self, count: int, session_id: str, summary_id: str | None) -> None:
        if count == 0:
            self._nothing(
                "There are no original messages left to delete here."
                if summary_id is not None
                else "This conversation has no archived messages: nothing has been "
                "summarized, or the originals were already deleted."
            )
            return
        box = DeleteOriginalsDialog(
            count, whole_conversation=summary_id is None, parent=self._window
        )

        def answered() -> None:
            self.dialog = None
            if not box.confirmed:
                return
            if summary_id is not None:
                block = self._transcript.summary_block(summary_id)
                if block is not None:
                    block.forget_originals()
            else:
                for block in self._transcript.summary_blocks():
                    block.forget_originals()
            self._chat.backups.delete_originals(session_id, summary_id)

        box.finished.connect(answered)
        self.dialog = box
        box.open()

    def _nothing(self, text: str) -> None:
        box = QMessageBox(
            QMessageBox.Icon.Information, "Nothing to delete", text, parent=self._window
        )
        box.addButton(QMessageBox.StandardButton.Ok)
        box.finished.connect(lambda _result: setattr(self, "dialog", None))
        self.dialog = box
        box.open()
