"""A quiet rounded button that sits in the transcript ("Show earlier messages",
"Jump to latest"), drawn with the palette's colours."""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QFontMetrics, QPainter, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import QPushButton, QWidget

from app.ui.theme import blend, code_background, code_border


class PillButton(QPushButton):
    """A quiet rounded button that sits in the transcript (drawn with palette colours)."""

    def __init__(self, text: str, parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.setAttribute(Qt.WidgetAttribute.WA_Hover)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)

    def sizeHint(self) -> QSize:
        metrics = QFontMetrics(self.font())
        return QSize(metrics.horizontalAdvance(self.text()) + 36, metrics.height() + 14)

    def paintEvent(self, event: QPaintEvent) -> None:
        palette = self.palette()
        hovered = self.underMouse() or self.isDown()
        background = code_background(palette)
        if hovered:
            background = blend(background, palette.color(QPalette.ColorRole.Text), 0.06)
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        frame = QRectF(self.rect()).adjusted(1, 1, -1, -1)
        if self.hasFocus():
            pen = QPen(palette.color(QPalette.ColorRole.Highlight))
            pen.setWidthF(2.0)
        else:
            pen = QPen(code_border(palette))
        painter.setPen(pen)
        painter.setBrush(background)
        radius = frame.height() / 2
        painter.drawRoundedRect(frame, radius, radius)
        painter.setPen(palette.color(QPalette.ColorRole.Text))
        painter.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, self.text())
        painter.end()
