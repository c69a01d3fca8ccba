"""Tidying the full-text index (app.store.search_upkeep): the same results after, one
transaction of its own (a crash inside loses nothing), and only when worth it."""

from __future__ import annotations

import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.search import SearchQuery
from app.store import SessionStore, connect, open_database
from app.store.database import open_read_only
from app.store.migrations import FTS_TABLE, INDEX_BACKFILL, defer
from app.store.search import ArchiveSearch
from app.store.search_upkeep import (
    TIDY_AT_SEGMENTS,
    IndexShape,
    index_shape,
    optimize,
    tidy_index,
)
from app.store.transactions import CHECKING, hold_writes, release_writes

WORDS = ("lisbon", "tram", "café", "harbour", "ticket", "museum", "river", "bridge")
SESSION = "s"


def text(n: int) -> str:
    # Words of its own too, so the index spans many pages and a merge many steps.
    own = " ".join(f"w{n}x{k}" for k in range(30))
    return f"{WORDS[n % len(WORDS)]} number{n % 7} {WORDS[(n * 3 + 1) % len(WORDS)]} {own}"


def add_message(connection: sqlite3.Connection, seq: int, content: str) -> int:
    """One message in a transaction of its own, as a reply's save writes it."""
    cursor = connection.execute(
        "INSERT INTO message (session_id, seq, role, content, created_at, token_estimate) "
        "VALUES (?, ?, ?, ?, '2026-01-01T00:00:00', 1)",
        (SESSION, seq, "user" if seq % 2 else "assistant", content),
    )
    return int(cursor.lastrowid or 0)


def written(database: Path, count: int) -> sqlite3.Connection:
    """`database` with `count` messages, each written in its own transaction."""
    open_database(database).connection.close()
    connection = connect(database)
    connection.execute(
        "INSERT INTO session (id, title, created_at, updated_at, model, last_seq) "
        "VALUES (?, 't', '2026-01-01', '2026-01-01', 'm', 0)",
        (SESSION,),
    )
    for seq in range(1, count + 1):
        add_message(connection, seq, text(seq))
    return connection


@pytest.fixture
def untidy(database: Path) -> Iterator[sqlite3.Connection]:
    """200 messages written one by one: an index of many segments."""
    connection = written(database, 200)
    yield connection
    connection.close()


def results(connection: sqlite3.Connection, database: Path) -> list[object]:
    """What every word finds, in the index and through the history's search (ranked)."""
    found: list[object] = []
    for word in (*WORDS, "number3"):
        rows = connection.execute(
            f"SELECT rowid, round(bm25({FTS_TABLE}), 9) FROM {FTS_TABLE} "
            f"WHERE {FTS_TABLE} MATCH ? ORDER BY rowid",
            (f'"{word}"',),
        ).fetchall()
        found.append(rows)
    search = ArchiveSearch(connection, database=database)
    page = search.search(SearchQuery(text="lisbon harbour", limit=50))
    found.append([(hit.message_id, hit.snippet) for hit in page.hits])
    return found


def assert_sound(connection: sqlite3.Connection) -> None:
    connection.execute(f"INSERT INTO {FTS_TABLE} ({FTS_TABLE}) VALUES ('integrity-check')")


def test_written_one_by_one_the_index_has_many_segments(untidy: sqlite3.Connection) -> None:
    shape = index_shape(untidy)
    assert shape is not None
    assert shape.segments >= TIDY_AT_SEGMENTS
    assert shape.worth_tidying


def test_tidying_leaves_one_segment_and_the_same_results(
    untidy: sqlite3.Connection, database: Path
) -> None:
    before = results(untidy, database)
    assert tidy_index(database)
    shape = index_shape(untidy)
    assert shape is not None
    assert (shape.segments, shape.largest, shape.merging) == (1, shape.pages, False)
    assert results(untidy, database) == before
    assert_sound(untidy)


def test_it_is_one_transaction_and_others_write_at_once_after(
    untidy: sqlite3.Connection, database: Path
) -> None:
    optimize(untidy)
    assert not untidy.in_transaction
    other = connect(database)
    try:
        assert index_shape(other).segments == 1  # type: ignore[union-attr]
        add_message(other, 1000, "written right after")
    finally:
        other.close()
    assert_sound(untidy)


def test_asked_to_stop_before_it_starts_it_does_nothing(
    untidy: sqlite3.Connection, database: Path
) -> None:
    shape = index_shape(untidy)
    assert not tidy_index(database, stop=lambda: True)
    assert index_shape(untidy) == shape


