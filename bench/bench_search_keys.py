"""What summaries' search keys cost a turn at 100,000 archived messages (issue 22).

Run: .venv/bin/python bench/bench_search_keys.py [--messages 100000] [--stretch 1000]

One conversation of N messages of Zipf text (bench_search's writer, as bench_recall),
condensed in stretches of `--stretch` messages by the rules (`rule_search_keys`: at most
40 keys each), all compressed into one summary as `merge` does: on main every child's key
was kept (100 × 40 = 4,000 at 100k); now at most `MAX_KEPT_KEYS`. For each of
bench_recall's kinds of question (a planted fact, common words, a pasted page) a turn
pays, beside what bench_recall measures:

- read: the compressed summary's keys read from its row (`SummaryContent.model_validate`
  of the stored JSON, as `SummaryStore.active_summaries` does for every reply);
- keyed: the keys holding the question's terms (`recall_rank.keyed`), over every key as
  on main, and over only those `KeyIndex.keys_for` hands it (its index warm: each
  summary's keys are read once; the cold read is printed apart).

Times are each question's best of 7, then the median over the questions; the load average
is printed with them. Prints figures; not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from uuid import uuid4

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_search import Writer

from app.core.models import Message, Role
from app.core.recall import RecallTerm, recall_query
from app.core.recall_rank import keyed
from app.core.search_keys import KeyIndex, rule_search_keys
from app.core.summary import (
    SearchKey,
    Summary,
    SummaryContent,
    SummaryMode,
    SummaryState,
    SummaryTier,
    SummaryTrigger,
    merge,
)

START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
TODAY = date(2026, 12, 1)
REPEATS = 7


def messages(writer: Writer, rng: random.Random, count: int) -> list[Message]:
    made = []
    for seq in range(1, count + 1):
        role = Role.USER if seq % 2 else Role.ASSISTANT
        text = writer.message(rng.randint(1, 2) if role is Role.USER else rng.randint(2, 6))
        when = START + timedelta(seconds=seq * 40)
        made.append(
            Message(id=seq, session_id="s", seq=seq, role=role, content=text, created_at=when)
        )
    return made


def summary(keys: list[SearchKey]) -> Summary:
    return Summary(
        id=str(uuid4()),
        session_id="s",
        tier=SummaryTier.COMPRESSED,
        parent_id=None,
        first_seq=1,
        last_seq=1,
        content=SummaryContent(narrative="Compressed.", search_keys=keys),
        source_tokens=1,
        summary_tokens=1,
        mode=SummaryMode.RULE,
        model=None,
        trigger=SummaryTrigger.AUTO,
        instructions=None,
        state=SummaryState.ACTIVE,
        depth=2,
        created_at=START,
    )


def best(call: Callable[[], object]) -> float:
    times = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return min(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--stretch", type=int, default=1_000)
    args = parser.parse_args()
    rng = random.Random(12)
    writer = Writer(rng)
    archived = messages(writer, rng, args.messages)
    started = time.perf_counter()
    children = [
        rule_search_keys(archived[start : start + args.stretch])
        for start in range(0, len(archived), args.stretch)
    ]
    made = time.perf_counter() - started
    every = [key for keys in children for key in keys]  # main's merge kept them all
    bounded = merge([SummaryContent(narrative="c", search_keys=keys) for keys in children])
    print(
        f"{len(archived):,} messages, {len(children)} condensed summaries by rule "
        f"({made / len(children) * 1000:.1f} ms each for its keys); keys kept compressed: "
        f"{len(every):,} on main, {len(bounded.search_keys)} now"
    )
    questions = {
        "planted fact": ["What was the gate code we agreed on in March?"],
        "common words": [
            " ".join(["What about", *(writer.words[rng.randint(40, 400)] for _ in range(3))]) + "?"
            for _ in range(4)
        ],
        "pasted page": [" ".join(writer.message(8) for _ in range(30)) for _ in range(5)],
    }
    print(f"load average {os.getloadavg()[0]:.2f}; ms, median over questions of best of 7")

    def read(keys: list[SearchKey]) -> float:
        stored = json.dumps({"search_keys": [k.model_dump(mode="json") for k in keys]})
        row = {"narrative": "n", "key_points": []}
        return best(lambda: SummaryContent.model_validate({**row, **json.loads(stored)}))

    print(
        f"reading the compressed summary's keys (every reply): {len(every):,} keys (main) "
        f"{read(every):.2f} ms → {len(bounded.search_keys)} keys (now) "
        f"{read(bounded.search_keys):.2f} ms"
    )
    main_summary, now_summary = summary(every), summary(bounded.search_keys)
    index = KeyIndex()

    def scan(terms: tuple[RecallTerm, ...]) -> float:
        return best(lambda: keyed(every, terms))

    def looked_up(terms: tuple[RecallTerm, ...]) -> float:
        return best(lambda: keyed(index.keys_for([now_summary], terms), terms))

    print(f"{'keyed (ms)':<14}{'every key (main)':>20}{'indexed (now, warm)':>22}")
    for kind, texts in questions.items():
        scans: list[float] = []
        indexed: list[float] = []
        for text in texts:
            terms = recall_query(text, TODAY).terms
            assert keyed(index.keys_for([main_summary], terms), terms) == keyed(every, terms)
            scans.append(scan(terms))
            indexed.append(looked_up(terms))
        print(f"{kind:<14}{statistics.median(scans):>20.2f}{statistics.median(indexed):>22.2f}")
    cold = KeyIndex()
    started = time.perf_counter()
    cold.keys_for([summary(every)], recall_query("gate code", TODAY).terms)
    print(
        f"cold: indexing {len(every):,} keys once: {(time.perf_counter() - started) * 1000:.1f} ms"
        f"; load average {os.getloadavg()[0]:.2f}"
    )


if __name__ == "__main__":
    main()
