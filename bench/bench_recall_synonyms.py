"""What recall's synonyms (issue 22, app/core/recall_synonyms.py) cost a turn at 100,000
archived messages: the same questions with and without them, in turns, each cold.

Run: .venv/bin/python bench/bench_recall_synonyms.py [--messages 100000] [--folder F]

The database is bench_recall.py's (built there if missing, into /tmp/cairn-bench-recall/;
its tidied copy when `bench_recall.py --tidy` made one). Its text is Zipf words made of
syllables, so most synonyms find nothing there: what is timed is their lookups (a seek
each in each of the index's segments) and the ranking of what they find; the questions
are English, each with nouns the table knows. Also the table's first read (once a
process, on the reply's worker). Prints thread CPU (best of 7, p50 over the questions)
beside the load average; not a test.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_recall import FOLDER, SESSION, SMALL, build, forget_kept

import app.core.recall as core_recall
from app.chat.recall import AutomaticRecall
from app.core import recall_synonyms
from app.core.catalog import FALLBACK_MODELS
from app.core.context import ContextBuilder, RequestInputs
from app.core.models import Role
from app.core.tokens import default_counter
from app.store import SessionStore, SummaryStore

QUESTIONS = (
    "How many children came to the party on Saturday?",
    "Which car did we end up buying?",
    "What did the doctor say about my knee?",
    "Where are we going on holiday this summer?",
    "What error did the screen show?",
    "Which restaurant did we book for the wedding?",
    "What job did my partner get?",
    "What was the story about the garden?",
)
REPEATS = 7


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--folder", type=Path, default=FOLDER, help="where the databases are")
    parser.add_argument("--each", action="store_true", help="each question's figures too")
    arguments = parser.parse_args()
    arguments.folder.mkdir(parents=True, exist_ok=True)
    path = arguments.folder / f"recall22-{arguments.messages}.db"
    if not path.exists():
        build(path, arguments.messages)
    tidy = path.with_suffix(".tidy.db")
    chosen = tidy if tidy.exists() else path
    store = SessionStore.open(chosen)
    summaries = SummaryStore.open(chosen).active_summaries(SESSION)
    tail = store.live_messages(SESSION)
    index = store.recall_index()
    counter = default_counter()
    counter.count("warm up")
    recall_synonyms._table.cache_clear()
    began = time.thread_time()
    recall_synonyms.synonyms_of("child")
    print(
        f"{'tidied' if tidy.exists() else 'as written'} index, {arguments.messages:,} messages; "
        f"the table's first read: {(time.thread_time() - began) * 1000:.1f} ms CPU; "
        f"load {os.getloadavg()[0]:.2f}"
    )
    most = core_recall.MAX_SYNONYM_TERMS
    for model in (FALLBACK_MODELS[0], SMALL):
        recall = AutomaticRecall(ContextBuilder(counter), 0.05)
        best: dict[str, list[float]] = {"without": [], "with synonyms": []}
        for question in QUESTIONS:
            newest = tail[-1].model_copy(update={"content": question, "role": Role.USER})
            inputs = RequestInputs(
                model=model, system_prompt="", summaries=summaries, tail=[*tail[:-1], newest]
            )
            spent: dict[str, list[float]] = {name: [] for name in best}
            for repeat in range(REPEATS):
                for name in list(best) if repeat % 2 else list(reversed(best)):
                    core_recall.MAX_SYNONYM_TERMS = most if name == "with synonyms" else 0
                    forget_kept()
                    began = time.thread_time()
                    recall.gather(index, session_id=SESSION, inputs=inputs)
                    spent[name].append((time.thread_time() - began) * 1000)
            for name in best:
                best[name].append(min(spent[name]))
            if arguments.each:
                print(
                    f"    {question:50} "
                    + "  ".join(f"{name} {min(spent[name]):5.2f}" for name in best)
                )
        core_recall.MAX_SYNONYM_TERMS = most
        figures = "  ".join(
            f"{name}: p50 {statistics.median(values):5.2f} ms, max {max(values):5.2f}"
            for name, values in best.items()
        )
        print(f"  {model.display_name[:17]:17} CPU {figures}  (n={len(QUESTIONS)})")
    print(f"load {os.getloadavg()[0]:.2f}")
    store.close()


if __name__ == "__main__":
    main()
