"""Finding words in a large history: the index's build time and size, a search's first
page, a streamed reply's save with the index in step, and the History window's list.

Run: .venv/bin/python bench/bench_search.py [--messages N] [--conversations N]

1,000,000 synthetic messages (Zipf-distributed words over a 30,000-word vocabulary,
sentences of 4–24 words, user messages short and replies longer) across 10,000
conversations, a third of them with summaries (condensed, some compressed), are built
once into /tmp/cairn-bench/ (minutes; progress is printed) at schema 4, then migrated
to 5 on a copy, which times the index's back-fill. Prints figures; not a test.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sqlite3
import statistics
import sys
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from itertools import accumulate
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.core.search import SearchOrder, SearchQuery
from app.store.migrations import MIGRATIONS, migrate
from app.store.search import ArchiveSearch
from bench.timing import p95, timed

FOLDER = Path("/tmp/cairn-bench")
VOCABULARY = 30_000
SYLLABLES = [c + v for c in "bcdfghjklmnprstvwz" for v in ("a", "e", "i", "o", "u", "ai", "ou")]
START = datetime(2022, 1, 1, tzinfo=UTC)


def vocabulary(rng: random.Random) -> list[str]:
    words: set[str] = set()
    while len(words) < VOCABULARY:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.choice((1, 2, 2, 3, 3, 4)))))
    ordered = sorted(words)
    rng.shuffle(ordered)
    return ordered


class Writer:
    """Zipf text: word of rank r drawn with weight 1 / r^1.07."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.words = vocabulary(rng)
        self.weights = list(accumulate(1 / (rank**1.07) for rank in range(1, VOCABULARY + 1)))

    def sentence(self) -> str:
        words = self.rng.choices(self.words, cum_weights=self.weights, k=self.rng.randint(4, 24))
        return " ".join(words).capitalize() + "."

    def message(self, sentences: int) -> str:
        return " ".join(self.sentence() for _ in range(sentences))


def stamp(moment: datetime) -> str:
    return moment.isoformat(timespec="microseconds")


def build(path: Path, messages: int, conversations: int) -> None:
    """A schema-4 database (before the index), built with big executemany transactions."""
    rng = random.Random(9)
    writer = Writer(rng)
    temporary = path.with_suffix(".building")
    temporary.unlink(missing_ok=True)
    connection = sqlite3.connect(temporary, isolation_level=None)
    connection.execute("PRAGMA journal_mode = OFF")
    connection.execute("PRAGMA synchronous = OFF")
    migrate(connection, MIGRATIONS[:4])
    per = messages // conversations
    started = time.perf_counter()
    connection.execute("BEGIN")
    for number in range(conversations):
        session_id = str(uuid.UUID(int=rng.getrandbits(128)))
        began = START + timedelta(minutes=number * 90)
        rows = []
        for seq in range(1, per + 1):
            role = "user" if seq % 2 else "assistant"
            text = writer.message(rng.randint(1, 3) if role == "user" else rng.randint(1, 8))
            rows.append(
                (session_id, seq, role, text, stamp(began + timedelta(seconds=seq * 40)), 50)
            )
        updated = stamp(began + timedelta(seconds=per * 40))
        connection.execute(
            "INSERT INTO session (id, title, created_at, updated_at, model, last_seq) "
            "VALUES (?, ?, ?, ?, 'claude-sonnet-4-5', ?)",
            (session_id, writer.sentence()[:40], stamp(began), updated, per),
        )
        connection.executemany(
            "INSERT INTO message (session_id, seq, role, content, created_at, token_estimate) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            rows,
        )
        if number % 3 == 0 and per >= 60:
            summarize(connection, writer, session_id, began, compress=number % 9 == 0)
        if number % 500 == 499:
            connection.execute("COMMIT")
            done = (number + 1) * per
            print(f"  built {done:,} messages in {time.perf_counter() - started:.0f} s", flush=True)
            connection.execute("BEGIN")
    connection.execute("COMMIT")
    connection.close()
    temporary.rename(path)


