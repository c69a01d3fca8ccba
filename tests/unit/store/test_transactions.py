"""Writes held while the database's check after a crash runs (app/store/transactions.py),
and `open_database` leaving that check to the window (`check_after_crash_later`)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.errors import StorageError
from app.core.models import Role
from app.store import SessionStore, open_database
from app.store.database import check_database, mark_clean_shutdown
from app.store.migrations import MIGRATIONS, migrate
from app.store.transactions import (
    WRITES_HELD_TITLE,
    hold_writes,
    release_writes,
    writes_held,
)

MODEL = "claude-sonnet-4-5"


@pytest.fixture
def database(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "data" / "cairn.db"
    yield path
    release_writes(path)  # never left held for another test


def crashed(database: Path, messages: int = 3) -> None:
    """A database Cairn was using when it stopped without its clean close."""
    opened = open_database(database)
    store = SessionStore(opened.connection, database=database)
    session = store.create_session("before the crash", MODEL)
    for n in range(messages):
        store.append_message(session.id, Role.USER, f"message {n}")
    store.close()  # no mark_clean_shutdown: the state file still says "in use"


def test_held_writes_are_refused_in_plain_words_and_nothing_is_written(database: Path) -> None:
    opened = open_database(database)
    store = SessionStore(opened.connection, database=database)
    session = store.create_session("held", MODEL)
    hold_writes(database)
    try:
        with pytest.raises(StorageError) as refused:
            store.append_message(session.id, Role.USER, "typed while checking")
        assert refused.value.title == WRITES_HELD_TITLE
        assert "Nothing you typed was lost" in refused.value.message
        assert store.count_messages(session.id) == 0  # reading goes on
    finally:
        release_writes(database)
    store.append_message(session.id, Role.USER, "typed after the check")
    assert store.count_messages(session.id) == 1
    store.close()


def test_a_hold_is_for_its_own_database_only(database: Path, tmp_path: Path) -> None:
    other = tmp_path / "other" / "cairn.db"
    hold_writes(database)
    assert writes_held(database)
    assert writes_held(database.parent / "." / "cairn.db")  # the same file, however named
    assert not writes_held(other)
    assert not writes_held(None)


def test_after_a_crash_the_check_can_wait_for_the_window(database: Path) -> None:
    crashed(database)

    opened = open_database(database, check_after_crash_later=True)
    try:
        assert opened.check_first == "Cairn did not close normally last time"
        assert (opened.checked, opened.check_reason) == (False, None)
        [session] = SessionStore(opened.connection, database=database).list_sessions()
        assert session.title == "before the crash"
        # What the window then runs, on a worker: it records the check as passed.
        assert not check_database(database).damaged
    finally:
        opened.connection.close()
        mark_clean_shutdown(database)
    assert open_database(database, check_after_crash_later=True).check_first is None


def test_without_a_crash_nothing_waits(database: Path) -> None:
    crashed(database)
    open_database(database).connection.close()  # checked at open: the old way
    mark_clean_shutdown(database)

    opened = open_database(database, check_after_crash_later=True)
    opened.connection.close()
    assert (opened.check_first, opened.checked) == (None, False)


def test_a_migration_due_after_a_crash_waits_for_the_check(database: Path) -> None:
    crashed(database)
    # In its place, the file as an older Cairn left it: the last migration not applied.
    database.unlink()
    older = sqlite3.connect(database, isolation_level=None)
    migrate(older, MIGRATIONS[:-1])
    older.close()

    opened = open_database(database, check_after_crash_later=True)
    opened.connection.close()
    # Nothing is written into a file not known to be sound: checked first, as before.
    assert opened.check_first is None
    assert opened.checked
