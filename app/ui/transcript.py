"""The transcript: a conversation's messages, newest at the bottom.

Only a page of messages is ever built (the window loads the newest ~50 and
prepends older pages on request), so a conversation of ten thousand messages
opens as fast as one of fifty. And of that page, only the newest messages,
the ones that fill the view, are built before the first paint; the older
ones follow in short slices between frames. Each message is its own widget;
a streaming update re-renders only the message it belongs to.

Scrolling follows two rules: if the user is at the bottom, stay there as text
arrives; otherwise keep the message they are reading exactly where it is —
when older messages are prepended above it, and when the window is resized.
"""

from __future__ import annotations

import logging
import time
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Final

from PySide6.QtCore import QEvent, QObject, QPoint, QRectF, QSize, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import (
    QDesktopServices,
    QFocusEvent,
    QFont,
    QFontMetrics,
    QFontMetricsF,
    QKeyEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QPen,
    QResizeEvent,
)
from PySide6.QtWidgets import (
    QApplication,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QStackedLayout,
    QVBoxLayout,
    QWidget,
)

from app.core.models import Message
from app.core.summary import Summary
from app.ui.summary_block import SummaryBlock
from app.ui.transcript_blocks import (
    LINE_HEIGHT_PERCENT,
    blend,
    code_background,
    code_border,
    muted_text_colour,
    scaled_font,
    set_text_colour,
)
from app.ui.transcript_message import MessageWidget

log = logging.getLogger(__name__)

EMPTY_TITLE: Final = "Ask Claude anything."
EMPTY_HINT: Final = "Press Enter to send, Shift+Enter for a new line."
EARLIER_BUTTON_TEXT: Final = "Show earlier messages"
# Links in replies open in the browser only for these schemes; a "file:" or
# "javascript:" link in model output is ignored.
OPENABLE_SCHEMES: Final = frozenset({"http", "https", "mailto"})
# Within this many pixels of the end counts as "at the bottom".
_BOTTOM_SLACK: Final = 8
# Lines stay readable: the column of messages never grows wider than this.
_COLUMN_MAX_WIDTH: Final = 860
# Opening a page builds at once the newest messages estimated to fill this
# many view heights (the estimate is rough: a short one would show a gap).
_FIRST_SCREEN_FILL: Final = 1.5
# The rest of the page is built in slices of about this long, one per turn
# of the event loop, so the window keeps painting and answering meanwhile.
_SLICE_SECONDS: Final = 0.020
# A column narrower than this has not really been laid out yet.
_MIN_MESSAGE_WIDTH: Final = 64
# If the first screen has not been painted by then (a hidden or minimised
# window paints nothing), the rest of the page is built anyway.
_FIRST_FRAME_WAIT_MS: Final = 100


def _local_now() -> datetime:
    return datetime.now().astimezone()


