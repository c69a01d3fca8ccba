"""Recovering what can still be read from a damaged database that was set aside.

`open_database` copies a damaged `cairn.db` aside and starts a fresh one; this
module then reads every conversation and message it can from the copy (on a
scratch copy of it, so the kept copy is never altered) and writes them into the
fresh database with their ids, order and dates. A damaged page costs the rows on
it, not the rest: rows are read in batches by id, and a batch that meets damage
is read again one row at a time.

Summaries come back only when the whole summary table reads cleanly; otherwise
the recovered messages are all live again (the app condenses them anew), so
nothing recovered is hidden behind a summary that was lost.
"""

from __future__ import annotations

import logging
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

_BATCH = 200
_SIDE_FILES = ("-wal", "-shm")


@dataclass(frozen=True)
class SalvageReport:
    """How much came back.

    Attributes:
        sessions: conversations recovered.
        messages: messages recovered.
        total_messages: how many the damaged database held, as far as it says
            (never less than `messages`); None when it cannot say.
        summaries_kept: whether the summaries came back too.
    """

    sessions: int
    messages: int
    total_messages: int | None
    summaries_kept: bool

    def sentence(self) -> str:
        """Plain words for the notice: "Recovered 195 of 200 messages in 12 conversations"."""
        if self.messages == 0 and self.sessions == 0:
            return "No conversation could be read from it; the copy is kept as it was."
        of = f" of {self.total_messages:,}" if self.total_messages is not None else ""
        conversations = "conversation" if self.sessions == 1 else "conversations"
        if self.messages == 0:
            # The conversations' rows survived, their messages did not.
            their = "its" if self.sessions == 1 else "their"
            of_their = (
                f" of {their} {self.total_messages:,}" if self.total_messages else f" of {their}"
            )
            return (
                f"Recovered {self.sessions:,} {conversations}, but none{of_their} messages "
                "could be read; the copy is kept as it was."
            )
        return (
            f"Recovered {self.messages:,}{of} messages in {self.sessions:,} {conversations} "
            "from the damaged copy."
        )


def salvage(damaged: Path, target: sqlite3.Connection) -> SalvageReport:
    """Copy what `damaged` still holds into `target` (a fresh, migrated database)."""
    # ignore_cleanup_errors: a scanner holding the scratch copy a moment (Windows) must
    # not turn a salvage into a failure; the scratch folder is the system's to clear then.
    folder = tempfile.TemporaryDirectory(prefix="cairn-salvage-", ignore_cleanup_errors=True)
    with folder as scratch:
        copy = Path(scratch) / "damaged.db"
        shutil.copyfile(damaged, copy)
        for suffix in _SIDE_FILES:
            side = damaged.with_name(damaged.name + suffix)
            if side.exists():
                shutil.copyfile(side, copy.with_name(copy.name + suffix))
        try:
            source = sqlite3.connect(copy, isolation_level=None)
        except sqlite3.Error as error:
            return _nothing_read(damaged, error)
        # Closed on every way out, before the folder goes: Windows deletes no open file.
        with closing(source):
            try:
                # Tolerates a schema that names pages the damage took (a truncated file):
                # without it nothing at all can be read. Only ever read here, on a scratch copy.
                source.execute("PRAGMA writable_schema = ON")
            except sqlite3.Error as error:
                return _nothing_read(damaged, error)
            return _salvage(source, target)


def _nothing_read(damaged: Path, error: sqlite3.Error) -> SalvageReport:
    log.warning("Nothing could be read from %s: %s", damaged, error)
    return SalvageReport(0, 0, None, summaries_kept=False)


def _salvage(source: sqlite3.Connection, target: sqlite3.Connection) -> SalvageReport:
    sessions = list(_readable_rows(source, "session", "rowid"))
    summaries, summaries_whole = _whole_table(source, "summary")
    messages = list(_readable_rows(source, "message", "id"))
    total = _total_messages(source, len(messages))
    session_columns = _shared_columns(source, target, "session")
    message_columns = _shared_columns(source, target, "message")
    summary_columns = _shared_columns(source, target, "summary")
    kept_sessions: set[str] = set()
    target.execute("BEGIN IMMEDIATE")
    try:
        for row in sessions:
            if _insert(target, "session", session_columns, row):
                kept_sessions.add(str(row["id"]))
        summary_ids: set[str] = set()
        if summaries_whole and summary_columns:
            target.execute("PRAGMA defer_foreign_keys = ON")  # a chain may list a child first
            for row in summaries:
                if row["session_id"] in kept_sessions and _insert(
                    target, "summary", summary_columns, row
                ):
                    summary_ids.add(str(row["id"]))
        recovered: set[object] = set()
        for row in messages:
            if row["session_id"] not in kept_sessions and _insert(
                target, "session", list(_STAND_IN), _stand_in_session(row)
            ):
                kept_sessions.add(str(row["session_id"]))  # its own row was lost
            values = dict(row)
            if values.get("summary_id") not in summary_ids:
                values["summary_id"] = None
            if _insert(target, "message", message_columns, values):
                recovered.add(values["id"])
        for table in _MESSAGE_PARTS:  # only for messages that came back (foreign keys)
            columns = _shared_columns(source, target, table)
            for row in _readable_rows(source, table, "rowid") if "message_id" in columns else ():
                if row["message_id"] in recovered:
                    _insert(target, table, columns, row)
        target.execute("COMMIT")
    except BaseException:
        target.execute("ROLLBACK")
        raise
    return SalvageReport(
        sessions=len(kept_sessions),
        messages=len(recovered),
        total_messages=max(total, len(recovered)) if total is not None else None,
        summaries_kept=summaries_whole and bool(summary_ids),
    )


