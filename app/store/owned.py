"""A store that owns one connection, for one thread: the shape SessionStore,
SummaryStore, OriginalsStore and the other stores share."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Self

from app.core.dates import Clock, utc_now
from app.store.database import connect


class ConnectionStore:
    """Owns `connection` from construction to `close`.

    Attributes:
        database: the file behind the connection, named in error messages.
    """

    def __init__(
        self,
        connection: sqlite3.Connection,
        *,
        database: Path | None = None,
        clock: Clock = utc_now,
    ) -> None:
        """Take ownership of `connection` (autocommit, from `open_database`/`connect`)."""
        self._connection = connection
        self._clock = clock
        self.database = database

    @classmethod
    def open(cls, path: Path | str, *, clock: Clock = utc_now) -> Self:
        """A store on a new connection of its own, for the calling thread."""
        return cls(connect(path), database=Path(path), clock=clock)

    @property
    def idle(self) -> bool:
        """No transaction is open on the connection (a job's store kept for the next job
        must be: app.chat.runner.kept_for_thread)."""
        return not self._connection.in_transaction

    def close(self) -> None:
        """Close the connection; the store cannot be used afterwards."""
        self._connection.close()
