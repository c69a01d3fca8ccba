"""Finding what was said, for the History window and the search box, without Qt.

`History` is the service's face for `ArchiveSearch` (DESIGN §8). A search runs as a
job on the service's runner, on a connection of its own, and its page comes back on
the loop's thread through the caller's `done`. Only the latest search is answered: a
newer one supersedes it, and the older is interrupted (SQLite's interrupt) and its
result or failure dropped. A search that fails says so in a notice and delivers
nothing: the window keeps what it showed. The small reads (the list of
conversations, one timeline) and the command line's search run at once, on the loop
thread's own connection, opened at the first read.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from app.chat.events import ChatEvents
from app.chat.runner import Job, JobRunner
from app.core.errors import UserFacingError

if TYPE_CHECKING:
    from app.core.search import ConversationOverview, SearchPage, SearchQuery, TimelineEntry
    from app.store.search import ArchiveSearch

T = TypeVar("T")

SEARCH_FAILED = "Search didn't work"


def _open_search(database: Path) -> ArchiveSearch:
    # Imported here: the index's reader loads with the first search, not to paint.
    from app.store.search import ArchiveSearch

    return ArchiveSearch.open(database)


class History:
    """Searches in the background (latest wins) and reads the history for the window."""

    def __init__(
        self,
        runner: JobRunner,
        events: ChatEvents,
        open_search: Callable[[], ArchiveSearch],
    ) -> None:
        self._runner = runner
        self._events = events
        self._open_search = open_search
        self._reader: ArchiveSearch | None = None
        self._latest: dict[str, Job[object]] = {}

    @classmethod
    def on(cls, database: Path, runner: JobRunner, events: ChatEvents) -> History:
        """History of the database at `database`."""
        return cls(runner, events, lambda: _open_search(database))

    # --- in the background, latest wins

    def search(self, query: SearchQuery, done: Callable[[SearchPage], None]) -> None:
        """Find `query`; `done(page)` runs later on the loop's thread, unless a newer
        search came first (then nothing is delivered for this one)."""
        self._start("search", lambda search: search.search(query), done)

    def matching_sessions(self, text: str, done: Callable[[list[str]], None]) -> None:
        """The ids of conversations that mention `text`, best first, for the sidebar's
        filter; as `search`, only the latest call is answered."""
        self._start("matching", lambda search: search.matching_sessions(text), done)

    # --- at once

    def conversations(self) -> list[ConversationOverview]:
        """Every conversation with its counts, most recently active first."""
        return self._search().conversations()

    def timeline(self, session_id: str) -> list[TimelineEntry]:
        """A conversation's summaries (with what they folded in), then its live stretch."""
        return self._search().timeline(session_id)

    def close(self) -> None:
        """Drop the pending searches and close the loop thread's connection."""
        for job in self._latest.values():
            job.cancel()
        self._latest.clear()
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    # --- helpers

    def _start(
        self, kind: str, ask: Callable[[ArchiveSearch], T], done: Callable[[T], None]
    ) -> None:
        previous = self._latest.get(kind)
        if previous is not None:
            previous.cancel()
        connection = _Interruptible()
        open_search = self._open_search

        def work(job: Job[T]) -> T:
            search = open_search()
            try:
                connection.watch(search)
                return ask(search)
            finally:
                connection.watch(None)
                search.close()

        def delivered(result: T) -> None:
            if self._latest.get(kind) is job:
                del self._latest[kind]
                done(result)

        def failed(error: UserFacingError) -> None:
            if self._latest.get(kind) is job:
                del self._latest[kind]
                self._events.notice_raised(SEARCH_FAILED, error.message)

        job: Job[T] = Job(
            f"history-{kind}", work, done=delivered, failed=failed, on_cancel=connection.cancel
        )
        self._latest[kind] = job  # type: ignore[assignment]
        self._runner.start(job)

    def _search(self) -> ArchiveSearch:
        if self._reader is None:
            self._reader = self._open_search()
        return self._reader


class _Interruptible:
    """A job's search connection, interrupted from the loop's thread when superseded."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._search: ArchiveSearch | None = None
        self._cancelled = False

    def watch(self, search: ArchiveSearch | None) -> None:
        with self._lock:
            self._search = search
            if search is not None and self._cancelled:
                search.interrupt()

    def cancel(self) -> None:
        with self._lock:
            self._cancelled = True
            if self._search is not None:
                self._search.interrupt()
