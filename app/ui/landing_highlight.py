"""The mark on a message a jump lands on (a summary's source, a History hit, a lookup's
excerpt, a find step): a calm tint of the Highlight colour with an outline, held a
moment, then faded away, so the eye finds the message without anything blinking."""

from __future__ import annotations

from typing import Final

from PySide6.QtCore import QEasingCurve, QRect, QRectF, Qt, QVariantAnimation
from PySide6.QtGui import QColor, QPainter, QPainterPath, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import QWidget

from app.ui.theme import blend

HOLD_MS: Final = 1200  # fully shown: long enough to find it after the scroll
FADE_MS: Final = 1000  # then it goes gently
# How much of the Highlight colour tints what is under it: text keeps >= 4.5:1 on it
# in both themes (tests/ui/test_message_jump.py).
TINT: Final = 0.22
_RADIUS: Final = 8.0
_OUTLINE: Final = 2.0


def tint_over(background: QColor, palette: QPalette, strength: float = 1.0) -> QColor:
    """What `background` looks like under the highlight at `strength` (1 = fully shown)."""
    return blend(background, palette.color(QPalette.ColorRole.Highlight), TINT * strength)


class LandingHighlight(QWidget):
    """A tint and outline over part of `target` (all of it by default), fading out after
    `HOLD_MS`; it deletes itself when gone and never takes the mouse or the focus.

    Attributes:
        strength: how strongly it shows now, 1.0 down to 0.0.
    """

    def __init__(self, target: QWidget, area: QRect | None = None) -> None:
        super().__init__(target)
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setObjectName("landingHighlight")
        self.setGeometry(area if area is not None else target.rect())
        self.strength = 1.0
        self._fade = QVariantAnimation(self)
        self._fade.setDuration(HOLD_MS + FADE_MS)
        self._fade.setStartValue(1.0)
        self._fade.setKeyValueAt(HOLD_MS / (HOLD_MS + FADE_MS), 1.0)
        self._fade.setEndValue(0.0)
        self._fade.setEasingCurve(QEasingCurve.Type.Linear)
        self._fade.valueChanged.connect(self.set_strength)
        self._fade.finished.connect(self.deleteLater)
        self.show()
        self.raise_()
        self._fade.start()

    def set_strength(self, strength: object) -> None:
        self.strength = float(strength) if isinstance(strength, (int, float)) else 0.0
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        if self.strength <= 0:
            return
        highlight = self.palette().color(QPalette.ColorRole.Highlight)
        tint = QColor(highlight)
        tint.setAlphaF(TINT * self.strength)
        outline = QColor(highlight)
        outline.setAlphaF(self.strength)
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        shape = QPainterPath()
        inset = _OUTLINE / 2
        shape.addRoundedRect(
            QRectF(self.rect()).adjusted(inset, inset, -inset, -inset), _RADIUS, _RADIUS
        )
        painter.fillPath(shape, tint)
        painter.setPen(QPen(outline, _OUTLINE))
        painter.drawPath(shape)
        painter.end()
