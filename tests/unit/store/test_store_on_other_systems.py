"""The store under Windows' and macOS's rules, played here (tests/fakes/windows_files.py).

Backups and restores fsync what they opened read-write; salvage closes its scratch
copy before removing it; a file held by another program a moment is waited for;
macOS asks SQLite for F_FULLFSYNC.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import tempfile
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest

from app.core.models import Role
from app.store import SessionStore, open_database
from app.store.backup import copy_database, list_backups, restore, take_daily_backup
from app.store.database import STATE_SUFFIX, connect, mark_clean_shutdown
from app.store.export import ExportFormat, export_conversations
from app.store.salvage import salvage
from tests.fakes.windows_files import (
    refuse_deleting_open_files,
    refuse_read_only_fsync,
    sharing_violation,
)

MODEL = "claude-sonnet-4-5"


@pytest.fixture
def sessions(database: Path) -> Iterator[SessionStore]:
    result = open_database(database)
    store = SessionStore(result.connection, database=result.path)
    store.create_session("Lisbon", MODEL)
    yield store
    store.close()


def titles_in(path: Path) -> list[str]:
    connection = sqlite3.connect(path)
    try:
        return sorted(str(row[0]) for row in connection.execute("SELECT title FROM session"))
    finally:
        connection.close()


# --- Windows: fsync needs a descriptor open for writing ------------------------------


def test_a_daily_backup_and_a_restore_work_where_fsync_needs_write_access(
    sessions: SessionStore, database: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced = refuse_read_only_fsync(monkeypatch)

    backup = take_daily_backup(database, today=date(2026, 3, 5))
    assert backup is not None and titles_in(backup) == ["Lisbon"]
    sessions.create_session("Porto", MODEL)
    before = restore(database, backup)

    assert titles_in(database) == ["Lisbon"]
    assert titles_in(before) == ["Lisbon", "Porto"]
    assert synced, "the copies were synced"
    assert len(list_backups(database)) == 2


def test_the_copy_is_synced_step_by_step_through_a_writable_descriptor(
    sessions: SessionStore, database: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for number in range(200):
        sessions.create_session(f"conversation {number} " + "x" * 2000, MODEL)
    synced = refuse_read_only_fsync(monkeypatch)

    assert copy_database(database, tmp_path / "copy.db", pages=8)
    assert len(synced) > 10  # one per step, and the whole file at the end


# --- Windows: an open file can't be deleted ------------------------------------------


class _RefusingPragmas(sqlite3.Connection):
    """A connection whose first statement fails, as a damaged copy's can."""

    def execute(self, sql: str, *args: object) -> sqlite3.Cursor:
        if sql.startswith("PRAGMA writable_schema"):
            raise sqlite3.DatabaseError("file is not a database")
        return super().execute(sql, *args)  # type: ignore[arg-type]


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where salvage's temporary folder goes, to see it removed."""
    folder = tmp_path / "scratch"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def test_salvage_closes_its_scratch_copy_before_removing_it(
    sessions: SessionStore, database: Path, tmp_path: Path, scratch: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    sessions.append_message(sessions.list_sessions()[0].id, Role.USER, "hello")
    damaged = tmp_path / "damaged.db"
    copy_database(database, damaged)
    refused = refuse_deleting_open_files(monkeypatch)
    target = open_database(tmp_path / "fresh" / "cairn.db")

    try:
        report = salvage(damaged, target.connection)
    finally:
        target.connection.close()

    assert (report.sessions, report.messages) == (1, 1)
    assert refused == [] and list(scratch.glob("cairn-salvage-*")) == []


def test_salvage_closes_its_scratch_copy_when_nothing_can_be_read(
    database: Path, tmp_path: Path, scratch: Path, monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:  # fmt: skip
    damaged = tmp_path / "damaged.db"
    damaged.write_bytes(b"SQLite format 3\x00" + b"\xff" * 4096)
    real_connect = sqlite3.connect
    monkeypatch.setattr(
        sqlite3, "connect", lambda *a, **k: real_connect(*a, **k, factory=_RefusingPragmas)
    )
    refused = refuse_deleting_open_files(monkeypatch)
    target = real_connect(tmp_path / "target.db")

    try:
        report = salvage(damaged, target)
    finally:
        target.close()

    assert report.messages == 0
    assert "Nothing could be read" in caplog.text
    assert refused == [] and list(scratch.glob("cairn-salvage-*")) == []


# --- Windows: another program holds a file for a moment -----------------------------


@pytest.fixture
def busy_twice(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """`os.replace` fails twice as Windows does while a scanner reads the file."""
    real_replace = os.replace
    refused: list[str] = []

    def replace(source: str | os.PathLike[str], target: str | os.PathLike[str]) -> None:
        if len(refused) < 2:
            refused.append(os.fspath(target))
            raise sharing_violation(os.fspath(target))
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", replace)
    monkeypatch.setattr(sys, "platform", "win32")
    return refused


def test_a_backup_waits_out_a_program_holding_its_file(
    sessions: SessionStore, database: Path, busy_twice: list[str]
) -> None:
    backup = take_daily_backup(database, today=date(2026, 3, 5))

    assert backup is not None and titles_in(backup) == ["Lisbon"]
    assert busy_twice == [str(backup)] * 2


def test_an_export_waits_out_a_program_holding_its_file(
    sessions: SessionStore, database: Path, tmp_path: Path, busy_twice: list[str]
) -> None:
    target = tmp_path / "Lisbon.json"
    connection = connect(database)
    try:
        export_conversations(connection, target, fmt=ExportFormat.JSON, database=database)
    finally:
        connection.close()

    assert json.loads(target.read_text(encoding="utf-8"))["format"] == "cairn-export"
    assert busy_twice == [str(target)] * 2


def test_the_record_of_a_clean_close_waits_out_a_program_holding_it(
    sessions: SessionStore, database: Path, busy_twice: list[str]
) -> None:
    mark_clean_shutdown(database)

    record = database.with_name(database.name + STATE_SUFFIX)
    assert busy_twice == [str(record)] * 2
    assert json.loads(record.read_text(encoding="utf-8"))["in_use"] is False


# --- macOS: synchronous = FULL reaches the disk only with fullfsync --------------------


def test_every_connection_on_macos_asks_for_fullfsync(
    database: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    opened = open_database(database)
    other = connect(database)
    try:
        assert opened.connection.execute("PRAGMA fullfsync").fetchone()[0] == 1
        assert other.execute("PRAGMA fullfsync").fetchone()[0] == 1
    finally:
        opened.connection.close()
        other.close()


@pytest.mark.parametrize("platform", ["linux", "win32"])
def test_linux_and_windows_keep_sqlites_default(
    platform: str, sessions: SessionStore, database: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "platform", platform)
    connection = connect(database)
    try:
        assert connection.execute("PRAGMA fullfsync").fetchone()[0] == 0
    finally:
        connection.close()
