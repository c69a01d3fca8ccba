"""Back-fills: the walks over every message that an upgrade's migrations leave to run
after the window has painted (app.store.migrations `defer`): the full-text index of
migration 5, the checksums of migration 13.

At a million messages the index alone took about 3.5 minutes inside `migrate`, before
the window appeared. Here each walk goes in batches of message ids, each batch one short
transaction that does its part and moves the walk's mark (`backfill.done_through`) in
the same commit: a quit or a crash mid-way loses no work and redoes none, and the next
start goes on from the mark. While the index's walk is unfinished, search reads the text
instead (app.store.search), and the index's triggers leave the messages past the mark to
the walk (migration 15), so whatever is written meanwhile is indexed exactly once.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from app.store.checksums import text_checksum
from app.store.database import connect
from app.store.migrations import (
    BACKFILL_TABLE,
    CHECKSUM_BACKFILL,
    FTS_TABLE,
    INDEX_BACKFILL,
)
from app.store.transactions import translated_errors

# Message ids per batch: about 0.3 s of work for the index on this machine, so a quit
# waits little and the progress moves often, while the commits (each one fsync'd) stay
# few: at 1,000 a batch they made the walks ~1.5x slower than one transaction.
BATCH = 4000
_ACTION = "update your conversations for this version"


@dataclass(frozen=True)
class Progress:
    """How far the back-fills are: `done` of `total` message steps (each walk counts
    every message id up to the highest once)."""

    done: int
    total: int

    @property
    def percent(self) -> int:
        """Whole percent done, 99 at most until everything is."""
        if self.total <= 0 or self.done >= self.total:
            return 100
        return min(99, self.done * 100 // self.total)


def pending(connection: sqlite3.Connection) -> dict[str, int]:
    """The unfinished back-fills and how far each got (message ids up to it are done)."""
    table = connection.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (BACKFILL_TABLE,)
    ).fetchone()
    if table is None:
        return {}
    rows = connection.execute(f"SELECT name, done_through FROM {BACKFILL_TABLE}").fetchall()
    return {str(name): int(done) for name, done in rows}


def index_pending(connection: sqlite3.Connection) -> bool:
    """Whether the full-text index still lacks some messages (search must read the text)."""
    return INDEX_BACKFILL in pending(connection)


def progress(connection: sqlite3.Connection) -> Progress:
    walks = pending(connection)
    highest = _highest_id(connection)
    done = sum(min(mark, highest) for mark in walks.values())
    return Progress(done, highest * len(walks))


def run_backfills(
    path: Path | str,
    *,
    told: Callable[[Progress], None] = lambda _progress: None,
    stop: Callable[[], bool] = lambda: False,
    batch: int = BATCH,
) -> bool:
    """Run every unfinished back-fill of the database at `path` on a connection of its
    own, telling `told` after each batch; True when all are done, False when `stop` said
    to stop first (between batches: what was done is kept). Failures come out in plain
    words (StorageError); the marks keep what was done, and the next start goes on."""
    with translated_errors(_ACTION, Path(path)):
        connection = connect(path)
    try:
        with translated_errors(_ACTION, Path(path)):
            while True:
                if not pending(connection):
                    return True
                if stop():
                    return False
                _one_batch(connection, batch)
                told(progress(connection))
    finally:
        connection.close()


def finish_backfills(connection: sqlite3.Connection, batch: int = BATCH) -> None:
    """Run every unfinished back-fill to its end on `connection` (autocommit)."""
    while pending(connection):
        _one_batch(connection, batch)


# --- inside ------------------------------------------------------------------------------


def _highest_id(connection: sqlite3.Connection) -> int:
    (highest,) = connection.execute("SELECT coalesce(max(id), 0) FROM message").fetchone()
    return int(highest)


def _one_batch(connection: sqlite3.Connection, size: int) -> None:
    """The next `size` message ids of the walk furthest behind (and of every walk at the
    same mark), in one transaction with their marks."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        walks = pending(connection)  # read again under the write lock
        if walks:
            low = min(walks.values())
            high = low + size
            highest = _highest_id(connection)
            for name, mark in walks.items():
                if mark == low:
                    _STEPS[name](connection, low, high)
                    if high >= highest:
                        connection.execute(f"DELETE FROM {BACKFILL_TABLE} WHERE name = ?", (name,))
                    else:
                        connection.execute(
                            f"UPDATE {BACKFILL_TABLE} SET done_through = ? WHERE name = ?",
                            (high, name),
                        )
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise


def _index(connection: sqlite3.Connection, low: int, high: int) -> None:
    """Messages with ids in (low, high] into the full-text index (the triggers left them)."""
    connection.execute(
        f"INSERT INTO {FTS_TABLE} (rowid, body) "
        "SELECT id, content FROM message WHERE id > ? AND id <= ?",
        (low, high),
    )


def _checksums(connection: sqlite3.Connection, low: int, high: int) -> None:
    """Messages with ids in (low, high] and no checksum get theirs (app.store.checksums)."""
    rows = connection.execute(
        "SELECT id, content FROM message WHERE id > ? AND id <= ? AND checksum IS NULL",
        (low, high),
    ).fetchall()
    connection.executemany(
        "UPDATE message SET checksum = ? WHERE id = ?",
        [(text_checksum(str(content)), message_id) for message_id, content in rows],
    )


_STEPS: dict[str, Callable[[sqlite3.Connection, int, int], None]] = {
    INDEX_BACKFILL: _index,
    CHECKSUM_BACKFILL: _checksums,
}
