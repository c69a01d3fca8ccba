"""The transcript's pages: the older messages of a page just opened, built in slices
after the first paint (`PageBuilder`), and the pages before it, asked for once at a time
(`EarlierPages`).

Opening a page builds at once only the newest messages, those that fill the
view; the rest follow here, in short slices between frames, so the window
keeps painting and answering meanwhile.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import TYPE_CHECKING, Final

from PySide6.QtCore import QEvent, QObject, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QFont, QFontMetricsF
from PySide6.QtWidgets import QBoxLayout, QWidget

from app.ui.pill_button import PillButton
from app.ui.transcript_blocks import LINE_HEIGHT_PERCENT

if TYPE_CHECKING:
    from app.core.models import Message

EARLIER_BUTTON_TEXT: Final = "Show earlier messages"

# Opening a page builds at once the newest messages estimated to fill this
# many view heights (the estimate is rough: a short one would show a gap).
_FIRST_SCREEN_FILL: Final = 1.5
# The rest of the page is built in slices of about this long, one per turn
# of the event loop, so the window keeps painting and answering meanwhile.
_SLICE_SECONDS: Final = 0.020
# If the first screen has not been painted by then (a hidden or minimised
# window paints nothing), the rest of the page is built anyway.
_FIRST_FRAME_WAIT_MS: Final = 100


def _estimated_height(text: str, characters_per_line: int, line: float) -> float:
    """Roughly how tall a message is: its header, its lines wrapped, the gap below it."""
    lines = sum(1 + len(piece) // characters_per_line for piece in text.split("\n", 2000))
    return (lines + 2) * line + 22


def first_screen_start(
    messages: Sequence[Message], font: QFont, view: QSize, column_max_width: int
) -> int:
    """Where the newest messages begin that (by a rough estimate) fill a view of that size."""
    metrics = QFontMetricsF(font)
    width = min(view.width(), column_max_width) - 56
    characters_per_line = max(20, int(width / max(1.0, metrics.averageCharWidth())))
    line = metrics.lineSpacing() * LINE_HEIGHT_PERCENT / 100
    room = view.height() * _FIRST_SCREEN_FILL
    filled = 0.0
    for index in range(len(messages) - 1, 0, -1):
        filled += _estimated_height(messages[index].content, characters_per_line, line)
        if filled >= room:
            return index
    return 0


class PageBuilder(QObject):
    """Owns the page's messages not built yet (oldest first) and builds them.

    The transcript says how: `insert` builds one message in its place;
    `adding_slice` wraps a slice (messages added above what is on screen),
    `adding_rest` wraps building all that is left at once; `complete` puts
    up what waited for the whole page (after the last slice, or within
    `adding_rest`).

    Signals:
        page_built(): every message given to `start` is built.
    """

    page_built = Signal()

    def __init__(
        self,
        column: QWidget,
        *,
        insert: Callable[[Message, datetime], None],
        adding_slice: Callable[[], AbstractContextManager[None]],
        adding_rest: Callable[[], AbstractContextManager[None]],
        complete: Callable[[], None],
        parent: QObject,
    ) -> None:
        super().__init__(parent)
        self._column = column
        self._insert = insert
        self._adding_slice = adding_slice
        self._adding_rest = adding_rest
        self._complete = complete
        self._pending: list[Message] = []
        # The "now" the pending messages' timestamps are written against.
        self._now = datetime.now().astimezone()
        self._slice_timer = QTimer(self)
        self._slice_timer.setSingleShot(True)
        self._slice_timer.timeout.connect(self._build_slice)

    @property
    def building(self) -> bool:
        """True while messages of the page are still to be built."""
        return bool(self._pending)

    @property
    def oldest_seq(self) -> int | None:
        """The seq of the oldest message not built yet."""
        return self._pending[0].seq if self._pending else None

    def start(self, messages: Sequence[Message], now: datetime) -> None:
        """`messages` (oldest first) are the page's still to build, dated against `now`;
        `build_after_first_frame` says when to begin."""
        self._pending = list(messages)
        self._now = now

    def build_after_first_frame(self) -> None:
        """Build the rest of the page once the column's first screen has been painted."""
        if self._pending:
            self._column.installEventFilter(self)
            self._slice_timer.start(_FIRST_FRAME_WAIT_MS)

    def finish(self) -> None:
        """Build whatever is left of the page now (before anything goes above it)."""
        if not self._pending:
            return
        self._slice_timer.stop()
        self._column.removeEventFilter(self)
        with self._adding_rest():
            while self._pending:
                self._insert(self._pending.pop(), self._now)
            self._complete()
        self.page_built.emit()

    def stop(self) -> None:
        """Build no more: the page is going away."""
        self._slice_timer.stop()
        self._column.removeEventFilter(self)
        self._pending.clear()

    def replace(self, message_id: int, change: Callable[[Message], Message]) -> bool:
        """Apply `change` to a message not built yet; False if none has that id."""
        for index, pending in enumerate(self._pending):
            if pending.id == message_id:
                self._pending[index] = change(pending)
                return True
        return False

    def _build_slice(self) -> None:
        """Build the next older messages of the page, for about `_SLICE_SECONDS`."""
        self._column.removeEventFilter(self)
        if not self._pending:
            return
        start = time.perf_counter()
        built = 0
        with self._adding_slice():
            while self._pending:
                self._insert(self._pending.pop(), self._now)
                built += 1
                elapsed = time.perf_counter() - start
                # Stop where one more message like these would overrun the slice.
                if elapsed + elapsed / built >= _SLICE_SECONDS:
                    break
        if self._pending:
            self._slice_timer.start(0)
        else:
            self._complete()
            self.page_built.emit()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._column and event.type() == QEvent.Type.Paint:
            # The first screen of a new page is being painted: build the rest
            # of the page on the next turns of the event loop.
            watched.removeEventFilter(self)
            if self._pending:
                self._slice_timer.start(0)
        return super().eventFilter(watched, event)


class EarlierPages(QObject):
    """The pages before those loaded: the "Show earlier messages" button, and asking for
    the next page (the button, or scrolling to the very top), once until it comes.

    Attributes:
        button: "Show earlier messages", first in the column while there are any.
        available: older messages exist than the loaded pages.

    Signals:
        requested(): the next earlier page is wanted (answered with the transcript's
            `prepend_messages`).
    """

    requested = Signal()

    def __init__(self, column: QWidget, layout: QBoxLayout, parent: QObject) -> None:
        super().__init__(parent)
        self.available = False
        self._pending = False
        self.button = PillButton(EARLIER_BUTTON_TEXT, column)
        self.button.setAccessibleName(EARLIER_BUTTON_TEXT)
        self.button.setToolTip("Load the messages before these")
        self.button.clicked.connect(self.request)
        self.button.hide()
        layout.addWidget(self.button, 0, Qt.AlignmentFlag.AlignHCenter)

    def set_available(self, available: bool) -> None:
        self.available = available
        self.button.setVisible(available)

    def request(self) -> None:
        self._pending = True
        self.requested.emit()

    def answered(self) -> None:
        """The page asked for came (or another conversation opened): ask again at will."""
        self._pending = False

    def reached_top(self, building: bool) -> None:
        """The user scrolled to the very top: ask for the page before, unless one was asked
        for already, or the rest of this page (`building`) comes first."""
        if self.available and not self._pending and not building:
            self.request()
