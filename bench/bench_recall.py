"""Automatic recall at 100,000 archived messages: what it adds to a turn, as the reply job
runs it (terms → index query → ranking and fitting → the block), and whether the planted
fact is quoted.

Run: .venv/bin/python bench/bench_recall.py [--messages N] [--tidy]

--tidy: the index in the worst shape Cairn's own upkeep lets it stay in, and tidied as
Cairn does in the background (app.store.search_upkeep: its cost, the longest a reply's
save can wait on it), both measured in turns. The worst shape (`upkept_copy`): the tidied
index, then messages written one a transaction as the app writes them (in another
conversation, so that this one's archive and answers stay the same) up to the last write
before the upkeep would tidy again (`IndexShape.worth_tidying`), stopped where the index
held the most segments on the way. The index as the bench's build wrote it (a thousand
messages a transaction) is only described: the app tidies it at its next start.

One conversation of N (default 100,000) messages of Zipf text (bench_search's writer),
all but the last 20 archived under 100 condensed summaries compressed into one, with
facts planted early on, and five other conversations (10,000 messages each) stored in
between, so the conversation's rows are interleaved in the index with others. Built
once into /tmp/cairn-bench-recall/. Prints figures; not a test.

Each turn's time is also given as the CPU time of the thread that ran it: on a shared
machine a neighbour's load stretches the wall-clock figures (two- to three-fold at a load
average of 3 on two cores), not the CPU recall spends. Print `os.getloadavg()` with them.

--cell LIVE:ARCHIVED (e.g. 155k:100k): recall as bench_path's reply worker runs it, on
that bench's database (bench_turn's cache, built when missing; a copy is used;
`--archive` as bench_path's, natural by default; its quotes' counts not stored, as in
bench_path's database, unless --counted): its questions stored one by one with their
answers, as the app stores them, the bench model's 1M window, what recall keeps between
turns kept (the worker's store is kept too), thread CPU a turn, and where it went (the
index's pool, of it the SQL reads; ranking; fitting, of it the exact token counts).
--trees A,B runs the same in each checkout (its `app`, this bench), each in its own
process, alternated, and says whether their blocks were the same (issue 20).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import time
import uuid
from collections import Counter
from datetime import timedelta
from itertools import chain
from pathlib import Path

# --trees: a child runs another checkout's `app` (CAIRN_BENCH_TREE) with this bench.
sys.path.insert(0, os.environ.get("CAIRN_BENCH_TREE") or str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
# That checkout's `app` imported now: bench_search and bench_turn put this checkout first
# on sys.path as they are imported, and `app` would then be this one's (a run of --trees
# compared this checkout with itself).
import app

# isort: split

from bench_search import START, Writer, insert_summary, report, stamp

from app.chat.recall import AutomaticRecall
from app.core.catalog import FALLBACK_MODELS, ModelInfo
from app.core.context import ContextBuilder, RequestInputs
from app.core.models import Message, Role
from app.core.recall import salient_terms
from app.core.summary import Summary
from app.core.tokens import TokenCounter, default_counter
from app.store import SessionStore, SummaryStore, open_database
from app.store.database import connect
from app.store.recall import RecallIndex
from app.store.search_upkeep import IndexShape, index_shape, optimize

FOLDER = Path("/tmp/cairn-bench-recall")
SESSION = "recall-bench"
LIVE = 20
# A span asked about whose words are in no message (issue 22): the span's most telling
# messages are read instead (a bounded read of its rows, however many it holds).
SPANS = [
    "How did the zorblax go a few weeks ago?",
    "What happened with the quibbler recently?",
    "How was the snarkle two weeks ago?",
    "Remind me what I said about the flumph last month.",
]
FACTS = {
    "What was the gate code we agreed on in March?": (
        "OK, settled: the new gate code is AX-7731, from Monday on.",
        "AX-7731",
    ),
    "When does Priya's flight land?": ("Priya's flight lands at 14:30 on Friday.", "14:30"),
    "Which invoice was the 4,250 EUR one?": (
        "Invoice INV-20931 is for 4,250 EUR, due at the end of the month.",
        "INV-20931",
    ),
    "Where did we put budget_2026_v3.xlsx?": (
        "I saved budget_2026_v3.xlsx in the shared Finance folder.",
        "Finance",
    ),
}
# Facts said in a row of common words (each in more than 300 of the archive's messages,
# ranks 40-400 of its Zipf vocabulary), asked for with those words: a question made of
# common words must still find them (issue 22).
COMMON_FACTS = 4


def common_facts(writer: Writer) -> dict[str, tuple[str, str]]:
    """Question → (the message saying it, the value), from the archive's own words."""
    rng = random.Random(22)
    facts = {}
    for n in range(COMMON_FACTS):
        words = [writer.words[rng.randint(40, 400)] for _ in range(3)]
        value = f"QZ-{4100 + n}"
        facts[f"What about {' '.join(words)}?"] = (
            f"{' '.join(words).capitalize()}: {value}.",
            value,
        )
    return facts


