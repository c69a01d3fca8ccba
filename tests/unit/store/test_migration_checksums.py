"""Migration 13, checksums: the `damaged` columns' CHECKs written into the tables'
definitions in place, without testing them against every row (issue 20), leaving the
same schema as migration 13 as it shipped; and its fallbacks."""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from app.store import migrations
from app.store.migrations import MIGRATIONS, Migration, _checksums, migrate

T = "2025-03-05T09:30:00.000000+00:00"


def version_12(database: Path, messages: int = 4) -> sqlite3.Connection:
    """A database at version 12 with one conversation of `messages` messages and a summary."""
    connection = sqlite3.connect(database, isolation_level=None)
    connection.execute("PRAGMA foreign_keys = ON")
    assert migrate(connection, MIGRATIONS[:12]) == 12
    connection.execute(
        "INSERT INTO session (id, title, created_at, updated_at, model, last_seq) "
        "VALUES ('s1', 'Trip', ?, ?, 'm', ?)",
        (T, T, messages),
    )
    connection.execute("BEGIN")
    connection.executemany(
        "INSERT INTO message (session_id, seq, role, content, created_at, token_estimate) "
        "VALUES ('s1', ?, ?, ?, ?, 3)",
        (
            (seq, "user" if seq % 2 else "assistant", f"Tram {seq} to Belém", T)
            for seq in range(1, messages + 1)
        ),
    )
    connection.execute("COMMIT")
    connection.execute(
        "INSERT INTO summary (id, session_id, tier, first_seq, last_seq, narrative, "
        "key_points, facets, source_tokens, summary_tokens, mode, trigger, created_at) "
        "VALUES ('a', 's1', 'condensed', 1, 2, 'They planned a trip', '[]', '{}', 10, 2, "
        "'rule', 'auto', ?)",
        (T,),
    )
    return connection


@pytest.fixture
def at_12(database: Path) -> Iterator[sqlite3.Connection]:
    connection = version_12(database)
    yield connection
    connection.close()


def definitions(connection: sqlite3.Connection) -> list[tuple[str, str]]:
    rows = connection.execute(
        "SELECT name, sql FROM sqlite_schema WHERE name IN ('message', 'summary') ORDER BY name"
    ).fetchall()
    return [(str(name), str(sql)) for name, sql in rows]