def _estimated_height(text: str, characters_per_line: int, line: float) -> float:
    """Roughly how tall a message is: its header, its lines wrapped, the gap below it."""
    lines = sum(1 + len(piece) // characters_per_line for piece in text.split("\n", 2000))
    return (lines + 2) * line + 22


class _Column(QWidget):
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


def _centred_column(
    max_width: int, on_width_changed: Callable[[], None]
) -> tuple[QWidget, QWidget]:
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
    row = QHBoxLayout(content)
    row.setContentsMargins(0, 0, 0, 0)
    row.setSpacing(0)
    column = _Column(on_width_changed, content)
    column.setMaximumWidth(max_width)
    row.addStretch(0)
    row.addWidget(column, 1)
    row.addStretch(0)
    return content, column


class _FocusRing(QWidget):
    """A thin Highlight outline over the transcript while it has keyboard focus."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.hide()

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        pen = QPen(self.palette().color(QPalette.ColorRole.Highlight))
        pen.setWidthF(2.0)
        painter.setPen(pen)
        painter.drawRoundedRect(QRectF(self.rect()).adjusted(1, 1, -1, -1), 4, 4)
        painter.end()


class _PillButton(QPushButton):
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


class _TranscriptScrollArea(QScrollArea):
    """The scroll area, reachable by Tab: PageUp/PageDown/arrows scroll, Home/End jump."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setAccessibleName("Conversation")
        self._ring = _FocusRing(self)

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
        super().resizeEvent(event)
        self._ring.setGeometry(self.rect())


class _EmptyState(QWidget):
    """What a conversation with no messages shows: a friendly hint, centred."""

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
        layout.addStretch(1)
        self._apply_palette()

    def _apply_palette(self) -> None:
        set_text_colour(self.hint, muted_text_colour(self.palette()))

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._apply_palette()


class TranscriptView(QWidget):
    """A conversation's messages, paged: the newest page first, older ones on request.

    Signals:
        earlier_requested(): the user asked for older messages (the "Show
            earlier messages" button, or scrolling to the very top); answer
            with `prepend_messages`.
        link_activated(str): a web or mail link was opened from a message.
        pin_requested(int, bool): a message's pin was set (True) or cleared (its id).
        page_built(): every message of the page `set_messages` was given is
            built (at once, or after the first paint; see `building`).
        originals_requested(str): a summary card wants its originals (answer with
            `show_originals`).
        children_requested(str): a compressed summary's card wants its parts (answer
            with `show_children`).
        undo_requested(str): the user asked to undo a summary.

    Messages an active summary covers are kept but not shown: the summary's card
    stands where they were (`set_summaries`).
    """

    earlier_requested = Signal()
    link_activated = Signal(str)
    pin_requested = Signal(int, bool)
    page_built = Signal()
    originals_requested = Signal(str)
    children_requested = Signal(str)
    undo_requested = Signal(str)

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        open_url: Callable[[QUrl], object] = QDesktopServices.openUrl,
        clock: Callable[[], datetime] = _local_now,
    ) -> None:
        """`open_url` opens a link (the system browser; tests pass a fake);
        `clock` gives "now" for the timestamps ("14:05" today, with the date otherwise)."""
        super().__init__(parent)
        self._open_url = open_url
        self._clock = clock
        self._widgets: list[MessageWidget] = []
        self._by_id: dict[int, MessageWidget] = {}
        # Summaries: the active ones (None until told, when a message's own
        # summary_id says whether it is covered), their cards, and the covered
        # messages of the loaded pages (kept, not shown).
        self._summaries: list[Summary] | None = None
        self._ranges: list[tuple[int, int]] = []
        self._blocks: dict[str, SummaryBlock] = {}
        self._hidden: dict[int, Message] = {}
        self._has_earlier = False
        self._earlier_pending = False
        self._follow_bottom = True
        self._anchor: tuple[QWidget, int] | None = None
        self._adjusting = False
        # The page's older messages not built yet (oldest first), and the
        # "now" their timestamps are written against.
        self._pending: list[Message] = []
        self._pending_now = _local_now()
        self._slice_timer = QTimer(self)
        self._slice_timer.setSingleShot(True)
        self._slice_timer.timeout.connect(self._build_slice)

        self.setBackgroundRole(QPalette.ColorRole.Base)
        self.setAutoFillBackground(True)
        self._stack = QStackedLayout(self)
        self.empty_state = _EmptyState(self)
        self._stack.addWidget(self.empty_state)

        self._scroll = _TranscriptScrollArea(self)
        self._scroll.setFrameShape(QFrame.Shape.NoFrame)
        self._scroll.setWidgetResizable(True)
        self._scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._scroll.viewport().setBackgroundRole(QPalette.ColorRole.Base)
        self._scroll.viewport().setAutoFillBackground(True)
        self._stack.addWidget(self._scroll)

        self._content, self._column = _centred_column(_COLUMN_MAX_WIDTH, self._refresh_size_hints)
        self._column_layout = QVBoxLayout(self._column)
        self._column_layout.setContentsMargins(28, 16, 28, 28)
        self._column_layout.setSpacing(22)

        self.earlier_button = _PillButton(EARLIER_BUTTON_TEXT, self._column)
        self.earlier_button.setAccessibleName(EARLIER_BUTTON_TEXT)
        self.earlier_button.setToolTip("Load the messages before these")
        self.earlier_button.clicked.connect(self._request_earlier)
        self.earlier_button.hide()
        self._column_layout.addWidget(self.earlier_button, 0, Qt.AlignmentFlag.AlignHCenter)
        self._column_layout.addStretch(1)
        self._scroll.setWidget(self._content)

        bar = self._scroll.verticalScrollBar()
        bar.rangeChanged.connect(self._on_range_changed)
        bar.valueChanged.connect(self._on_value_changed)
        self._scroll.installEventFilter(self)
        self._show_current_page()

    # --- public API ---------------------------------------------------------

    def set_messages(self, messages: Sequence[Message], *, has_earlier: bool) -> None:
        """Show a conversation: its newest page, oldest first, scrolled to the bottom.

        The newest messages, those that fill the view, are built at once;
        the rest of the page follows in short slices once they have been
        painted (`building` is True meanwhile, and `page_built` says when the
        page is complete). A view that is not on screen builds it all at once.
        """
        self._stop_building()
        with self._building():
            self._remove_all()
            now = self._clock()
            first = self._first_screen_start(messages) if self.isVisible() else 0
            self._summaries, self._ranges = None, []
            for message in messages[first:]:
                self._insert(message, now)
            self._pending = list(messages[:first])
            self._pending_now = now
            self._set_has_earlier(has_earlier)
            self._earlier_pending = False
            self._show_current_page()
        self.scroll_to_bottom()
        if self._pending:
            self._await_first_frame()
        else:
            self.page_built.emit()

    @property
    def building(self) -> bool:
        """True while older messages of the page just opened are still to be built."""
        return bool(self._pending)

    def prepend_messages(self, messages: Sequence[Message], *, has_earlier: bool) -> None:
        """Add an older page above the current one without moving what the user sees."""
        self._finish_building()
        self._earlier_pending = False
        self._capture_anchor()
        with self._building():
            now = self._clock()
            shown_before = len(self._widgets) + len(self._blocks)
            fresh = [
                message
                for message in messages
                if message.id not in self._by_id and message.id not in self._hidden
            ]
            for message in fresh:
                self._insert(message, now)
            self._set_has_earlier(has_earlier)
            self._place_blocks()
            self._show_current_page()
        self._settle_layout()
        self._restore_anchor()
        if has_earlier and len(self._widgets) + len(self._blocks) == shown_before:
            # A page of condensed messages only shows nothing new: fetch the next one.
            QTimer.singleShot(0, self._request_earlier)

    def append_message(self, message: Message) -> None:
        """Add a new message at the bottom; follow it if the user was at the bottom."""
        existing = self._by_id.get(message.id)
        if existing is not None:
            existing.set_message(message)
            return
        if self._replace_pending(message.id, lambda _: message):
            return
        self._insert(message, self._clock())
        self._show_current_page()

    def update_message_text(self, message_id: int, text: str) -> None:
        """Streaming: replace one message's text; only that message re-renders."""
        widget = self._by_id.get(message_id)
        if widget is None:
            if not self._replace_pending(
                message_id, lambda pending: pending.model_copy(update={"content": text})
            ):
                log.debug("text for message %s, which is not shown", message_id)
            return
        widget.set_text(text)

    def update_message(self, message: Message) -> None:
        """Show a message's final state: its text and status (complete, stopped, failed)."""
        widget = self._by_id.get(message.id)
        if widget is None:
            if message.id in self._hidden:
                self._hidden[message.id] = message
            elif not self._replace_pending(message.id, lambda _: message):
                log.debug("update for message %s, which is not shown", message.id)
            return
        widget.set_message(message)

    def clear(self) -> None:
        """Show no conversation: the empty state."""
        self._stop_building()
        self._remove_all()
        self._set_has_earlier(False)
        self._earlier_pending = False
        self._follow_bottom = True
        self._show_current_page()

    def message_count(self) -> int:
        """How many messages are built (see `building`), not how many the conversation has."""
        return len(self._widgets)

    def scroll_to_bottom(self) -> None:
        """Jump to the newest message and keep following new text."""
        self._follow_bottom = True
        self._set_anchor(None)
        bar = self._scroll.verticalScrollBar()
        self._set_scroll(bar.maximum())

    @property
    def oldest_seq(self) -> int | None:
        """The seq of the oldest message of the page (what an earlier page comes before)."""
        seqs = [message.seq for message in self._pending[:1]]
        seqs += [widget.message.seq for widget in self._widgets[:1]]
        if self._hidden:
            seqs.append(min(message.seq for message in self._hidden.values()))
        return min(seqs, default=None)

    def message_widget(self, message_id: int) -> MessageWidget | None:
        """The widget showing a message, if it is shown."""
        return self._by_id.get(message_id)

    def message_widgets(self) -> Sequence[MessageWidget]:
        """The shown messages' widgets, oldest first (all of the page once `building` is False)."""
        return tuple(self._widgets)

    @property
    def scroll_area(self) -> QScrollArea:
        return self._scroll

    # --- summaries -----------------------------------------------------------

    def set_summaries(self, summaries: Sequence[Summary]) -> None:
        """The conversation's active summaries: each stands, as a card, where the
        messages it covers were; messages an undone summary covered come back."""
        # Messages of the page not built yet are checked as they are built.
        self._capture_anchor()
        self._summaries = sorted(summaries, key=lambda summary: summary.first_seq)
        self._ranges = [(summary.first_seq, summary.last_seq) for summary in self._summaries]
        wanted = {summary.id: summary for summary in self._summaries}
        with self._adding_above():
            # Gone (undone, folded in) or changed (a partial undo shortens it): rebuilt.
            for summary_id, block in list(self._blocks.items()):
                if wanted.get(summary_id) != block.summary:
                    self._remove_block(summary_id)
            for widget in [w for w in self._widgets if self._covered(w.message)]:
                self._hide_widget(widget)
            now = self._clock()
            for message in sorted(self._hidden.values(), key=lambda m: m.seq):
                if not self._covered(message):
                    del self._hidden[message.id]
                    self._insert(message, now)
            self._place_blocks()
            self._show_current_page()
        self._settle_layout()
        self._restore_anchor()

    def summary_block(self, summary_id: str) -> SummaryBlock | None:
        """The card of a summary, a compressed one's parts included, if shown."""
        for block in self._blocks.values():
            for found in block.blocks():
                if found.summary.id == summary_id:
                    return found
        return None

    def summary_blocks(self) -> Sequence[SummaryBlock]:
        """The cards in the column, oldest first."""
        return sorted(self._blocks.values(), key=lambda block: block.sort_key)

    def show_originals(self, summary_id: str, messages: Sequence[Message]) -> None:
        """The originals a card asked for."""
        block = self.summary_block(summary_id)
        if block is None:
            return
        # The card grows downwards: keep it where it is on screen, not the bottom.
        top_level = next((b for b in self._blocks.values() if block in b.blocks()), block)
        self._follow_bottom = False
        top = self._scroll.verticalScrollBar().value()
        self._set_anchor((top_level, self._content_y(top_level) - top))
        block.show_originals(messages)

    def show_children(self, summary_id: str, summaries: Sequence[Summary]) -> None:
        """The parts a compressed summary's card asked for."""
        block = self.summary_block(summary_id)
        if block is not None:
            block.show_children(summaries)

    def _covered(self, message: Message) -> bool:
        if message.pinned:
            return False
        if self._summaries is None:
            return message.summary_id is not None
        index = bisect_right(self._ranges, (message.seq, float("inf"))) - 1
        return index >= 0 and self._ranges[index][0] <= message.seq <= self._ranges[index][1]

    def _hide_widget(self, widget: MessageWidget) -> None:
        self._widgets.remove(widget)
        del self._by_id[widget.message.id]
        if self._anchor is not None and self._anchor[0] is widget:
            self._set_anchor(None)
        self._column_layout.removeWidget(widget)
        widget.hide()
        widget.deleteLater()
        self._hidden[widget.message.id] = widget.message

    def _place_blocks(self) -> None:
        """Put up the cards whose place is known: their range is within or after
        the loaded pages (an older one waits for its page), or nothing is earlier."""
        if self._summaries is None:
            return
        oldest = self.oldest_seq
        now = self._clock()
        for summary in self._summaries:
            if summary.id in self._blocks:
                continue
            if self._has_earlier and (oldest is None or oldest > summary.last_seq):
                continue
            first_at, last_at = self._dates_of(summary)
            block = SummaryBlock(summary, now, self._column, first_at=first_at, last_at=last_at)
            block.originals_requested.connect(self.originals_requested)
            block.children_requested.connect(self.children_requested)
            block.undo_requested.connect(self.undo_requested)
            self._column_layout.insertWidget(self._layout_index(summary.first_seq, False), block)
            block.show()
            self._blocks[summary.id] = block

    def _dates_of(self, summary: Summary) -> tuple[datetime | None, datetime | None]:
        """When its first and last covered messages were written, as far as loaded."""
        dates = [
            message.created_at
            for message in self._hidden.values()
            if summary.first_seq <= message.seq <= summary.last_seq
        ]
        return (min(dates), max(dates)) if dates else (None, None)

    def _remove_block(self, summary_id: str) -> None:
        block = self._blocks.pop(summary_id)
        self._column_layout.removeWidget(block)
        block.hide()
        block.deleteLater()

    def _layout_index(self, key: int, after_equal: bool) -> int:
        """Where an item with `key` goes in the column: items are ordered by key
        (a message's seq, a card's first seq), after the earlier button, before the stretch."""

        def key_at(index: int) -> int:
            item = self._column_layout.itemAt(index)
            widget = item.widget() if item is not None else None
            if isinstance(widget, MessageWidget):
                return widget.message.seq
            if isinstance(widget, SummaryBlock):
                return widget.sort_key
            return -1

        low, high = 1, self._column_layout.count() - 1  # the button, the stretch
        while low < high:
            middle = (low + high) // 2
            value = key_at(middle)
            if value < key or (after_equal and value == key):
                low = middle + 1
            else:
                high = middle
        return low

    # --- building -----------------------------------------------------------

    def _settle_layout(self) -> None:
        """Run the pending layout passes now, so the view is right before anything paints.

        Layout requests travel up one parent per pass (column, content, scroll
        area), each posted as an event; a few rounds deliver them all.
        """
        if not self.isVisible():
            return
        for _ in range(4):
            QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)

    @contextmanager
    def _building(self) -> Iterator[None]:
        """Add many messages with the column hidden, then show it once.

        Showing a widget inside a visible layout lays that layout out at once,
        so fifty messages shown one by one would lay the column out fifty
        times. Keyboard focus inside the column survives the hiding.
        """
        focused = QApplication.focusWidget()
        keep_focus = focused is not None and self._column.isAncestorOf(focused)
        self._column.hide()
        try:
            yield
        finally:
            self._column.show()
            if keep_focus and focused is not None and focused.isVisible():
                focused.setFocus(Qt.FocusReason.OtherFocusReason)

    def _insert(self, message: Message, now: datetime) -> None:
        """Show `message` in its place by seq (or keep it, unshown, if a summary covers it)."""
        if self._covered(message):
            self._hidden[message.id] = message
            return
        widget = MessageWidget(message, now, self._column, width=self._message_width())
        widget.link_clicked.connect(self._on_link_clicked)
        widget.pin_requested.connect(self.pin_requested)
        self._column_layout.insertWidget(self._layout_index(message.seq, True), widget)
        widget.show()
        index = bisect_left(self._widgets, message.seq, key=lambda w: w.message.seq)
        self._widgets.insert(index, widget)
        self._by_id[message.id] = widget

    def _remove_all(self) -> None:
        self._set_anchor(None)
        for widget in self._widgets:
            self._column_layout.removeWidget(widget)
            widget.hide()
            widget.deleteLater()
        self._widgets.clear()
        self._by_id.clear()
        for summary_id in list(self._blocks):
            self._remove_block(summary_id)
        self._hidden.clear()

    def _message_width(self) -> int | None:
        """The width a message gets in the column, once the column has been laid out.

        A message built at that width lays its text out once, at that width,
        instead of at a guess first (see `MessageWidget`).
        """
        if not self._column.testAttribute(Qt.WidgetAttribute.WA_Resized):
            return None
        margins = self._column_layout.contentsMargins()
        width = self._column.width() - margins.left() - margins.right()
        return width if width >= _MIN_MESSAGE_WIDTH else None

    def _first_screen_start(self, messages: Sequence[Message]) -> int:
        """Where the newest messages begin that (by a rough estimate) fill the view."""
        metrics = QFontMetricsF(self.font())
        width = min(self.width(), _COLUMN_MAX_WIDTH) - 56
        characters_per_line = max(20, int(width / max(1.0, metrics.averageCharWidth())))
        line = metrics.lineSpacing() * LINE_HEIGHT_PERCENT / 100
        room = self.height() * _FIRST_SCREEN_FILL
        filled = 0.0
        for index in range(len(messages) - 1, 0, -1):
            filled += _estimated_height(messages[index].content, characters_per_line, line)
            if filled >= room:
                return index
        return 0

    # --- building the rest of a page -----------------------------------------

    def _await_first_frame(self) -> None:
        """Build the rest of the page once the first screen has been painted."""
        self._column.installEventFilter(self)
        self._slice_timer.start(_FIRST_FRAME_WAIT_MS)

    def _build_slice(self) -> None:
        """Build the next older messages of the page, for about `_SLICE_SECONDS`."""
        self._column.removeEventFilter(self)
        if not self._pending:
            return
        start = time.perf_counter()
        built = 0
        self._capture_anchor()
        with self._adding_above():
            while self._pending:
                self._insert(self._pending.pop(), self._pending_now)
                built += 1
                elapsed = time.perf_counter() - start
                # Stop where one more message like these would overrun the slice.
                if elapsed + elapsed / built >= _SLICE_SECONDS:
                    break
        if self._anchor is not None:
            self._settle_layout()
            self._restore_anchor()
        if self._pending:
            self._slice_timer.start(0)
        else:
            self._place_blocks()
            self.page_built.emit()

    def _finish_building(self) -> None:
        """Build whatever is left of the page now (before anything goes above it)."""
        if not self._pending:
            return
        self._slice_timer.stop()
        self._column.removeEventFilter(self)
        self._capture_anchor()
        with self._building():
            while self._pending:
                self._insert(self._pending.pop(), self._pending_now)
            self._place_blocks()
        self._settle_layout()
        self._restore_anchor()
        self.page_built.emit()

    def _stop_building(self) -> None:
        self._slice_timer.stop()
        self._column.removeEventFilter(self)
        self._pending.clear()

    def _replace_pending(self, message_id: int, change: Callable[[Message], Message]) -> bool:
        """Apply `change` to a message not built yet; False if none has that id."""
        for index, pending in enumerate(self._pending):
            if pending.id == message_id:
                self._pending[index] = change(pending)
                return True
        return False

    @contextmanager
    def _adding_above(self) -> Iterator[None]:
        """Add messages to the visible column with its layout paused, then lay it out once.

        Unlike `_building`, nothing is hidden: the messages on screen keep
        their focus, their hover and any selection in progress. Each new
        message lays itself out at the column's width before it is shown.
        """
        self._column_layout.setEnabled(False)
        try:
            yield
        finally:
            self._column_layout.setEnabled(True)
            self._column_layout.invalidate()

    def _refresh_size_hints(self) -> None:
        for widget in self._widgets:
            widget.refresh_size_hints()

    def _set_has_earlier(self, has_earlier: bool) -> None:
        self._has_earlier = has_earlier
        self.earlier_button.setVisible(has_earlier)

    def _show_current_page(self) -> None:
        empty = not self._widgets and not self._blocks and not self._has_earlier
        self._stack.setCurrentWidget(self.empty_state if empty else self._scroll)

    # --- earlier messages ---------------------------------------------------

    def _request_earlier(self) -> None:
        self._earlier_pending = True
        self.earlier_requested.emit()

    # --- links --------------------------------------------------------------

    def _on_link_clicked(self, url: QUrl) -> None:
        if url.scheme().lower() not in OPENABLE_SCHEMES:
            log.info("ignored a link with scheme %r", url.scheme())
            return
        self.link_activated.emit(url.toString())
        self._open_url(url)

    # --- scrolling ----------------------------------------------------------

    def _set_scroll(self, value: int) -> None:
        self._adjusting = True
        try:
            self._scroll.verticalScrollBar().setValue(value)
        finally:
            self._adjusting = False

    def _on_range_changed(self, minimum: int, maximum: int) -> None:
        if self._follow_bottom:
            self._set_scroll(maximum)
        else:
            self._restore_anchor()

    def _on_value_changed(self, value: int) -> None:
        if self._adjusting:
            return
        bar = self._scroll.verticalScrollBar()
        self._follow_bottom = value >= bar.maximum() - _BOTTOM_SLACK
        self._set_anchor(None)
        if (
            value == bar.minimum()
            and bar.maximum() > 0
            and self._has_earlier
            and not self._earlier_pending
            and not self._pending  # the rest of this page comes first
        ):
            self._request_earlier()

    def _content_y(self, widget: QWidget) -> int:
        return widget.mapTo(self._content, QPoint(0, 0)).y()

    def _capture_anchor(self) -> None:
        """Remember which message is at the top of the view, and where."""
        if self._follow_bottom:
            self._set_anchor(None)
            return
        top = self._scroll.verticalScrollBar().value()
        for widget in self._widgets:
            y = self._content_y(widget)
            if y + widget.height() > top:
                self._set_anchor((widget, y - top))
                return
        self._set_anchor(None)

    def _set_anchor(self, anchor: tuple[QWidget, int] | None) -> None:
        # The anchor message is watched: whenever the layout moves it (older
        # messages placed above it, text reflowed), the view moves with it.
        if self._anchor is not None and (anchor is None or anchor[0] is not self._anchor[0]):
            self._anchor[0].removeEventFilter(self)
        if anchor is not None and (self._anchor is None or anchor[0] is not self._anchor[0]):
            anchor[0].installEventFilter(self)
        self._anchor = anchor

    def _restore_anchor(self) -> None:
        if self._anchor is None:
            return
        widget, offset = self._anchor
        self._set_scroll(self._content_y(widget) - offset)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._column and event.type() == QEvent.Type.Paint:
            # The first screen of a new page is being painted: build the rest
            # of the page on the next turns of the event loop.
            watched.removeEventFilter(self)
            if self._pending:
                self._slice_timer.start(0)
        elif watched is self._scroll and event.type() == QEvent.Type.Resize:
            # Before the scroll area reflows for a new size, note what is on screen.
            self._capture_anchor()
        elif (
            self._anchor is not None
            and watched is self._anchor[0]
            and event.type() == QEvent.Type.Move
        ):
            self._restore_anchor()
        return super().eventFilter(watched, event)
