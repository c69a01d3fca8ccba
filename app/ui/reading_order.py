"""Tab follows reading order (issue 23): the conversations, the header left to right, the
transcript top to bottom, the notes above the message box, then the message box.

Qt's own Tab order is the order widgets were made in: the header's buttons joined it
after the gauge (so Tab ran right to left), and each message built later went after
the message box. Rather than re-chain every widget each time one is made, the window
asks `ReadingOrder` where Tab goes, once per key press, over what is on screen.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication, QWidget


@dataclass(frozen=True)
class Pane:
    """A part of the window, in reading order; `row`: its controls stand in one row
    (read left to right), else top to bottom, then left to right."""

    widget: QWidget
    row: bool = False


class ReadingOrder:
    """Where Tab and Shift+Tab go among the focusable controls of `window`'s panes."""

    def __init__(self, window: QWidget, panes: Sequence[Pane]) -> None:
        self._window = window
        self._panes = tuple(panes)

    def stops(self) -> list[QWidget]:
        """Every control Tab reaches now, in reading order."""
        keyed: list[tuple[int, int, int, int, QWidget]] = []
        window = self._window
        widget = window.nextInFocusChain()
        chain_index = 0
        while widget is not None and widget is not window:
            chain_index += 1
            pane = self._pane_of(widget) if _tab_stop(widget, window) else None
            if pane is not None:
                index, found = pane
                corner = widget.mapTo(window, QPoint(0, 0))
                if found.row:
                    keyed.append((index, corner.x(), 0, chain_index, widget))
                else:
                    keyed.append((index, corner.y(), corner.x(), chain_index, widget))
            widget = widget.nextInFocusChain()
        keyed.sort(key=lambda entry: entry[:4])
        return [entry[4] for entry in keyed]

    def next_stop(self, forward: bool) -> QWidget | None:
        """The control after (or before) the focused one; None when the focus is not
        on one of the panes' controls (Qt's own order then decides)."""
        stops = self.stops()
        current = QApplication.focusWidget()
        if current is None or not stops:
            return None
        while current is not None and current not in stops:
            # A control's inner part (a combo box's line edit) counts as the control.
            current = current.parentWidget() if current is not self._window else None
        if current is None:
            return None
        index = stops.index(current) + (1 if forward else -1)
        return stops[index % len(stops)]

    def _pane_of(self, widget: QWidget) -> tuple[int, Pane] | None:
        for index, pane in enumerate(self._panes):
            if pane.widget is widget or pane.widget.isAncestorOf(widget):
                return index, pane
        return None


def _tab_stop(widget: QWidget, window: QWidget) -> bool:
    return (
        bool(widget.focusPolicy() & Qt.FocusPolicy.TabFocus)
        and widget.isVisibleTo(window)
        and widget.isEnabled()
        and widget.focusProxy() is None
        and widget.window() is window
    )
