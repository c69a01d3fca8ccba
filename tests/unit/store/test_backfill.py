"""The walks an upgrade leaves for after the first paint (app.store.backfill): resumable
in batches, never redoing or losing work, and exact whatever is written meanwhile."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.errors import StorageError
from app.core.search import SearchQuery
from app.store.backfill import (
    finish_backfills,
    index_pending,
    pending,
    progress,
    run_backfills,
)
from app.store.checksums import text_checksum
from app.store.migrations import (
    CHECKSUM_BACKFILL,
    FTS_TABLE,
    INDEX_BACKFILL,
    SCHEMA_VERSION,
    migrate,
)
from app.store.search import ArchiveSearch
from tests.helpers.old_database import WRITTEN_AT, old_database

WORDS = ("lisbon", "tram", "café", "harbour", "ticket", "museum", "river", "bridge")


def texts(count: int) -> list[str]:
    return [
        f"{WORDS[n % len(WORDS)]} number{n} {WORDS[(n * 3 + 1) % len(WORDS)]}" for n in range(count)
    ]


@pytest.fixture
def upgraded(database: Path) -> Iterator[sqlite3.Connection]:
    """A database an older Cairn (schema 4: no index, no checksums) left with 25 messages
    in two conversations, just migrated: both walks left to do."""
    old_database(database, {"Trip": texts(15), "Dinner": texts(10)})
    connection = raw(database)
    assert migrate(connection) == SCHEMA_VERSION
    yield connection
    connection.close()


def raw(database: Path) -> sqlite3.Connection:
    """A connection for migrating (`connect` wants a database already migrated)."""
    connection = sqlite3.connect(database, isolation_level=None)
    connection.execute("PRAGMA foreign_keys = ON")
    return connection


def found(connection: sqlite3.Connection, word: str) -> list[int]:
    rows = connection.execute(
        f"SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH ? AND rowid > 0 ORDER BY rowid",
        (f'"{word}"',),
    ).fetchall()
    return [int(row[0]) for row in rows]


def truth(connection: sqlite3.Connection, word: str) -> list[int]:
    """The messages holding `word` as a word, read from the text itself."""
    return [
        int(message_id)
        for message_id, content in connection.execute("SELECT id, content FROM message ORDER BY id")
        if word in str(content).casefold().replace("é", "e").split()
        or word in str(content).casefold().split()
    ]


def assert_index_exact(connection: sqlite3.Connection) -> None:
    connection.execute(f"INSERT INTO {FTS_TABLE} ({FTS_TABLE}) VALUES ('integrity-check')")
    for word in (*WORDS, "cafe", "added", "changed"):
        assert found(connection, word) == truth(connection, word), word


def assert_checksums_exact(connection: sqlite3.Connection) -> None:
    for content, checksum in connection.execute("SELECT content, checksum FROM message"):
        assert checksum == text_checksum(str(content))


def test_an_upgrade_leaves_both_walks_and_they_finish_exact(upgraded: sqlite3.Connection) -> None:
    assert pending(upgraded) == {INDEX_BACKFILL: 0, CHECKSUM_BACKFILL: 0}
    assert progress(upgraded).percent == 0
    assert found(upgraded, "lisbon") == []  # not indexed yet
    finish_backfills(upgraded, batch=7)
    assert pending(upgraded) == {}
    assert progress(upgraded).percent == 100
    assert_index_exact(upgraded)
    assert_checksums_exact(upgraded)


def test_a_new_database_has_nothing_to_walk(database: Path) -> None:
    connection = raw(database)
    migrate(connection)
    assert pending(connection) == {}
    connection.close()


def test_stopped_between_batches_it_goes_on_from_its_mark(
    upgraded: sqlite3.Connection, database: Path
) -> None:
    told: list[int] = []
    stops = iter([False, False, True])
    assert not run_backfills(
        database, told=lambda p: told.append(p.done), stop=lambda: next(stops), batch=5
    )
    # Two batches done and kept: the marks say so, and their messages are in.
    assert pending(upgraded) == {INDEX_BACKFILL: 10, CHECKSUM_BACKFILL: 10}
    assert told == [10, 20]
    assert found(upgraded, "lisbon") == [m for m in truth(upgraded, "lisbon") if m <= 10]
    assert 0 < progress(upgraded).percent < 100
    # "The next start": a new connection goes on from the marks, redoing nothing.
    assert run_backfills(database, batch=5)
    assert pending(upgraded) == {}
    assert_index_exact(upgraded)  # each message once: an integrity check would fail on twice
    assert_checksums_exact(upgraded)


def test_a_batch_that_fails_is_rolled_back_whole(
    upgraded: sqlite3.Connection, database: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.store import backfill

    def broken(connection: sqlite3.Connection, low: int, high: int) -> None:
        connection.execute("UPDATE message SET checksum = 1 WHERE id > ? AND id <= ?", (low, high))
        raise sqlite3.OperationalError("disk I/O error")

    # Both walks done, then the checksums' put back to its mark at 5, as if stopped there.
    finish_backfills(upgraded, batch=5)
    upgraded.execute(
        "INSERT INTO backfill (name, done_through) VALUES (?, 5)", (CHECKSUM_BACKFILL,)
    )
    upgraded.execute("UPDATE message SET checksum = NULL WHERE id > 5")
    monkeypatch.setitem(backfill._STEPS, CHECKSUM_BACKFILL, broken)
    with pytest.raises(StorageError):
        run_backfills(database, batch=5)
    assert pending(upgraded) == {CHECKSUM_BACKFILL: 5}  # the mark did not move
    assert upgraded.execute("SELECT count(*) FROM message WHERE checksum = 1").fetchone()[0] == 0
    monkeypatch.undo()
    assert run_backfills(database, batch=5)
    assert_checksums_exact(upgraded)


def test_search_reads_the_text_until_the_index_is_filled(
    upgraded: sqlite3.Connection, database: Path
) -> None:
    search = ArchiveSearch.open(database)
    try:
        page = search.search(SearchQuery(text="lisbon"))
        assert page.partial and not search.indexed
        assert page.total == len(truth(upgraded, "lisbon"))  # every match, read from the text
        finish_backfills(upgraded)
        page = search.search(SearchQuery(text="lisbon"))
        assert not page.partial and search.indexed  # the same search, now from the index
        assert page.total == len(truth(upgraded, "lisbon"))
    finally:
        search.close()


# What may happen to messages while the walks run: written, rewritten, deleted.
_operation = st.one_of(
    st.tuples(st.just("batch"), st.integers(1, 9)),
    st.tuples(st.just("add"), st.sampled_from(WORDS)),
    st.tuples(st.just("change"), st.integers(1, 40)),
    st.tuples(st.just("delete"), st.integers(1, 40)),
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(operations=st.lists(_operation, max_size=25))
def test_whatever_is_written_meanwhile_is_indexed_exactly_once(
    tmp_path_factory: pytest.TempPathFactory, operations: list[tuple[str, object]]
) -> None:
    database = tmp_path_factory.mktemp("walk") / "cairn.db"
    old_database(database, {"Trip": texts(15), "Dinner": texts(10)})
    connection = raw(database)
    migrate(connection)
    try:
        for kind, value in operations:
            if kind == "batch":
                from app.store.backfill import _one_batch

                _one_batch(connection, int(str(value)))
            elif kind == "add":
                seq = connection.execute(
                    "SELECT max(seq) + 1 FROM message WHERE session_id = 'old-1'"
                ).fetchone()[0]
                connection.execute(
                    "INSERT INTO message (session_id, seq, role, content, created_at) "
                    "VALUES ('old-1', ?, 'user', ?, ?)",
                    (seq, f"added {value}", WRITTEN_AT),
                )
            elif kind == "change":
                connection.execute(
                    "UPDATE message SET content = 'changed river' WHERE id = ?", (value,)
                )
            else:
                connection.execute("DELETE FROM message WHERE id = ?", (value,))
        finish_backfills(connection, batch=4)
        assert not index_pending(connection)
        assert_index_exact(connection)
    finally:
        connection.close()
