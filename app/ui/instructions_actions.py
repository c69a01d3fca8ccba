"""Where a conversation's instructions for Claude are reached: a button beside the
title, and Conversation → Instructions for Claude… (Ctrl+I)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDialog, QToolButton, QWidget

if TYPE_CHECKING:
    from app.chat.service import ChatService
    from app.core.models import Session
    from app.ui.controller import ChatController
    from app.ui.instructions_dialog import InstructionsDialog
    from app.ui.window_header import WindowHeader

ACTION_TEXT = "Instructions for Claude…"
# Words, not only a mark, say whether there are any (DESIGN §8: no colour-only signals).
BUTTON_NONE = "Instructions"
BUTTON_SET = "Instructions ✓"
# In a header narrower than this the button is a symbol (its name in the tooltip), so
# that the title and the gauge keep their room.
NARROW_BELOW = 820
SYMBOL_NONE = "✎"
SYMBOL_SET = "✎✓"
_TIP_PREVIEW_CHARS = 300


class InstructionsActions(QObject):
    """The instructions of the conversation on screen, as the window shows them.

    The text shown comes from the events: the session a conversation opened with or
    changed to, and for a new conversation the service's answer when it opens.

    Attributes:
        action: the menu action (Conversation → Instructions for Claude…).
        button: the header's button, right after the title.
        dialog: the one open now.
    """

    def __init__(self, controller: ChatController, header: WindowHeader, window: QWidget) -> None:
        super().__init__(window)
        self._controller = controller
        self._header = header
        self._narrow = False
        self._window = window
        self._text = ""
        self.dialog: InstructionsDialog | None = None
        self.action = QAction(ACTION_TEXT, window)
        self.action.setShortcut(QKeySequence("Ctrl+I"))
        self.action.triggered.connect(self.edit)
        self.button = QToolButton(header)
        self.button.setObjectName("instructionsButton")
        self.button.setAutoRaise(True)
        self.button.setAccessibleName("Instructions for Claude")
        self.button.clicked.connect(self.edit)
        header.add_after_title(self.button)
        header.installEventFilter(self)
        controller.conversation_opened.connect(self._opened)
        controller.session_changed.connect(self._session_changed)
        if controller.built:
            self._show(self._chat.current.instructions.text())
        else:  # a new conversation's, until the service opens one (after the first paint)
            self._show(controller.paint_settings.new_conversation_instructions())

    @property
    def _chat(self) -> ChatService:
        """The chat service, looked up when used: built after the first paint (issue 20)."""
        return self._controller.service

    def edit(self) -> None:
        """Open the dialog on the conversation's instructions (one at a time)."""
        if self.dialog is not None:
            self.dialog.raise_()
            return
        from app.ui.instructions_dialog import InstructionsDialog  # opened: first used

        dialog = InstructionsDialog(
            self._text,
            new_conversation=self._chat.current.state.session is None,
            parent=self._window,
        )
        dialog.finished.connect(lambda result: self._done(dialog, result))
        self.dialog = dialog
        dialog.open()

    def text(self) -> str:
        return self._text

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._header and event.type() == QEvent.Type.Resize:
            narrow = self._header.width() < NARROW_BELOW
            if narrow != self._narrow:
                self._narrow = narrow
                self._show(self._text)
        return super().eventFilter(watched, event)

    def _done(self, dialog: InstructionsDialog, result: int) -> None:
        self.dialog = None
        if result == QDialog.DialogCode.Accepted and self._chat.current.instructions.set(
            dialog.text()
        ):
            self._show(dialog.text())
        dialog.deleteLater()

    def _opened(self, session: Session | None, _page: object, _has_earlier: bool) -> None:
        # A new conversation's come from Settings (the service decides): asked once here.
        self._show(
            session.system_prompt if session is not None else self._chat.current.instructions.text()
        )

    def _session_changed(self, session: Session) -> None:
        current = self._chat.current.state.session
        # Told at every message sent and reply ended: shown again only when they changed.
        if current is not None and session.id == current.id and session.system_prompt != self._text:
            self._show(session.system_prompt)

    def _show(self, text: str) -> None:
        self._text = text
        if self._narrow:
            self.button.setText(SYMBOL_SET if text else SYMBOL_NONE)
        else:
            self.button.setText(BUTTON_SET if text else BUTTON_NONE)
        if text:
            preview = text if len(text) <= _TIP_PREVIEW_CHARS else text[:_TIP_PREVIEW_CHARS] + "…"
            tip = f"How Claude should respond here:\n\n{preview}\n\n(Ctrl+I to change)"
        else:
            tip = "No instructions: Claude answers as it usually does. Ctrl+I to add some."
        self.button.setToolTip(tip)
