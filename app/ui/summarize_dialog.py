""" "Summarize with instructions…": what to keep above all, and how many of the newest
messages stay as they are."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QWidget,
)

from app.core.summarization_config import MAX_MESSAGE_SETTING, MIN_PRESERVE_RECENT
from app.ui.forms import dialog_layout

FOCUS_HINT = "For example: keep every price"


class SummarizeDialog(QDialog):
    """Asks for a focus text and, optionally, how many recent messages to keep.

    Attributes:
        instructions: the focus text once accepted (None when left empty).
        keep_recent: the number of newest messages to keep once accepted (None: the setting).
    """

    def __init__(self, preserve_recent: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Summarize with instructions")
        self.setMinimumWidth(420)
        self.instructions: str | None = None
        self.keep_recent: int | None = None

        intro = QLabel(
            "Cairn summarizes the older messages of this conversation. "
            "Nothing is deleted: the originals stay on this computer.",
            self,
        )
        intro.setWordWrap(True)
        self.focus_edit = QLineEdit(self)
        self.focus_edit.setPlaceholderText(FOCUS_HINT)
        self.focus_edit.setAccessibleName("What the summary should keep")
        self.focus_edit.setMaxLength(500)
        self.keep_check = QCheckBox("Keep the last", self)
        self.keep_spin = QSpinBox(self)
        self.keep_spin.setRange(MIN_PRESERVE_RECENT, MAX_MESSAGE_SETTING)
        self.keep_spin.setValue(preserve_recent)
        self.keep_spin.setAccessibleName("Number of recent messages to keep as they are")
        self.keep_spin.setEnabled(False)
        self.keep_check.toggled.connect(self.keep_spin.setEnabled)
        keep_row = QHBoxLayout()
        keep_row.addWidget(self.keep_check)
        keep_row.addWidget(self.keep_spin)
        keep_row.addWidget(QLabel("messages as they are", self))
        keep_row.addStretch(1)
        form = QFormLayout()
        form.addRow("What matters most to keep:", self.focus_edit)

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel, self)
        self.summarize_button = buttons.addButton(
            "Summarize", QDialogButtonBox.ButtonRole.AcceptRole
        )
        self.summarize_button.setDefault(True)
        buttons.accepted.connect(self._accept)
        buttons.rejected.connect(self.reject)

        layout = dialog_layout(self)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addLayout(keep_row)
        layout.addWidget(buttons)
        self.focus_edit.setFocus()

    def _accept(self) -> None:
        self.instructions = self.focus_edit.text().strip() or None
        self.keep_recent = self.keep_spin.value() if self.keep_check.isChecked() else None
        self.accept()
