"""What a summary stands for, read back from the archive, without Qt.

`SummaryArchive` owns the loop thread's read connection to the summaries
(short indexed queries, opened at the first read): the originals behind a
summary, the summaries a compressed one folded in, and the audit trail; and the
archive searches Claude ran while writing the replies on screen.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import TYPE_CHECKING

from app.chat.events import HistoryEntry
from app.core.lookup import Lookup
from app.core.models import Message
from app.core.summary import Summary
from app.store.summaries import SummaryStore

if TYPE_CHECKING:
    from app.store.lookups import LookupStore


class SummaryArchive:
    """The loop thread's reads of summaries and the originals they stand for."""

    def __init__(
        self,
        open_summaries: Callable[[], SummaryStore],
        open_lookups: Callable[[], LookupStore] | None = None,
    ) -> None:
        self._open_summaries = open_summaries
        self._reader: SummaryStore | None = None
        self._open_lookups = open_lookups
        self._lookups: LookupStore | None = None

    def originals(self, summary_id: str) -> list[Message]:
        """The original messages a summary stands for, down its chain, oldest first."""
        return self._summaries().covered_messages(summary_id)

    def children(self, session_id: str, summary_id: str) -> list[Summary]:
        """The summaries a compressed summary folded in, oldest first (none for condensed)."""
        return [
            summary
            for summary in self._summaries().summaries(session_id)
            if summary.parent_id == summary_id
        ]

    def covering(self, session_id: str, seq: int) -> str | None:
        """The active summary that covers message `seq` of `session_id` now (its card
        unfolds to the original), or None for a live message."""
        for summary in self._summaries().active_summaries(session_id):
            if summary.first_seq <= seq <= summary.last_seq:
                return summary.id
        return None

    def history(self, session_id: str) -> list[HistoryEntry]:
        """A conversation's audit trail (every summary and undo), oldest first."""
        reader = self._summaries()
        models = {summary.id: summary.model for summary in reader.summaries(session_id)}
        return [
            HistoryEntry(event, models.get(event.summary_id) if event.summary_id else None)
            for event in reader.events(session_id)
        ]

    def lookups(self, message_ids: Collection[int]) -> dict[int, tuple[Lookup, ...]]:
        """The archive searches of these replies, by reply (replies without any left out)."""
        if self._open_lookups is None or not message_ids:
            return {}
        if self._lookups is None:
            self._lookups = self._open_lookups()
        return self._lookups.for_messages(message_ids)

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None
        if self._lookups is not None:
            self._lookups.close()
            self._lookups = None

    def _summaries(self) -> SummaryStore:
        if self._reader is None:
            self._reader = self._open_summaries()
        return self._reader
