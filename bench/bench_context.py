"""How long building the next request takes as history grows, and how fast counting is.

Run: .venv/bin/python bench/bench_context.py [--sizes 100,10000,100000] [--tail 40]

For each history size, a conversation on disk whose newest `--tail` messages
are live and the rest archived (summary_id set, as summaries will leave them).
"ContextBuilder" reads the live tail from the store and builds the request
with its summaries and a draft; "naive" reads every message, re-tokenizes all
of them and builds the request from everything, as a builder without stored
counts would. "all live" is today's worst case, before any summary exists:
every message live, counts stored, nothing re-tokenized. Ratios are from the
same run. Then tokenizer throughput: TokenCounter against raw tiktoken on the
same text. Prints figures; it is not a pass/fail test.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import tiktoken

from app.core.catalog import FALLBACK_MODELS
from app.core.context import ContextBuilder, RequestInputs
from app.core.conversation import to_api_messages
from app.core.tokens import ENCODING_NAME, TokenCounter
from app.store import SessionStore, open_database
from tests.fakes.summaries import make_summary

MODEL = FALLBACK_MODELS[0]
SYSTEM = "You are a patient guide for walkers in the hills. Keep numbers and names exact."
DRAFT = "And what should we carry if the forecast says snow above 900 m? " * 3
TEXTS = [
    "We plan a two-day walk over Bynack More to the Fords of Avon refuge in late May. " * 4,
    "Expect 17 km and about 900 m of ascent; carry water from the River Nethy. " * 5,
    "```python\ndef read(path):\n    with open(path, encoding='utf-8') as f:\n"
    "        return list(csv.reader(f))\n```\n" * 3,
    "Càrn Bàn Mòr, 1052 m — 日本語のテキストも 🏔️ 混ざります。 " * 6,
]
SUMMARIES = [
    make_summary(
        "compressed",
        1,
        5_000,
        "The walkers planned a Cairngorms route and packed for changeable weather. " * 20,
        tokens=300,
        created_at=datetime(2026, 3, 1, tzinfo=UTC),
    ),
    make_summary(
        "condensed",
        5_001,
        9_000,
        "They chose a tent over the refuge and agreed never to cross a river in spate. " * 15,
        tokens=240,
        created_at=datetime(2026, 3, 2, tzinfo=UTC),
    ),
]


def timed(action: Callable[[], object], repeats: int) -> float:
    """Median milliseconds of `repeats` calls."""
    samples = []
    for _ in range(repeats):
        start = time.perf_counter_ns()
        action()
        samples.append((time.perf_counter_ns() - start) / 1e6)
    return statistics.median(samples)


def timed_pair(
    first: Callable[[], object], second: Callable[[], object], repeats: int
) -> tuple[float, float]:
    """Median milliseconds of each, run alternately so that machine noise hits both alike."""
    samples: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeats):
        for action, into in ((first, samples[0]), (second, samples[1])):
            start = time.perf_counter_ns()
            action()
            into.append((time.perf_counter_ns() - start) / 1e6)
    return statistics.median(samples[0]), statistics.median(samples[1])


def make_history(folder: Path, size: int, tail: int, counter: TokenCounter) -> tuple[Path, str]:
    """A conversation of `size` messages with stored counts; all but `tail` archived."""
    database = folder / f"history-{size}.db"
    result = open_database(database)
    connection = result.connection
    session_id = str(uuid.uuid4())
    now = datetime.now(UTC).isoformat()
    counts = [counter.count(text) for text in TEXTS]
    connection.execute("BEGIN")
    connection.execute(
        "INSERT INTO session (id, title, created_at, updated_at, model, system_prompt, last_seq) "
        "VALUES (?, 'bench', ?, ?, ?, ?, ?)",
        (session_id, now, now, MODEL.id, SYSTEM, size),
    )
    # The archived messages point at one summary row, as a real condensed summary would.
    connection.execute(
        "INSERT INTO summary (id, session_id, tier, first_seq, last_seq, narrative, "
        "source_tokens, summary_tokens, mode, trigger, created_at) "
        "VALUES ('archived', ?, 'condensed', 1, ?, 'bench', 0, 0, 'rule', 'auto', ?)",
        (session_id, max(1, size - tail), now),
    )
    connection.executemany(
        "INSERT INTO message (session_id, seq, role, content, created_at, token_estimate, "
        "status, summary_id) VALUES (?, ?, ?, ?, ?, ?, 'complete', ?)",
        (
            (
                session_id,
                seq,
                "user" if seq % 2 else "assistant",
                TEXTS[seq % len(TEXTS)],
                now,
                counts[seq % len(TEXTS)],
                None if seq > size - tail else "archived",
            )
            for seq in range(1, size + 1)
        ),
    )
    connection.execute("COMMIT")
    connection.close()
    return database, session_id


def bench_build(folder: Path, sizes: list[int], tail: int) -> None:
    counter = TokenCounter()
    counter.load()
    encoding = tiktoken.get_encoding(ENCODING_NAME)
    builder = ContextBuilder(counter)
    print(f"Building the next request (live tail {tail} messages, 2 summaries, a draft)")
    print(
        f"{'history':>9}  {'ContextBuilder':>15}  {'naive':>12}  {'naive/ours':>10}  "
        f"{'all live':>10}"
    )
    for size in sizes:
        database, session_id = make_history(folder, size, tail, counter)
        store = SessionStore.open(database)

        def ours(store: SessionStore = store, session_id: str = session_id) -> object:
            return builder.build_request(
                RequestInputs(
                    model=MODEL,
                    system_prompt=SYSTEM,
                    summaries=SUMMARIES,
                    tail=store.live_messages(session_id),
                    draft=DRAFT,
                )
            )

        def naive(store: SessionStore = store, session_id: str = session_id) -> object:
            history = store.messages(session_id)
            tokens = sum(len(encoding.encode_ordinary(m.content)) for m in history)
            tokens += len(encoding.encode_ordinary(SYSTEM + DRAFT))
            return tokens, to_api_messages(history)

        def all_live(store: SessionStore = store, session_id: str = session_id) -> object:
            return builder.estimate_state(
                RequestInputs(
                    model=MODEL, system_prompt=SYSTEM, tail=store.messages(session_id), draft=DRAFT
                )
            )

        ours_ms = timed(ours, 50)
        naive_ms = timed(naive, 3 if size > 10_000 else 10)
        all_live_ms = timed(all_live, 3 if size > 10_000 else 10)
        store.close()
        print(
            f"{size:>9,}  {ours_ms:>12.3f} ms  {naive_ms:>9.1f} ms  {naive_ms / ours_ms:>9.0f}×  "
            f"{all_live_ms:>7.1f} ms"
        )


def bench_throughput() -> None:
    encoding = tiktoken.get_encoding(ENCODING_NAME)
    texts = {
        "mixed prose, code, unicode": "".join(TEXTS) * 2_500,
        "one 4 MB run without spaces": "a" * 4_000_000,
    }
    print()
    print("Tokenizer throughput (same text, first count: nothing remembered)")
    print(f"{'text':<28} {'MB':>6}  {'TokenCounter':>13}  {'raw tiktoken':>13}  {'ratio':>6}")
    for label, text in texts.items():
        megabytes = len(text.encode("utf-8")) / 1e6

        def ours(text: str = text) -> int:
            counter = TokenCounter()  # a fresh one: its memory of recent texts is empty
            return counter.count(text)

        def raw(text: str = text) -> int:
            return len(encoding.encode_ordinary(text))

        assert abs(ours() - raw()) <= len(text) // 65_536 + 1
        ours_ms, raw_ms = timed_pair(ours, raw, 7)
        print(
            f"{label:<28} {megabytes:>6.1f}  {megabytes / ours_ms * 1e3:>8.1f} MB/s  "
            f"{megabytes / raw_ms * 1e3:>8.1f} MB/s  {raw_ms / ours_ms:>5.2f}×"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,10000,100000")
    parser.add_argument("--tail", type=int, default=40)
    arguments = parser.parse_args()
    sizes = [int(size) for size in arguments.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="cairn-bench-") as folder:
        bench_build(Path(folder), sizes, arguments.tail)
    bench_throughput()


if __name__ == "__main__":
    main()