def test_a_crash_inside_loses_nothing(untidy: sqlite3.Connection, database: Path) -> None:
    before = results(untidy, database)
    shape = index_shape(untidy)
    crashing = connect(database)
    crashing.execute("BEGIN IMMEDIATE")
    crashing.execute(f"INSERT INTO {FTS_TABLE} ({FTS_TABLE}) VALUES ('optimize')")
    crashing.close()  # never committed: rolled back, as after a crash
    assert index_shape(untidy) == shape
    assert results(untidy, database) == before
    assert_sound(untidy)


def test_nothing_to_do_on_a_tidy_index_nor_for_a_few_new_rows(
    untidy: sqlite3.Connection, database: Path
) -> None:
    assert tidy_index(database)
    assert not tidy_index(database)
    for seq in range(1_000, 1_000 + TIDY_AT_SEGMENTS * 2):
        add_message(untidy, seq, text(seq))
    shape = index_shape(untidy)
    assert shape is not None and not shape.worth_tidying
    assert not tidy_index(database)


def test_a_new_database_has_nothing_to_tidy(database: Path) -> None:
    open_database(database).connection.close()
    assert not tidy_index(database)


@pytest.mark.parametrize(
    ("segments", "pages", "largest", "merging", "worth"),
    [
        (19, 4300, 2282, False, True),  # bench_recall's index at 100k
        (7, 3000, 1814, False, False),  # few segments: cheap enough to look up
        (12, 3000, 2900, False, False),  # many, but the new text is a sliver
        (2, 3000, 1500, True, False),  # automerge at work: its business
        (1, 3000, 3000, False, False),
    ],
)
def test_worth_tidying(segments: int, pages: int, largest: int, merging: bool, worth: bool) -> None:
    assert IndexShape(segments, pages, largest, merging).worth_tidying is worth


def test_not_while_writes_are_held(untidy: sqlite3.Connection, database: Path) -> None:
    hold_writes(database, CHECKING)
    try:
        assert not tidy_index(database)
    finally:
        release_writes(database, CHECKING)
    assert tidy_index(database)


def test_not_while_the_index_back_fill_is_unfinished(
    untidy: sqlite3.Connection, database: Path
) -> None:
    defer(untidy, INDEX_BACKFILL)
    assert not tidy_index(database)


def test_not_on_a_database_opened_read_only(untidy: sqlite3.Connection, tmp_path: Path) -> None:
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    database = folder / "cairn.db"
    untidy.execute(f"VACUUM INTO '{database}'")
    opened = open_read_only(database, tmp_path / "scratch")
    opened.connection.close()
    assert not tidy_index(database)


# Writes and tidy-ups interleaved in any order: the index always says what the text says.
OPERATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.integers(0, 50)),
        st.tuples(st.just("edit"), st.integers(0, 50)),
        st.tuples(st.just("delete"), st.integers(0, 50)),
        st.tuples(st.just("tidy"), st.just(0)),
    ),
    max_size=40,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(operations=OPERATIONS)
def test_writes_interleaved_with_tidying_keep_the_index_exact(
    operations: list[tuple[str, int]],
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        database = Path(folder) / "cairn.db"
        connection = written(database, 60)
        tidier = connect(database)
        try:
            seq = 1_000
            for operation, value in operations:
                ids = [row[0] for row in connection.execute("SELECT id FROM message")]
                if operation == "add":
                    seq += 1
                    add_message(connection, seq, text(value))
                elif operation == "edit" and ids:
                    connection.execute(
                        "UPDATE message SET content = ? WHERE id = ?",
                        (text(value + 3), ids[value % len(ids)]),
                    )
                elif operation == "delete" and ids:
                    connection.execute("DELETE FROM message WHERE id = ?", (ids[value % len(ids)],))
                elif operation == "tidy":
                    optimize(tidier)
            assert_sound(connection)
            for word in WORDS:
                indexed = [
                    row[0]
                    for row in connection.execute(
                        f"SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH ? "
                        "AND rowid > 0 ORDER BY rowid",
                        (f'"{word}"',),
                    )
                ]
                plain = word.replace("é", "e")
                truth = [
                    row[0]
                    for row in connection.execute("SELECT id, content FROM message ORDER BY id")
                    if plain in row[1].replace("é", "e").split()
                ]
                assert indexed == truth
        finally:
            tidier.close()
            connection.close()


def test_a_store_opened_after_tidying_finds_the_same(
    untidy: sqlite3.Connection, database: Path
) -> None:
    before = results(untidy, database)
    optimize(untidy)
    store = SessionStore(open_database(database).connection, database=database)
    try:
        assert results(untidy, database) == before
    finally:
        store.close()


def test_not_on_an_index_too_large_to_rewrite_while_saves_wait(
    untidy: sqlite3.Connection, database: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import app.store.search_upkeep as upkeep

    shape = index_shape(untidy)
    assert shape is not None
    monkeypatch.setattr(upkeep, "MAX_PAGES", shape.pages - 1)
    assert not tidy_index(database)
    assert index_shape(untidy) == shape