def summarize(
    connection: sqlite3.Connection,
    writer: Writer,
    session_id: str,
    began: datetime,
    *,
    compress: bool,
) -> None:
    """Two condensed summaries over messages 1–30 and 31–60; maybe one compressed over both."""
    ids = []
    for first in (1, 31):
        summary_id = str(uuid.uuid4())
        ids.append(summary_id)
        insert_summary(connection, writer, summary_id, session_id, first, first + 29, began)
        connection.execute(
            "UPDATE message SET summary_id = ? WHERE session_id = ? AND seq BETWEEN ? AND ?",
            (summary_id, session_id, first, first + 29),
        )
    if compress:
        parent = str(uuid.uuid4())
        insert_summary(connection, writer, parent, session_id, 1, 60, began, tier="compressed")
        connection.executemany(
            "UPDATE summary SET state = 'superseded', parent_id = ? WHERE id = ?",
            [(parent, child) for child in ids],
        )


def insert_summary(
    connection: sqlite3.Connection,
    writer: Writer,
    summary_id: str,
    session_id: str,
    first: int,
    last: int,
    began: datetime,
    tier: str = "condensed",
) -> None:
    key_points = [{"text": writer.sentence(), "sources": [first]} for _ in range(4)]
    facets = {"entities": [writer.sentence().split()[0] for _ in range(3)]}
    connection.execute(
        "INSERT INTO summary (id, session_id, tier, first_seq, last_seq, narrative, key_points, "
        "facets, source_tokens, summary_tokens, mode, trigger, created_at, depth) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1500, 200, 'llm', 'auto', ?, ?)",
        (
            summary_id,
            session_id,
            tier,
            first,
            last,
            writer.message(6),
            json.dumps(key_points),
            json.dumps(facets),
            stamp(began + timedelta(seconds=last * 40 + 5)),
            2 if tier == "compressed" else 1,
        ),
    )


def report(label: str, samples: list[float]) -> None:
    ordered = sorted(samples)
    worst = p95(ordered)
    print(
        f"{label:<52} p50 {statistics.median(ordered):8.2f} ms   "
        f"p95 {worst:8.2f} ms   max {ordered[-1]:8.2f} ms   (n={len(ordered)})",
        flush=True,
    )


def indexed(messages: int, conversations: int) -> Path:
    """The schema-5 database, migrated from the cached schema-4 one (timing the back-fill)."""
    FOLDER.mkdir(parents=True, exist_ok=True)
    base = FOLDER / f"search-{messages}-{conversations}-v4.db"
    if not base.exists():
        print(f"Building {messages:,} messages in {conversations:,} conversations…", flush=True)
        build(base, messages, conversations)
    target = FOLDER / f"search-{messages}-{conversations}-v5.db"
    if not target.exists():
        copy = target.with_suffix(".migrating")
        shutil.copyfile(base, copy)
        connection = sqlite3.connect(copy, isolation_level=None)
        connection.execute("PRAGMA journal_mode = WAL")
        before = copy.stat().st_size
        [milliseconds] = timed(lambda: migrate(connection))
        pages = connection.execute(
            "SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'message_fts%'"
        ).fetchone()[0]
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        connection.close()
        copy.rename(target)
        print(
            f"index back-fill (migration 5): {milliseconds / 1000:.1f} s; index "
            f"{pages / 2**20:.0f} MiB beside {before / 2**20:.0f} MiB of data",
            flush=True,
        )
    return target


def queries(connection: sqlite3.Connection) -> Iterator[tuple[str, str]]:
    """Rare, common and phrase queries, taken from the text itself."""
    rng = random.Random(4)
    words = Writer(random.Random(9)).words
    for word in words[:10]:
        yield "common", word
    for word in words[-2000:][::200]:
        yield "rare", word
    for word in words[300:3000:270]:
        yield "middling", word
    top = connection.execute("SELECT max(id) FROM message").fetchone()[0]
    for _ in range(10):
        content = connection.execute(
            "SELECT content FROM message WHERE id = ?", (rng.randint(1, top),)
        ).fetchone()[0]
        tokens = content.rstrip(".").split()
        start = rng.randint(0, max(0, len(tokens) - 3))
        yield "phrase", " ".join(tokens[start : start + rng.choice((2, 3))])


