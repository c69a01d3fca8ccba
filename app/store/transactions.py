"""Short write transactions and plain-words errors, shared by the stores."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from app.core.errors import CairnError, StorageError
from app.store.database import record_damage
from app.store.errors import is_damage, translate


@dataclass(frozen=True)
class WritesHeld:
    """Why writes to a database are held, in the words a refused write is told."""

    title: str
    message: str


WRITES_HELD_TITLE = "Checking your conversations…"
WRITES_HELD_MESSAGE = (
    "Cairn was not closed normally last time, so it is checking your conversations "
    "before it changes anything. You can read them now; in a moment you can write "
    "again. Nothing you typed was lost."
)
# Cairn did not close normally: its integrity check has not passed yet (`check_first`).
CHECKING = WritesHeld(WRITES_HELD_TITLE, WRITES_HELD_MESSAGE)
UPDATING_TITLE = "Updating your conversations for this version…"
# An upgrade's back-fills run (app.store.backfill): the window reads meanwhile.
UPDATING = WritesHeld(
    UPDATING_TITLE,
    "Cairn is updating your conversations for this version. You can read them now; "
    "sending and changes wait until it is done. Nothing you typed was lost.",
)

# Databases written to by no one until what holds them is over; the window reads them
# meanwhile. Each held for one or more reasons, the first one told.
_held: dict[str, list[WritesHeld]] = {}
_held_lock = threading.Lock()


def _key(database: Path) -> str:
    return os.path.realpath(database)


def hold_writes(database: Path, why: WritesHeld = CHECKING) -> None:
    """Refuse every write to `database` (in plain words) until `release_writes`."""
    with _held_lock:
        reasons = _held.setdefault(_key(database), [])
        if why not in reasons:
            reasons.append(why)


def release_writes(database: Path, why: WritesHeld = CHECKING) -> None:
    """`why` no longer holds writes (others may still)."""
    with _held_lock:
        key = _key(database)
        reasons = _held.get(key, [])
        if why in reasons:
            reasons.remove(why)
        if not reasons:
            _held.pop(key, None)


def writes_held(database: Path | None) -> bool:
    """Whether writes to `database` are held (its check has not passed yet)."""
    return _why_held(database) is not None


def _why_held(database: Path | None) -> WritesHeld | None:
    if database is None or not _held:
        return None
    with _held_lock:
        reasons = _held.get(_key(database))
        return reasons[0] if reasons else None


def _translated(
    error: sqlite3.Error | UnicodeError, action: str, database: Path | None
) -> CairnError:
    """`error` in plain words; damage is also recorded, so the next start sets the file
    aside (as the words promise) without having to find the damage again."""
    if database is not None and isinstance(error, sqlite3.Error) and is_damage(error):
        record_damage(database, f"{type(error).__name__}: {error}")
    return translate(error, action=action, database=database)


@contextmanager
def write_transaction(
    connection: sqlite3.Connection, action: str, database: Path | None
) -> Iterator[sqlite3.Cursor]:
    """One BEGIN IMMEDIATE … COMMIT; errors roll back and come out in plain words.

    IMMEDIATE takes the write lock up front, so read-modify-write steps (the
    next seq, a summary's checks) cannot interleave with another connection's.
    Any exception raised inside rolls the whole transaction back. While the
    database's writes are held (`hold_writes`) nothing is begun: a `StorageError`
    says why, and the caller keeps what it meant to write, as for a full disk.
    """
    held = _why_held(database)
    if held is not None:
        raise StorageError(held.message, title=held.title)
    try:
        cursor = connection.cursor()
        cursor.execute("BEGIN IMMEDIATE")
    except (sqlite3.Error, UnicodeError) as error:
        raise _translated(error, action, database) from error
    try:
        yield cursor
        cursor.execute("COMMIT")
    except BaseException as error:
        _rollback(connection)
        if isinstance(error, sqlite3.Error | UnicodeError):
            raise _translated(error, action, database) from error
        raise
    finally:
        cursor.close()


@contextmanager
def translated_errors(action: str, database: Path | None) -> Iterator[None]:
    """Reads: sqlite3 failures come out in plain words."""
    try:
        yield
    except (sqlite3.Error, UnicodeError) as error:
        raise _translated(error, action, database) from error


def _rollback(connection: sqlite3.Connection) -> None:
    # After a failed COMMIT (disk full) SQLite may already have rolled back.
    try:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
    except sqlite3.Error:
        pass
