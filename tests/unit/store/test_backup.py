"""Daily backups and restoring one (app/store/backup.py), on real files."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path

import pytest

from app.core.errors import StorageError
from app.core.models import Role
from app.store import SessionStore, open_database
from app.store.backup import (
    KEEP_DAILY,
    BackupRefusedError,
    backup_folder,
    check_backup,
    copy_database,
    list_backups,
    restore,
    take_daily_backup,
)
from app.store.migrations import MIGRATIONS, SCHEMA_VERSION, migrate

MODEL = "claude-sonnet-4-5"
DAY = date(2026, 3, 5)


@pytest.fixture
def sessions(database: Path) -> Iterator[SessionStore]:
    result = open_database(database)
    store = SessionStore(result.connection, database=result.path)
    yield store
    store.close()


def titles(sessions: SessionStore) -> list[str]:
    return sorted(session.title for session in sessions.list_sessions())


def titles_in(path: Path) -> list[str]:
    connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return sorted(str(row[0]) for row in connection.execute("SELECT title FROM session"))
    finally:
        connection.close()


def test_a_daily_backup_is_a_complete_database_taken_once_a_day(
    sessions: SessionStore, database: Path
) -> None:
    session = sessions.create_session("Lisbon", MODEL)
    sessions.append_message(session.id, Role.USER, "hello")

    first = take_daily_backup(database, today=DAY)

    assert first == backup_folder(database) / "cairn-2026-03-05.db"
    assert titles_in(first) == ["Lisbon"]
    assert check_backup(first) == SCHEMA_VERSION
    sessions.create_session("Later", MODEL)
    assert take_daily_backup(database, today=DAY) is None  # today's exists
    assert titles_in(first) == ["Lisbon"]
    assert [path.name for path in backup_folder(database).iterdir()] == [first.name]


def test_the_last_seven_are_kept(sessions: SessionStore, database: Path) -> None:
    sessions.create_session("t", MODEL)
    for offset in range(KEEP_DAILY + 3):
        take_daily_backup(database, today=DAY + timedelta(days=offset))

    listed = list_backups(database)

    assert len(listed) == KEEP_DAILY
    assert [info.taken_at.date() for info in listed] == [
        DAY + timedelta(days=offset) for offset in reversed(range(3, KEEP_DAILY + 3))
    ]
    assert all(info.size > 0 and info.path.is_file() for info in listed)


def test_a_cancelled_backup_leaves_nothing(sessions: SessionStore, database: Path) -> None:
    sessions.create_session("t", MODEL)

    assert take_daily_backup(database, today=DAY, cancelled=lambda: True) is None

    assert list(backup_folder(database).iterdir()) == []


def test_an_unusable_folder_is_said_in_plain_words(sessions: SessionStore, database: Path) -> None:
    sessions.create_session("t", MODEL)
    backup_folder(database).write_text("a file where the folder should be", encoding="utf-8")

    with pytest.raises(StorageError, match="couldn't create its backup folder") as raised:
        take_daily_backup(database, today=DAY)

    assert "conversations are safe" in raised.value.message
    assert titles(sessions) == ["t"]


def test_restore_round_trip(sessions: SessionStore, database: Path) -> None:
    sessions.create_session("Before", MODEL)
    backup = take_daily_backup(database, today=DAY)
    assert backup is not None
    later = sessions.create_session("After", MODEL)
    sessions.append_message(later.id, Role.USER, "written after the backup")

    before_restore = restore(database, backup)

    # The running app's own connection sees the restored data at once.
    assert titles(sessions) == ["Before"]
    assert titles_in(before_restore) == ["After", "Before"]
    assert before_restore.name.startswith("cairn-before-restore-")
    listed = list_backups(database)
    assert {info.path for info in listed} == {backup, before_restore}
    assert [info.before_restore for info in listed if info.path == before_restore] == [True]
    mode = sessions._connection.execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"
    # The app keeps writing to the restored database.
    sessions.append_message(sessions.list_sessions()[0].id, Role.USER, "still works")


def test_before_restore_backups_are_never_pruned(sessions: SessionStore, database: Path) -> None:
    sessions.create_session("t", MODEL)
    backup = take_daily_backup(database, today=DAY)
    assert backup is not None
    kept = restore(database, backup)
    for offset in range(1, KEEP_DAILY + 2):
        take_daily_backup(database, today=DAY + timedelta(days=offset))

    assert kept.is_file()
    assert not backup.exists()


def test_a_damaged_backup_is_refused_and_nothing_changes(
    sessions: SessionStore, database: Path, tmp_path: Path
) -> None:
    sessions.create_session("Mine", MODEL)
    damaged = tmp_path / "damaged.db"
    damaged.write_bytes(b"SQLite format 3\x00" + b"\x00" * 4000)

    with pytest.raises(BackupRefusedError, match="Nothing was changed"):
        restore(database, damaged)
    not_a_database = tmp_path / "notes.db"
    not_a_database.write_text("hello", encoding="utf-8")
    with pytest.raises(BackupRefusedError, match="Nothing was changed"):
        restore(database, not_a_database)

    assert titles(sessions) == ["Mine"]
    assert not [info for info in list_backups(database) if info.before_restore]


def test_a_foreign_database_is_refused(
    sessions: SessionStore, database: Path, tmp_path: Path
) -> None:
    foreign = tmp_path / "other.db"
    connection = sqlite3.connect(foreign)
    connection.execute("CREATE TABLE notes (x)")
    connection.execute("PRAGMA user_version = 2")
    connection.close()

    with pytest.raises(BackupRefusedError, match="not a Cairn backup"):
        restore(database, foreign)


def test_a_newer_backup_is_refused(sessions: SessionStore, database: Path) -> None:
    sessions.create_session("Mine", MODEL)
    backup = take_daily_backup(database, today=DAY)
    assert backup is not None
    connection = sqlite3.connect(backup)
    connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    connection.close()

    with pytest.raises(BackupRefusedError, match="newer version of Cairn"):
        restore(database, backup)
    assert titles(sessions) == ["Mine"]


def test_an_older_backup_is_brought_up_to_date_and_left_untouched(
    sessions: SessionStore, database: Path, tmp_path: Path
) -> None:
    old = tmp_path / "old.db"
    connection = sqlite3.connect(old, isolation_level=None)
    migrate(connection, MIGRATIONS[:3])
    connection.execute(
        "INSERT INTO session (id, title, created_at, updated_at, model) "
        "VALUES ('s1', 'Old one', '2025-01-01T00:00:00+00:00', '2025-01-01T00:00:00+00:00', 'm')"
    )
    connection.close()
    untouched = old.read_bytes()

    restore(database, old)

    assert titles(sessions) == ["Old one"]
    assert old.read_bytes() == untouched
    version = sessions._connection.execute("PRAGMA user_version").fetchone()[0]
    assert version == SCHEMA_VERSION


def test_writes_between_steps_neither_wait_nor_restart_the_copy(
    sessions: SessionStore, database: Path, tmp_path: Path
) -> None:
    session = sessions.create_session("Busy", MODEL)
    for n in range(300):
        sessions.append_message(session.id, Role.USER, f"message {n} " + "word " * 50)
    other = SessionStore.open(database)
    steps = 0

    def write_meanwhile() -> bool:
        nonlocal steps
        steps += 1
        other.append_message(session.id, Role.USER, f"written during step {steps}")
        return False

    try:
        assert copy_database(database, tmp_path / "copy.db", cancelled=write_meanwhile, pages=4)
    finally:
        other.close()

    assert steps > 10  # written between steps, and the copy still finished
    connection = sqlite3.connect(tmp_path / "copy.db")
    try:
        (copied,) = connection.execute("SELECT count(*) FROM message").fetchone()
    finally:
        connection.close()
    assert copied == 300  # the database as it was when the copy began
    assert sessions.count_messages(session.id) == 300 + steps
