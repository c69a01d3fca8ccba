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
from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Final

from PySide6.QtCore import QPoint, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import (
    QDesktopServices,
    QPalette,
)
from PySide6.QtWidgets import (
    QFrame,
    QLayout,
    QStackedLayout,
    QVBoxLayout,
    QWidget,
)

from app.core.message_kinds import MessageStatus, Role
from app.ui.jump_latest import JumpToLatest
from app.ui.summary_block import NOTHING_ARCHIVED, CardHost, SummaryBlock
from app.ui.transcript_cards import SummaryCards, covered_by, layout_index
from app.ui.transcript_frame import (
    BeforeNextFrame,
    EmptyState,
    TranscriptScrollArea,
    centred_column,
    column_hidden,
    layout_paused,
    paint_pending,
    paint_with_page,
    settle_layout,
)
from app.ui.transcript_message import MessageWidget
from app.ui.transcript_pages import EarlierPages, PageBuilder, first_screen_start
from app.ui.transcript_scroll import ScrollKeeper

if TYPE_CHECKING:
    from app.core.models import Message
    from app.core.summary import Summary

log = logging.getLogger(__name__)

# Links in replies open in the browser only for these schemes; a "file:" or
# "javascript:" link in model output is ignored.
OPENABLE_SCHEMES: Final = frozenset({"http", "https", "mailto"})
# Lines stay readable: the column of messages never grows wider than this.
_COLUMN_MAX_WIDTH: Final = 860
# A column narrower than this has not really been laid out yet.
_MIN_MESSAGE_WIDTH: Final = 64
# The rows built ahead (`TranscriptView.prepare_rows`): a question's, and its reply's.
_SPARE_ROLES: Final = (Role.USER, Role.ASSISTANT)
# A question's row added as its request leaves waits this long at most for its reply's
# row, told two turns of the event loop later (its "sent" between; 1-4 ms later in
# bench_path's turns): the two are laid out, scrolled to and painted together, one frame
# (issue 20). A reply's row that comes later (a slow request: the question shows after
# 50 ms, its reply's row when the request leaves) finds the question placed.
_WAIT_FOR_REPLY_MS: Final = 16
# Message widgets taken out (condensed by a summary) deleted per turn of the event loop:
# one costs ~1 ms of the GUI thread (bench_stall --slices), while a reply may stream.
_DELETED_A_TURN: Final = 3
# Rows a summary covers, out of view, taken out per turn of the event loop before its
# card is placed (`take_summaries`): ~0.1 ms each, and the column's layout once a turn.
_HIDDEN_A_TURN: Final = 16


def _local_now() -> datetime:
    return datetime.now().astimezone()


