"""The strip above the composer while a summary is made: its stage, and Cancel."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QProgressBar, QPushButton, QWidget


class SummaryProgress(QFrame):
    """ "Asking Claude for a summary…" with a busy bar and a Cancel button.

    Signals:
        cancel_requested: Cancel was pressed.
    """

    cancel_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("summaryProgress")
        self.setAccessibleName("Summary in progress")
        self.label = QLabel(self)
        self.bar = QProgressBar(self)
        self.bar.setRange(0, 0)  # busy: the stages have no reliable share of the time
        self.bar.setTextVisible(False)
        self.bar.setMaximumWidth(120)
        self.bar.setMaximumHeight(8)
        self.bar.setAccessibleName("Summary in progress")
        self.cancel_button = QPushButton("Cancel", self)
        self.cancel_button.setAccessibleName("Cancel the summary")
        self.cancel_button.setToolTip("Stop making this summary; nothing changes")
        self.cancel_button.clicked.connect(self.cancel_requested)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 2)
        layout.setSpacing(10)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.bar)
        layout.addWidget(self.cancel_button)
        self.hide()

    def show_stage(self, text: str | None) -> None:
        """Show what the summary does now; None hides the strip."""
        if text is None:
            self.hide()
            return
        self.label.setText(text if text.endswith("…") else f"{text}…")
        from app.chat.summaries import CANCELLING  # a summary runs: the module is loaded

        self.cancel_button.setEnabled(text != CANCELLING)
        self.show()
