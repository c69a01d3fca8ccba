"""Summary cards in the transcript: each stands where the messages it covers were.

The messages an active summary covers are kept (for their dates, and to come
back if the summary is undone) but not shown.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QBoxLayout, QWidget

from app.ui.summary_block import CardHost, SummaryBlock
from app.ui.transcript_message import MessageWidget

if TYPE_CHECKING:
    from app.core.models import Message
    from app.core.summary import Summary


def layout_index(layout: QBoxLayout, key: int, after_equal: bool) -> int:
    """Where an item with `key` goes in the transcript's column: items are ordered
    by key (a message's seq, a card's first seq), after the earlier button, before
    the stretch."""

    def key_at(index: int) -> int:
        item = layout.itemAt(index)
        widget = item.widget() if item is not None else None
        if isinstance(widget, MessageWidget):
            return widget.message.seq
        if isinstance(widget, SummaryBlock):
            return widget.sort_key
        return -1

    low, high = 1, layout.count() - 1  # the button, the stretch
    while low < high:
        middle = (low + high) // 2
        value = key_at(middle)
        if value < key or (after_equal and value == key):
            low = middle + 1
        else:
            high = middle
    return low


def covered_by(summaries: Sequence[Summary]) -> Callable[[Message], bool]:
    """Whether one of `summaries` covers a message (a pinned one is never covered)."""
    ranges = sorted((summary.first_seq, summary.last_seq) for summary in summaries)

    def covered(message: Message) -> bool:
        if message.pinned:
            return False
        index = bisect_right(ranges, (message.seq, float("inf"))) - 1
        return index >= 0 and ranges[index][0] <= message.seq <= ranges[index][1]

    return covered


class SummaryCards(QObject):
    """The active summaries, their cards in the column, and the messages they cover.

    Until told the summaries (`set_summaries`), a message's own summary_id
    says whether it is covered. The cards ask `host` for what they show and do.
    """

    def __init__(
        self,
        column: QWidget,
        layout: QBoxLayout,
        clock: Callable[[], datetime],
        host: CardHost,
        unfolding: Callable[[SummaryBlock], None],
        parent: QObject,
    ) -> None:
        """`unfolding` is told before a card's originals unfold (it grows downwards)."""
        super().__init__(parent)
        self._host = host
        self._unfolding = unfolding
        self._column = column
        self._layout = layout
        self._clock = clock
        self._summaries: list[Summary] | None = None
        self._covered: Callable[[Message], bool] = covered_by(())
        self._blocks: dict[str, SummaryBlock] = {}
        # The covered messages of the loaded pages, by id (kept, not shown).
        self._hidden: dict[int, Message] = {}

    @property
    def count(self) -> int:
        """How many cards are in the column (a compressed summary's parts not counted)."""
        return len(self._blocks)

    @property
    def oldest_hidden_seq(self) -> int | None:
        return min((message.seq for message in self._hidden.values()), default=None)

    def forget_summaries(self) -> None:
        """A new conversation: its summaries are not known yet."""
        self._summaries, self._covered = None, covered_by(())

    def set_summaries(self, summaries: Sequence[Summary]) -> None:
        """The active summaries; the cards of those gone or changed are taken down
        (`place` puts up the new ones)."""
        self._summaries = sorted(summaries, key=lambda summary: summary.first_seq)
        self._covered = covered_by(self._summaries)
        wanted = {summary.id: summary for summary in self._summaries}
        # Gone (undone, folded in) or changed (a partial undo shortens it): rebuilt.
        for summary_id, block in list(self._blocks.items()):
            if wanted.get(summary_id) != block.summary:
                self._remove_block(summary_id)

    def covered(self, message: Message) -> bool:
        if self._summaries is None:
            return message.summary_id is not None and not message.pinned
        return self._covered(message)

    def keep_hidden(self, message: Message) -> None:
        """Keep a covered message, unshown."""
        self._hidden[message.id] = message

    def is_hidden(self, message_id: int) -> bool:
        return message_id in self._hidden

    def update_hidden(self, message: Message) -> bool:
        """Keep a hidden message's new state; False if it is not hidden."""
        if message.id not in self._hidden:
            return False
        self._hidden[message.id] = message
        return True

    def take_uncovered(self) -> list[Message]:
        """The hidden messages no summary covers any more, oldest first (no longer kept)."""
        uncovered = [
            message
            for message in sorted(self._hidden.values(), key=lambda m: m.seq)
            if not self.covered(message)
        ]
        for message in uncovered:
            del self._hidden[message.id]
        return uncovered

    def place(self, oldest_seq: int | None, has_earlier: bool) -> None:
        """Put up the cards whose place is known: their range is within or after
        the loaded pages (an older one waits for its page), or nothing is earlier."""
        if self._summaries is None:
            return
        now = self._clock()
        for summary in self._summaries:
            if summary.id in self._blocks:
                continue
            if has_earlier and (oldest_seq is None or oldest_seq > summary.last_seq):
                continue
            first_at, last_at = self._dates_of(summary)
            block = SummaryBlock(
                summary,
                now,
                self._column,
                host=self._host,
                unfolding=self._unfolding,
                first_at=first_at,
                last_at=last_at,
            )
            self._layout.insertWidget(layout_index(self._layout, summary.first_seq, False), block)
            block.show()
            self._blocks[summary.id] = block

    def remove_all(self) -> None:
        """Take down every card and forget the hidden messages."""
        for summary_id in list(self._blocks):
            self._remove_block(summary_id)
        self._hidden.clear()

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

    def top_level(self, block: SummaryBlock) -> SummaryBlock:
        """The card in the column that `block` is (or is a part of)."""
        return next((b for b in self._blocks.values() if block in b.blocks()), block)

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
        self._layout.removeWidget(block)
        block.hide()
        block.deleteLater()
