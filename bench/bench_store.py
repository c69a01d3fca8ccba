"""How much a durable message costs, and how fast a long transcript opens.

Run: .venv/bin/python bench/bench_store.py [--dir FOLDER] [--appends N]

Prints figures; it is not a pass/fail test. `--dir` should be on the disk the
user's data lives on: a tmpfs makes fsync free and the figures meaningless.
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
import tempfile
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.core.models import Role
from app.store import SessionStore, open_database
from bench.timing import p95, timed

MESSAGE = "A typical message of a few sentences, about four hundred characters long. " * 5


def report(label: str, samples: list[float]) -> None:
    ordered = sorted(samples)
    worst = p95(ordered)
    print(
        f"{label:<48} median {statistics.median(ordered):7.3f} ms   "
        f"p95 {worst:7.3f} ms   (n={len(ordered)})"
    )


def bench_append(folder: Path, appends: int) -> None:
    result = open_database(folder / "append.db")
    store = SessionStore(result.connection, database=result.path)
    session = store.create_session("bench", "claude-sonnet-4-5")
    report(
        "SessionStore.append_message (durable)",
        timed(lambda: store.append_message(session.id, Role.USER, MESSAGE), appends),
    )
    store.close()


def bench_bare_commit(folder: Path, appends: int) -> None:
    """The floor: one row, one WAL commit, same pragmas, no Python model around it."""
    connection = sqlite3.connect(folder / "bare.db", isolation_level=None)
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("PRAGMA synchronous = FULL")
    connection.execute("PRAGMA foreign_keys = ON")
    connection.execute("PRAGMA busy_timeout = 5000")
    connection.execute("CREATE TABLE row (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
    report(
        "bare SQLite INSERT + COMMIT (WAL, FULL)",
        timed(lambda: connection.execute("INSERT INTO row (body) VALUES (?)", (MESSAGE,)), appends),
    )
    connection.close()


def bench_load_newest(folder: Path, total: int, page: int) -> None:
    database = folder / "long.db"
    result = open_database(database)
    connection = result.connection
    session_id = str(uuid.uuid4())
    stamp = "2025-03-05T09:30:00.000000+00:00"
    # Filled in one transaction: the point is reading, not 10,000 fsyncs.
    connection.execute("BEGIN IMMEDIATE")
    connection.execute(
        "INSERT INTO session (id, title, created_at, updated_at, model, last_seq) "
        "VALUES (?, 'long', ?, ?, 'claude-sonnet-4-5', ?)",
        (session_id, stamp, stamp, total),
    )
    connection.executemany(
        "INSERT INTO message (session_id, seq, role, content, created_at, token_estimate, "
        "status) VALUES (?, ?, ?, ?, ?, 100, 'complete')",
        (
            (session_id, seq, "user" if seq % 2 else "assistant", f"{seq} {MESSAGE}", stamp)
            for seq in range(1, total + 1)
        ),
    )
    connection.execute("COMMIT")
    connection.close()

    store = SessionStore.open(database)
    assert len(store.messages(session_id, limit=page)) == page
    report(
        f"newest {page} of {total:,} messages (warm)",
        timed(lambda: store.messages(session_id, limit=page), 200),
    )
    report(
        f"{page} messages in the middle of {total:,} (warm)",
        timed(lambda: store.messages(session_id, before_seq=total // 2, limit=page), 200),
    )
    report(
        f"count_messages of {total:,} (warm)", timed(lambda: store.count_messages(session_id), 200)
    )
    store.close()

    def cold_open_and_load() -> None:
        cold = SessionStore.open(database)
        cold.messages(session_id, limit=page)
        cold.close()

    report(f"new connection + newest {page} of {total:,}", timed(cold_open_and_load, 50))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dir", type=Path, default=None, help="folder for the databases")
    parser.add_argument("--appends", type=int, default=2000)
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=arguments.dir, prefix="cairn-bench-") as name:
        folder = Path(name)
        print(f"SQLite {sqlite3.sqlite_version}, Python {sys.version.split()[0]}, in {folder}")
        bench_bare_commit(folder, arguments.appends)
        bench_append(folder, arguments.appends)
        bench_load_newest(folder, total=10_000, page=50)


if __name__ == "__main__":
    main()
