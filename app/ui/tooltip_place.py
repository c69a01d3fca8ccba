"""Tooltips kept within the screen's available area.

Qt places a tooltip inside its screen's whole geometry, which includes the
panels and docks a desktop keeps for itself, and measures a rich-text tip before
it has wrapped: a wide tooltip near the edge (the gauge's breakdown) can end
partly off screen or under a panel. After Qt shows it, it is moved inside the
screen's available geometry.
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QToolTip, QWidget

# Qt's own name for its tooltip window (QTipLabel).
TOOLTIP_OBJECT_NAME = "qtooltip_label"


def within(rect: QRect, area: QRect) -> QRect:
    """`rect` moved (not resized) the least so that it lies inside `area`; if it is
    larger than `area`, its top-left corner is kept inside."""
    x = min(max(rect.left(), area.left()), area.left() + max(0, area.width() - rect.width()))
    y = min(max(rect.top(), area.top()), area.top() + max(0, area.height() - rect.height()))
    return QRect(QPoint(x, y), rect.size())


def shown_tooltip() -> QWidget | None:
    """Qt's tooltip window, if one is showing."""
    for widget in QApplication.topLevelWidgets():
        if widget.objectName() == TOOLTIP_OBJECT_NAME and widget.isVisible():
            return widget
    return None


def show_tooltip_on_screen(anchor: QPoint, text: str, widget: QWidget) -> None:
    """`QToolTip.showText`, then the tip moved inside the anchor screen's available area."""
    QToolTip.showText(anchor, text, widget)
    tip = shown_tooltip()
    if tip is None:
        return
    screen = QGuiApplication.screenAt(anchor) or widget.screen()
    placed = within(tip.frameGeometry(), screen.availableGeometry())
    if placed.topLeft() != tip.frameGeometry().topLeft():
        tip.move(placed.topLeft())
