"""The transcript's frame: the scroll area (reachable by Tab, with a focus ring), the
column of messages centred in it, the empty state, and adding many messages to the
column with one layout pass."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Final

from PySide6.QtCore import (
    QCoreApplication,
    QEvent,
    QObject,
    QPoint,
    QRect,
    QSize,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QFocusEvent, QFont, QKeyEvent, QPaintEvent, QResizeEvent, QShowEvent
from PySide6.QtWidgets import (
    QApplication,
    QHBoxLayout,
    QLabel,
    QLayout,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from app.ui.theme import (
    muted_text_colour,
    paint_focus_ring,
    scaled_font,
    set_text_colour,
)

EMPTY_TITLE: Final = "Ask Claude anything."
EMPTY_HINT: Final = (
    "Write in the box below and press Enter to send (Shift+Enter starts a new line). "
    "Or start from one of these:"
)
# A start for someone who does not know what to ask: everyday tasks, in their words.
EXAMPLE_PROMPTS: Final = (
    "Write a friendly email moving a meeting to next week",
    "Explain compound interest with a simple example",
    "Plan three days in Lisbon on a modest budget",
    "Give me five ideas for a quick vegetarian dinner",
)


class Column(QWidget):
    """The transcript's column of messages; says when its width changed.

    Messages hint their current width as their size (see
    `MessageWidget.sizeHint`), so when the column's width changes they are
    told to hint again, once the layout has given them the new width.
    """

    def __init__(self, on_width_changed: Callable[[], None], parent: QWidget) -> None:
        super().__init__(parent)
        self._on_width_changed = on_width_changed

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self._on_width_changed()


def centred_column(max_width: int, on_width_changed: Callable[[], None]) -> tuple[QWidget, QWidget]:
    """The scroll area's content, and in it one column, centred and at most `max_width` wide.

    Built from Qt's own layouts (a stretch either side of the column), so Qt
    lays it out without calling into Python: a horizontal box asks the
    column's height for the width the column really gets. (A QLayout
    subclass would be another way, but PySide drops a reference to None each
    time Qt calls a Python `itemAt` that returns None, which eventually
    crashes the interpreter; and a widget overriding `heightForWidth` is a
    call into Python at every layout pass.)
    """
    content = QWidget()
    # Static: growing at the bottom repaints only the new strip, not the whole content;
    # and opaque (the scroll area fills its widget's background), so when the view
    # follows a message added at the bottom Qt moves the pixels already painted (a
    # blit) and paints only what comes into view, not every message on screen.
    content.setAttribute(Qt.WidgetAttribute.WA_StaticContents)
    row = QHBoxLayout(content)
    row.setContentsMargins(0, 0, 0, 0)
    row.setSpacing(0)
    column = Column(on_width_changed, content)
    column.setAttribute(Qt.WidgetAttribute.WA_StaticContents)  # grows downwards only
    column.setMaximumWidth(max_width)
    row.addStretch(0)
    row.addWidget(column, 1)
    row.addStretch(0)
    return content, column


@contextmanager
def column_hidden(column: QWidget) -> Iterator[None]:
    """Add many messages with the column hidden, then show it once.

    Showing a widget inside a visible layout lays that layout out at once,
    so fifty messages shown one by one would lay the column out fifty
    times. Keyboard focus inside the column survives the hiding.
    """
    focused = QApplication.focusWidget()
    keep_focus = focused is not None and column.isAncestorOf(focused)
    column.hide()
    try:
        yield
    finally:
        column.show()
        if keep_focus and focused is not None and focused.isVisible():
            focused.setFocus(Qt.FocusReason.OtherFocusReason)


@contextmanager
def layout_paused(layout: QLayout) -> Iterator[None]:
    """Add messages to the visible column with its layout paused, then lay it out once.

    Unlike `column_hidden`, nothing is hidden: the messages on screen keep
    their focus, their hover and any selection in progress. Each new
    message lays itself out at the column's width before it is shown.
    """
    layout.setEnabled(False)
    try:
        yield
    finally:
        layout.setEnabled(True)
        layout.invalidate()


class FocusRing(QWidget):
    """A thin Highlight outline around its parent while the parent has keyboard focus
    (`paint_focus_ring`'s, with that `radius` and `width`), hidden otherwise.

    Its own widget, so the parent needs no `paintEvent` of its own: a Python override
    is a call into Python (and a wait for the GIL) at every repaint of the parent, and
    a message row is repainted at every frame that touches it (issue 20).
    """

    def __init__(self, parent: QWidget, radius: float = 4.0, width: float = 2.0) -> None:
        super().__init__(parent)
        self._radius = radius
        self._width = width
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.hide()

    def paintEvent(self, event: QPaintEvent) -> None:
        paint_focus_ring(self, self._radius, self._width)


class TranscriptScrollArea(QScrollArea):
    """The scroll area, reachable by Tab: PageUp/PageDown/arrows scroll, Home/End jump.

    It says when its viewport changes size, for the helpers that follow it: its own
    overrides, not event filters, which would call into Python for every event of the
    viewport, each of its paints among them (issue 20).

    Signals:
        resizing(): the area itself took a new size and the content is about to be laid
            out for it (scroll bars' range, column reflowed): what is on screen now is
            still as it was. Not for the viewport's own changes (a scroll bar showing,
            its margins).
        viewport_resized(): the viewport has a new size and the content was laid out for it.
        shown(): the area was shown (it and the empty state take turns).
    """

    resizing = Signal()
    viewport_resized = Signal()
    shown = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._laid_out_for = QSize()  # the area's size at the viewport's last resize
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setAccessibleName("Conversation")
        self._ring = FocusRing(self)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        bar = self.verticalScrollBar()
        if event.key() == Qt.Key.Key_Home:
            bar.setValue(bar.minimum())
        elif event.key() == Qt.Key.Key_End:
            bar.setValue(bar.maximum())
        else:
            super().keyPressEvent(event)

    def focusInEvent(self, event: QFocusEvent) -> None:
        super().focusInEvent(event)
        # Only a keyboard user needs to see where focus went.
        if event.reason() in (Qt.FocusReason.TabFocusReason, Qt.FocusReason.BacktabFocusReason):
            self._ring.setGeometry(self.rect())
            self._ring.raise_()
            self._ring.show()

    def focusOutEvent(self, event: QFocusEvent) -> None:
        super().focusOutEvent(event)
        self._ring.hide()

    def resizeEvent(self, event: QResizeEvent) -> None:
        # A QAbstractScrollArea gets this for its viewport's resize (the area's own goes
        # to its `event`, which lays out the viewport, and so comes here too).
        if self.size() != self._laid_out_for:
            self._laid_out_for = self.size()
            self.resizing.emit()
        super().resizeEvent(event)
        self._ring.setGeometry(self.rect())
        self.viewport_resized.emit()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.shown.emit()


class EmptyState(QWidget):
    """What a conversation with no messages shows: a friendly hint and a few example
    prompts, centred; choosing one puts it in the message box (it is not sent).

    Signals:
        example_chosen(str): an example's text.
    """

    example_chosen = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.addStretch(1)
        self.title = QLabel(EMPTY_TITLE, self)
        title_font = scaled_font(self.font(), 1.5)
        title_font.setWeight(QFont.Weight.DemiBold)
        self.title.setFont(title_font)
        self.title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.hint = QLabel(EMPTY_HINT, self)
        self.hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.hint.setWordWrap(True)
        layout.addWidget(self.title)
        layout.addSpacing(6)
        layout.addWidget(self.hint)
        layout.addSpacing(10)
        self.examples: list[QPushButton] = []
        for prompt in EXAMPLE_PROMPTS:
            button = QPushButton(prompt, self)
            button.setAccessibleName(f"Example: {prompt}")
            button.setToolTip("Put this in the message box, to send or change")
            button.setCursor(Qt.CursorShape.PointingHandCursor)
            button.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)
            button.clicked.connect(
                lambda _checked=False, text=prompt: self.example_chosen.emit(text)
            )
            layout.addWidget(button, 0, Qt.AlignmentFlag.AlignHCenter)
            self.examples.append(button)
        layout.addStretch(1)
        self._apply_palette()

    def set_quiet(self, quiet: bool) -> None:
        """Hide the hint and the examples (`quiet`) while a dialog stands in front of the
        window, so nothing peeks out from behind it; show them again after."""
        for widget in (self.title, self.hint, *self.examples):
            widget.setVisible(not quiet)

    def _apply_palette(self) -> None:
        set_text_colour(self.hint, muted_text_colour(self.palette()))

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._apply_palette()


def settle_layout(view: QWidget | None = None) -> None:
    """Run the pending layout passes now, so the view is right before anything paints
    (nothing to do for a `view` not on screen).

    Layout requests travel up one parent per pass (a text piece, its message's text,
    the message, the column, the content, the scroll area), each posted as an event;
    a few rounds deliver them all.
    """
    if view is not None and not view.isVisible():
        return
    for _ in range(6):
        QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)


class BeforeNextFrame(QObject):
    """Runs a callback once, just before `view`'s window paints its next frame: what
    several turns of the event loop change in a row (a question's row, its "sent",
    the reply's row) is laid out, scrolled to and painted once (issue 20).

    Armed (`arm`), it watches the window's update requests (an event filter on the
    window only while armed: a filter is a call into Python for each event); with no
    frame due within `FALLBACK_MS` (nothing else changed on screen), its timer runs the
    callback, whose changes bring the frame. Armed to wait (`wait_ms`), frames before
    then go by without it (`run` runs it sooner).
    """

    # Qt paints a window's changes after its update delay (QT_QPA_UPDATE_IDLE_TIME, 5 ms
    # by default on X11 without vsync and offscreen); no later than that.
    FALLBACK_MS: Final = 5

    def __init__(self, view: QWidget, callback: Callable[[], None]) -> None:
        super().__init__(view)
        self._view = view
        self._callback = callback
        self._window: QWidget | None = None
        self._waiting = False  # frames go by without it until the timer (`arm`'s wait)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.run)

    @property
    def armed(self) -> bool:
        return self._window is not None

    @property
    def waiting(self) -> bool:
        """Armed to wait (`arm`'s `wait_ms`), and the wait is not over."""
        return self._window is not None and self._waiting

    def arm(self, *, wait_ms: int = 0) -> None:
        """Run the callback before the next frame, or after `wait_ms` (once, however
        often armed; armed already, the earlier wait stands)."""
        if self._window is not None:
            return
        self._window = self._view.window()
        self._window.installEventFilter(self)
        self._waiting = wait_ms > 0
        self._timer.start(wait_ms if self._waiting else self.FALLBACK_MS)

    def run(self) -> None:
        """Run the callback now, if armed (and disarm)."""
        if self._window is not None:
            self.cancel()
            self._callback()

    def cancel(self) -> None:
        """Disarm: the callback is not run."""
        if self._window is not None:
            self._window.removeEventFilter(self)
            self._window = None
        self._waiting = False
        self._timer.stop()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            event.type() == QEvent.Type.UpdateRequest
            and watched is self._window
            and not self._waiting
        ):
            self.run()
        return False


def paint_pending(view: QWidget) -> None:
    """Paint now what is pending in `view`'s window, and nothing else: a frame of what
    changed, so that a scroll after it moves painted pixels (a blit) — a pixel still to
    be painted where the scroll moves would make Qt repaint everything it moves.

    The window is sent the update request Qt would send it for its next frame (it paints
    what is marked and flushes it; with nothing marked, nothing). Repainting a small
    widget to the same end painted that widget as well, and flushed it, even when
    nothing else was pending: ~0.3 ms a call (issue 20).
    """
    QCoreApplication.sendEvent(view.window(), QEvent(QEvent.Type.UpdateRequest))


def paint_with_page(row: QWidget, page: QWidget) -> None:
    """A row just shown, at the bottom the view follows, is painted once: in the frame
    that paints the strip its scroll brought into view, with that strip.

    Showing a widget posts it an update of its whole rect (Qt's `QUpdateLaterEvent`, one
    for the row and one for each of its parts), delivered after the frame already due:
    the row was painted in it (the strip), then again, whole, in a frame of its own; and
    delivered at once, Qt still painted it twice in that frame (the strip, then the row's
    own update). So those updates are taken back, and the row's rect is marked on `page`
    (the scroll area's content, where the strip is marked): one region, painted once
    (issue 20).
    """
    for shown in (row, *row.findChildren(QWidget)):
        QCoreApplication.removePostedEvents(shown, QEvent.Type.UpdateLater)
    page.update(QRect(row.mapTo(page, QPoint(0, 0)), row.size()))
