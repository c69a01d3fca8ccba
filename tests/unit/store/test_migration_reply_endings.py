"""Migration 6, how a reply ended: the message table's status CHECK widened in place (or
the table rebuilt, where its definition is not the expected one), and its rows,
indexes, triggers (full-text index, conversation counts) and the search view all
survive it."""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.store import migrations
from app.store.migrations import FTS_TABLE, MIGRATIONS, Migration, _widen_status_check, migrate

T = "2025-03-05T09:30:00.000000+00:00"


@pytest.fixture
def version_5(database: Path) -> Iterator[sqlite3.Connection]:
    """A database at version 5 with a conversation, a summary, a pin and every old status."""
    connection = sqlite3.connect(database, isolation_level=None)
    connection.execute("PRAGMA foreign_keys = ON")
    assert migrate(connection, MIGRATIONS[:5]) == 5
    connection.execute(
        "INSERT INTO session (id, title, created_at, updated_at, model, last_seq) "
        "VALUES ('s1', 'Trip', ?, ?, 'm', 4)",
        (T, T),
    )
    rows = (
        (1, "user", "Flights to Lisbon", "complete"),
        (2, "assistant", "Hotel in Alfama", "stopped"),
        (3, "user", "Pastéis de nata", "complete"),
        (4, "assistant", "Tram 28", "error"),
    )
    for seq, role, text, status in rows:
        connection.execute(
            "INSERT INTO message (session_id, seq, role, content, created_at, status, "
            "token_estimate) VALUES ('s1', ?, ?, ?, ?, ?, 3)",
            (seq, role, text, T, status),
        )
    connection.execute(
        "INSERT INTO summary (id, session_id, tier, first_seq, last_seq, narrative, "
        "key_points, facets, source_tokens, summary_tokens, mode, trigger, created_at) "
        "VALUES ('a', 's1', 'condensed', 1, 2, 'They planned a trip', '[]', '{}', 10, 2, "
        "'rule', 'auto', ?)",
        (T,),
    )
    connection.execute("UPDATE message SET summary_id = 'a' WHERE seq <= 2")
    connection.execute("UPDATE message SET pinned = 1 WHERE seq = 3")
    yield connection
    connection.close()


def schema(connection: sqlite3.Connection) -> set[tuple[str, str]]:
    rows = connection.execute(
        "SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"
    ).fetchall()
    return {(kind, name) for kind, name in rows}


def found(connection: sqlite3.Connection, words: str) -> list[int]:
    rows = connection.execute(
        f"SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH ? ORDER BY rowid", (words,)
    ).fetchall()
    return [row[0] for row in rows]


def test_rows_and_schema_survive(version_5: sqlite3.Connection) -> None:
    before_rows = version_5.execute("SELECT * FROM message ORDER BY id").fetchall()
    before_schema = schema(version_5)

    assert migrate(version_5, MIGRATIONS[:6]) == 6

    assert version_5.execute("SELECT * FROM message ORDER BY id").fetchall() == before_rows
    assert schema(version_5) == before_schema
    assert version_5.execute("PRAGMA foreign_key_check").fetchall() == []
    assert version_5.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_new_statuses_are_accepted_and_others_refused(version_5: sqlite3.Connection) -> None:
    migrate(version_5, MIGRATIONS[:6])
    for status in ("cut_off", "paused", "declined"):
        version_5.execute("UPDATE message SET status = ? WHERE seq = 4", (status,))
    with pytest.raises(sqlite3.IntegrityError):
        version_5.execute("UPDATE message SET status = 'finished' WHERE seq = 4")


def test_triggers_still_keep_the_index_and_counts_in_step(version_5: sqlite3.Connection) -> None:
    migrate(version_5, MIGRATIONS[:6])
    tram = found(version_5, "tram")
    assert len(tram) == 1
    version_5.execute("UPDATE message SET content = 'Funicular' WHERE seq = 4")
    assert found(version_5, "tram") == []
    assert found(version_5, "funicular") == tram
    version_5.execute(
        "INSERT INTO message (session_id, seq, role, content, created_at) "
        "VALUES ('s1', 5, 'user', 'Sintra palace', ?)",
        (T,),
    )
    assert len(found(version_5, "sintra")) == 1
    counts = version_5.execute(
        "SELECT messages, archived, summaries FROM session_count WHERE session_id = 's1'"
    ).fetchone()
    assert counts == (5, 2, 1)
    version_5.execute("DELETE FROM message WHERE seq = 5")
    assert found(version_5, "sintra") == []
    assert version_5.execute("SELECT messages FROM session_count").fetchone() == (4,)


