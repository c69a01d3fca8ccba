"""Migration 5, the full-text index: back-fill of an existing database, triggers that
keep it in step, and a SQLite without FTS5 (DESIGN §2 message_fts)."""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.store.backfill import finish_backfills, index_pending
from app.store.migrations import FTS_TABLE, MIGRATIONS, SCHEMA_VERSION, migrate, user_version

T = "2025-03-05T09:30:00.000000+00:00"


@pytest.fixture
def version_4(database: Path) -> Iterator[sqlite3.Connection]:
    """A database as Cairn left it before the index: a conversation, a summary."""
    connection = sqlite3.connect(database, isolation_level=None)
    connection.execute("PRAGMA foreign_keys = ON")
    assert migrate(connection, MIGRATIONS[:4]) == 4
    connection.execute(
        "INSERT INTO session (id, title, created_at, updated_at, model, last_seq) "
        "VALUES ('s1', 'Trip', ?, ?, 'm', 3)",
        (T, T),
    )
    for seq, text in enumerate(("Flights to Lisbon", "Hotel in Alfama", "Crème brûlée"), 1):
        connection.execute(
            "INSERT INTO message (session_id, seq, role, content, created_at) "
            "VALUES ('s1', ?, 'user', ?, ?)",
            (seq, text, T),
        )
    connection.execute(
        "INSERT INTO summary (id, session_id, tier, first_seq, last_seq, narrative, "
        "key_points, facets, source_tokens, summary_tokens, mode, trigger, created_at) "
        "VALUES ('a', 's1', 'condensed', 1, 2, 'They planned a trip', ?, ?, 10, 2, 'rule', "
        "'auto', ?)",
        (
            json.dumps([{"text": "Budget of 900 euros", "sources": [1]}]),
            json.dumps({"entities": ["plan.md"], "decisions": [{"text": "Take TAP"}]}),
            T,
        ),
    )
    connection.execute("UPDATE message SET summary_id = 'a' WHERE seq <= 2")
    yield connection
    connection.close()


def found(connection: sqlite3.Connection, words: str) -> list[int]:
    rows = connection.execute(
        f"SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH ? ORDER BY rowid", (words,)
    ).fetchall()
    return [row[0] for row in rows]


def message_id(connection: sqlite3.Connection, seq: int) -> int:
    return int(connection.execute("SELECT id FROM message WHERE seq = ?", (seq,)).fetchone()[0])


def summary_key(connection: sqlite3.Connection, summary_id: str) -> int:
    row = connection.execute(
        "SELECT key FROM summary_search_key WHERE summary_id = ?", (summary_id,)
    ).fetchone()
    return int(row[0])


def test_an_existing_database_is_back_filled(version_4: sqlite3.Connection) -> None:
    assert migrate(version_4) == SCHEMA_VERSION
    key = summary_key(version_4, "a")
    assert key < 0
    # The summaries are indexed by the migration; the messages after the first paint.
    assert found(version_4, "planned") == [key]
    assert found(version_4, "lisbon") == []
    assert index_pending(version_4)
    finish_backfills(version_4)
    assert not index_pending(version_4)
    assert found(version_4, "lisbon") == [message_id(version_4, 1)]  # archived, found
    assert found(version_4, "creme brulee") == [message_id(version_4, 3)]  # accents folded
    assert found(version_4, "planned") == [key]  # the narrative
    assert found(version_4, "euros") == [key]  # a key point
    assert found(version_4, "plan md") == [key]  # a facet
    assert found(version_4, "TAP") == [key]
    assert found(version_4, "sources") == []  # JSON keys are not text
    assert found(version_4, "entities") == []
    counts = version_4.execute(
        "SELECT session_id, messages, archived, summaries FROM session_count"
    ).fetchall()
    assert counts == [("s1", 3, 2, 1)]


