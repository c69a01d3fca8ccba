"""A database an older Cairn left, opened as Cairn opens it: the migrations stay quick,
the walks over every message (search index, checksums) are left for after the first
paint, and a walk killed mid-way (a crash, not a polite stop) goes on where it was,
losing and redoing nothing (issue 20 item 4)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from app.core.paths import AppPaths
from app.core.search import SearchQuery
from app.store import SCHEMA_VERSION, SessionStore, open_database
from app.store.backfill import pending, run_backfills
from app.store.checksums import find_altered
from app.store.database import connect, mark_clean_shutdown
from app.store.migrations import CHECKSUM_BACKFILL, FTS_TABLE, INDEX_BACKFILL, user_version
from app.store.search import ArchiveSearch
from tests.helpers.old_database import old_database

REPO = Path(__file__).resolve().parents[2]
# Runs the walks in batches of 50, saying after each how far it got, as the app's worker
# does; the fourth batch does its work, says "in a batch", and waits inside its
# transaction for a line that never comes: the test kills it there with SIGKILL.
CHILD = r"""
import sys
from app.store import backfill
from app.store.migrations import CHECKSUM_BACKFILL

step, calls = backfill._STEPS[CHECKSUM_BACKFILL], []

def stalling(connection, low, high):
    step(connection, low, high)
    calls.append(high)
    if len(calls) == 4:
        print("in a batch", flush=True)
        sys.stdin.readline()

backfill._STEPS[CHECKSUM_BACKFILL] = stalling
backfill.run_backfills(sys.argv[1], told=lambda p: print(p.done, flush=True), batch=50)
"""


@pytest.fixture
def database() -> Path:
    paths = AppPaths.from_environment()
    paths.ensure()
    return paths.database


def conversations(count: int, length: int) -> dict[str, list[str]]:
    return {
        f"Conversation {c}": [
            f"message {c}-{n} about harbour{n % 7} and café" for n in range(length)
        ]
        for c in range(count)
    }


def test_an_old_database_opens_with_its_walks_left_then_filled(database: Path) -> None:
    old_database(database, conversations(3, 40), version=4)
    opened = open_database(database)
    store = SessionStore(opened.connection, database=opened.path)
    try:
        assert user_version(opened.connection) == SCHEMA_VERSION
        assert pending(opened.connection) == {INDEX_BACKFILL: 0, CHECKSUM_BACKFILL: 0}
        # Readable at once, before any walk ran.
        sessions = store.list_sessions()
        assert len(sessions) == 3
        # A polite stop (quit) after one batch, then "the next start" from its mark.
        stops = iter([False, True])
        assert not run_backfills(database, stop=lambda: next(stops), batch=50)
    finally:
        store.close()
        mark_clean_shutdown(database)
    opened = open_database(database)
    try:
        assert pending(opened.connection) == {INDEX_BACKFILL: 50, CHECKSUM_BACKFILL: 50}
        assert run_backfills(database, batch=50)
        assert pending(opened.connection) == {}
        altered = find_altered(opened.connection)
        assert altered.messages == () and altered.unchecked == 0  # every checksum, right
    finally:
        opened.connection.close()
    search = ArchiveSearch.open(database)
    try:
        page = search.search(SearchQuery(text="cafe harbour3", limit=500))
        assert search.indexed and not page.partial
        assert page.total == sum(1 for n in range(40) if n % 7 == 3) * 3
    finally:
        search.close()


def test_a_walk_killed_mid_way_goes_on_where_it_was(database: Path) -> None:
    old_database(database, conversations(20, 100), version=12)  # the index there, no checksums
    opened = open_database(database)
    opened.connection.close()
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(database)],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )
    assert child.stdout is not None
    said = [child.stdout.readline().strip() for _ in range(4)]
    child.kill()  # killed (SIGKILL on POSIX) inside the fourth batch's transaction: no clean close
    child.wait()
    assert said == ["50", "100", "150", "in a batch"]
    reading = connect(database)
    try:
        mark = pending(reading)[CHECKSUM_BACKFILL]
        assert mark == 150  # what it said was done is kept; the batch it was in is not
        done = reading.execute(
            "SELECT count(*) FROM message WHERE checksum IS NOT NULL"
        ).fetchone()[0]
        assert done == mark  # and nothing past its mark is half done
        assert reading.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        reading.close()
    assert run_backfills(database, batch=50)
    reading = connect(database)
    try:
        assert pending(reading) == {}
        assert find_altered(reading).messages == ()
        assert (
            reading.execute("SELECT count(*) FROM message WHERE checksum IS NULL").fetchone()[0]
            == 0
        )
        reading.execute(f"INSERT INTO {FTS_TABLE} ({FTS_TABLE}) VALUES ('integrity-check')")
    finally:
        reading.close()
