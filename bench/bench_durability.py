"""What issue 21's safeguards cost on the paths they sit on.

Run: .venv/bin/python bench/bench_durability.py [--turns 200] [--archived 100000]

1. The checksum per append: `SessionStore.append_message` as the app calls it
   (a durable commit, synchronous=FULL), on a real cairn.db holding one
   conversation with `--archived` archived messages and 1,000 live ones, for
   message sizes of 200 characters, 2,000 and 20,000; beside it the checksum
   alone (`text_checksum`) on the same text, so its share of the append shows.
2. The passive checkpoint per turn: a whole turn's writes as the reply worker
   makes them (the user's message, the reply's row, five streamed saves, then
   `finish_message`, which ends with the checkpoint), timed with and without the
   checkpoint's own `PRAGMA wal_checkpoint(PASSIVE)`, and the checkpoint alone.
   It runs on the reply's worker thread, never the GUI thread.

Prints medians and p95 in milliseconds; not a pass/fail test.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.core.models import MessageStatus, Role
from app.store import SessionStore, open_database
from app.store.checksums import text_checksum
from app.store.database import checkpoint
from bench.timing import timed

PROSE = (
    "We walked the ridge above the lake at dawn, counted eleven herons, and agreed to "
    "come back in October with the long lens and a thermos of that smoky tea. "
)


def fill(path: Path, archived: int, live: int) -> tuple[SessionStore, str]:
    opened = open_database(path)
    store = SessionStore(opened.connection, database=path)
    session = store.create_session("Bench", "claude-sonnet-4-6")
    connection = opened.connection
    connection.execute("BEGIN")
    connection.executemany(
        "INSERT INTO message (session_id, seq, role, content, created_at, token_estimate, "
        "status, checksum) VALUES (?, ?, ?, ?, '2026-01-01T00:00:00+00:00', 40, 'complete', ?)",
        (
            (session.id, seq, ("user", "assistant")[seq % 2], PROSE * 4, text_checksum(PROSE * 4))
            for seq in range(1, archived + live + 1)
        ),
    )
    connection.execute(
        "UPDATE session SET last_seq = ? WHERE id = ?", (archived + live, session.id)
    )
    connection.execute("COMMIT")
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return store, session.id


def line(label: str, times: list[float]) -> str:
    ordered = sorted(times)
    p95 = ordered[int(len(ordered) * 0.95) - 1]
    return f"{label:<52} median {statistics.median(times):8.3f} ms   p95 {p95:8.3f} ms"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--archived", type=int, default=100_000)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="cairn-bench-durability-"))
    store, session_id = fill(folder / "cairn.db", args.archived, 1000)
    print(f"cairn.db: {args.archived:,} archived + 1,000 live messages, {args.turns} runs each")
    print(f"machine: {os.cpu_count()} cores, {sys.platform}, Python {sys.version.split()[0]}")
    print()
    print("1. checksum per append")
    for size in (200, 2_000, 20_000):
        text = (PROSE * (size // len(PROSE) + 1))[:size]
        appends = timed(
            lambda text=text, tokens=size // 4: store.append_message(
                session_id, Role.USER, text, token_estimate=tokens
            ),
            args.turns,
        )
        alone = timed(lambda text=text: text_checksum(text), args.turns * 10)
        print(line(f"   append_message, {size:,} characters (whole path)", appends))
        print(line(f"   of which the checksum of {size:,} characters", alone))
    print()
    print("2. passive checkpoint per turn (reply worker thread)")
    connection = store._connection

    def turn(with_checkpoint: bool) -> float:
        store.append_message(session_id, Role.USER, PROSE * 2, token_estimate=80)
        reply = store.append_message(
            session_id, Role.ASSISTANT, "", status=MessageStatus.STREAMING, token_estimate=0
        )
        for part in range(1, 6):
            store.update_message_content(reply.id, PROSE * part * 2)
        start = time.perf_counter()
        if not with_checkpoint:
            # finish_message without its checkpoint: the same UPDATE as it makes.
            connection.execute("BEGIN IMMEDIATE")
            connection.execute(
                "UPDATE message SET content = ?, status = 'complete', checksum = ? WHERE id = ?",
                (PROSE * 12, text_checksum(PROSE * 12), reply.id),
            )
            connection.execute("COMMIT")
        else:
            store.finish_message(reply.id, PROSE * 12, MessageStatus.COMPLETE, token_estimate=400)
        return (time.perf_counter() - start) * 1000

    without = [turn(False) for _ in range(args.turns)]
    checkpoint(connection)
    with_ = [turn(True) for _ in range(args.turns)]
    alone = []
    for _ in range(args.turns):
        store.append_message(session_id, Role.USER, PROSE * 2, token_estimate=80)
        start = time.perf_counter()
        checkpoint(connection)
        alone.append((time.perf_counter() - start) * 1000)
    print(line("   finishing a reply, no checkpoint (before)", without))
    print(line("   finish_message with its passive checkpoint (now)", with_))
    print(line("   the checkpoint alone, after one appended message", alone))
    store.close()


if __name__ == "__main__":
    main()
