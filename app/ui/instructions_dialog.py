"""The dialog that asks "How should Claude respond in this conversation?"."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QWidget,
)

from app.core.settings import MAX_INSTRUCTIONS_CHARS
from app.ui.forms import dialog_layout, hint

QUESTION = "How should Claude respond in this conversation?"
NEW_CONVERSATIONS_QUESTION = "How should Claude respond in new conversations?"
EXAMPLE = "For example: “Answer in French, briefly, and explain any technical word.”"
WHAT_HAPPENS = (
    "Claude reads these before every message of this conversation. They are never "
    "summarized, and they take a little of the room Claude can read at once. "
    "Leave empty for none."
)


class InstructionsDialog(QDialog):
    """Edits one conversation's instructions; `text()` holds them once accepted.

    Attributes:
        question: the question asked; limit: what is wrong with the length, if anything.
        editor: where the instructions are written.
        buttons: Save and Cancel.
    """

    def __init__(self, text: str, *, new_conversation: bool, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("instructionsDialog")
        self.setWindowTitle("Instructions for Claude")
        self.setMinimumWidth(460)
        self.question = question = QLabel(f"<b>{QUESTION}</b>", self)
        question.setWordWrap(True)
        self.editor = QPlainTextEdit(self)
        self.editor.setAccessibleName("Instructions for Claude")
        self.editor.setPlaceholderText(EXAMPLE)
        self.editor.setPlainText(text)
        self.editor.setTabChangesFocus(True)
        self.editor.setMinimumHeight(self.editor.fontMetrics().lineSpacing() * 7)
        note = hint(WHAT_HAPPENS, self)
        self.limit = QLabel(self)
        self.limit.setWordWrap(True)
        self.limit.hide()
        if new_conversation:
            note.setText(
                f"{WHAT_HAPPENS} This new conversation starts with your default from Settings."
            )
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = dialog_layout(self)
        layout.addWidget(question)
        layout.addWidget(self.editor, 1)
        layout.addWidget(note)
        layout.addWidget(self.limit)
        layout.addWidget(self.buttons)
        self.editor.textChanged.connect(self._check_length)
        self.editor.setFocus()

    def text(self) -> str:
        return self.editor.toPlainText().strip()

    def _check_length(self) -> None:
        """Past the limit, Save is off and the words say why (nothing is cut silently)."""
        over = len(self.editor.toPlainText()) - MAX_INSTRUCTIONS_CHARS
        save = self.buttons.button(QDialogButtonBox.StandardButton.Save)
        save.setEnabled(over <= 0)
        self.limit.setVisible(over > 0)
        if over > 0:
            self.limit.setText(
                f"⚠ These instructions are {over:,} characters too long "
                f"(at most {MAX_INSTRUCTIONS_CHARS:,}). Shorten them to save."
            )