# What belongs to a message and comes back with it: Claude's archive searches while
# writing it, and its attached files (their bytes are in the attachments folder, safe).
_MESSAGE_PARTS = ("lookup", "attachment")

# A conversation whose own row was lost, for the messages found for it.
_STAND_IN = ("id", "title", "created_at", "updated_at", "model")


def _stand_in_session(message: sqlite3.Row | dict[str, object]) -> dict[str, object]:
    return {
        "id": message["session_id"],
        "title": "Recovered conversation",
        "created_at": message["created_at"],
        "updated_at": message["created_at"],
        "model": message["model"] or "",
    }


def _readable_rows(
    source: sqlite3.Connection, table: str, key: str
) -> Iterator[sqlite3.Row | dict[str, object]]:
    """Every row of `table` that can be read, in `key` order; damage skips rows, not the rest."""
    columns = _columns(source, table)
    if not columns:
        return
    listed = ", ".join(columns)
    last = _largest_key(source, table, key)
    after = 0  # ids and rowids here are positive
    while True:
        try:
            rows = source.execute(
                f"SELECT {key}, {listed} FROM {table} WHERE {key} > ? ORDER BY {key} LIMIT ?",
                (after, _BATCH),
            ).fetchall()
        except sqlite3.DatabaseError as error:  # damage (a scratch copy: nothing else)
            log.info("Damage in %s after %s %d: %s", table, key, after, error)
            if last is None or after >= last:
                return
            # One at a time through this stretch of keys, then on past it.
            stop = min(last, after + _BATCH)
            for key_value in range(after + 1, stop + 1):
                row = _one_row(source, table, key, listed, key_value)
                if row is not None:
                    yield dict(zip(columns, row[1:], strict=True))
            after = stop
            continue
        if not rows:
            return
        for row in rows:
            yield dict(zip(columns, row[1:], strict=True))
        after = rows[-1][0]


def _one_row(
    source: sqlite3.Connection, table: str, key: str, listed: str, value: int
) -> tuple[object, ...] | None:
    try:
        row = source.execute(
            f"SELECT {key}, {listed} FROM {table} WHERE {key} = ?", (value,)
        ).fetchone()
    except sqlite3.DatabaseError:
        return None
    return tuple(row) if row is not None else None


def _largest_key(source: sqlite3.Connection, table: str, key: str) -> int | None:
    """The largest key, from the table's own b-tree, else from sqlite_sequence."""
    for query in (
        f"SELECT max({key}) FROM {table}",
        "SELECT seq FROM sqlite_sequence WHERE name = ?",
    ):
        try:
            parameters: tuple[str, ...] = (table,) if "?" in query else ()
            row = source.execute(query, parameters).fetchone()
        except sqlite3.DatabaseError:
            continue
        if row is not None and row[0] is not None:
            return int(row[0])
    return None


def _whole_table(source: sqlite3.Connection, table: str) -> tuple[list[dict[str, object]], bool]:
    columns = _columns(source, table)
    if not columns:
        return [], False
    try:
        rows = source.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY rowid").fetchall()
    except sqlite3.DatabaseError:
        return [], False
    return [dict(zip(columns, row, strict=True)) for row in rows], True


def _total_messages(source: sqlite3.Connection, recovered: int) -> int | None:
    """How many messages the damaged database held: the largest count any of its
    structures still gives (the per-conversation counts, an index), at least `recovered`."""
    counts = [recovered]
    for query in (
        "SELECT sum(messages) FROM session_count",
        "SELECT count(*) FROM message INDEXED BY message_by_session_seq",
    ):
        try:
            row = source.execute(query).fetchone()
        except sqlite3.DatabaseError:
            continue
        if row is not None and row[0] is not None:
            counts.append(int(row[0]))
    return max(counts)


def _columns(source: sqlite3.Connection, table: str) -> list[str]:
    try:
        return [str(row[1]) for row in source.execute(f"PRAGMA table_info({table})")]
    except sqlite3.DatabaseError:
        return []


def _shared_columns(
    source: sqlite3.Connection, target: sqlite3.Connection, table: str
) -> list[str]:
    wanted = set(_columns(target, table))
    return [column for column in _columns(source, table) if column in wanted]


def _insert(
    target: sqlite3.Connection,
    table: str,
    columns: list[str],
    row: sqlite3.Row | dict[str, object],
) -> bool:
    """Insert one recovered row; a row the fresh schema refuses (garbled values) is skipped."""
    values = [row[column] for column in columns]
    marks = ", ".join("?" for _ in columns)
    target.execute("SAVEPOINT salvage_row")
    try:
        target.execute(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})", values)
    except sqlite3.Error as error:
        target.execute("ROLLBACK TO salvage_row")
        target.execute("RELEASE salvage_row")
        log.info("A recovered %s row was refused: %s", table, error)
        return False
    target.execute("RELEASE salvage_row")
    return True
