"""Short write transactions and plain-words errors, shared by the stores."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from app.store.errors import translate


@contextmanager
def write_transaction(
    connection: sqlite3.Connection, action: str, database: Path | None
) -> Iterator[sqlite3.Cursor]:
    """One BEGIN IMMEDIATE … COMMIT; errors roll back and come out in plain words.

    IMMEDIATE takes the write lock up front, so read-modify-write steps (the
    next seq, a summary's checks) cannot interleave with another connection's.
    Any exception raised inside rolls the whole transaction back.
    """
    try:
        cursor = connection.cursor()
        cursor.execute("BEGIN IMMEDIATE")
    except (sqlite3.Error, UnicodeError) as error:
        raise translate(error, action=action, database=database) from error
    try:
        yield cursor
        cursor.execute("COMMIT")
    except BaseException as error:
        _rollback(connection)
        if isinstance(error, sqlite3.Error | UnicodeError):
            raise translate(error, action=action, database=database) from error
        raise
    finally:
        cursor.close()


@contextmanager
def translated_errors(action: str, database: Path | None) -> Iterator[None]:
    """Reads: sqlite3 failures come out in plain words."""
    try:
        yield
    except (sqlite3.Error, UnicodeError) as error:
        raise translate(error, action=action, database=database) from error


def _rollback(connection: sqlite3.Connection) -> None:
    # After a failed COMMIT (disk full) SQLite may already have rolled back.
    try:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
    except sqlite3.Error:
        pass
