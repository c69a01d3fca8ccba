"""A quiet strip above the composer for errors (with Retry) and notices."""

from __future__ import annotations

from enum import Enum

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QToolButton, QWidget


class BannerKind(Enum):
    ERROR = "error"
    INFO = "info"


class Banner(QFrame):
    """Shows one message in plain words with up to two actions.

    Signals:
        retry_requested: the Retry button was pressed.
        action_requested(str): the extra action (its name) was pressed.
        dismissed: the close button was pressed.
    """

    retry_requested = Signal()
    action_requested = Signal(str)
    dismissed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("banner")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAccessibleName("Notice")
        self.title_label = QLabel(self)
        self.title_label.setObjectName("bannerTitle")
        font = self.title_label.font()
        font.setBold(True)
        self.title_label.setFont(font)
        self.text_label = QLabel(self)
        self.text_label.setWordWrap(True)
        self.text_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.retry_button = QPushButton("Retry", self)
        self.retry_button.setAccessibleName("Retry")
        self.action_button = QPushButton(self)
        self.close_button = QToolButton(self)
        self.close_button.setText("✕")
        self.close_button.setAccessibleName("Dismiss notice")
        self.close_button.setToolTip("Dismiss")
        self.close_button.setAutoRaise(True)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(12, 8, 8, 8)
        layout.setSpacing(10)
        layout.addWidget(self.title_label, 0, Qt.AlignmentFlag.AlignTop)
        layout.addWidget(self.text_label, 1)
        layout.addWidget(self.action_button, 0, Qt.AlignmentFlag.AlignVCenter)
        layout.addWidget(self.retry_button, 0, Qt.AlignmentFlag.AlignVCenter)
        layout.addWidget(self.close_button, 0, Qt.AlignmentFlag.AlignTop)
        self._action = ""
        self.kind = BannerKind.INFO
        self.retry_button.clicked.connect(self.retry_requested)
        self.action_button.clicked.connect(lambda: self.action_requested.emit(self._action))
        self.close_button.clicked.connect(self._dismiss)
        self.hide()

    def show_message(
        self,
        kind: BannerKind,
        title: str,
        text: str,
        *,
        retry: bool = False,
        action: str | None = None,
    ) -> None:
        """Show `text`; the kind is told by the title's words too, never by colour alone."""
        self.kind = kind
        self.title_label.setText(title)
        self.text_label.setText(text)
        self.retry_button.setVisible(retry)
        self._action = action or ""
        self.action_button.setVisible(bool(action))
        self.action_button.setText(action or "")
        self._apply_colours()
        self.setAccessibleDescription(f"{title}. {text}")
        self.show()

    def _apply_colours(self) -> None:
        palette = self.palette()
        base = palette.color(QPalette.ColorRole.Window)
        accent = QColor("#c0392b") if self.kind is BannerKind.ERROR else QColor("#2e7dbd")
        tint = QColor(accent)
        # Mix a little of the accent into the window colour: readable on light and dark.
        mix = 0.14
        background = QColor(
            round(base.red() * (1 - mix) + tint.red() * mix),
            round(base.green() * (1 - mix) + tint.green() * mix),
            round(base.blue() * (1 - mix) + tint.blue() * mix),
        )
        self.setStyleSheet(
            f"QFrame#banner {{ background: {background.name()}; "
            f"border: 1px solid {accent.name()}; border-radius: 6px; }}"
        )

    def _dismiss(self) -> None:
        self.hide()
        self.dismissed.emit()
