"""Opening the database: pragmas, migrations, the thread connection, error words."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.errors import BugError, DatabaseTooNewError, InvalidInputError, StorageError
from app.store import SCHEMA_VERSION, connect, open_database
from app.store.errors import translate
from app.store.migrations import MIGRATIONS, Migration, migrate, user_version


@pytest.fixture
def database(tmp_path: Path) -> Path:
    return tmp_path / "data" / "cairn.db"


@pytest.fixture
def opened(database: Path) -> Iterator[sqlite3.Connection]:
    result = open_database(database)
    yield result.connection
    result.connection.close()


def pragma(connection: sqlite3.Connection, name: str) -> object:
    return connection.execute(f"PRAGMA {name}").fetchone()[0]


def test_new_database_is_created_with_the_folder(database: Path) -> None:
    result = open_database(database)
    try:
        assert database.is_file()
        assert result.notice is None
        assert result.set_aside is None
        assert result.path == database
        assert user_version(result.connection) == SCHEMA_VERSION
    finally:
        result.connection.close()


def test_pragmas_are_set(opened: sqlite3.Connection) -> None:
    assert pragma(opened, "journal_mode") == "wal"
    assert pragma(opened, "foreign_keys") == 1
    assert pragma(opened, "synchronous") == 2  # FULL
    assert pragma(opened, "busy_timeout") == 5000
    assert opened.isolation_level is None


def test_schema_has_sessions_and_messages(opened: sqlite3.Connection) -> None:
    names = {
        row[0]
        for row in opened.execute("SELECT name FROM sqlite_schema WHERE type IN ('table', 'index')")
    }
    assert {"session", "message", "message_by_session_seq"} <= names


def test_check_constraints_refuse_unknown_role_and_status(opened: sqlite3.Connection) -> None:
    opened.execute(
        "INSERT INTO session (id, title, created_at, updated_at, model) "
        "VALUES ('s', 't', 'x', 'x', 'm')"
    )
    insert = (
        "INSERT INTO message (session_id, seq, role, content, created_at, status) "
        "VALUES ('s', ?, ?, 'hi', 'x', ?)"
    )
    with pytest.raises(sqlite3.IntegrityError):
        opened.execute(insert, (1, "system", "complete"))
    with pytest.raises(sqlite3.IntegrityError):
        opened.execute(insert, (2, "user", "lost"))
    opened.execute(insert, (3, "user", "complete"))


def test_reopening_does_not_migrate_again(database: Path) -> None:
    open_database(database).connection.close()
    result = open_database(database)
    try:
        assert user_version(result.connection) == SCHEMA_VERSION
        assert result.notice is None
    finally:
        result.connection.close()


def test_migrations_are_numbered_from_one_without_gaps() -> None:
    assert [m.version for m in MIGRATIONS] == list(range(1, len(MIGRATIONS) + 1))
    assert len(MIGRATIONS) == SCHEMA_VERSION


def test_a_new_migration_upgrades_an_existing_database(opened: sqlite3.Connection) -> None:
    later = Migration(
        version=SCHEMA_VERSION + 1,
        description="a table a later issue adds",
        statements=("CREATE TABLE later_table (id INTEGER PRIMARY KEY, kind TEXT NOT NULL)",),
    )
    assert migrate(opened, (*MIGRATIONS, later)) == SCHEMA_VERSION + 1
    opened.execute("INSERT INTO later_table (kind) VALUES ('undo')")


def test_a_failing_migration_leaves_the_previous_version(opened: sqlite3.Connection) -> None:
    broken = Migration(
        version=SCHEMA_VERSION + 1,
        description="fails half way",
        statements=("CREATE TABLE half (id INTEGER)", "THIS IS NOT SQL"),
    )
    with pytest.raises(sqlite3.OperationalError):
        migrate(opened, (*MIGRATIONS, broken))
    assert user_version(opened) == SCHEMA_VERSION
    assert opened.execute("SELECT count(*) FROM sqlite_schema WHERE name = 'half'").fetchone() == (
        0,
    )
    assert not opened.in_transaction


def test_migrations_with_a_gap_are_rejected(opened: sqlite3.Connection) -> None:
    gap = Migration(version=SCHEMA_VERSION + 2, description="gap", statements=())
    with pytest.raises(ValueError, match="without gaps"):
        migrate(opened, (*MIGRATIONS, gap))


def test_connect_gives_a_configured_connection(opened: sqlite3.Connection, database: Path) -> None:
    connection = connect(database)
    try:
        assert pragma(connection, "foreign_keys") == 1
        assert pragma(connection, "synchronous") == 2
        assert pragma(connection, "busy_timeout") == 5000
        assert pragma(connection, "journal_mode") == "wal"
    finally:
        connection.close()


def test_connect_to_a_missing_file_does_not_create_one(database: Path) -> None:
    with pytest.raises(StorageError, match="missing"):
        connect(database)
    assert not database.exists()


def test_connect_before_open_database_is_a_bug(tmp_path: Path) -> None:
    unmigrated = tmp_path / "cairn.db"
    unmigrated.write_bytes(b"")  # an empty file is an empty database at version 0
    with pytest.raises(BugError, match="open_database"):
        connect(unmigrated)


def test_connect_refuses_a_newer_database(opened: sqlite3.Connection, database: Path) -> None:
    opened.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(DatabaseTooNewError):
        connect(database)


def test_open_refuses_a_database_made_newer_behind_the_header(
    opened: sqlite3.Connection, database: Path
) -> None:
    # The version bump sits in the WAL while `opened` stays open, so only
    # SQLite (not the file header) sees it.
    opened.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 5}")
    header_version = int.from_bytes(database.read_bytes()[60:64], "big")
    assert header_version <= SCHEMA_VERSION
    with pytest.raises(DatabaseTooNewError, match="newer version of Cairn"):
        open_database(database)


# --- translation of sqlite3 errors ---------------------------------------------


def real_error(code_sql: str, connection: sqlite3.Connection) -> sqlite3.Error:
    try:
        connection.execute(code_sql)
    except sqlite3.Error as error:
        return error
    raise AssertionError(f"{code_sql!r} did not fail")


def test_disk_full_is_translated_in_plain_words(tmp_path: Path) -> None:
    connection = sqlite3.connect(tmp_path / "full.db")
    connection.execute("CREATE TABLE t (x TEXT)")
    connection.execute("PRAGMA max_page_count = 2")
    error = real_error("INSERT INTO t VALUES (zeroblob(100000))", connection)
    translated = translate(error, action="save your message", database=tmp_path / "full.db")
    assert isinstance(translated, StorageError)
    assert translated.retryable
    assert "disk is full" in translated.message
    assert str(tmp_path) in translated.message
    assert translated.detail is not None and "SQLITE_FULL" in translated.detail
    connection.close()


def test_read_only_is_translated_in_plain_words(opened: sqlite3.Connection, database: Path) -> None:
    reader = sqlite3.connect(f"{database.as_uri()}?mode=ro", uri=True)
    error = real_error("INSERT INTO session (id) VALUES ('x')", reader)
    translated = translate(error, action="save your message", database=database)
    assert isinstance(translated, StorageError)
    assert "isn't allowed to write" in translated.message
    assert str(database.parent) in translated.message
    reader.close()


def test_not_a_database_is_translated(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"not sqlite at all " * 100)
    connection = sqlite3.connect(garbage)
    error = real_error("SELECT * FROM sqlite_schema", connection)
    translated = translate(error, action="load the conversation", database=garbage)
    assert isinstance(translated, StorageError)
    assert "damaged" in translated.message
    connection.close()


def test_misuse_is_a_bug_not_the_users_fault(opened: sqlite3.Connection) -> None:
    error = real_error("INSERT INTO message (session_id) VALUES ('nobody')", opened)
    assert isinstance(error, sqlite3.IntegrityError)
    assert isinstance(translate(error, action="x", database=None), BugError)


def test_a_damaged_character_is_invalid_input() -> None:
    with pytest.raises(UnicodeEncodeError) as caught:
        "\ud800".encode()
    translated = translate(caught.value, action="save your message", database=None)
    assert isinstance(translated, InvalidInputError)