def test_the_pin_check_is_kept(version_5: sqlite3.Connection) -> None:
    migrate(version_5, MIGRATIONS[:6])
    with pytest.raises(sqlite3.IntegrityError):
        version_5.execute("UPDATE message SET summary_id = 'a' WHERE seq = 3")


def root_page(connection: sqlite3.Connection) -> int:
    row = connection.execute(
        "SELECT rootpage FROM sqlite_schema WHERE type = 'table' AND name = 'message'"
    ).fetchone()
    return int(row[0])


def test_the_check_is_widened_in_place_without_copying_a_row(
    version_5: sqlite3.Connection,
) -> None:
    # Issue 20: a rebuild copied every message before the first paint (5.4 s at 200k).
    before = root_page(version_5)

    assert migrate(version_5, MIGRATIONS[:6]) == 6

    assert root_page(version_5) == before  # the same b-tree: nothing was copied
    version_5.execute("UPDATE message SET status = 'paused' WHERE seq = 4")
    assert version_5.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_a_connection_open_during_the_migration_sees_the_wider_check(
    version_5: sqlite3.Connection, database: Path
) -> None:
    other = sqlite3.connect(database, isolation_level=None)
    try:
        assert other.execute("SELECT count(*) FROM message").fetchone() == (4,)
        migrate(version_5, MIGRATIONS[:6])
        other.execute("UPDATE message SET status = 'declined' WHERE seq = 4")
        with pytest.raises(sqlite3.IntegrityError):
            other.execute("UPDATE message SET status = 'finished' WHERE seq = 4")
    finally:
        other.close()


def test_a_failure_after_the_widening_leaves_version_5_whole(
    version_5: sqlite3.Connection, database: Path
) -> None:
    def widen_then_fail(connection: sqlite3.Connection) -> None:
        _widen_status_check(connection)
        connection.execute("THIS IS NOT SQL")

    broken = Migration(
        version=6, description="fails after the widening", statements=(), then=widen_then_fail
    )
    with pytest.raises(sqlite3.OperationalError):
        migrate(version_5, (*MIGRATIONS[:5], broken))

    reopened = sqlite3.connect(database, isolation_level=None)
    try:
        assert reopened.execute("PRAGMA user_version").fetchone() == (5,)
        assert reopened.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        with pytest.raises(sqlite3.IntegrityError):
            reopened.execute("UPDATE message SET status = 'paused' WHERE seq = 4")
        assert migrate(reopened, MIGRATIONS[:6]) == 6  # and it goes on next time
        reopened.execute("UPDATE message SET status = 'paused' WHERE seq = 4")
    finally:
        reopened.close()


def test_a_table_defined_otherwise_is_rebuilt_instead(
    version_5: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A definition the in-place change does not recognise takes the rebuild: rows and
    # schema kept, the new statuses accepted.
    monkeypatch.setattr(migrations, "_STATUS_CHECK_V1", "CHECK (status IN ('nothing'))")
    before_rows = version_5.execute("SELECT * FROM message ORDER BY id").fetchall()
    before_root = root_page(version_5)

    assert migrate(version_5, MIGRATIONS[:6]) == 6

    assert root_page(version_5) != before_root  # copied into a new table
    assert version_5.execute("SELECT * FROM message ORDER BY id").fetchall() == before_rows
    version_5.execute("UPDATE message SET status = 'cut_off' WHERE seq = 4")
    assert version_5.execute("PRAGMA integrity_check").fetchone() == ("ok",)


@pytest.mark.skipif(
    sys.version_info < (3, 12), reason="sqlite3.Connection.setconfig is Python 3.12+"
)
def test_a_sqlite_that_refuses_to_edit_its_schema_rebuilds_instead(
    version_5: sqlite3.Connection,
) -> None:
    # SQLITE_DBCONFIG_DEFENSIVE (https://www.sqlite.org/c3ref/c_dbconfig_defensive.html)
    # makes writable_schema a no-op: the UPDATE of sqlite_schema is refused.
    version_5.setconfig(sqlite3.SQLITE_DBCONFIG_DEFENSIVE, True)
    before_rows = version_5.execute("SELECT * FROM message ORDER BY id").fetchall()

    assert migrate(version_5, MIGRATIONS[:6]) == 6

    assert version_5.execute("SELECT * FROM message ORDER BY id").fetchall() == before_rows
    version_5.execute("UPDATE message SET status = 'declined' WHERE seq = 4")
    assert version_5.execute("PRAGMA integrity_check").fetchone() == ("ok",)