# Each turn is timed this many times and its best kept: the machine is shared, and a
# busy neighbour's time is not recall's.
REPEATS = 5
COMPARE_REPEATS = 7
SMALL = ModelInfo(id="small", display_name="Small 8k", max_input_tokens=8_000, max_tokens=1_000)


def build(path: Path, messages: int) -> None:
    rng = random.Random(12)
    writer = Writer(rng)
    opened = open_database(path)
    connection = opened.connection
    others = [f"other-{n}" for n in range(5)]
    for session_id in [SESSION, *others]:
        connection.execute(
            "INSERT INTO session (id, title, created_at, updated_at, model, last_seq) "
            "VALUES (?, ?, ?, ?, 'claude-sonnet-4-5', 0)",
            (session_id, session_id, stamp(START), stamp(START)),
        )
    planted = {1_000 + n * 7_000: text for n, (text, _value) in enumerate(FACTS.values())}
    common = common_facts(writer).values()
    planted |= {3_000 + n * 7_000: text for n, (text, _value) in enumerate(common)}
    seqs = dict.fromkeys([SESSION, *others], 0)

    def rows(session_id: str, count: int) -> list[tuple[object, ...]]:
        batch: list[tuple[object, ...]] = []
        for _ in range(count):
            seqs[session_id] += 1
            seq = seqs[session_id]
            role = "user" if seq % 2 else "assistant"
            text = planted.get(seq) if session_id == SESSION else None
            if text is None:
                text = writer.message(rng.randint(1, 2) if role == "user" else rng.randint(2, 6))
            when = stamp(START + timedelta(seconds=seq * 40))
            batch.append((session_id, seq, role, text, when, len(text) // 4))
        return batch

    print(f"Building {messages:,} messages (+ {len(others) * 10_000:,} elsewhere)…", flush=True)
    insert = (
        "INSERT INTO message (session_id, seq, role, content, created_at, token_estimate) "
        "VALUES (?, ?, ?, ?, ?, ?)"
    )
    step = 1_000
    for start in range(0, messages, step):
        connection.execute("BEGIN")
        connection.executemany(insert, rows(SESSION, min(step, messages - start)))
        if start % 10_000 == 0 and start // 10_000 < 10:
            for other in others:
                connection.executemany(insert, rows(other, 5_000 if start < 20_000 else 0))
        connection.execute("UPDATE session SET last_seq = ? WHERE id = ?", (seqs[SESSION], SESSION))
        connection.execute("COMMIT")
    connection.execute("BEGIN")
    archived = messages - LIVE
    chunk = max(1, archived // 100)
    children = []
    for first in range(1, archived + 1, chunk):
        last = min(archived, first + chunk - 1)
        summary_id = str(uuid.uuid4())
        children.append(summary_id)
        insert_summary(connection, writer, summary_id, SESSION, first, last, START)
        connection.execute(
            "UPDATE message SET summary_id = ? WHERE session_id = ? AND seq BETWEEN ? AND ?",
            (summary_id, SESSION, first, last),
        )
    parent = str(uuid.uuid4())
    insert_summary(connection, writer, parent, SESSION, 1, archived, START, tier="compressed")
    connection.executemany(
        "UPDATE summary SET state = 'superseded', parent_id = ? WHERE id = ?",
        [(parent, child) for child in children],
    )
    connection.execute("COMMIT")
    connection.close()


def measure(
    index: RecallIndex, counter: TokenCounter, summaries: list[Summary], tail: list[Message]
) -> None:
    """Every case's recall per turn, for both models."""
    commons = common_facts(Writer(random.Random(12)))  # the archive's own words
    rng = random.Random(3)
    writer = Writer(rng)
    chatter = [writer.message(rng.randint(1, 2)) for _ in range(40)]
    pages = [" ".join(writer.message(8) for _ in range(30)) for _ in range(5)]
    for model in (FALLBACK_MODELS[0], SMALL):
        recall = AutomaticRecall(ContextBuilder(counter), 0.05)

        best: list[float] = []
        every: list[float] = []
        cpu: list[float] = []

        def turn(
            question: str,
            recall: AutomaticRecall = recall,
            model: ModelInfo = model,
            best: list[float] = best,
            every: list[float] = every,
            cpu: list[float] = cpu,
        ) -> str:
            """One turn's recall, REPEATS times: the block, and its best time into `best`."""
            # The question is the newest message, as when the reply job runs.
            newest = tail[-1].model_copy(update={"content": question, "role": Role.USER})
            asked = [*tail[:-1], newest]
            text, times, spent = "", [], []
            for _ in range(REPEATS):
                forget_kept()
                began, began_cpu = time.perf_counter(), time.thread_time()
                block = recall.gather(
                    index,
                    session_id=SESSION,
                    inputs=RequestInputs(
                        model=model, system_prompt="", summaries=summaries, tail=asked
                    ),
                )
                times.append((time.perf_counter() - began) * 1000)
                spent.append((time.thread_time() - began_cpu) * 1000)
                text = block.text if block is not None else ""
            every.extend(times)
            best.append(min(times))
            cpu.append(min(spent))
            return text

        print(f"\n{model.display_name} ({model.max_input_tokens:,} window, 5 % for recall):")
        for label, questions in (
            ("a question about a planted fact", list(FACTS)),
            ("a question of common words (each in > 300 messages)", list(commons)),
            ("everyday messages (Zipf words, no stop words)", chatter),
            (f"a pasted page (~{len(pages[0].split()):,} words)", pages),
            ("a span whose words are in no message", SPANS),
        ):
            best.clear()
            every.clear()
            cpu.clear()
            texts = [turn(question) for question in questions]
            report(f"  {label}: best of {REPEATS}", best)
            report(f"  {label}: every run", every)
            report(f"  {label}: CPU, best of {REPEATS}", cpu)
            if questions is not chatter and questions is not pages and questions is not SPANS:
                facts = FACTS if questions == list(FACTS) else commons
                values = [value for _text, value in facts.values()]
                found = sum(value in text for text, value in zip(texts, values, strict=True))
                print(f"  planted facts quoted: {found} of {len(FACTS)}")


def compare(
    indexes: dict[str, RecallIndex],
    counter: TokenCounter,
    summaries: list[Summary],
    tail: list[Message],
) -> None:
    """Every case's recall per turn on each index, in turns question by question (each
    index first every other time), so caches and a busy neighbour weigh on both alike;
    the p50 and mean of each question's best of COMPARE_REPEATS."""
    commons = list(common_facts(Writer(random.Random(12))))
    rng = random.Random(3)
    writer = Writer(rng)
    cases = {
        "planted fact": list(FACTS),
        "common words": commons,
        "everyday": [writer.message(rng.randint(1, 2)) for _ in range(40)],
        "pasted page": [" ".join(writer.message(8) for _ in range(30)) for _ in range(5)],
        "span, no word": SPANS,
    }
    names = list(indexes)
    print(
        f"\nIn turns, best of {COMPARE_REPEATS} per question, each cold (what recall keeps "
        f"between turns emptied first); load {os.getloadavg()[0]:.2f}"
    )
    for model in (FALLBACK_MODELS[0], SMALL):
        recall = AutomaticRecall(ContextBuilder(counter), 0.05)
        for case, questions in cases.items():
            best: dict[str, list[float]] = {name: [] for name in names}
            best_cpu: dict[str, list[float]] = {name: [] for name in names}
            sticks: list[float] = []
            for question in questions:
                sticks.append(yardstick())
                newest = tail[-1].model_copy(update={"content": question, "role": Role.USER})
                inputs = RequestInputs(
                    model=model, system_prompt="", summaries=summaries, tail=[*tail[:-1], newest]
                )
                times: dict[str, list[float]] = {name: [] for name in names}
                spent: dict[str, list[float]] = {name: [] for name in names}
                for repeat in range(COMPARE_REPEATS):
                    for name in names if repeat % 2 else reversed(names):
                        forget_kept()
                        began, began_cpu = time.perf_counter(), time.thread_time()
                        recall.gather(indexes[name], session_id=SESSION, inputs=inputs)
                        times[name].append((time.perf_counter() - began) * 1000)
                        spent[name].append((time.thread_time() - began_cpu) * 1000)
                for name in names:
                    best[name].append(min(times[name]))
                    best_cpu[name].append(min(spent[name]))
            # The thread's CPU beside the wall clock: on a loaded machine the wall clock
            # also counts the time the thread waited for a core.
            figures = "  ".join(
                f"{name}: p50 {statistics.median(best[name]):5.2f} ms "
                f"(CPU {statistics.median(best_cpu[name]):5.2f}), "
                f"mean {statistics.mean(best[name]):5.2f} ms"
                for name in names
            )
            print(
                f"  {model.display_name[:17]:17} {case:13} {figures}  (n={len(questions)}; "
                f"yardstick {statistics.median(sticks):.2f} ms)"
            )
    print(f"load {os.getloadavg()[0]:.2f}")


# A fixed piece of pure Python (sets of words, counted and sorted, as recall does), timed
# in thread CPU beside each case: on this shared machine a process's CPU ms stretch by
# half for tens of seconds at a time, whatever the load average says (the same span turns
# 4.4 ms in one run, 7.4 ms in the next, at a load of 0.7: issue 22, recall16). A case
# measured while the yardstick reads high was measured in such a stretch.
_YARDSTICK_WORDS = [[f"w{(n * 7919 + k * 104729) % 1_500}" for k in range(20)] for n in range(200)]


def yardstick() -> float:
    """The thread CPU ms of the fixed piece of work, best of 3 (~0.5 ms on a quiet core)."""
    spent = []
    for _ in range(3):
        began = time.thread_time()
        sets = [frozenset(words) for words in _YARDSTICK_WORDS]
        held = Counter(chain.from_iterable(sets))
        sum(sum(sorted(map(held.__getitem__, found))[:4]) for found in sets)
        spent.append((time.thread_time() - began) * 1000)
    return min(spent)


def forget_kept() -> None:
    """Empty what recall keeps between turns (the archive's rows and lookups, folded and
    counted texts), where this tree keeps any: each timed turn then costs what a new
    conversation's first turn costs, not a repeat of the same question."""
    import app.chat.recall as chat_recall
    import app.core.recall as core_recall
    import app.core.recall_kinds as core_kinds
    import app.core.recall_rank as core_rank
    import app.store.recall as store_recall

    for module, name in (
        (store_recall, "_archives"),
        (chat_recall, "_quote_counts"),
    ):
        kept = getattr(module, name, None)
        if kept is not None:
            kept.clear()
    for module, name in (
        (core_recall, "_said_of"),
        (core_rank, "_day_of"),
        (core_rank, "_story_words"),
        (core_kinds, "_first_fact"),
    ):
        function = getattr(module, name, None)
        if function is not None:
            function.cache_clear()


def tidied_copy(path: Path) -> Path:
    """A copy of the database at `path` with its index tidied as Cairn does in the
    background (app.store.search_upkeep); prints what it cost."""
    copy = path.with_suffix(".tidy.db")
    shutil.copyfile(path, copy)
    connection = connect(copy)
    connection.execute("PRAGMA wal_autocheckpoint = 0")  # the WAL counts the pages written
    print(f"index before: {index_shape(connection)}")
    began = time.perf_counter()
    optimize(connection)
    took = (time.perf_counter() - began) * 1000
    _busy, frames, _done = connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    print(
        f"tidied in {took:.0f} ms (one transaction: the longest a reply's save waits on "
        f"it), {frames:,} pages written (WAL frames); load {os.getloadavg()[0]:.2f}"
    )
    print(f"index after: {index_shape(connection)}")
    (busy, _frames, _done) = connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    assert busy == 0, "the tidied copy is read from the database file, not the WAL"
    connection.close()
    return copy


def upkept_copy(tidied: Path) -> Path:
    """A copy of the tidied database with its index in the worst shape the app's upkeep
    lets it stay in: messages written one a transaction, as the app writes them, into
    another conversation (this one's archive, and so recall's answers, unchanged) up to
    the last write before `IndexShape.worth_tidying` (the upkeep would tidy it at the
    next start), then again from the tidied copy up to the write that left the most
    segments on the way. Prints the shape it is measured in."""
    copy = tidied.with_suffix(".upkept.db")
    rng = random.Random(5)
    writer = Writer(rng)
    texts = [writer.message(rng.randint(1, 6)) for _ in range(20_000)]

    def write(count: int | None) -> tuple[int, int, IndexShape | None]:
        """Write until `count` messages (None: until the next would be worth tidying);
        how many were written, after how many the most segments, and the last shape."""
        shutil.copyfile(tidied, copy)
        connection = connect(copy)
        (seq,) = connection.execute(
            "SELECT max(seq) FROM message WHERE session_id = 'other-0'"
        ).fetchone()
        written, most, at_most, shape = 0, 0, 0, index_shape(connection)
        while count is None or written < count:
            connection.execute("BEGIN")
            connection.execute(
                "INSERT INTO message (session_id, seq, role, content, created_at, "
                "token_estimate) VALUES ('other-0', ?, 'user', ?, ?, 1)",
                (seq + written + 1, texts[written % len(texts)], stamp(START)),
            )
            now = index_shape(connection)
            if count is None and now is not None and now.worth_tidying:
                connection.execute("ROLLBACK")  # here the upkeep would tidy: the last stays
                break
            connection.execute("COMMIT")
            written, shape = written + 1, now
            if shape is not None and shape.segments > most:
                most, at_most = shape.segments, written
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        connection.close()
        return written, at_most, shape

    began = time.perf_counter()
    written, at_most, last = write(None)
    print(f"upkept: {written:,} messages written one a transaction before a tidy-up is due: {last}")
    _written, _at, shape = write(at_most)
    assert shape is not None
    new = (shape.pages - shape.largest) / shape.pages
    print(
        f"index as upkeep leaves it, at its most segments ({at_most:,} writes): "
        f"{shape.segments} segments, {new:.1%} of {shape.pages:,} pages new "
        f"({time.perf_counter() - began:.0f} s to make)"
    )
    return copy


def cell_turns(cell_name: str, turns: int, archive: str = "natural", counted: bool = False) -> None:
    """Recall per turn on bench_path's database for `cell_name`, as its reply worker runs
    it (see the module's docstring): its archive and questions (`archive`, bench_path's
    `--archive`), its quotes' counts not stored (bench_turn writes the rows directly; the
    app counts a quote without one when it quotes it) unless `counted`; prints one CELL
    line of JSON for `trees`."""
    import hashlib
    import json
    import tempfile
    from collections import defaultdict

    import bench_turn
    from bench_turn import (
        MODEL,
        SESSION_ID,
        NaturalStream,
        cached_database,
        make_pool,
        make_questions,
        natural_questions,
        parse_cells,
    )

    import app.chat.recall as chat_recall
    import app.store.recall as store_recall
    from app.store.search_upkeep import tidy_index

    counter = default_counter()
    counter.load()
    if os.environ.get("CAIRN_BENCH_TURN_CACHE"):  # bench_turn's databases kept elsewhere
        bench_turn.CACHE = Path(os.environ["CAIRN_BENCH_TURN_CACHE"])
    (cell,) = parse_cells(cell_name)
    natural = archive == "natural"
    pool = NaturalStream(counter) if natural else make_pool(counter)
    database, _seconds = cached_database(cell, pool, counter)
    count = 2 + turns
    pairs = (
        natural_questions(count, seed=cell.live, counter=counter)
        if natural
        else make_questions(count, seed=cell.live)
    )
    tidy_index(database)  # as bench_path leaves it
    spent: dict[str, float] = defaultdict(float)
    labels: list[str] = []

    def timed(owner: object, name: str, label: str) -> None:
        function = getattr(owner, name)
        labels.append(label)

        def wrapper(*args: object, **kwargs: object) -> object:
            began = time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                spent[label] += time.thread_time() - began

        setattr(owner, name, wrapper)

    timed(store_recall.RecallIndex, "pool", "the index's pool")
    timed(store_recall.RecallIndex, "_rowids", "  of it, full-text reads")
    timed(store_recall.RecallIndex, "_rows_by_seq", "  of it, rows by seq")
    timed(store_recall.RecallIndex, "_rows_by_id", "  of it, rows by id")
    timed(chat_recall, "rank_pool", "ranking (rank_pool)")
    timed(chat_recall, "fit_recall", "fitting (fit_recall)")
    timed(TokenCounter, "count", "  of it, exact token counts")
    with tempfile.TemporaryDirectory(prefix="recall-bench-cell-") as folder:
        copy = Path(folder) / database.name
        shutil.copyfile(database, copy)
        if counted:
            fill_quote_counts(copy)
        store = SessionStore.open(copy)
        summaries = SummaryStore.open(copy).active_summaries(SESSION_ID)
        builder = ContextBuilder(counter)
        cpu: list[float] = []
        blocks = hashlib.sha256()
        warm = 2
        for n, (question, answer) in enumerate(pairs):
            store.append_message(SESSION_ID, Role.USER, question)
            tail = store.live_messages(SESSION_ID)
            inputs = RequestInputs(
                model=MODEL,
                system_prompt="",
                summaries=summaries,
                tail=tail,
                tail_tally=builder.tally(tail),
            )
            if n == warm:
                spent.clear()
            began = time.thread_time()
            block = AutomaticRecall(builder, 0.05).gather(
                store.recall_index(), session_id=SESSION_ID, inputs=inputs
            )
            if n >= warm:
                cpu.append((time.thread_time() - began) * 1000)
                blocks.update(repr((block.text, block.tokens) if block else None).encode())
            store.append_message(SESSION_ID, Role.ASSISTANT, answer)
        store.close()
    parts = {label: spent[label] * 1000 / turns for label in labels}  # as timed, in order
    print(
        "CELL "
        + json.dumps(
            {
                "cpu": cpu,
                "parts": parts,
                "blocks": blocks.hexdigest()[:16],
                "app": app.__file__,
                "questions": [question for question, _answer in pairs[warm:]],
            }
        )
    )


def fill_quote_counts(path: Path) -> None:
    """Each archived message's stored quote count, where this tree stores them (migration
    17): bench_turn writes its rows directly, the app as it saves each (app.store.sessions).
    Messages saved before that version have none (they are counted when quoted)."""
    try:
        from app.core.recall_quotes import whole_quote_tokens
    except ImportError:  # a tree from before migration 17
        return
    from app.core.tokens import default_counter

    counter = default_counter()
    counter.load()
    connection = connect(path)
    rows = connection.execute(
        "SELECT id, content FROM message WHERE summary_id IS NOT NULL AND quote_tokens IS NULL"
    ).fetchall()
    counts = [
        (whole_quote_tokens(str(content), counter), message_id) for message_id, content in rows
    ]
    connection.execute("BEGIN IMMEDIATE")
    connection.executemany(
        "UPDATE message SET quote_tokens = ? WHERE id = ?",
        [(tokens, message_id) for tokens, message_id in counts if tokens is not None],
    )
    connection.execute("COMMIT")
    connection.close()


def trees(
    cell_name: str, checkouts: list[str], turns: int, rounds: int, options: list[str]
) -> None:
    """`cell_turns` in each checkout, each in its own process, alternated for `rounds`
    (`options`: the archive's, passed on)."""
    import json
    import subprocess

    runs: dict[str, list[dict[str, object]]] = {tree: [] for tree in checkouts}
    for number in range(rounds):
        for tree in checkouts if number % 2 == 0 else list(reversed(checkouts)):
            output = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    *("--cell", cell_name, "--turns", str(turns), *options),
                ],
                env={**os.environ, "CAIRN_BENCH_TREE": tree},
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            line = next(line for line in output.splitlines() if line.startswith("CELL "))
            runs[tree].append(json.loads(line[5:]))
    print(
        f"\nRecall in bench_path's reply worker, cell {cell_name}, thread CPU a turn "
        f"({turns} turns a run, after 2; {rounds} runs a tree, alternated); "
        f"load {os.getloadavg()[0]:.2f}"
    )
    for tree, results in runs.items():
        medians = [statistics.median(result["cpu"]) for result in results]  # type: ignore[arg-type]
        every = [value for result in results for value in result["cpu"]]  # type: ignore[attr-defined]
        print(
            f"  {tree}: median {statistics.median(every):5.2f} ms (each run's: "
            + ", ".join(f"{value:.2f}" for value in medians)
            + f"); blocks {sorted({str(result['blocks']) for result in results})}; "
            f"app {sorted({str(result.get('app')) for result in results})}"  # type: ignore[attr-defined]
        )
        labels = results[0]["parts"]  # type: ignore[index]
        for label in labels:  # type: ignore[union-attr]
            values = [float(result["parts"][label]) for result in results]  # type: ignore[index]
            print(f"      {label:36} {statistics.median(values):5.2f} ms a turn")
    # Each question's median over the runs, tree beside tree: the same question in each
    # (bench_path measures the turns without its heartbeat: the 1st, 3rd, … here).
    per_turn = {
        tree: [statistics.median(run) for run in zip(*(r["cpu"] for r in results), strict=True)]  # type: ignore[call-overload]
        for tree, results in runs.items()
    }
    questions = next(iter(runs.values()))[0].get("questions", [])  # type: ignore[union-attr]
    print("  each turn, median of its runs (ms), " + " | ".join(checkouts))
    for n in range(turns):
        asked = str(questions[n])[:56] if n < len(questions) else ""  # type: ignore[index, arg-type]
        mark = "*" if n % 2 == 0 and n < 16 else " "
        print(
            f"   {n + 1:3d}{mark} "
            + " ".join(f"{per_turn[t][n]:7.2f}" for t in checkouts)
            + f"  {asked}"
        )
    print(
        "  * bench_path's 8 measured turns, median: "
        + " | ".join(f"{statistics.median(per_turn[t][0:16:2]):.2f}" for t in checkouts)
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument(
        "--tidy", action="store_true", help="as its writes left the index, and tidied"
    )
    parser.add_argument("--cell", help="bench_path's LIVE:ARCHIVED database, e.g. 155k:100k")
    parser.add_argument("--turns", type=int, default=20, help="with --cell: turns measured")
    parser.add_argument("--trees", help="with --cell: checkouts to compare, comma-separated")
    parser.add_argument("--rounds", type=int, default=4, help="with --trees: runs of each")
    parser.add_argument(
        "--archive",
        choices=("natural", "templated"),
        default="natural",
        help="with --cell: bench_path's archive and questions (its default: natural)",
    )
    parser.add_argument(
        "--counted",
        action="store_true",
        help="with --cell: the quotes' counts stored, as the app saves them (bench_path's "
        "database has none: its rows are written directly)",
    )
    parser.add_argument(
        "--folder", type=Path, default=FOLDER, help="where the databases are built and kept"
    )
    arguments = parser.parse_args()
    options = ["--archive", arguments.archive, *(["--counted"] if arguments.counted else [])]
    if arguments.cell and arguments.trees:
        trees(
            arguments.cell, arguments.trees.split(","), arguments.turns, arguments.rounds, options
        )
        return
    if arguments.cell:
        cell_turns(arguments.cell, arguments.turns, arguments.archive, arguments.counted)
        return
    arguments.folder.mkdir(parents=True, exist_ok=True)
    path = arguments.folder / f"recall22-{arguments.messages}.db"
    if not path.exists():
        began = time.perf_counter()
        build(path, arguments.messages)
        print(f"built in {time.perf_counter() - began:.0f} s", flush=True)
    opened = open_database(path)
    fill_quote_counts(path)  # as this version saves them (its rows are written directly)
    store = SessionStore(opened.connection, database=opened.path)
    summaries = SummaryStore.open(path).active_summaries(SESSION)
    tail = store.live_messages(SESSION)
    (archived,) = opened.connection.execute(
        "SELECT count(*) FROM message WHERE session_id = ? AND summary_id IS NOT NULL", (SESSION,)
    ).fetchone()
    print(f"{archived:,} archived messages, {len(tail)} live, {len(summaries)} active summaries")
    print(f"app: {app.__file__}")
    counter = default_counter()
    counter.count("warm up")
    index = store.recall_index()
    print(f"full-text index: {index.indexed}; load average {os.getloadavg()[0]:.2f}")
    if arguments.tidy:
        tidied = tidied_copy(path)
        upkept_store = SessionStore.open(upkept_copy(tidied))
        tidied_store = SessionStore.open(tidied)
        compare(
            {
                "as upkeep leaves it": upkept_store.recall_index(),
                "tidied": tidied_store.recall_index(),
            },
            counter,
            summaries,
            tail,
        )
        upkept_store.close()
        tidied_store.close()
    else:
        measure(index, counter, summaries, tail)
    terms = salient_terms(next(iter(FACTS)))
    samples = []
    for _ in range(20):
        began = time.perf_counter()
        index.archived_matches(SESSION, terms)
        samples.append((time.perf_counter() - began) * 1000)
    report("the index query alone (gate code)", samples)
    samples = []
    for _ in range(5):
        began = time.perf_counter()
        store.live_messages(SESSION)
        samples.append((time.perf_counter() - began) * 1000)
    report("for scale: the reply job's read of the live tail", samples)
    index.indexed = False  # as on a SQLite without FTS5
    samples = []
    for _ in range(3):
        began = time.perf_counter()
        index.archived_matches(SESSION, terms)
        samples.append((time.perf_counter() - began) * 1000)
    report("without the full-text index (LIKE), query alone", samples)
    store.close()


if __name__ == "__main__":
    main()