class TranscriptView(QWidget):
    """A conversation's messages, paged: the newest page first, older ones on request.

    It owns the message widgets and coordinates three helpers, each owning its
    own state: `ScrollKeeper` (where the view is scrolled to), `PageBuilder`
    (the page's older messages, built after the first paint) and `SummaryCards`
    (summary cards, and the messages they cover).

    Signals:
        earlier_requested(): the user asked for older messages (the "Show
            earlier messages" button, or scrolling to the very top); answer
            with `prepend_messages`.
        link_activated(str): a web or mail link was opened from a message.
        pin_requested(int, bool): a message's pin was set (True) or cleared (its id).
        page_built(): every message of the page `set_messages` was given is
            built (at once, or after the first paint; see `building`), and the cards
            of the summaries `take_summaries` was given are placed.
        message_built(MessageWidget): a message's widget was made (lookups go on it).

    Messages an active summary covers are kept but not shown: the summary's card
    stands where they were (`set_summaries`).
    """

    earlier_requested = Signal()
    link_activated = Signal(str)
    pin_requested = Signal(int, bool)
    page_built = Signal()
    message_built = Signal(object)

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        open_url: Callable[[QUrl], object] = QDesktopServices.openUrl,
        clock: Callable[[], datetime] = _local_now,
        cards: CardHost = NOTHING_ARCHIVED,
    ) -> None:
        """`open_url` opens a link (the system browser; tests pass a fake);
        `clock` gives "now" for the timestamps ("14:05" today, with the date otherwise);
        `cards` is what the summary cards ask for their originals and parts, and to undo,
        rewrite or delete (the window's; on its own, a transcript has no archive)."""
        super().__init__(parent)
        self._open_url = open_url
        self._clock = clock
        self._widgets: list[MessageWidget] = []
        self._by_id: dict[int, MessageWidget] = {}
        self._retired: list[MessageWidget] = []  # hidden, out of the layout, to delete
        # Summaries being shown a turn at a time (`take_summaries`), until their cards are.
        self._summaries_due: tuple[Summary, ...] | None = None
        self._summaries_timer = QTimer(self)
        self._summaries_timer.setSingleShot(True)
        self._summaries_timer.setInterval(0)
        self._summaries_timer.timeout.connect(self._take_summaries_step)
        # Rows built ahead, hidden and out of the layout, for the next question and its
        # reply (`prepare_rows`); one a turn of the event loop.
        self._spares: dict[Role, MessageWidget] = {}
        self._spare_timer = QTimer(self)
        self._spare_timer.setSingleShot(True)
        self._spare_timer.setInterval(0)
        self._spare_timer.timeout.connect(self._build_spare)
        # Rows added at the bottom the view follows, not placed yet: laid out, scrolled
        # to and shown together, just before the next frame (`_place_rows`).
        self._unplaced: list[MessageWidget] = []
        self._placing = BeforeNextFrame(self, self._place_rows)

        self.setBackgroundRole(QPalette.ColorRole.Base)
        self.setAutoFillBackground(True)
        self._stack = QStackedLayout(self)
        self.empty_state = EmptyState(self)
        self._stack.addWidget(self.empty_state)

        self._scroll = TranscriptScrollArea(self)
        self._scroll.setFrameShape(QFrame.Shape.NoFrame)
        self._scroll.setWidgetResizable(True)
        self._scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._scroll.viewport().setBackgroundRole(QPalette.ColorRole.Base)
        self._scroll.viewport().setAutoFillBackground(True)
        self._stack.addWidget(self._scroll)

        self._content, self._column = centred_column(_COLUMN_MAX_WIDTH, self._refresh_size_hints)
        self._column_layout = QVBoxLayout(self._column)
        self._column_layout.setContentsMargins(28, 16, 28, 28)
        self._column_layout.setSpacing(22)
        # The column is never laid out shorter than its rows need: a row added at the
        # bottom grows the column first, so the rows above it stay where they are (not
        # squeezed to fit the old height, every one moved and repainted, then moved back).
        self._column_layout.setSizeConstraint(QLayout.SizeConstraint.SetMinimumSize)

        self._earlier = EarlierPages(self._column, self._column_layout, self)
        self._earlier.requested.connect(self.earlier_requested)
        self.earlier_button = self._earlier.button
        self._column_layout.addStretch(1)
        self._scroll.setWidget(self._content)

        # A card grows downwards as its originals unfold: it stays where it is on
        # screen (not the bottom) while it does.
        self._cards = SummaryCards(
            self._column,
            self._column_layout,
            clock,
            cards,
            lambda card: self._keeper.hold(self._cards.top_level(card)),
            self,
        )
        self._pages = PageBuilder(
            self._column,
            insert=self._insert,
            adding_slice=lambda: self._keeper.adding_slice(self._column_layout),
            adding_rest=lambda: self._keeper.keeping_place(column_hidden(self._column)),
            complete=self._place_blocks,
            parent=self,
        )
        self._pages.page_built.connect(self.page_built)
        self.page_built.connect(self.prepare_rows)
        self._keeper = ScrollKeeper(
            self._scroll,
            self._content,
            lambda: self._widgets,
            lambda: self._earlier.reached_top(self._pages.building),
            self,
        )
        self.jump = JumpToLatest(self._scroll, self._keeper, lambda w: w is self._widgets[-1])
        self.message_built.connect(self.jump.message_built)
        self._show_current_page()

    # --- public API ---------------------------------------------------------

    def set_messages(self, messages: Sequence[Message], *, has_earlier: bool) -> None:
        """Show a conversation: its newest page, oldest first, scrolled to the bottom.

        The newest messages, those that fill the view, are built at once;
        the rest of the page follows in short slices once they have been
        painted (`building` is True meanwhile, and `page_built` says when the
        page is complete). A view that is not on screen builds it all at once.
        """
        self._pages.stop()
        with column_hidden(self._column):
            self._remove_all()
            now = self._clock()
            first = (
                first_screen_start(messages, self.font(), self.size(), _COLUMN_MAX_WIDTH)
                if self.isVisible()
                else 0
            )
            self._cards.forget_summaries()
            for message in messages[first:]:
                self._insert(message, now)
            self._pages.start(messages[:first], now)
            self._earlier.set_available(has_earlier)
            self._earlier.answered()
            self._show_current_page()
        self.scroll_to_bottom()
        if self._pages.building:
            self._pages.build_after_first_frame()
        else:
            self.page_built.emit()

    @property
    def building(self) -> bool:
        """True while older messages of the page just opened are still to be built, or
        the cards of summaries just taken are still to be placed (`take_summaries`)."""
        return self._pages.building or self._summaries_due is not None

    def prepend_messages(self, messages: Sequence[Message], *, has_earlier: bool) -> None:
        """Add an older page above the current one without moving what the user sees."""
        self._place_rows()  # rows just added are where they go first
        self._pages.finish()
        self._earlier.answered()
        with self._keeper.keeping_place(column_hidden(self._column)):
            now = self._clock()
            shown_before = len(self._widgets) + self._cards.count
            fresh = [
                message
                for message in messages
                if message.id not in self._by_id and not self._cards.is_hidden(message.id)
            ]
            for message in fresh:
                self._insert(message, now)
            self._earlier.set_available(has_earlier)
            self._place_blocks()
            self._show_current_page()
        if has_earlier and len(self._widgets) + self._cards.count == shown_before:
            # A page of condensed messages only shows nothing new: fetch the next one.
            QTimer.singleShot(0, self._earlier.request)

    def append_message(self, message: Message) -> None:
        """Add a new message at the bottom; follow it if the user was at the bottom."""
        existing = self._by_id.get(message.id)
        if existing is not None:
            existing.set_message(message)
            return
        if self._pages.replace(message.id, lambda _: message):
            return
        self._insert(message, self._clock(), at_bottom=True)
        self._show_current_page()

    def append_sending(self, message: Message) -> None:
        """Add the user's message, shown as sending until `message_stored` (its id is a
        stand-in until then)."""
        existing = self._by_id.get(message.id)
        if existing is not None or self._pages.replace(message.id, lambda _: message):
            if existing is not None:
                existing.set_message(message)
                existing.set_sending(True)
            return
        # Shown as sending from the start: set after, its note would change the row's
        # size once placed, and the page repaint.
        self._insert(message, self._clock(), at_bottom=True, sending=True)
        self._show_current_page()

    def message_stored(self, sending_id: int, message: Message) -> None:
        """The message shown as sending is on disk: the same row, now sent."""
        widget = self._by_id.pop(sending_id, None)
        if widget is None:
            self.append_message(message)
            return
        self._by_id[message.id] = widget
        widget.set_sending(False)
        widget.set_message(message)

    def update_message_text(self, message_id: int, text: str) -> None:
        """Streaming: replace one message's text; only that message re-renders."""
        self._place_rows()  # rows just added are where they go first
        widget = self._by_id.get(message_id)
        if widget is None:
            if not self._pages.replace(
                message_id, lambda pending: pending.model_copy(update={"content": text})
            ):
                log.debug("text for message %s, which is not shown", message_id)
            return
        if not self._follows(widget):
            widget.set_text(text)
        elif widget.body.is_typing():
            with self._growing_at_bottom(widget, settle_first=True):
                widget.set_text(text)
        else:
            # Its text piece repaints alone, unless the row grows: then the row is laid
            # out and scrolled to before the next frame, which paints it once (three
            # frames otherwise: the piece, the taller row, the strip scrolled into view).
            body = widget.body
            height = body.height()
            widget.set_text(text)
            if body.heightForWidth(body.width()) != height:
                with self._growing_at_bottom(widget, settle_first=False):
                    pass  # the row's new size is laid out and scrolled to, held

    def update_message_thinking(self, message_id: int, thinking: str) -> None:
        """Streaming: show one reply's thinking so far, above its text."""
        self._place_rows()  # rows just added are where they go first
        widget = self._by_id.get(message_id)
        if widget is None:
            self._pages.replace(
                message_id, lambda pending: pending.model_copy(update={"thinking": thinking})
            )
            return
        widget.set_thinking(thinking)

    def update_message(self, message: Message) -> None:
        """Show a message's final state: its text and status (complete, stopped, failed)."""
        self._place_rows()  # rows just added are where they go first
        widget = self._by_id.get(message.id)
        if widget is None:
            if not self._cards.update_hidden(message) and not self._pages.replace(
                message.id, lambda _: message
            ):
                log.debug("update for message %s, which is not shown", message.id)
            return
        if message.content != widget.text and self._follows(widget):
            self._show_final(widget, message)
        else:
            widget.set_message(message)
        if message.status is not MessageStatus.STREAMING:
            self.prepare_rows()  # the turn is over: the next one's rows, while nothing waits

    def _show_final(self, widget: MessageWidget, message: Message) -> None:
        """The newest row's last words (and how it ended), followed at the bottom: laid
        out and scrolled to with the row's painting held, then painted once, as a streamed
        update that grows the row (`update_message_text`); not its text, then the taller
        row, then the strip below (three frames). Its size is not known before the layout
        (the row hears of its text's new height only then): held whatever it becomes."""
        with self._growing_at_bottom(widget, settle_first=widget.body.is_typing()):
            widget.set_message(message)

    def remove_message(self, message_id: int) -> None:
        """A reply that received nothing is gone: so is its row."""
        widget = self._by_id.get(message_id)
        if widget is not None:
            self._take_out(widget)

    def clear(self) -> None:
        """Show no conversation: the empty state."""
        self._pages.stop()
        self._remove_all()
        self._earlier.set_available(False)
        self._earlier.answered()
        self._keeper.reset()
        self._show_current_page()

    def message_count(self) -> int:
        """How many messages are built (see `building`), not how many the conversation has."""
        return len(self._widgets)

    def scroll_to_bottom(self) -> None:
        """Jump to the newest message and keep following new text."""
        self._keeper.scroll_to_bottom()

    @property
    def oldest_seq(self) -> int | None:
        """The seq of the oldest message of the page (what an earlier page comes before)."""
        seqs = [self._pages.oldest_seq, self._cards.oldest_hidden_seq]
        seqs += [widget.message.seq for widget in self._widgets[:1]]
        return min((seq for seq in seqs if seq is not None), default=None)

    def message_widget(self, message_id: int) -> MessageWidget | None:
        """The widget showing a message, if it is shown."""
        return self._by_id.get(message_id)

    def message_widgets(self) -> Sequence[MessageWidget]:
        """The shown messages' widgets, oldest first (all of the page once `building` is False)."""
        return tuple(self._widgets)

    @property
    def scroll_area(self) -> TranscriptScrollArea:
        return self._scroll

    @property
    def message_column(self) -> QWidget:
        """The centred column the messages are laid out in (at most 860 pixels wide)."""
        return self._column

    @property
    def has_earlier(self) -> bool:
        """Older messages exist than the loaded pages (`earlier_requested` fetches them)."""
        return self._earlier.available

    # --- summaries -----------------------------------------------------------

    def set_summaries(self, summaries: Sequence[Summary]) -> None:
        """The conversation's active summaries: each stands, as a card, where the
        messages it covers were; messages an undone summary covered come back."""
        self._summaries_due = None
        self._summaries_timer.stop()
        self._show_summaries(summaries)

    def take_summaries(self, summaries: Sequence[Summary]) -> None:
        """`set_summaries` in short turns of the event loop (a summary accepted while a
        reply streams): the rows the summaries cover that are out of view leave first,
        `_HIDDEN_A_TURN` a turn, which changes nothing on screen; then the rest and the
        cards in one turn, so that no frame shows both a card and the rows it stands
        for, or neither. `building` is True meanwhile, and `page_built` says when done.
        """
        self._summaries_due = tuple(summaries)
        self._take_summaries_step()

    def _take_summaries_step(self) -> None:
        self._place_rows()  # rows just added are where they go first
        summaries = self._summaries_due
        if summaries is None:
            return
        batch = self._covered_out_of_view(summaries)
        if batch:
            with self._keeper.keeping_place(layout_paused(self._column_layout)):
                for widget in batch:
                    self._hide_widget(widget)
            self._summaries_timer.start()
            return
        self.set_summaries(summaries)
        if not self._pages.building:
            self.page_built.emit()

    def _covered_out_of_view(self, summaries: Sequence[Summary]) -> list[MessageWidget]:
        """Up to `_HIDDEN_A_TURN` rows `summaries` cover, wholly above or below the view
        (none while the transcript is not on screen: its rows then go all at once)."""
        if not self._scroll.isVisible():
            return []
        covered = covered_by(summaries)
        top = self._scroll.verticalScrollBar().value()
        bottom = top + self._scroll.viewport().height()
        column_y = self._column.mapTo(self._content, QPoint(0, 0)).y()
        batch: list[MessageWidget] = []
        for widget in self._widgets:
            if not covered(widget.message):
                continue
            y = column_y + widget.y()
            if y + widget.height() < top or y > bottom:
                batch.append(widget)
                if len(batch) == _HIDDEN_A_TURN:
                    break
        return batch

    def _show_summaries(self, summaries: Sequence[Summary]) -> None:
        self._place_rows()  # rows just added are where they go first
        # Messages of the page not built yet are checked as they are built.
        with self._keeper.keeping_place(layout_paused(self._column_layout)):
            self._cards.set_summaries(summaries)
            for widget in [w for w in self._widgets if self._cards.covered(w.message)]:
                self._hide_widget(widget)
            now = self._clock()
            for message in self._cards.take_uncovered():
                self._insert(message, now)
            self._place_blocks()
            self._show_current_page()

    def summary_block(self, summary_id: str) -> SummaryBlock | None:
        """The card of a summary, a compressed one's parts included, if shown."""
        return self._cards.summary_block(summary_id)

    def summary_blocks(self) -> Sequence[SummaryBlock]:
        """The cards in the column, oldest first."""
        return self._cards.summary_blocks()

    def _hide_widget(self, widget: MessageWidget) -> None:
        self._take_out(widget)
        self._cards.keep_hidden(widget.message)

    def _take_out(self, widget: MessageWidget) -> None:
        """A message's row goes: not held in place, out of the column, then deleted."""
        if widget in self._unplaced:
            self._unplaced.remove(widget)
        self._widgets.remove(widget)
        del self._by_id[widget.message.id]
        self._keeper.forget(widget)
        self._column_layout.removeWidget(widget)
        widget.hide()
        self._retire(widget)

    def _retire(self, widget: MessageWidget) -> None:
        """Delete a message's widget soon, a few per turn of the event loop: a summary
        takes out a page at once, and deleting it in one go is one long pause."""
        self._retired.append(widget)
        if len(self._retired) == 1:
            QTimer.singleShot(0, self, self._delete_retired)

    def _delete_retired(self) -> None:
        batch, self._retired = self._retired[:_DELETED_A_TURN], self._retired[_DELETED_A_TURN:]
        for widget in batch:
            widget.deleteLater()
        if self._retired:
            QTimer.singleShot(0, self, self._delete_retired)

    def _place_blocks(self) -> None:
        self._cards.place(self.oldest_seq, self._earlier.available)

    # --- building -----------------------------------------------------------

    def _insert(
        self, message: Message, now: datetime, *, at_bottom: bool = False, sending: bool = False
    ) -> None:
        """Show `message` in its place by seq (or keep it, unshown, if a summary covers it).

        `at_bottom`: a new message, below the others. When the view follows the bottom,
        its row is made at once (`message_widget` has it) and placed just before the
        next frame, with any other row added by then (`_place_rows`).
        """
        if self._cards.covered(message):
            self._cards.keep_hidden(message)
            return
        widget = self._spares.pop(message.role, None) if at_bottom else None
        width = self._message_width()
        if widget is not None:
            if width is not None and widget.width() != width:
                widget.resize(width, widget.height())
            widget.adopt(message, now, sending=sending)
        else:
            widget = self._new_row(message, now, width)
            if sending:
                widget.set_sending(True)
        if at_bottom and self._keeper.follow_bottom and self.isVisible():
            # Placed with the other rows added before the next frame (`_place_rows`); a
            # question being sent waits for its reply's row, which follows it as the
            # request leaves (its "sent" between): placed together when it comes.
            widget.ensurePolished()
            self._unplaced.append(widget)
            reply_awaited = self._placing.waiting
            self._placing.arm(wait_ms=_WAIT_FOR_REPLY_MS if sending else 0)
            if reply_awaited and message.role is Role.ASSISTANT:
                self._place_rows()
        else:
            self._column_layout.insertWidget(
                layout_index(self._column_layout, message.seq, True), widget
            )
            widget.show()
        index = bisect_left(self._widgets, message.seq, key=lambda w: w.message.seq)
        self._widgets.insert(index, widget)
        self._by_id[message.id] = widget
        self.message_built.emit(widget)

    def _place_rows(self) -> None:
        """Place the rows added at the bottom since the last frame (`_unplaced`), together.

        When the view still follows the bottom, their place is made and scrolled to before
        they show: Qt then moves the pixels of the messages above (a blit) and paints the
        new rows alone, once, not the whole page (shown at once, a few pixels of them land
        in view before the scroll, and a dirty pixel in view makes Qt repaint everything
        the scroll moves). What changed on screen before (a reply's end above) is laid
        out and painted first, for the same reason. Placed one by one, as their messages
        came (the question's row, its "sent", the reply's dots: three turns of the event
        loop), each had its layout, its scroll and, but the first, a frame of its own.
        """
        if not self._unplaced:
            return
        rows, self._unplaced = self._unplaced, []
        self._placing.cancel()  # placed before the frame: nothing left for it
        follow = self._keeper.follow_bottom and self.isVisible()
        if follow:
            settle_layout(self)
            paint_pending(self)
        for widget in rows:
            if follow:
                policy = widget.sizePolicy()
                policy.setRetainSizeWhenHidden(True)
                widget.setSizePolicy(policy)
            self._column_layout.insertWidget(
                layout_index(self._column_layout, widget.message.seq, True), widget
            )
        if follow:
            settle_layout(self)
            self._keeper.scroll_to_bottom()
        for widget in rows:
            if follow:
                policy = widget.sizePolicy()
                policy.setRetainSizeWhenHidden(False)
                widget.setSizePolicy(policy)
            widget.show()
            if follow:
                paint_with_page(widget, self._content)

    def _follows(self, widget: MessageWidget) -> bool:
        """`widget` is the newest row, on screen, and the view follows the bottom."""
        return (
            bool(self._widgets)
            and widget is self._widgets[-1]
            and self._keeper.follow_bottom
            and self.isVisible()
            and widget.updatesEnabled()
        )

    @contextmanager
    def _growing_at_bottom(self, widget: MessageWidget, *, settle_first: bool) -> Iterator[None]:
        """Change the newest row (`_follows`), repainting that row alone, in one frame.

        The row is changed with its painting held, its new size laid out and scrolled
        to (Qt blits the page above up), then painted once. Changed as it shows, the
        row's new pixels would be dirty in view during the scroll, and Qt would repaint
        everything it moves: the whole page. `settle_first`: what is pending is laid
        out and painted first (a reply's first words in place of its dots, beside the
        question just marked sent); later lines follow frames that painted everything
        but the row's own text piece, which the blit carries (tests/ui/test_transcript.py).
        """
        if settle_first:
            settle_layout(self)
            paint_pending(self)
        widget.setUpdatesEnabled(False)
        try:
            yield
            settle_layout(self)
            self._keeper.scroll_to_bottom()
        finally:
            widget.setUpdatesEnabled(True)

    def _new_row(self, message: Message, now: datetime, width: int | None) -> MessageWidget:
        widget = MessageWidget(message, now, self._column, width=width)
        self._connect_row(widget)
        return widget

    def _connect_row(self, widget: MessageWidget) -> None:
        widget.link_clicked.connect(self._on_link_clicked)
        widget.pin_requested.connect(self.pin_requested)

    def prepare_rows(self) -> None:
        """Build, a row a turn of the event loop, the rows the next question and its reply
        will take (`MessageWidget.spare`), unless built already: so the GUI thread does
        not build them between Enter and the request (issue 20)."""
        if self._spare_timer.isActive():
            return
        if not self.rows_ready:
            self._spare_timer.start()

    @property
    def rows_ready(self) -> bool:
        """The rows for the next question and its reply are built (`prepare_rows`)."""
        return all(role in self._spares for role in _SPARE_ROLES)

    def _build_spare(self) -> None:
        missing = [role for role in _SPARE_ROLES if role not in self._spares]
        if not missing or not self.isVisible():
            return
        spare = MessageWidget.spare(
            missing[0], self._clock(), self._column, width=self._message_width()
        )
        self._connect_row(spare)
        self._spares[missing[0]] = spare
        if len(missing) > 1:
            self._spare_timer.start()

    def _remove_all(self) -> None:
        self._summaries_due = None  # another conversation's, or none
        self._summaries_timer.stop()
        self._keeper.release()
        self._unplaced.clear()  # deleted with the others
        self._placing.cancel()
        for widget in self._widgets:
            self._column_layout.removeWidget(widget)
            widget.hide()
            widget.deleteLater()
        self._widgets.clear()
        self._by_id.clear()
        self._cards.remove_all()

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

    def _refresh_size_hints(self) -> None:
        for widget in self._widgets:
            widget.refresh_size_hints()

    def _show_current_page(self) -> None:
        empty = not self._widgets and not self._cards.count and not self._earlier.available
        self._stack.setCurrentWidget(self.empty_state if empty else self._scroll)

    # --- links --------------------------------------------------------------

    def _on_link_clicked(self, url: QUrl) -> None:
        if url.scheme().lower() not in OPENABLE_SCHEMES:
            log.info("ignored a link with scheme %r", url.scheme())
            return
        self.link_activated.emit(url.toString())
        self._open_url(url)
