"""How much of what the conversation on screen sent Claude was read from its prompt
cache, in all: told to the front end when a conversation opens and after each reply."""

from __future__ import annotations

from collections.abc import Callable

from app.chat.events import ChatEvents
from app.chat.runner import Job, JobRunner
from app.core.caching import CacheUse
from app.core.errors import StorageError, UserFacingError
from app.core.models import Session
from app.store.cache_use import CacheRead
from app.store.sessions import SessionStore


class CacheUseTracker:
    """Owns the cache totals of the conversation on screen (loop thread only).

    Opening a conversation reads its totals in the background (a conversation of
    100,000 messages takes most of a second to add up); after that only the
    replies after the last one counted are read, by seq through the message
    index: by the reply's own job once it saved the reply (off the loop's thread), or
    here when a conversation moved otherwise.
    """

    def __init__(
        self,
        store: SessionStore,
        open_store: Callable[[], SessionStore],
        runner: JobRunner,
        events: ChatEvents,
        current: Callable[[], str | None],
    ) -> None:
        self._store = store
        self._open_store = open_store
        self._runner = runner
        self._events = events
        self._current = current  # the id of the conversation on screen
        self._session_id: str | None = None
        self._use = CacheUse()
        self._last_seq = 0
        self._loading: Job[tuple[CacheUse, int]] | None = None
        self._read_by_reply: str | None = None  # read by a reply's job: no read on its move
        # The conversation whose reply's job will read after `_last_seq` when its reply is
        # saved (`reading_after`): its moves meanwhile (the question stored) are not read.
        self._reply_reading: str | None = None

    @property
    def use(self) -> CacheUse:
        return self._use

    def opened(self, session_id: str | None) -> None:
        """A conversation came on screen (None: a new one, nothing sent yet)."""
        if self._loading is not None:
            self._loading.cancel()
            self._loading = None
        self._session_id, self._use, self._last_seq = session_id, CacheUse(), 0
        self._reply_reading = None  # read whole now: a reply's read after it is ignored
        self._events.cache_use_changed(self._use)
        if session_id is None:
            return
        open_store = self._open_store

        def read(_job: object) -> tuple[CacheUse, int]:
            store = open_store()
            try:
                return store.cache_use(session_id)
            finally:
                store.close()

        job: Job[tuple[CacheUse, int]] = Job(
            "cache use", read, done=lambda read_: self._loaded(job, read_), failed=self._failed
        )
        self._loading = job
        self._runner.start(job)

    def reading_after(self, session_id: str) -> int | None:
        """The seq after which a reply's job of `session_id` reads the figures on its own
        thread (`read_by_reply`); None when it need not (off screen, or read whole now)."""
        if session_id != self._session_id or self._loading is not None:
            return None
        self._reply_reading = session_id
        return self._last_seq

    def read_by_reply(self, session_id: str, read: CacheRead | None) -> None:
        """What a reply's job read after its reply was saved (`reading_after`): counted
        here without a read on this thread, and the read that follows its session's move
        (`session_changed`, next) left out. Ignored when something else was counted
        since the job started, or the conversation is no longer the one read."""
        self._read_by_reply = None
        if (
            read is None
            or session_id != self._current()
            or session_id != self._session_id
            or self._loading is not None
            or read.after_seq != self._last_seq
        ):
            return
        self._last_seq, self._read_by_reply = read.last_seq, session_id
        if read.use.total:
            self._use = self._use.combined(read.use)
            self._events.cache_use_changed(self._use)

    def following(self, told: Callable[[Session], None]) -> Callable[[Session], None]:
        """`told`, then `session_changed`: what the conversations call when one moves."""

        def session_changed(session: Session) -> None:
            told(session)
            self.session_changed(session)

        return session_changed

    def session_changed(self, session: Session) -> None:
        """A conversation moved (a message sent, a reply finished): count new replies."""
        read_by_reply, self._read_by_reply = self._read_by_reply, None
        if session.id != self._current() or self._loading is not None:
            return  # off screen (read whole when it opens again), or being read whole now
        if session.id != self._session_id:  # the new conversation's first message
            self._session_id, self._use, self._last_seq = session.id, CacheUse(), 0
        if read_by_reply == session.id:
            return  # its reply's job read it already
        if self._reply_reading == session.id:
            return  # its reply's job reads everything after `_last_seq` once it is saved
        self._read_more()

    def _loaded(self, job: Job[tuple[CacheUse, int]], read: tuple[CacheUse, int]) -> None:
        if job is not self._loading:
            return  # another conversation came on screen meanwhile
        self._loading = None
        self._use, self._last_seq = read
        self._events.cache_use_changed(self._use)
        self._read_more()  # a reply that finished while it was read

    def _failed(self, _error: UserFacingError) -> None:
        self._loading = None  # a figure for the tooltip: the next reply counts on

    def _read_more(self) -> None:
        assert self._session_id is not None
        try:
            more, self._last_seq = self._store.cache_use(self._session_id, self._last_seq)
        except StorageError:
            return  # a figure for the tooltip: the next reply tries again
        if more.total:
            self._use = self._use.combined(more)
            self._events.cache_use_changed(self._use)
