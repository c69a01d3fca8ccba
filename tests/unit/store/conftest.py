"""Fixtures shared by the store's tests: a database path, a fake clock, a store on it and a
second connection."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.store import SessionStore, connect, open_database
from tests.fakes.clock import FakeClock


@pytest.fixture
def database(tmp_path: Path) -> Path:
    return tmp_path / "cairn.db"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store(database: Path, clock: FakeClock) -> Iterator[SessionStore]:
    result = open_database(database)
    store = SessionStore(result.connection, database=result.path, clock=clock)
    yield store
    store.close()


@pytest.fixture
def raw(store: SessionStore, database: Path) -> Iterator[sqlite3.Connection]:
    """A second connection, for looking behind the store's back."""
    connection = connect(database)
    yield connection
    connection.close()