def the_shipped_way(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make migration 13 take its fallback: each CHECK tested against every row."""

    def refuse(_connection: sqlite3.Connection, _definitions: dict[str, str]) -> None:
        raise migrations._SchemaNotEdited("refused by the test")

    monkeypatch.setattr(migrations, "_write_definitions", refuse)


def steps_to_migrate(database: Path, messages: int) -> int:
    """SQLite's virtual-machine steps migration 13 takes over `messages` messages (its
    checksum back-fill is deferred: only the columns and the summaries' checksums)."""
    connection = version_12(database, messages)
    steps = 0

    def count() -> int:
        nonlocal steps
        steps += 1
        return 0

    connection.set_progress_handler(count, 1)
    try:
        assert migrate(connection, MIGRATIONS[:13]) == 13
    finally:
        connection.set_progress_handler(None, 0)
        connection.close()
    return steps


def test_the_schema_is_the_one_migration_13_shipped_with(
    at_12: sqlite3.Connection, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert migrate(at_12, MIGRATIONS[:13]) == 13
    in_place = definitions(at_12)

    the_shipped_way(monkeypatch)
    shipped = version_12(tmp_path / "shipped.db")
    try:
        assert migrate(shipped, MIGRATIONS[:13]) == 13
        assert in_place == definitions(shipped)
    finally:
        shipped.close()
    column = "damaged INTEGER NOT NULL DEFAULT 0 CHECK (damaged IN (0, 1))"
    assert all(sql.count(column) == 1 for _name, sql in in_place)
    assert at_12.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_no_row_is_read_to_add_the_checks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The work is the same at 50 and at 2,000 messages; the shipped way grows with them.
    small = steps_to_migrate(tmp_path / "small.db", 50)
    large = steps_to_migrate(tmp_path / "large.db", 2_000)
    assert large == small

    the_shipped_way(monkeypatch)
    shipped_small = steps_to_migrate(tmp_path / "shipped-small.db", 50)
    shipped_large = steps_to_migrate(tmp_path / "shipped-large.db", 2_000)
    assert shipped_large > shipped_small + 2_000


@pytest.mark.parametrize("table", ["message", "summary"])
def test_the_checks_hold_on_this_connection_and_on_one_opened_before(
    at_12: sqlite3.Connection, database: Path, table: str
) -> None:
    other = sqlite3.connect(database, isolation_level=None)
    try:
        assert other.execute(f"SELECT count(*) FROM {table}").fetchone()[0] > 0
        migrate(at_12, MIGRATIONS[:13])
        for connection in (at_12, other):
            connection.execute(f"UPDATE {table} SET damaged = 1")
            with pytest.raises(sqlite3.IntegrityError):
                connection.execute(f"UPDATE {table} SET damaged = 2")
            connection.execute(f"UPDATE {table} SET damaged = 0")
    finally:
        other.close()


def test_rows_are_kept_and_every_old_one_reads_as_sound(at_12: sqlite3.Connection) -> None:
    before = at_12.execute("SELECT id, content FROM message ORDER BY id").fetchall()

    migrate(at_12, MIGRATIONS[:13])

    assert at_12.execute("SELECT id, content FROM message ORDER BY id").fetchall() == before
    assert at_12.execute("SELECT DISTINCT damaged FROM message").fetchall() == [(0,)]
    assert at_12.execute("SELECT checksum IS NOT NULL FROM summary").fetchall() == [(1,)]


def failing_after(step: Callable[[sqlite3.Connection], None]) -> Migration:
    def then_fail(connection: sqlite3.Connection) -> None:
        step(connection)
        connection.execute("THIS IS NOT SQL")

    return Migration(version=13, description="fails after it", statements=(), then=then_fail)


def test_a_failure_after_the_edit_leaves_version_12_whole(
    at_12: sqlite3.Connection, database: Path
) -> None:
    with pytest.raises(sqlite3.OperationalError):
        migrate(at_12, (*MIGRATIONS[:12], failing_after(_checksums)))

    reopened = sqlite3.connect(database, isolation_level=None)
    try:
        assert reopened.execute("PRAGMA user_version").fetchone() == (12,)
        assert reopened.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        columns = [row[1] for row in reopened.execute("PRAGMA table_info(message)")]
        assert "damaged" not in columns
        assert migrate(reopened, MIGRATIONS[:13]) == 13  # and it goes on next time
        with pytest.raises(sqlite3.IntegrityError):
            reopened.execute("UPDATE message SET damaged = 2")
    finally:
        reopened.close()


def test_an_edit_refused_halfway_takes_the_shipped_way_from_the_start(
    at_12: sqlite3.Connection, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The message table's definition edited, then the summary's refused: everything the
    # first attempt did is undone, and the columns are added as migration 13 shipped.
    edit = migrations._write_definitions

    def edit_then_refuse(connection: sqlite3.Connection, definitions: dict[str, str]) -> None:
        edit(connection, {"message": definitions["message"]})
        raise migrations._SchemaNotEdited("refused by the test")

    monkeypatch.setattr(migrations, "_write_definitions", edit_then_refuse)

    assert migrate(at_12, MIGRATIONS[:13]) == 13

    monkeypatch.setattr(migrations, "_write_definitions", edit)
    fresh = version_12(tmp_path / "fresh.db")
    try:
        migrate(fresh, MIGRATIONS[:13])
        assert definitions(at_12) == definitions(fresh)
    finally:
        fresh.close()
    with pytest.raises(sqlite3.IntegrityError):
        at_12.execute("UPDATE summary SET damaged = 2")
    assert at_12.execute("PRAGMA integrity_check").fetchone() == ("ok",)


@pytest.mark.skipif(
    sys.version_info < (3, 12), reason="sqlite3.Connection.setconfig is Python 3.12+"
)
def test_a_sqlite_that_refuses_to_edit_its_schema_takes_the_shipped_way(
    at_12: sqlite3.Connection,
) -> None:
    # SQLITE_DBCONFIG_DEFENSIVE (https://www.sqlite.org/c3ref/c_dbconfig_defensive.html)
    # makes writable_schema a no-op: the UPDATE of sqlite_schema is refused.
    at_12.setconfig(sqlite3.SQLITE_DBCONFIG_DEFENSIVE, True)

    assert migrate(at_12, MIGRATIONS[:13]) == 13

    with pytest.raises(sqlite3.IntegrityError):
        at_12.execute("UPDATE message SET damaged = 2")
    assert at_12.execute("PRAGMA integrity_check").fetchone() == ("ok",)