def test_every_write_keeps_the_index_in_step(version_4: sqlite3.Connection) -> None:
    migrate(version_4)
    finish_backfills(version_4)
    first = message_id(version_4, 1)
    version_4.execute("UPDATE message SET content = 'Trains to Porto' WHERE id = ?", (first,))
    assert found(version_4, "lisbon") == []
    assert found(version_4, "porto") == [first]
    version_4.execute("UPDATE summary SET narrative = 'A walk by the river' WHERE id = 'a'")
    assert found(version_4, "planned") == []
    assert found(version_4, "river") == [summary_key(version_4, "a")]
    version_4.execute(
        "INSERT INTO summary (id, session_id, tier, first_seq, last_seq, narrative, "
        "source_tokens, summary_tokens, mode, trigger, created_at) "
        "VALUES ('b', 's1', 'condensed', 3, 3, 'Dessert talk', 1, 1, 'rule', 'auto', ?)",
        (T,),
    )
    assert found(version_4, "dessert") == [summary_key(version_4, "b")]
    assert summary_key(version_4, "b") < summary_key(version_4, "a")
    version_4.execute("UPDATE message SET summary_id = NULL")
    version_4.execute("DELETE FROM summary WHERE id = 'b'")
    assert found(version_4, "dessert") == []
    # Deleting the conversation cascades to its messages and summaries, and their words.
    version_4.execute("DELETE FROM session WHERE id = 's1'")
    assert version_4.execute(f"SELECT count(*) FROM {FTS_TABLE}").fetchone()[0] == 0
    assert found(version_4, "porto OR river OR alfama") == []
    assert version_4.execute("SELECT count(*) FROM summary_search_key").fetchone()[0] == 0
    version_4.execute(f"INSERT INTO {FTS_TABLE} ({FTS_TABLE}) VALUES ('integrity-check')")


def test_without_fts5_the_migration_still_succeeds(
    version_4: sqlite3.Connection, caplog: pytest.LogCaptureFixture
) -> None:
    """A real SQLite refusing to create the FTS5 table, as one built without it does."""

    def no_fts5(action: int, table: str | None, module: str | None, *_: object) -> int:
        if action == sqlite3.SQLITE_CREATE_VTABLE and module == "fts5":
            return sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_OK

    version_4.set_authorizer(no_fts5)
    assert migrate(version_4) == SCHEMA_VERSION
    version_4.set_authorizer(None)
    assert user_version(version_4) == SCHEMA_VERSION
    tables = {row[0] for row in version_4.execute("SELECT name FROM sqlite_master")}
    assert FTS_TABLE not in tables
    assert "search_document" in tables
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "full-text index" in warnings[0].getMessage()
    # Writes work without the index's triggers.
    version_4.execute("UPDATE message SET content = 'x' WHERE seq = 3")
    version_4.execute("DELETE FROM session")


def test_the_lookups_kept_before_recall_quotes_come_through_the_rebuild(
    version_4: sqlite3.Connection,
) -> None:
    recalled = next(m for m in MIGRATIONS if "other conversations" in m.description)
    before = MIGRATIONS[: recalled.version - 1]
    assert migrate(version_4, before) == recalled.version - 1
    reply = message_id(version_4, 2)
    version_4.execute(
        "INSERT INTO lookup (message_id, ordinal, query, results_json, created_at) "
        "VALUES (?, 1, 'gate', '[]', ?)",
        (reply, T),
    )
    with pytest.raises(sqlite3.IntegrityError):  # ordinal 0 was refused before
        version_4.execute(
            "INSERT INTO lookup (message_id, ordinal, query, results_json, created_at) "
            "VALUES (?, 0, '', '[]', ?)",
            (reply, T),
        )

    assert migrate(version_4) == SCHEMA_VERSION

    version_4.execute(
        "INSERT INTO lookup (message_id, ordinal, query, results_json, created_at) "
        "VALUES (?, 0, '', '[]', ?)",
        (reply, T),
    )
    rows = version_4.execute("SELECT ordinal, query FROM lookup ORDER BY ordinal").fetchall()
    assert rows == [(0, ""), (1, "gate")]
    version_4.execute("DELETE FROM message WHERE id = ?", (reply,))  # still cascades
    assert version_4.execute("SELECT count(*) FROM lookup").fetchone() == (0,)
