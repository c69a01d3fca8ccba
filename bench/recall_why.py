"""Why recall missed: for the dev questions whose evidence did not reach the request at one
window and mode of `bench_recall_eval.py --natural`, print the question, its terms, each
evidence turn (in the live tail? in the pool? its score and place), and what recall quoted,
with scores (issue 22). Dev questions only: the test half and the held-out set are never
printed.

Run: .venv/bin/python bench/recall_why.py [--window 8000] [--mode rule] [--all]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import replace
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.chat.recall import AutomaticRecall
from app.core.context import RequestInputs
from app.core.conversation import local_day
from app.core.models import Message, Role
from app.core.recall import recall_query
from app.core.recall_rank import keyed, rank_pool
from app.core.tokens import default_counter
from bench.bench_evidence import sent_text
from bench.bench_recall_eval import natural_run, request_for
from bench.natural_conversation import make_natural


def _short(text: str, size: int = 110) -> str:
    line = " ".join(text.split())
    return line if len(line) <= size else line[: size - 1] + "…"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--window", type=int, default=8_000)
    parser.add_argument("--mode", default="rule")
    parser.add_argument("--all", action="store_true", help="every dev question, not the misses")
    parser.add_argument("--recall", type=float, default=0.05)
    args = parser.parse_args()
    counter = default_counter()
    natural = make_natural(22)
    with (
        tempfile.TemporaryDirectory(dir="/dev/shm") as folder,
        natural_run(
            natural, Path(folder) / "why.db", args.window, args.mode, counter, args.recall
        ) as run,
    ):
        model, builder, store, summaries = run.model, run.builder, run.store, run.summaries
        conversation, stored, session_id = run.conversation, run.stored, run.session_id
        index = store.recall_index()
        for question in natural.questions:
            if question.split != "dev":
                continue
            built = request_for(conversation, question.text, natural.asked_at)
            sent = sent_text(built)
            evidence = [stored[i] for i in question.evidence]
            found = [m.content in sent for m in evidence]
            if all(found) and not args.all:
                continue
            active = summaries.active_summaries(session_id)
            tail = store.live_messages(session_id)
            asked = Message(
                id=-1,
                session_id=session_id,
                seq=tail[-1].seq + 1,
                role=Role.USER,
                content=question.text,
                created_at=natural.asked_at,
            )
            inputs = RequestInputs(model=model, summaries=active, tail=[*tail, asked])
            recall = AutomaticRecall(builder, args.recall)
            budget = recall.raw_budget(inputs)
            participants = index.participants(session_id)
            today = date.fromordinal(local_day(natural.asked_at))
            query = recall_query(question.text, today, participants)
            keys = [k for s in active for k in s.content.search_keys]
            query = replace(query, keyed=keyed(keys, query.terms))
            pool = index.pool(session_id, query)
            ranked = rank_pool(pool, query)
            place = {r.match.seq: (n, r) for n, r in enumerate(ranked)}
            block = recall.gather(index, session_id=session_id, inputs=inputs)
            quoted = {q.seq for q in block.quotes} if block else set()
            print(f"\n=== {question.text}  [{question.category}] {sum(found)}/{len(found)}")
            print(
                f"  terms: {[(t.text, t.weight) for t in query.terms]} days={query.days}"
                f" role={query.role} wanted={sorted(query.wanted)}"
            )
            print(
                f"  freq: {pool.frequency} size={pool.size} pool={len(pool.matches)} "
                f"keyed={len(query.keyed)} budget={budget} tail from #{tail[0].seq} "
                f"block={block.tokens if block else 0} tokens, {len(quoted)} quotes"
            )
            for message, ok in zip(evidence, found, strict=True):
                where = place.get(message.seq)
                rank = f"rank {where[0]} score {where[1].score:.2f}" if where else "not pooled"
                pooled = any(m.seq == message.seq for m in pool.matches)
                print(
                    f"  EVIDENCE #{message.seq} {message.role.value} {'IN' if ok else 'MISSING'}"
                    f" ({rank}, candidate={pooled}, {len(message.content)} chars, "
                    f"{message.created_at:%d %b}): {_short(message.content)}"
                )
                if message.seq - 1 >= 1:
                    before = stored[message.seq - 2]
                    print(
                        f"     before #{before.seq} {before.role.value}: {_short(before.content)}"
                    )
            for n, item in enumerate(ranked[:10]):
                mark = "Q" if item.match.seq in quoted else " "
                print(
                    f"  {mark}{n:>2} #{item.match.seq:<4} {item.score:6.2f} "
                    f"{item.match.role.value[:4]} {item.match.created_at:%d %b} "
                    f"{_short(item.match.content, 90)}"
                )


if __name__ == "__main__":
    main()
