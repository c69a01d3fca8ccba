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
from dataclasses import dataclass, replace
from pathlib import Path

from app.store.salvage_pages import mend_header, page_size_of, read_rows

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
        mended: the parts of the file's header rebuilt from the rest of it ("signature",
            "page size"…) before anything could be read.
    """

    sessions: int
    messages: int
    total_messages: int | None
    summaries_kept: bool
    mended: tuple[str, ...] = ()

    @property
    def whole(self) -> bool:
        """Every message the damaged file says it held came back."""
        return self.messages > 0 and self.total_messages == self.messages

    def sentence(self) -> str:
        """Plain words for the notice: "Recovered 195 of 200 messages in 12 conversations"."""
        if not self.mended:
            return self._counts()
        parts = ", ".join(_MENDED_WORDS.get(part, part) for part in self.mended)
        return f"Its damaged beginning ({parts}) was rebuilt from the rest of it. {self._counts()}"

    def _counts(self) -> str:
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


_MENDED_WORDS = {
    "signature": "its signature",
    "page size": "its page size",
    "format numbers": "its format numbers",
    "payload fractions": "its layout numbers",
}


def salvage_all(sources: list[Path], target: sqlite3.Connection) -> SalvageReport:
    """Salvage from each of `sources` in turn (the newest picture first): a row already
    recovered from an earlier source is kept as it came; the report sums them."""
    reports = [salvage(source, target) for source in sources]
    totals = [report.total_messages for report in reports if report.total_messages is not None]
    return SalvageReport(
        sessions=max((report.sessions for report in reports), default=0),
        messages=sum(report.messages for report in reports),
        total_messages=max(totals) if totals else None,
        summaries_kept=any(report.summaries_kept for report in reports),
        mended=tuple(dict.fromkeys(part for report in reports for part in report.mended)),
    )


def salvage(damaged: Path, target: sqlite3.Connection) -> SalvageReport:
    """Copy what `damaged` still holds into `target` (a fresh, migrated database).

    The scratch copy's header is mended first where the rest of the file vouches for
    it; when SQLite still finds no message, the rows are read from the pages directly.
    """
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
            mended = tuple(mend_header(copy))
        except OSError as error:
            log.warning("Cannot mend the header of %s: %s", damaged, error)
            mended = ()
        if mended:
            log.info("Mended the header of the damaged copy: %s", ", ".join(mended))
        rows = _rows_through_sqlite(copy, target)
        if rows is None or not rows.messages:
            raw = _rows_from_pages(copy, target)
            if raw is not None and len(raw.messages) > (len(rows.messages) if rows else 0):
                log.info("Read %d messages from the pages directly.", len(raw.messages))
                rows = raw
        if rows is None:
            log.warning("Nothing could be read from %s", damaged)
            return SalvageReport(0, 0, None, summaries_kept=False, mended=mended)
        return replace(_write(rows, target), mended=mended)


@dataclass
class _Rows:
    """What one reading of a damaged copy found, table by table, and the columns shared
    with the fresh database."""

    sessions: list[dict[str, object]]
    summaries: list[dict[str, object]]
    summaries_whole: bool
    messages: list[dict[str, object]]
    parts: dict[str, list[dict[str, object]]]
    columns: dict[str, list[str]]
    total: int | None


def _rows_through_sqlite(copy: Path, target: sqlite3.Connection) -> _Rows | None:
    try:
        source = sqlite3.connect(copy, isolation_level=None)
    except sqlite3.Error as error:
        log.info("SQLite cannot open the damaged copy: %s", error)
        return None
    # Closed on every way out, before the scratch folder goes: Windows deletes no open file.
    with closing(source):
        # A damaged text comes back with U+FFFD where its bytes are not UTF-8; its
        # checksum then marks it damaged, never shown as if it were what was written.
        source.text_factory = lambda raw: raw.decode("utf-8", "replace")
        try:
            # Tolerates a schema that names pages the damage took (a truncated file):
            # without it nothing at all can be read. Only ever read here, on a scratch copy.
            source.execute("PRAGMA writable_schema = ON")
        except sqlite3.Error as error:
            log.info("SQLite cannot read the damaged copy: %s", error)
            return None
        summaries, whole = _whole_table(source, "summary")
        messages = list(_readable_rows(source, "message", "id"))
        return _Rows(
            sessions=list(_readable_rows(source, "session", "rowid")),
            summaries=summaries,
            summaries_whole=whole,
            messages=messages,
            parts={table: list(_readable_rows(source, table, "rowid")) for table in _MESSAGE_PARTS},
            columns={table: _shared_columns(source, target, table) for table in _TABLES},
            total=_total_messages(source, len(messages)),
        )


def _rows_from_pages(copy: Path, target: sqlite3.Connection) -> _Rows | None:
    """The rows read from the pages themselves, each given to the table it fits."""
    try:
        page_size = page_size_of(copy)
        found = list(read_rows(copy, page_size)) if page_size is not None else []
    except OSError as error:
        log.info("Cannot read the pages of the damaged copy: %s", error)
        return None
    columns = {table: _columns(target, table) for table in _TABLES}
    tables: dict[str, dict[object, dict[str, object]]] = {table: {} for table in _TABLES}
    for raw in found:
        table = fits(raw.values, columns)
        if table is None:
            continue
        values = dict(zip(columns[table], raw.values, strict=False))
        if table in _ROWID_ALIASES:
            values["id"] = raw.rowid
        key = _raw_key(table, values, raw.rowid)
        kept = tables[table].get(key)
        if kept is None or _newer(table, values, kept):
            tables[table][key] = values
    # A conversation deleted on purpose stays deleted, whatever its pages still hold.
    deleted = {
        str(event["session_id"])
        for event in tables["event"].values()
        if event.get("reason") == "conversation deleted"
    }

    def alive(rows: dict[object, dict[str, object]]) -> list[dict[str, object]]:
        return [row for row in rows.values() if str(row.get("session_id")) not in deleted]

    sessions = [row for row in tables["session"].values() if str(row["id"]) not in deleted]
    messages = sorted(alive(tables["message"]), key=lambda row: int(str(row["id"])))
    return _Rows(
        sessions=sessions,
        summaries=alive(tables["summary"]),
        summaries_whole=False,  # which summaries are missing cannot be told: none come back
        messages=messages,
        parts={table: list(tables[table].values()) for table in _MESSAGE_PARTS},
        columns=columns,
        total=None,
    )


def _write(rows: _Rows, target: sqlite3.Connection) -> SalvageReport:
    # Conversations already there (salvaged from another copy) take their messages.
    kept_sessions = {str(row[0]) for row in target.execute("SELECT id FROM session")}
    summary_ids: set[str] = set()
    recovered: set[object] = set()
    target.execute("BEGIN IMMEDIATE")
    try:
        for row in rows.sessions:
            if _insert(target, "session", rows.columns["session"], row):
                kept_sessions.add(str(row["id"]))
        if rows.summaries_whole and rows.columns["summary"]:
            target.execute("PRAGMA defer_foreign_keys = ON")  # a chain may list a child first
            for row in rows.summaries:
                if row["session_id"] in kept_sessions and _insert(
                    target, "summary", rows.columns["summary"], row
                ):
                    summary_ids.add(str(row["id"]))
        for row in rows.messages:
            if row["session_id"] not in kept_sessions and _insert(
                target, "session", list(_STAND_IN), _stand_in_session(row)
            ):
                kept_sessions.add(str(row["session_id"]))  # its own row was lost
            values = dict(row)
            if values.get("summary_id") not in summary_ids:
                values["summary_id"] = None
            if _insert(target, "message", rows.columns["message"], values):
                recovered.add(values["id"])
        for table in _MESSAGE_PARTS:  # only for messages that came back (foreign keys)
            columns = rows.columns[table]
            for row in rows.parts[table] if "message_id" in columns else ():
                if row["message_id"] in recovered:
                    _insert(target, table, columns, row)
        target.execute("COMMIT")
    except BaseException:
        target.execute("ROLLBACK")
        raise
    return SalvageReport(
        sessions=len(kept_sessions),
        messages=len(recovered),
        total_messages=max(rows.total, len(recovered)) if rows.total is not None else None,
        summaries_kept=rows.summaries_whole and bool(summary_ids),
    )


# Cairn's tables a salvage brings back, and those whose INTEGER PRIMARY KEY is the rowid.
_TABLES = ("session", "summary", "message", "event", "lookup", "attachment")
_ROWID_ALIASES = frozenset({"message", "event"})
_ROLES = frozenset({"user", "assistant"})
_STATUSES = frozenset(
    {"complete", "streaming", "stopped", "error", "cut_off", "paused", "declined"}
)


def fits(values: tuple[object, ...], columns: dict[str, list[str]]) -> str | None:
    """Which of Cairn's tables a row read from a page has the shape of, or None.

    Older rows can be shorter (columns added later take their defaults); the fresh
    database's constraints check every value again when the row is inserted.
    """
    count = len(values)

    def texts(*positions: int) -> bool:
        return all(isinstance(values[position], str) for position in positions)

    def ints(*positions: int) -> bool:
        return all(type(values[position]) is int for position in positions)

    if (
        12 <= count <= len(columns["message"])
        and values[0] is None
        and texts(1, 4, 5)
        and ints(2)
        and values[3] in _ROLES
        and values[9] in _STATUSES
    ):
        return "message"
    if 8 <= count <= len(columns["session"]) and texts(0, 1, 2, 3, 4, 5) and ints(6, 7):
        return "session"
    if (
        18 <= count <= len(columns["summary"])
        and texts(0, 1, 7, 8, 9)
        and values[2] in ("condensed", "compressed")
    ):
        return "summary"
    if (
        14 <= count <= len(columns["event"])
        and values[0] is None
        and values[2] in ("summarize", "undo", "delete_originals")
    ):
        return "event"
    if (
        count == len(columns["attachment"])
        and ints(0, 1)
        and isinstance(values[2], str)
        and len(values[2]) == 64
    ):
        return "attachment"
    if count == len(columns["lookup"]) and ints(0, 1) and texts(2, 3, 4):
        return "lookup"
    return None


def _raw_key(table: str, values: dict[str, object], rowid: int) -> object:
    if table in _MESSAGE_PARTS:
        return (values.get("message_id"), values.get("ordinal"))
    if table in ("session", "summary"):
        return values.get("id")
    return rowid


def _newer(table: str, found: dict[str, object], kept: dict[str, object]) -> bool:
    """Of two copies of one row (an old page not yet reused), the one to keep."""
    if table == "session":
        return int(str(found.get("version") or 0)) > int(str(kept.get("version") or 0))
    if table == "message":
        return len(str(found.get("content") or "")) > len(str(kept.get("content") or ""))
    return False


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


def _readable_rows(source: sqlite3.Connection, table: str, key: str) -> Iterator[dict[str, object]]:
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
        except (sqlite3.DatabaseError, UnicodeError) as error:  # damage (a scratch copy)
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
    except (sqlite3.DatabaseError, UnicodeError):
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
        except (sqlite3.DatabaseError, UnicodeError):
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
    except (sqlite3.DatabaseError, UnicodeError):
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
        except (sqlite3.DatabaseError, UnicodeError):
            continue
        if row is not None and row[0] is not None:
            counts.append(int(row[0]))
    return max(counts)


def _columns(source: sqlite3.Connection, table: str) -> list[str]:
    try:
        return [str(row[1]) for row in source.execute(f"PRAGMA table_info({table})")]
    except (sqlite3.DatabaseError, UnicodeError):
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
