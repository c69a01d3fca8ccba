"""Kill a writing process at random moments: every message it reported is kept."""

from __future__ import annotations

import random
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

from app.core.models import MessageStatus
from app.store import SessionStore, open_database
from tests.integration.crash_child import expected_content

REPO = Path(__file__).resolve().parents[2]
ROUNDS = 10
SEED = 20250305
WATCHDOG_SECONDS = 120


def run_until_killed(
    database: Path, session_id: str, round_number: int, lines_before_kill: int, jitter: float
) -> list[tuple[int, int]]:
    """Start the child, SIGKILL it `jitter` seconds after its `lines_before_kill`th report.

    Returns every (seq, n) it reported, including lines already in the pipe
    when it died.
    """
    child = subprocess.Popen(
        [
            sys.executable,
            "-u",
            "-m",
            "tests.integration.crash_child",
            str(database),
            session_id,
            str(round_number),
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )
    # Only there to turn a hang into a failure; the test waits on output lines.
    watchdog = threading.Timer(WATCHDOG_SECONDS, child.kill)
    watchdog.start()
    try:
        assert child.stdout is not None and child.stderr is not None
        lines = []
        while len(lines) < lines_before_kill:
            line = child.stdout.readline()
            assert line, f"child stopped early: {child.stderr.read()}"
            lines.append(line)
        # Spin rather than sleep: sleep's granularity (up to 15 ms on Windows) is
        # coarser than one append, and the kill should land anywhere inside one.
        deadline = time.perf_counter() + jitter
        while time.perf_counter() < deadline:
            pass
        child.kill()  # SIGKILL on POSIX: no cleanup, no atexit, mid-transaction
        child.wait()
        rest = child.stdout.read()
        child.stdout.close()
        child.stderr.close()
    finally:
        watchdog.cancel()
    # A line cut by the kill has no newline: it promised nothing.
    lines += [line + "\n" for line in rest.split("\n")[:-1]]
    reported = []
    for line in lines:
        seq, n = line.split()
        reported.append((int(seq), int(n)))
    return reported


def test_killed_writer_loses_nothing_it_reported(tmp_path: Path) -> None:
    database = tmp_path / "cairn.db"
    result = open_database(database)
    store = SessionStore(result.connection, database=database)
    session_id = store.create_session("crash test", "claude-sonnet-4-5").id
    store.close()

    rng = random.Random(SEED)
    promised: dict[int, str] = {}
    last_seq = 0
    for round_number in range(ROUNDS):
        reported = run_until_killed(
            database, session_id, round_number, rng.randint(1, 80), rng.uniform(0, 0.003)
        )
        seqs = [seq for seq, _ in reported]
        assert seqs == sorted(set(seqs)), "seqs must be unique and increasing"
        assert seqs[0] > last_seq, "a seq from an earlier round was reused"
        last_seq = seqs[-1]
        promised.update({seq: expected_content(round_number, n) for seq, n in reported})

        result = open_database(database)
        assert result.notice is None
        assert [row[0] for row in result.connection.execute("PRAGMA quick_check")] == ["ok"]
        store = SessionStore(result.connection, database=database)
        try:
            store.recover_interrupted()
            kept = {m.seq: m for m in store.messages(session_id)}
            for seq, content in promised.items():
                assert seq in kept, f"message {seq} was reported durable but is gone"
                assert kept[seq].content == content
                assert kept[seq].status is MessageStatus.COMPLETE
            assert all(m.status is not MessageStatus.STREAMING for m in kept.values())
        finally:
            store.close()

    assert len(promised) >= ROUNDS
    checker = sqlite3.connect(database)
    try:
        assert checker.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    finally:
        checker.close()
