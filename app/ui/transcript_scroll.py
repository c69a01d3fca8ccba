"""Where the transcript is scrolled to, kept as its content changes.

Two rules: if the user is at the bottom, stay there as text arrives; otherwise
keep the message they are reading exactly where it is on screen — when older
messages are added above it, and when the window is resized.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Final

from PySide6.QtCore import QEvent, QObject, QPoint
from PySide6.QtWidgets import QLayout, QWidget

from app.ui.transcript_frame import TranscriptScrollArea, layout_paused, settle_layout

# Within this many pixels of the end counts as "at the bottom".
_BOTTOM_SLACK: Final = 8


class ScrollKeeper(QObject):
    """Keeps the transcript's scroll position: following the bottom, or an anchor.

    The anchor is a widget and its offset from the top of the view, noted
    (`capture`) before the content above it changes and put back (`restore`)
    after; while set, the widget is watched and the view moves with it.

    Attributes:
        follow_bottom: the view stays at the bottom as the content grows.
    """

    def __init__(
        self,
        scroll: TranscriptScrollArea,
        content: QWidget,
        widgets: Callable[[], Iterable[QWidget]],
        reached_top: Callable[[], None],
        view: QWidget,
    ) -> None:
        """`widgets` gives the anchor candidates, top to bottom; `reached_top` is
        called when the user scrolls to the very top; `view` is the transcript."""
        super().__init__(view)
        self._view = view
        self._scroll = scroll
        self._content = content
        self._widgets = widgets
        self._reached_top = reached_top
        self.follow_bottom = True
        self._anchor: tuple[QWidget, int] | None = None
        self._adjusting = False
        bar = scroll.verticalScrollBar()
        bar.rangeChanged.connect(self._on_range_changed)
        bar.valueChanged.connect(self._on_value_changed)
        # Before the area reflows for a new size, note what is on screen: its signal,
        # not an event filter on it (a call into Python for each of its events; issue 20).
        scroll.resizing.connect(self.capture)

    @property
    def anchored(self) -> bool:
        """True while a widget is held in place."""
        return self._anchor is not None

    def scroll_to_bottom(self) -> None:
        """Jump to the end and keep following it."""
        self.follow_bottom = True
        self._set_anchor(None)
        self._set_scroll(self._scroll.verticalScrollBar().maximum())

    def reset(self) -> None:
        """Nothing is held; follow the bottom again."""
        self._set_anchor(None)
        self.follow_bottom = True

    def release(self) -> None:
        """Hold no widget in place."""
        self._set_anchor(None)

    def forget(self, widget: QWidget) -> None:
        """`widget` is going away: stop holding it, if it was held."""
        if self._anchor is not None and self._anchor[0] is widget:
            self._set_anchor(None)

    def hold(self, widget: QWidget) -> None:
        """Keep `widget` where it is on screen now, even if the user was at the bottom."""
        self.follow_bottom = False
        top = self._scroll.verticalScrollBar().value()
        self._set_anchor((widget, self._content_y(widget) - top))

    def capture(self) -> None:
        """Remember which widget is at the top of the view, and where."""
        if self.follow_bottom:
            self._set_anchor(None)
            return
        top = self._scroll.verticalScrollBar().value()
        for widget in self._widgets():
            y = self._content_y(widget)
            if y + widget.height() > top:
                self._set_anchor((widget, y - top))
                return
        self._set_anchor(None)

    def restore(self) -> None:
        """Scroll so that the held widget is where it was when captured."""
        if self._anchor is None:
            return
        widget, offset = self._anchor
        self._set_scroll(self._content_y(widget) - offset)

    @contextmanager
    def keeping_place(self, adding: AbstractContextManager[None]) -> Iterator[None]:
        """Change the column within `adding`, keeping what the user reads (as laid out) still."""
        settle_layout(self._view)
        self.capture()
        with adding:
            yield
        settle_layout(self._view)
        self.restore()

    @contextmanager
    def adding_slice(self, layout: QLayout) -> Iterator[None]:
        """Add a slice of older messages to `layout`, above what is on screen."""
        self.capture()
        with layout_paused(layout):
            yield
        if self.anchored:
            settle_layout(self._view)
            self.restore()

    def _set_scroll(self, value: int) -> None:
        self._adjusting = True
        try:
            self._scroll.verticalScrollBar().setValue(value)
        finally:
            self._adjusting = False

    def _on_range_changed(self, minimum: int, maximum: int) -> None:
        if self.follow_bottom:
            self._set_scroll(maximum)
        else:
            self.restore()

    def _on_value_changed(self, value: int) -> None:
        if self._adjusting:
            return
        bar = self._scroll.verticalScrollBar()
        self.follow_bottom = value >= bar.maximum() - _BOTTOM_SLACK
        self._set_anchor(None)
        if value == bar.minimum() and bar.maximum() > 0:
            self._reached_top()

    def _content_y(self, widget: QWidget) -> int:
        return widget.mapTo(self._content, QPoint(0, 0)).y()

    def _set_anchor(self, anchor: tuple[QWidget, int] | None) -> None:
        # The anchor widget is watched: whenever the layout moves it (older
        # messages placed above it, text reflowed), the view moves with it.
        if self._anchor is not None and (anchor is None or anchor[0] is not self._anchor[0]):
            self._anchor[0].removeEventFilter(self)
        if anchor is not None and (self._anchor is None or anchor[0] is not self._anchor[0]):
            anchor[0].installEventFilter(self)
        self._anchor = anchor

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            self._anchor is not None
            and watched is self._anchor[0]
            and event.type() == QEvent.Type.Move
        ):
            self.restore()
        return super().eventFilter(watched, event)
