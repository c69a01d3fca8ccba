"""Keeping the full-text index tidy, in the background (issue 22: recall per turn).

FTS5 keeps its index as a set of b-trees ("segments"); every write transaction adds
one, and its automerge folds them together only level by level
(https://www.sqlite.org/fts5.html#the_automerge_configuration_option), so an index
written a message at a time, as Cairn writes it, carries 6 to 16 segments at 100,000
messages (19 in bench_recall's). Every word looked up is looked up in each of them.

Here the index is merged back into one segment by the 'optimize' command
(https://www.sqlite.org/fts5.html#the_optimize_command), in one transaction of its own
on a worker's connection: a quit or a crash during it rolls it back, and the index is
whole either way. Not by incremental 'merge' steps with a negative page count
(https://www.sqlite.org/fts5.html#the_merge_command), though each step would be short:
on this SQLite (3.40.1), writes between the steps keep the merge from ending (3,000
steps with a write every 30 did not finish what 172 do alone), and a write every other
step ended in "database disk image is malformed" after ~2,000 steps.

It is done only when worth it (`IndexShape.worth_tidying`): never for a few new rows,
never while the index's back-fill is unfinished, writes are held (a check or an update
runs) or the database is open read-only, and not on an index so large that a save would
wait on it too long (`MAX_PAGES`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from app.store.backfill import index_pending
from app.store.database import connect, opened_read_only
from app.store.migrations import FTS_TABLE
from app.store.transactions import translated_errors, write_transaction, writes_held

# Worth a rewrite of the whole index: this many segments or more, and at least NEW_SHARE
# of its pages outside its largest segment, so the rewrite (all pages) is paid for by new
# text and a few new rows never cause one. Written a message at a time, as the app does,
# an index of 100k messages tidied is worth tidying again after ~3,500 new messages.
# The worst shape this lets an index stay in (bench_recall --tidy, "as upkeep leaves it"):
# at 100k, tidied, then ~5,800 messages written one a transaction before a tidy-up is due,
# up to 29 segments on the way (5.6 % of the pages new); a turn of common words there
# took ~1.2-1.8 ms more CPU than tidied (5.7 vs 4.3 ms, Sonnet, median of five runs), a
# planted fact's ~0.8 ms more. It is tidied only at a start: a long session's writes
# leave it in a worse shape until the next.
TIDY_AT_SEGMENTS = 8
NEW_SHARE = 1 / 16
# Saves wait while it runs (at most BUSY_TIMEOUT_MS, 5 s, then they fail): at 100k
# messages (~4,300 pages) it took 0.32-0.38 s and wrote ~5,400 pages (bench_recall
# --tidy); an index over this many pages is left as it is.
MAX_PAGES = 20_000
# The index's structure record (fts5_index.c, FTS5_STRUCTURE_ROWID): its levels and
# segments, read to decide whether a tidy-up is worth it.
_STRUCTURE_ROWID = 10
_STRUCTURE_V2 = b"\xff\x00\x00\x01"
_ACTION = "tidy the search index"


@dataclass(frozen=True)
class IndexShape:
    """How the full-text index is laid out.

    Attributes:
        segments: its b-trees; each word is looked up in every one.
        pages: leaf pages in all of them.
        largest: leaf pages of the largest.
        merging: a merge (automerge's) is under way on some level.
    """

    segments: int
    pages: int
    largest: int
    merging: bool

    @property
    def worth_tidying(self) -> bool:
        """Many segments, holding a fair share of new text."""
        new = self.pages - self.largest
        return self.segments >= TIDY_AT_SEGMENTS and new >= self.pages * NEW_SHARE


def index_shape(connection: sqlite3.Connection) -> IndexShape | None:
    """The index's shape, or None where there is no index (no FTS5) or nothing in it."""
    try:
        row = connection.execute(
            f"SELECT block FROM {FTS_TABLE}_data WHERE id = ?", (_STRUCTURE_ROWID,)
        ).fetchone()
    except sqlite3.OperationalError:
        return None  # no such table: this SQLite has no FTS5, search reads the text
    if row is None or not isinstance(row[0], bytes):
        return None
    return _decode(row[0])


def optimize(connection: sqlite3.Connection, database: Path | None = None) -> None:
    """Merge the whole index into one segment, in one transaction of its own."""
    with write_transaction(connection, _ACTION, database) as cursor:
        cursor.execute(f"INSERT INTO {FTS_TABLE} ({FTS_TABLE}) VALUES ('optimize')")


def tidy_index(path: Path | str, *, stop: Callable[[], bool] = lambda: False) -> bool:
    """Tidy the index of the database at `path` if worth it, on a connection of its own;
    True when it did. Nothing when `stop` says so before it starts. Failures come out in
    plain words (StorageError)."""
    database = Path(path)
    if opened_read_only(database) or writes_held(database):
        return False
    with translated_errors(_ACTION, database):
        connection = connect(database)
    try:
        with translated_errors(_ACTION, database):
            if index_pending(connection):
                return False  # the back-fill writes the index: after it, next start
            shape = index_shape(connection)
            if shape is None or not shape.worth_tidying or shape.pages > MAX_PAGES:
                return False
            if stop() or writes_held(database):
                return False
            optimize(connection, database)
            return True
    finally:
        connection.close()


# --- inside ------------------------------------------------------------------------------


def _varint(data: bytes, at: int) -> tuple[int, int]:
    """SQLite's varint (fts5_varint.c) at `at`: its value and where the next begins."""
    value = 0
    for index in range(9):
        byte = data[at + index]
        if index == 8:
            return (value << 8) | byte, at + 9
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            return value, at + index + 1
    raise AssertionError("unreachable")


def _decode(record: bytes) -> IndexShape | None:
    """The structure record (fts5_index.c, fts5StructureDecode): a 4-byte cookie, the V2
    mark (SQLite 3.44+), levels, segments, the write counter (and in V2 the origin
    counter), then per level its merge mark, its segment count and per segment its id,
    first and last leaf page (and in V2 five more numbers)."""
    try:
        at = 4
        version2 = record[at : at + 4] == _STRUCTURE_V2
        if version2:
            at += 4
        levels, at = _varint(record, at)
        segments, at = _varint(record, at)
        _writes, at = _varint(record, at)
        if version2:
            _origin, at = _varint(record, at)
        sizes: list[int] = []
        merging = False
        for _level in range(levels):
            merge, at = _varint(record, at)
            count, at = _varint(record, at)
            merging = merging or merge > 0
            for _segment in range(count):
                _id, at = _varint(record, at)
                first, at = _varint(record, at)
                last, at = _varint(record, at)
                if version2:
                    for _extra in range(5):
                        _value, at = _varint(record, at)
                sizes.append(last - first + 1)
    except IndexError:
        return None  # a record this code cannot read: leave the index as it is
    return IndexShape(segments, sum(sizes), max(sizes, default=0), merging)