def bench_search(path: Path) -> None:
    search = ArchiveSearch.open(path)
    connection = sqlite3.connect(path)
    mixed = list(queries(connection))
    all_samples: list[float] = []
    for order in (SearchOrder.BEST, SearchOrder.NEWEST):
        by_kind: dict[str, list[float]] = {}
        for kind, text in mixed:
            query = SearchQuery(text=text, order=order)
            samples = timed(lambda query=query: search.search(query), 3)  # type: ignore[misc]
            by_kind.setdefault(kind, []).extend(samples)
            all_samples.extend(samples)
        for kind, samples in by_kind.items():
            report(f"search first page, {order.value}, {kind}", samples)
    report("search first page, all of the mix", all_samples)
    session_id = connection.execute("SELECT id FROM session LIMIT 1 OFFSET 77").fetchone()[0]
    in_one = [
        SearchQuery(text=text, session_id=session_id, order=SearchOrder.IN_ORDER)
        for _, text in mixed
    ]
    report(
        "find in one conversation (in order)",
        [sample for query in in_one for sample in timed(lambda q=query: search.search(q))],  # type: ignore[misc]
    )
    report(
        "matching_sessions (sidebar filter)",
        [s for _, text in mixed for s in timed(lambda t=text: search.matching_sessions(t))],  # type: ignore[misc]
    )
    report("conversations() (History window list)", timed(search.conversations, 5))
    report("timeline() of a summarized conversation", timed(lambda: search.timeline(session_id), 5))
    search.close()
    connection.close()


def bench_streaming_update(path: Path) -> None:
    """A reply streamed into a 1M-message database: each save re-indexes its text."""
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA synchronous = FULL")
    writer = Writer(random.Random(1))
    session_id = connection.execute("SELECT id FROM session LIMIT 1").fetchone()[0]
    connection.execute("UPDATE session SET last_seq = last_seq + 1 WHERE id = ?", (session_id,))
    seq = connection.execute("SELECT last_seq FROM session WHERE id = ?", (session_id,)).fetchone()
    cursor = connection.execute(
        "INSERT INTO message (session_id, seq, role, content, created_at, status) "
        "VALUES (?, ?, 'assistant', '', ?, 'streaming')",
        (session_id, seq[0], stamp(datetime.now(UTC))),
    )
    message_id = cursor.lastrowid
    text = ""
    with_index: list[float] = []
    for _ in range(60):  # a long reply: ~60 saves, growing to ~6,000 characters
        text += " " + writer.message(2)

        def save(content: str = text) -> None:
            connection.execute("BEGIN IMMEDIATE")
            connection.execute(
                "UPDATE message SET content = ?, token_estimate = NULL WHERE id = ?",
                (content, message_id),
            )
            connection.execute("COMMIT")

        with_index.extend(timed(save))
    report(f"streamed save, index in step (to {len(text):,} chars)", with_index)
    connection.execute("DROP TRIGGER message_fts_update")
    without: list[float] = []
    for size in range(60):
        part = text[: (size + 1) * len(text) // 60] + "!"

        def bare(content: str = part) -> None:
            connection.execute("BEGIN IMMEDIATE")
            connection.execute("UPDATE message SET content = ? WHERE id = ?", (content, message_id))
            connection.execute("COMMIT")

        without.extend(timed(bare))
    report("streamed save, no index (same sizes, for comparison)", without)
    connection.execute("ROLLBACK") if connection.in_transaction else None
    connection.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--conversations", type=int, default=10_000)
    arguments = parser.parse_args()
    path = indexed(arguments.messages, arguments.conversations)
    bench_search(path)
    # On a copy: the streaming bench drops a trigger to compare.
    scratch = FOLDER / "search-streaming.db"
    shutil.copyfile(path, scratch)
    bench_streaming_update(scratch)
    scratch.unlink()


if __name__ == "__main__":
    main()
