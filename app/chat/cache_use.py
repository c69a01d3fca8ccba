"""How much of what the conversation on screen sent Claude was read from its prompt
cache, in all: told to the front end when a conversation opens and after each reply."""

from __future__ import annotations

from collections.abc import Callable

from app.chat.events import ChatEvents
from app.core.caching import CacheUse
from app.core.errors import StorageError
from app.core.models import Session
from app.store.sessions import SessionStore


class CacheUseTracker:
    """Owns the cache totals of the conversation on screen (loop thread only).

    Opening a conversation reads its totals once; after that only the replies
    after the last one counted are read (by seq, through the message index), so
    a reply costs O(1) reads however long the conversation is.
    """

    def __init__(
        self, store: SessionStore, events: ChatEvents, current: Callable[[], str | None]
    ) -> None:
        self._store = store
        self._events = events
        self._current = current  # the id of the conversation on screen
        self._session_id: str | None = None
        self._use = CacheUse()
        self._last_seq = 0

    @property
    def use(self) -> CacheUse:
        return self._use

    def opened(self, session_id: str | None) -> None:
        """A conversation came on screen (None: a new one, nothing sent yet)."""
        self._session_id, self._use, self._last_seq = session_id, CacheUse(), 0
        if session_id is not None:
            self._read_more()
        self._events.cache_use_changed(self._use)

    def following(self, told: Callable[[Session], None]) -> Callable[[Session], None]:
        """`told`, then `session_changed`: what the conversations call when one moves."""

        def session_changed(session: Session) -> None:
            told(session)
            self.session_changed(session)

        return session_changed

    def session_changed(self, session: Session) -> None:
        """A conversation moved (a message sent, a reply finished): count new replies."""
        if session.id != self._current():
            return  # off screen: read whole when it opens again
        if session.id != self._session_id:
            self._session_id, self._use, self._last_seq = session.id, CacheUse(), 0
        before = self._use
        self._read_more()
        if self._use != before:
            self._events.cache_use_changed(self._use)

    def _read_more(self) -> None:
        assert self._session_id is not None
        try:
            more, self._last_seq = self._store.cache_use(self._session_id, self._last_seq)
        except StorageError:
            return  # a figure for the tooltip: the next reply tries again
        self._use = self._use.combined(more)
