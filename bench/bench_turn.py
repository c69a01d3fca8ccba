"""The chat layer's part of a turn, without Qt, beside LangChain's summary-buffer memory.

A layer bench: no window, the fake server in this process, only the loop thread's CPU
counted. It is not the figure of a turn as a person feels it, and its ratio to
LangChain is not Cairn's: that figure — the real window, every thread, the request as
it leaves, LangChain in the same run — is bench/bench_path.py's. Use this one to see
what the chat layer (`ChatService` and below) costs on its own.

Run: .venv/bin/python bench/bench_turn.py [--turns 30] [--quick] [--cells 26k:1k,155k:100k]
     [--profile] [--system-keyring]
(LangChain comes from the `bench` extra: .venv/bin/pip install -e '.[bench]')

Cells: live tokens (26k, 52k, 104k, 155k) × archived history (1,000; 10,000;
100,000 messages). Each cell is a real cairn.db (made by `open_database`, rows
bulk-inserted, cached under /tmp/cairn-bench-turn) holding one conversation:
the archived messages, one active condensed summary covering them (committed
by `SummaryStore.commit_summary`, so every archived row points at it), then
live messages of mixed prose (~130 tokens on average, user and assistant in
turn, token_estimate counted by `default_counter()`) adding up to the live
target. The model has a 1M-token window (the fake server lists it), so no
summary triggers during the measured turns; automatic summaries stay on, so
the trigger policy's per-turn work is in the figures.

Cairn: a `ChatService` on a `QueueLoop` run by this (main) thread — the GUI
thread's role — exactly as tests/unit/chat/conftest.py builds it: the fake
Anthropic server in-process, the real SDK through base_url, an in-memory
keyring (`--system-keyring`: the system's password store, as the app reads
it; run that inside a throw-away D-Bus session with gnome-keyring, as
scripts/test does), a real SQLite file. Per turn, `service.send(question)` and then the
loop runs until the reply is done and the conversation idle (the server sends
a short scripted reply). Measured on the loop thread with `time.thread_time()`
(CPU of that thread only): `send()` plus every callback the loop ran for that
turn — the per-turn GUI-thread work. Also the loop thread's wall time inside
those calls (what the GUI would be blocked for, waits on fsync and on the GIL
included) and the wall time from `send()` to the fake server receiving the
`POST /v1/messages` ("Enter → request": the worker creates the reply's row,
reads the live tail, builds the request, the SDK sends it). Its p95 catches
the full garbage collections of this process (which also holds the fake
server and LangChain's memory), each of which stops every thread.

LangChain, in the same run, turn for turn alternated with Cairn's:
`ConversationSummaryBufferMemory` (langchain-classic) with a fake LLM
(`FakeListLLM`) whose token counting is the same offline tokenizer
(`default_counter().count`, plus the same 4 tokens of framing a message that
Cairn's estimate adds), pre-filled with the same live messages and with the
cell's summary text as its moving summary (LangChain keeps no archive: what a
summary covered is gone from its memory). `max_token_limit` is 80 % of the same
usable window, Cairn's trigger ratio, so it keeps every live message and never
summarizes during the measured turns (checked). Per turn: `save_context` then
`load_memory_variables({})` (return_messages=True, as with a chat model), timed
with `time.thread_time()` too.

The cells' databases are also bench_path.py's, of either archive: templated (this
bench's own: `make_pool`, `build_database`) or natural (`NaturalStream`: the recall
eval's chats, bench/natural_conversation.py, at length; `build_natural_database`,
`natural_questions`). This bench itself runs the templated one.

Prints one table (median and p95 per cell) and the machine; not a pass/fail
test. `--profile` (or a Cairn median above 3 ms) profiles the loop thread's part
of a few more turns with cProfile and prints the top entries.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import importlib.metadata
import io
import json
import logging
import math
import os
import pstats
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import keyring  # noqa: E402

from app.chat.events import Activity, ChatEvents  # noqa: E402
from app.chat.loop import Callback, QueueLoop, Timer  # noqa: E402
from app.chat.service import ChatService, ServiceDependencies  # noqa: E402
from app.core.catalog import ModelInfo  # noqa: E402
from app.core.context import reserved_output  # noqa: E402
from app.core.errors import UserFacingError  # noqa: E402
from app.core.paths import AppPaths  # noqa: E402
from app.core.ratios import DEFAULT_TRIGGER_RATIO  # noqa: E402
from app.core.settings import AppSettings  # noqa: E402
from app.core.summary import (  # noqa: E402
    SourcedPoint,
    SummaryContent,
    SummaryDraft,
    SummaryMode,
    SummaryTier,
    SummaryTrigger,
    render_summary_text,
)
from app.core.tokens import MESSAGE_OVERHEAD_TOKENS, TokenCounter, default_counter  # noqa: E402
from app.llm.anthropic_provider import AnthropicProvider  # noqa: E402
from app.secrets.keystore import SERVICE_NAME, USERNAME, KeyStore  # noqa: E402
from app.store.calibration_file import CalibrationFile  # noqa: E402
from app.store.checksums import text_checksum  # noqa: E402
from app.store.database import open_database  # noqa: E402
from app.store.migrations import SCHEMA_VERSION  # noqa: E402
from app.store.model_cache import ModelCache  # noqa: E402
from app.store.sessions import SessionStore  # noqa: E402
from app.store.summaries import SummaryStore  # noqa: E402
from tests.fakes.anthropic_server import MESSAGES_PATH, FakeAnthropicServer  # noqa: E402
from tests.fakes.keyring_backend import MemoryKeyring  # noqa: E402

CACHE = Path("/tmp/cairn-bench-turn")
DATA_FORMAT = 4  # bump when the generated data changes, so old caches are not reused
LIVE_TARGETS = (26_000, 52_000, 104_000, 155_000)
HISTORIES = (1_000, 10_000, 100_000)
QUICK_LIVE = (26_000, 155_000)
QUICK_HISTORIES = (1_000, 100_000)
TARGET_MS = 3.0
KEY = "sk-ant-api03-bench-key-0123456789abcdef"
MODEL = ModelInfo(
    id="claude-bench-1m",
    display_name="Claude (1M window, bench)",
    max_input_tokens=1_000_000,
    max_tokens=64_000,
)
SESSION_ID = "00000000-0000-4000-8000-00000000be4c"
SYSTEM_PROMPT = (
    "You are a patient helper for a small household. Keep names, numbers, dates and "
    "amounts exactly as the user gives them."
)
POOL_SIZE = 4_000
# The length asked of `make_text`; it overshoots by part of a sentence, so the texts
# average about 130 tokens (the run prints the real figure).
ASKED_MEAN_TOKENS = 105


# --- generated text -----------------------------------------------------------------

_NAMES = ["Maya", "Tomás", "Ingrid", "Kenji", "Aoife", "Ravi", "Léa", "Olusegun", "Petra"]
_PLACES = ["Lisbon", "the allotment", "Bynack More", "the Fords of Avon", "Kyoto", "Tromsø"]
_THINGS = ["tomatoes", "the boiler", "the mortgage", "a used Corolla", "the quarterly report"]
_PROSE = [
    "We talked about {thing} again this morning, and {name} thinks we should wait until "
    "{month} before deciding anything.",
    "The plan for {place} is two days of walking, about {n} km, with {m} m of ascent on "
    "the first day.",
    "Could you explain why {thing} costs {n} EUR more this year than last? The invoice "
    "from {month} {day} does not say.",
    "{name} sent the figures: {n} units sold in {month}, up {p} % on the same month last year.",
    "I would keep it simple: water the beds every {p} days, mulch after the rain, and "
    "check the leaves for blight once a week.",
    "Here is what I found in the notes from {month} {day}: the meeting moved to {place}, "
    "and {name} will bring the printed copies.",
    "That makes sense. To be sure I follow: the deposit is {n} EUR, due on {month} {day}, "
    "and the rest is paid on delivery?",
    "There are three options. The first is cheaper but slower; the second needs {name} "
    "to sign; the third only works if {thing} is ready by {month}.",
    "Honestly I am not sure. Last time we tried, it took {p} weeks and two phone calls "
    "before anyone at {place} answered.",
    "The short answer is yes. The longer one: it depends on whether {thing} is still "
    "under warranty, which ends on {month} {day}.",
    "Let's go with the second option and review it on {month} {day}; {name} owns the "
    "follow-up and will send a summary to everyone.",
    "A quick recap so nothing is lost: budget {n} EUR, deadline {month} {day}, contact "
    "{name}, and the file is report-{p}.xlsx in the shared folder.",
]
_CODE = [
    "```python\ndef total(rows):\n    return sum(row['amount'] for row in rows if row['ok'])\n```",
    "```sql\nSELECT month, sum(amount) FROM invoices WHERE year = {year} GROUP BY month;\n```",
    "Run `python -m venv .venv && .venv/bin/pip install -r requirements.txt`, then `make test`.",
]
_LIST = [
    "- {name}: {n} EUR\n- {name2}: {m} EUR\n- shared costs: {p} EUR",
    "1. Check {thing}.\n2. Call {name} before {month} {day}.\n3. Book {place} for {p} nights.",
]
_OTHER = [
    "Càrn Bàn Mòr, {m} m — and the café in {place} still serves the ünusual crêpes. ",
    "日本語のメモ: {place} に {p} 日滞在します。🏔️",
    "See https://example.org/{name}/notes-{p}.html for the full list.",
]
_MONTHS = ["January", "March", "April", "May", "July", "September", "October", "December"]


def _fill(template: str, rng: random.Random) -> str:
    return template.format(
        name=rng.choice(_NAMES),
        name2=rng.choice(_NAMES),
        place=rng.choice(_PLACES),
        thing=rng.choice(_THINGS),
        month=rng.choice(_MONTHS),
        day=rng.randint(1, 28),
        n=rng.randint(2, 9_800),
        m=rng.randint(100, 1_300),
        p=rng.randint(2, 40),
        year=rng.randint(2019, 2026),
    )


def _fragment(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.78:
        return _fill(rng.choice(_PROSE), rng)
    if kind < 0.88:
        return _fill(rng.choice(_CODE), rng)
    if kind < 0.95:
        return _fill(rng.choice(_LIST), rng)
    return _fill(rng.choice(_OTHER), rng)


def make_text(rng: random.Random, tokens: int) -> str:
    """Mixed prose of about `tokens` cl100k tokens (by length; counted exactly later)."""
    parts: list[str] = []
    length = 0
    while length < tokens * 4.3:
        part = _fragment(rng)
        parts.append(part)
        length += len(part) + 1
    return " ".join(parts) if rng.random() < 0.7 else "\n\n".join(parts)


@dataclass(frozen=True)
class Pool:
    """Message texts with their token counts, made once per run (deterministic)."""

    texts: tuple[str, ...]
    tokens: tuple[int, ...]


def make_pool(counter: TokenCounter) -> Pool:
    rng = random.Random(7)
    # A long-tailed length: most messages short, a few long.
    sigma = 0.8
    mu = math.log(ASKED_MEAN_TOKENS) - sigma * sigma / 2
    texts = tuple(
        make_text(rng, max(6, min(1_500, int(rng.lognormvariate(mu, sigma)))))
        for _ in range(POOL_SIZE)
    )
    return Pool(texts, tuple(counter.count(text) for text in texts))


def make_questions(count: int, seed: int) -> list[tuple[str, str]]:
    """(question, scripted answer) pairs for the measured turns; short, all different."""
    rng = random.Random(seed)
    pairs = []
    for index in range(count):
        question = f"Question {index + 1}: " + make_text(rng, rng.randint(25, 60))
        answer = make_text(rng, rng.randint(40, 80))
        pairs.append((question, answer))
    return pairs


# --- natural text: bench/natural_conversation.py's chats, at length -----------------------

ARCHIVES = ("natural", "templated")
DEFAULT_ARCHIVE = "natural"
NATURAL_FORMAT = 2  # bump when the natural text changes, so old caches are not reused
# Claude's replies are lengthened to about this mean (cl100k tokens) so that, with the
# users' short lines (~20 tokens), a message averages about as many tokens as a templated
# one (~130): a cell then holds about as many messages of either archive, and what
# differs between them is the wording.
NATURAL_REPLY_TOKENS = 230
# The storylines' secondary people and places, drawn anew for each six months of chats
# (an "era"); Maya, Tom, Biscuit and Leeds stay hers throughout.
_RENAMED = {
    "Sam": ("Sam", "Owen", "Priya", "Callum", "Nadia", "Joe", "Fatima", "Declan", "Yusuf"),
    "Aisha": ("Aisha", "Rosie", "Mei", "Hannah", "Zainab", "Lucy", "Ines", "Grace"),
    "Denise": ("Denise", "Margaret", "Graham", "Shirin", "Colin", "Bernadette", "Anil"),
    "Pickle": ("Pickle", "Mango", "Sooty", "Wasabi", "Marmalade", "Tinker", "Noodle"),
    "Hartley": ("Hartley", "Okafor", "Brennan", "Whitfield", "Kowalski", "Ashworth"),
    "Gaia": ("Gaia", "Alfama", "Ribeira", "Belém", "Bairro Alto", "Foz"),
    "Greenside": ("Greenside", "Moortown", "Headingley", "Chapel Allerton", "Roundhay"),
    "Riverside": ("Riverside", "Canal Path", "Abbey Dash", "Harewood", "Golden Acre"),
    "Porto": ("Porto", "Seville", "Bologna", "Ghent", "Kraków", "Valencia", "Bruges"),
    "Lisbon": ("Lisbon", "Madrid", "Florence", "Brussels", "Vienna", "Barcelona"),
    "Glasgow": ("Glasgow", "Edinburgh", "Bristol", "Newcastle", "Cardiff", "Belfast"),
    "Mill Lane": ("Mill Lane", "Kirkgate", "Briggate", "Call Lane", "Otley Road"),
    "Hebden Bridge": ("Hebden Bridge", "Haworth", "Ilkley", "Malham", "Grassington"),
}


def _doc_passages() -> list[str]:
    """Paragraphs of real English prose, the kind of explanation Claude gives when asked
    about code: the Python reference shipped with the interpreter (pydoc_data.topics)."""
    import pydoc_data.topics

    passages = []
    for text in pydoc_data.topics.topics.values():
        for paragraph in text.split("\n\n"):
            flat = " ".join(paragraph.split())
            # Prose only: no headings, grammar rules or code listings.
            if len(flat) > 120 and flat[0].isupper() and "::=" not in flat and ">>>" not in flat:
                passages.append(flat)
    return passages


@dataclass(frozen=True)
class NaturalMessage:
    role: str
    text: str
    tokens: int
    sent_at: datetime


class NaturalStream:
    """bench/natural_conversation.py's chats (`make_natural`, the recall eval's generator,
    unchanged) laid end to end, one era (six months of Maya's chats, ~900 messages) after
    another, each era from its own seed with its own secondary people and places; sessions
    a few hours apart from 2023-01-01. Claude's replies are lengthened with more of what
    Claude says in those chats and, in some, a passage of explanation (`_doc_passages`).
    The same messages every run; made as far as asked (`take`)."""

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self.messages: list[NaturalMessage] = []
        self._eras = 0
        self._clock = datetime(2023, 1, 1, 8, 0, tzinfo=UTC)
        self._passages = _doc_passages()
        from bench.natural_conversation import FILLER, GENERAL_CLAUDE, STORIES

        said = [turn.text for _day, turns in STORIES for turn in turns if turn.role == "assistant"]
        said += [line for _asks, answers, _words in FILLER.values() for line in answers]
        said += list(GENERAL_CLAUDE)
        self._claude = said

    def take(self, count: int) -> list[NaturalMessage]:
        while len(self.messages) < count:
            self._era()
        return self.messages[:count]

    def renamed(self, era: int) -> Callable[[str], str]:
        rng = random.Random(era * 7919)
        mapping = {name: rng.choice(choices) for name, choices in _RENAMED.items()}

        def rename(text: str) -> str:
            for name, new in mapping.items():
                if name in text:
                    text = re.sub(rf"\b{re.escape(name)}\b", new, text)
            return text

        return rename

    def reply(self, rng: random.Random, text: str) -> str:
        """Claude's reply lengthened: more of what Claude says, and now and then an
        explanation, to a long-tailed length (lognormal about NATURAL_REPLY_TOKENS)."""
        sigma = 0.8
        target = rng.lognormvariate(math.log(NATURAL_REPLY_TOKENS) - sigma * sigma / 2, sigma)
        paragraphs = [text]
        length = len(text)
        while length < target * 4.3:
            if rng.random() < 0.45:
                start = rng.randrange(len(self._passages))
                part = self._passages[start]
            else:
                part = " ".join(rng.sample(self._claude, k=rng.randint(2, 5)))
            paragraphs.append(part)
            length += len(part) + 2
        return "\n\n".join(paragraphs)

    def _era(self) -> None:
        from bench.natural_conversation import make_natural

        era = self._eras
        self._eras += 1
        chats = make_natural(seed=1_000 + era)
        rename = self.renamed(era)
        rng = random.Random(era)
        previous: datetime | None = None
        for message in chats.messages:
            if previous is None or message.sent_at - previous > timedelta(hours=1):
                # A new session: a few hours after the last one.
                self._clock += timedelta(minutes=rng.randint(30, 5 * 60))
            else:
                self._clock += message.sent_at - previous
            previous = message.sent_at
            text = message.text
            if message.role == "assistant":
                text = self.reply(rng, text)
            text = rename(text)  # what Claude adds from other chats too
            self.messages.append(
                NaturalMessage(message.role, text, self.counter.count(text), self._clock)
            )


def natural_questions(count: int, seed: int, counter: TokenCounter) -> list[tuple[str, str]]:
    """(question, scripted answer) pairs worded as people ask in a chat: the recall eval's
    questions (bench/natural_conversation.py's, held-out ones too: short, referring back,
    "last week", "my brother's fiancée"), in an order drawn from `seed`, each answered by a
    reply made as the archive's are."""
    from bench.natural_conversation import HELD_OUT, QUESTIONS

    rng = random.Random(seed)
    asked = [question.text for question in (*QUESTIONS, *HELD_OUT)]
    stream = NaturalStream(counter)
    answers = [m.text for m in stream.take(2 * count + 2)[1::2]][-count:]
    rename = stream.renamed(seed)
    pairs = []
    order: list[str] = []
    for index in range(count):
        if not order:
            order = rng.sample(asked, k=len(asked))
        pairs.append((rename(order.pop()), answers[index]))
    return pairs


def build_natural_database(
    path: Path, cell: Cell, stream: NaturalStream, counter: TokenCounter
) -> None:
    """As `build_database`, with the natural stream's messages in order: `cell.history`
    archived under one active condensed summary, then live messages reaching the live
    target (ending with Claude's reply)."""
    messages = stream.take(cell.history)
    total_live = 0
    live = 0
    while True:
        chunk = stream.take(cell.history + live + 2)
        total_live += sum(m.tokens + MESSAGE_OVERHEAD_TOKENS for m in chunk[-2:])
        live += 2
        if total_live >= cell.live:
            break
    messages = stream.take(cell.history + live)
    rng = random.Random(cell.history * 31 + cell.live)
    _write_database(
        path,
        cell,
        [(m.text, m.tokens, m.sent_at) for m in messages],
        counter,
        rng,
        content=natural_summary_content(messages[: cell.history], rng),
    )


def natural_summary_content(
    archived: Sequence[NaturalMessage], rng: random.Random
) -> SummaryContent:
    """The archive's summary in the archive's words: its sentences, sourced."""

    def point() -> SourcedPoint:
        seq = rng.randrange(len(archived))
        first = re.split(r"(?<=[.!?])\s", archived[seq].text, maxsplit=1)[0]
        return SourcedPoint(text=first[:300], sources=[seq + 1])

    return SummaryContent(
        narrative=" ".join(point().text for _ in range(9)),
        key_points=[point() for _ in range(8)],
        decisions=[point()],
        open_questions=[point()],
        entities=["Maya", "Tom", "Biscuit", "Leeds", "15 August", "£340"],
    )


# --- the databases --------------------------------------------------------------------


@dataclass(frozen=True)
class Cell:
    live: int
    history: int

    @property
    def name(self) -> str:
        return f"{self.live // 1000}k:{_short(self.history)}"


def _short(number: int) -> str:
    return f"{number // 1000}k" if number >= 1000 else str(number)


def _stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def _usage_json(tokens: int) -> str:
    return json.dumps(
        {
            "input_tokens": 12,
            "output_tokens": tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 40_000,
        }
    )


def live_plan(live_target: int, pool: Pool) -> list[int]:
    """Pool indexes of the live messages: user first, alternating, ending with Claude's
    answer, raw tokens (text + MESSAGE_OVERHEAD_TOKENS each) reaching `live_target`."""
    rng = random.Random(live_target)
    chosen: list[int] = []
    total = 0
    while total < live_target or len(chosen) % 2:
        index = rng.randrange(len(pool.texts))
        chosen.append(index)
        total += pool.tokens[index] + MESSAGE_OVERHEAD_TOKENS
    return chosen


def summary_content(history: int, rng: random.Random) -> SummaryContent:
    return SummaryContent(
        narrative=" ".join(_fill(rng.choice(_PROSE), rng) for _ in range(9)),
        key_points=[
            SourcedPoint(text=_fill(rng.choice(_PROSE), rng), sources=[rng.randint(1, history)])
            for _ in range(8)
        ],
        decisions=[SourcedPoint(text=_fill(_PROSE[10], rng), sources=[history // 2])],
        open_questions=[SourcedPoint(text=_fill(_PROSE[2], rng), sources=[history - 1])],
        entities=["report-12.xlsx", "https://example.org/notes", "9,800 EUR", "14 May"],
    )


def build_database(path: Path, cell: Cell, pool: Pool, counter: TokenCounter) -> None:
    """One conversation: `cell.history` archived messages (drawn from the templated pool)
    under one active condensed summary, then the live messages."""
    rng = random.Random(cell.history * 31 + cell.live)
    live = live_plan(cell.live, pool)
    total = cell.history + len(live)
    start = datetime(2024, 1, 1, tzinfo=UTC)
    step = timedelta(minutes=3)
    picks = [
        rng.randrange(len(pool.texts)) if seq <= cell.history else live[seq - cell.history - 1]
        for seq in range(1, total + 1)
    ]
    rows = [
        (pool.texts[index], pool.tokens[index], start + step * seq)
        for seq, index in enumerate(picks, start=1)
    ]
    _write_database(path, cell, rows, counter, rng, created=start)


def _write_database(
    path: Path,
    cell: Cell,
    messages: list[tuple[str, int, datetime]],
    counter: TokenCounter,
    rng: random.Random,
    created: datetime | None = None,
    content: SummaryContent | None = None,
) -> None:
    """The conversation of `messages` (text, tokens, written at; user first, alternating),
    the first `cell.history` archived under one active condensed summary. Written to a
    temporary name, then renamed."""
    building = path.with_name(path.name + ".building")
    for stale in path.parent.glob(building.name + "*"):
        stale.unlink()
    opened = open_database(building)
    connection = opened.connection
    total = len(messages)
    connection.execute("BEGIN")
    connection.execute(
        "INSERT INTO session (id, title, created_at, updated_at, model, system_prompt, "
        "version, last_seq) VALUES (?, 'A long household conversation', ?, ?, ?, ?, 1, ?)",
        (
            SESSION_ID,
            _stamp(created or messages[0][2]),
            _stamp(messages[-1][2]),
            MODEL.id,
            SYSTEM_PROMPT,
            total,
        ),
    )

    def rows() -> Any:
        for seq, (text, tokens, written) in enumerate(messages, start=1):
            user = seq % 2 == 1
            yield (
                SESSION_ID,
                seq,
                "user" if user else "assistant",
                text,
                _stamp(written),
                tokens,
                None if user else _usage_json(tokens),
                None if user else MODEL.id,
                text_checksum(text),  # as every message the app writes
            )

    connection.executemany(
        "INSERT INTO message (session_id, seq, role, content, created_at, token_estimate, "
        "usage, model, status, checksum) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'complete', ?)",
        rows(),
    )
    connection.execute("COMMIT")
    archived = connection.execute(
        "SELECT id, coalesce(token_estimate, 0) FROM message WHERE session_id = ? AND seq <= ? "
        "ORDER BY seq",
        (SESSION_ID, cell.history),
    ).fetchall()
    content = content or summary_content(cell.history, rng)
    SummaryStore(connection, database=building).commit_summary(
        SummaryDraft(
            session_id=SESSION_ID,
            tier=SummaryTier.CONDENSED,
            first_seq=1,
            last_seq=cell.history,
            message_ids=[row[0] for row in archived],
            content=content,
            source_tokens=sum(row[1] for row in archived),
            summary_tokens=counter.count(render_summary_text(content)),
            mode=SummaryMode.HYBRID,
            model=MODEL.id,
            trigger=SummaryTrigger.AUTO,
        )
    )
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()
    building.rename(path)
    for side in path.parent.glob(building.name + "*"):
        side.unlink()


def cached_database(
    cell: Cell, pool: Pool | NaturalStream, counter: TokenCounter
) -> tuple[Path, float]:
    """The cell's database in the cache (built when missing), and seconds spent building:
    of the templated archive (`pool` a `Pool`) or the natural one (a `NaturalStream`)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    if isinstance(pool, NaturalStream):
        name = f"turn-natural-v{NATURAL_FORMAT}-s{SCHEMA_VERSION}"
    else:
        name = f"turn-v{DATA_FORMAT}-s{SCHEMA_VERSION}"
    path = CACHE / f"{name}-live{cell.live}-hist{cell.history}.db"
    if path.exists():
        return path, 0.0
    started = time.perf_counter()
    if isinstance(pool, NaturalStream):
        build_natural_database(path, cell, pool, counter)
    else:
        build_database(path, cell, pool, counter)
    return path, time.perf_counter() - started


def describe_archive(database: Path, questions: Sequence[str], archived: int) -> str:
    """What recall searches, in figures: the archived messages' distinct words, how many
    messages the commonest word is in, and for the questions' recall terms
    (`salient_terms`, single words) the share of archived messages holding each: the
    pool recall reads and ranks grows with it."""
    import sqlite3

    from app.core.recall import salient_terms

    connection = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        texts = [
            row[0]
            for row in connection.execute(
                "SELECT content FROM message WHERE session_id = ? AND seq <= ? ORDER BY seq",
                (SESSION_ID, archived),
            )
        ]
    finally:
        connection.close()
    holding: Counter[str] = Counter()
    for text in texts:
        holding.update(set(re.findall(r"[a-z0-9]+", text.lower())))
    shares = []
    for question in questions:
        for term in salient_terms(question):
            if len(term.words) == 1:
                shares.append(holding[term.words[0].lower()] / max(1, len(texts)))
    common = holding.most_common(1)[0][1] / max(1, len(texts)) if holding else 0.0
    return (
        f"{len(texts):,} archived messages, {len(holding):,} distinct words (commonest in "
        f"{common:.0%} of them); the questions' {len(shares)} one-word recall terms: median "
        f"in {statistics.median(shares) if shares else 0:.1%} of archived messages, "
        f"{sum(share > 0.05 for share in shares) / max(1, len(shares)):.0%} in over 5 %"
    )


# --- Cairn, as the harness runs it ------------------------------------------------------


class TimedLoop(QueueLoop):
    """A `QueueLoop` that adds up the thread CPU and wall time of every callback it runs.

    Only the callbacks count, not the waiting in `run_until` (the GUI's idle time).
    """

    def __init__(self) -> None:
        super().__init__()
        self.cpu = 0.0
        self.wall = 0.0
        self.callbacks = 0
        self.profiler: cProfile.Profile | None = None

    def post(self, callback: Callback) -> None:
        super().post(self._timed(callback))

    def call_later(self, seconds: float, callback: Callback) -> Timer:
        return super().call_later(seconds, self._timed(callback))

    def _timed(self, callback: Callback) -> Callback:
        def run() -> None:
            profiler = self.profiler
            wall, cpu = time.perf_counter(), time.thread_time()
            if profiler is not None:
                profiler.enable()
            try:
                callback()
            finally:
                if profiler is not None:
                    profiler.disable()
                self.cpu += time.thread_time() - cpu
                self.wall += time.perf_counter() - wall
                self.callbacks += 1

        return run


class StampingServer(FakeAnthropicServer):
    """The fake server, noting when each `POST /v1/messages` reaches it.

    The stamp is taken when the handler starts on the request (its headers parsed),
    before the server reads the body or counts its tokens.
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.arrivals: list[float] = []

    def _handle(self, handler: Any) -> None:
        if handler.command == "POST" and urlsplit(handler.path).path == MESSAGES_PATH:
            self.arrivals.append(time.perf_counter())
        super()._handle(handler)


class CountingEvents(ChatEvents):
    """Counts the events; keeps the errors and notices (nothing costly per event)."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.problems: list[str] = []

    def error_raised(self, error: UserFacingError) -> None:
        self.counts["error_raised"] += 1
        self.problems.append(f"error: {error.message} ({error.detail})")

    def notice_raised(self, title: str, text: str) -> None:
        self.counts["notice_raised"] += 1
        self.problems.append(f"notice: {title}: {text}")


def _counting(name: str) -> Callable[..., None]:
    def method(self: CountingEvents, *_args: Any) -> None:
        self.counts[name] += 1

    method.__name__ = name
    return method


for _name in (
    "sessions_listed",
    "session_changed",
    "session_removed",
    "conversation_opened",
    "message_added",
    "message_text_changed",
    "message_updated",
    "activity_changed",
    "context_changed",
    "summaries_changed",
    "status_changed",
    "key_needed",
    "models_changed",
    "pending_sent",
):
    setattr(CountingEvents, _name, _counting(_name))


@dataclass
class Running:
    """A started service on a copy of a cell's database."""

    service: ChatService
    loop: TimedLoop
    events: CountingEvents
    store: SessionStore
    home: Path

    def idle(self) -> bool:
        current = self.service.current
        return current.state.activity is Activity.IDLE and not current.has_jobs

    def close(self) -> None:
        self.service.shutdown()
        self.store.close()
        shutil.rmtree(self.home, ignore_errors=True)


def start_cairn(database: Path, server: StampingServer) -> Running:
    """A service on a fresh copy of `database`, built as tests/unit/chat/conftest.py does,
    opened on the conversation, loaded and warmed."""
    home = Path(tempfile.mkdtemp(prefix="cairn-bench-turn-"))
    os.environ["CAIRN_HOME"] = str(home)
    paths = AppPaths.from_environment()
    paths.ensure()
    shutil.copyfile(database, paths.database)
    opened = open_database(paths.database)
    store = SessionStore(opened.connection, database=opened.path)
    copy = paths.database
    settings = AppSettings().model_copy(update={"api_base_url": server.base_url, "model": MODEL.id})
    loop = TimedLoop()
    events = CountingEvents()
    deps = ServiceDependencies(
        store=store,
        database=copy,
        open_store=lambda: SessionStore.open(copy),
        open_summaries=lambda: SummaryStore.open(copy),
        keystore=KeyStore(),
        provider_factory=lambda key, url: AnthropicProvider(key, url),
        settings=settings,
        settings_path=paths.settings_file,
        calibration_file=CalibrationFile.in_data_dir(paths),
        model_cache=ModelCache.in_data_dir(paths),
        counter=default_counter(),
    )
    service = ChatService(deps, loop, events)
    running = Running(service, loop, events, store, home)
    service.start()

    def ready() -> bool:
        current = service.current
        return (
            service.counter.ready
            and service.runner.running == 0
            and current.state.session_id == SESSION_ID
            and current.state.loaded
            and current.state.model_id == MODEL.id
            and running.idle()
        )

    loop.run_until(ready, timeout=120)
    state = service.current.gauge.measure()
    assert state is not None and state.context_window == MODEL.max_input_tokens, state
    return running


@dataclass
class CairnTurn:
    cpu_ms: float
    send_cpu_ms: float
    wall_ms: float
    to_request_ms: float
    callbacks: int


def cairn_turn(running: Running, server: StampingServer, question: str, answer: str) -> CairnTurn:
    """One turn: send, then run the loop until the reply is done and the conversation idle."""
    loop = running.loop
    server.add_reply(answer)
    arrivals = len(server.arrivals)
    loop.cpu = loop.wall = 0.0
    loop.callbacks = 0
    profiler = loop.profiler
    wall, cpu = time.perf_counter(), time.thread_time()
    if profiler is not None:
        profiler.enable()
    sent = running.service.send(question)
    if profiler is not None:
        profiler.disable()
    send_cpu, send_wall = time.thread_time() - cpu, time.perf_counter() - wall
    if not sent:
        raise RuntimeError(f"send() refused the message: {running.events.problems[-3:]}")
    loop.run_until(running.idle, timeout=120)
    if running.events.problems:
        raise RuntimeError(f"the turn went wrong: {running.events.problems}")
    if len(server.arrivals) != arrivals + 1:
        raise RuntimeError(f"expected one request, got {len(server.arrivals) - arrivals}")
    server.clear_requests()  # the server keeps every parsed body otherwise
    return CairnTurn(
        cpu_ms=(send_cpu + loop.cpu) * 1e3,
        send_cpu_ms=send_cpu * 1e3,
        wall_ms=(send_wall + loop.wall) * 1e3,
        to_request_ms=(server.arrivals[arrivals] - wall) * 1e3,
        callbacks=loop.callbacks + 1,
    )


# --- LangChain ------------------------------------------------------------------------


def make_langchain_memory(
    live_texts: Sequence[str], summary_text: str, counter: TokenCounter, limit: int
) -> Any:
    """ConversationSummaryBufferMemory with a fake LLM counting with Cairn's tokenizer."""
    from langchain_classic.memory import ConversationSummaryBufferMemory
    from langchain_core.language_models import FakeListLLM
    from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

    class CountingFakeLLM(FakeListLLM):
        """No network; counts tokens as Cairn does (cl100k offline, 4 a message)."""

        def get_num_tokens(self, text: str) -> int:
            return counter.count(text)

        def get_num_tokens_from_messages(
            self, messages: list[BaseMessage], tools: Sequence[Any] | None = None
        ) -> int:
            return sum(
                counter.count(str(message.content)) + MESSAGE_OVERHEAD_TOKENS
                for message in messages
            )

    llm = CountingFakeLLM(responses=["A new summary of the earlier conversation."])
    with warnings.catch_warnings():
        # Deprecated since LangChain 0.3.1, still shipped (and still used) in 1.x.
        warnings.simplefilter("ignore")
        memory = ConversationSummaryBufferMemory(
            llm=llm, max_token_limit=limit, return_messages=True, input_key="input"
        )
    memory.moving_summary_buffer = summary_text
    memory.chat_memory.add_messages(
        [
            HumanMessage(content=text) if index % 2 == 0 else AIMessage(content=text)
            for index, text in enumerate(live_texts)
        ]
    )
    return memory


def langchain_turn(memory: Any, question: str, answer: str) -> float:
    """What LangChain's memory does per turn; thread CPU in milliseconds."""
    cpu = time.thread_time()
    memory.save_context({"input": question}, {"output": answer})
    memory.load_memory_variables({})
    return (time.thread_time() - cpu) * 1e3


# --- the run ------------------------------------------------------------------------------


@dataclass
class CellResult:
    cell: Cell
    live_messages: int
    live_tokens: int
    cairn: list[CairnTurn] = field(default_factory=list)
    langchain: list[float] = field(default_factory=list)
    profile: str = ""


def p95(samples: Sequence[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def run_cell(
    cell: Cell,
    database: Path,
    server: StampingServer,
    counter: TokenCounter,
    turns: int,
    warmup: int,
    profile: bool,
) -> CellResult:
    running = start_cairn(database, server)
    try:
        conversation = running.service.current
        tally = conversation.state.tail.tally
        result = CellResult(cell, len(conversation.state.tail), tally.history)
        live_texts = [m.content for m in running.store.live_messages(SESSION_ID)]
        summary_text = conversation.summaries[0].text()
        usable = MODEL.max_input_tokens - reserved_output(MODEL)
        memory = make_langchain_memory(
            live_texts, summary_text, counter, int(DEFAULT_TRIGGER_RATIO * usable)
        )
        pairs = make_questions(warmup + turns + (12 if profile else 0), seed=cell.live)
        for index, (question, answer) in enumerate(pairs[: warmup + turns]):
            cairn = cairn_turn(running, server, question, answer)
            langchain = langchain_turn(memory, question, answer)
            if index >= warmup:
                result.cairn.append(cairn)
                result.langchain.append(langchain)
        # Neither side summarized: every live message is still there, on both sides.
        assert not conversation.summarizing and len(conversation.summaries) == 1
        assert len(conversation.state.tail) == result.live_messages + 2 * (warmup + turns)
        assert len(memory.chat_memory.messages) == len(live_texts) + 2 * (warmup + turns)
        assert memory.moving_summary_buffer == summary_text
        median = statistics.median(turn.cpu_ms for turn in result.cairn)
        if profile or median > TARGET_MS:
            result.profile = profile_turns(running, server, pairs[warmup + turns :] or pairs[:12])
        return result
    finally:
        running.close()


def profile_turns(running: Running, server: StampingServer, pairs: list[tuple[str, str]]) -> str:
    """cProfile of the loop thread's part (send and callbacks) of a few more turns."""
    # Thread CPU, as the table measures (the wall clock would count fsync waits too).
    profiler = cProfile.Profile(time.thread_time)
    running.loop.profiler = profiler
    try:
        for question, answer in pairs:
            cairn_turn(running, server, question, answer)
    finally:
        running.loop.profiler = None
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.strip_dirs().sort_stats("tottime").print_stats(15)
    stats.sort_stats("cumulative").print_stats(25)
    return f"{len(pairs)} turns profiled\n" + out.getvalue()


def parse_cells(text: str) -> list[Cell]:
    def number(part: str) -> int:
        part = part.strip().lower().replace(",", "").replace("_", "")
        return int(float(part[:-1]) * 1000) if part.endswith("k") else int(part)

    cells = []
    for item in text.split(","):
        live, _, history = item.partition(":")
        if not history:
            raise SystemExit(f"--cells: '{item}' is not LIVE:HISTORY (e.g. 155k:100k)")
        cells.append(Cell(number(live), number(history)))
    return cells


def version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=30, help="measured turns per cell")
    parser.add_argument("--warmup", type=int, default=3, help="unmeasured turns first")
    parser.add_argument(
        "--quick", action="store_true", help="26k and 155k live × 1k and 100k history only"
    )
    parser.add_argument("--cells", help="LIVE:HISTORY,… e.g. 26k:1k,155k:100k")
    parser.add_argument("--profile", action="store_true", help="profile every cell's loop thread")
    parser.add_argument(
        "--system-keyring",
        action="store_true",
        help="keep the key in the system's password store, as the app does (run it inside a "
        "throw-away D-Bus session with gnome-keyring, as scripts/test does); default: in memory",
    )
    args = parser.parse_args()
    if args.cells:
        cells = parse_cells(args.cells)
    elif args.quick:
        cells = [Cell(live, history) for live in QUICK_LIVE for history in QUICK_HISTORIES]
    else:
        cells = [Cell(live, history) for live in LIVE_TARGETS for history in HISTORIES]

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN"):
        os.environ.pop(name, None)
    if args.system_keyring:
        KeyStore().set(KEY)
    else:
        backend = MemoryKeyring()
        backend.passwords[(SERVICE_NAME, USERNAME)] = KEY
        keyring.set_keyring(backend)

    began = time.perf_counter()
    load_start = os.getloadavg()
    counter = default_counter()
    counter.load()
    print(
        f"machine: {os.cpu_count()} cores, load average {load_start[0]:.2f} "
        f"{load_start[1]:.2f} {load_start[2]:.2f} at start; Python {sys.version.split()[0]}"
    )
    print(
        f"versions: langchain-classic {version('langchain-classic')}, langchain-core "
        f"{version('langchain-core')}, anthropic {version('anthropic')}"
    )
    pool = make_pool(counter)
    print(
        f"message texts: {len(pool.texts)}, mean {statistics.mean(pool.tokens):.0f} tokens "
        f"(median {statistics.median(pool.tokens):.0f}, max {max(pool.tokens)})"
    )
    databases: dict[Cell, Path] = {}
    for cell in cells:
        databases[cell], seconds = cached_database(cell, pool, counter)
        if seconds:
            print(f"built {databases[cell].name} in {seconds:.1f} s")
    print(
        f"model {MODEL.id}: {MODEL.max_input_tokens:,}-token window (no summary triggers); "
        f"automatic summaries on; {args.warmup} warm-up + {args.turns} measured turns a cell"
    )
    print(f"API key kept in: {type(keyring.get_keyring()).__module__}")
    print()

    results = []
    with StampingServer(models=[MODEL], chunk_delay=0.0) as server:
        for cell in cells:
            gc.collect()
            result = run_cell(
                cell, databases[cell], server, counter, args.turns, args.warmup, args.profile
            )
            results.append(result)
            cairn = statistics.median(turn.cpu_ms for turn in result.cairn)
            langchain = statistics.median(result.langchain)
            print(
                f"  {cell.name:<10} done: Cairn {cairn:.2f} ms, LangChain {langchain:.1f} ms",
                flush=True,
            )
    load_end = os.getloadavg()
    if args.system_keyring:
        KeyStore().delete()
    elapsed = time.perf_counter() - began

    print()
    print(
        "Per turn, medians unless marked. Cairn: loop (GUI) thread CPU over send() and every "
        "callback of the turn; of it, send() alone; the loop thread's wall time in them;"
    )
    print(
        "Enter → request: wall time from send() to the fake server receiving POST "
        "/v1/messages. LangChain: save_context + load_memory_variables, thread CPU."
    )
    header = (
        f"{'cell (live:history)':<20} {'live msgs':>9} {'live tok':>9}  "
        f"{'Cairn CPU med/p95 ms':>20}  {'send() CPU':>10}  {'loop wall':>9}  "
        f"{'Enter→request med/p95 ms':>24}  "
        f"{'LangChain med/p95 ms':>20}  {'LC/Cairn':>8}"
    )
    print(header)
    print("-" * len(header))
    for result in results:
        cairn_cpu = [turn.cpu_ms for turn in result.cairn]
        send = [turn.send_cpu_ms for turn in result.cairn]
        wall = [turn.wall_ms for turn in result.cairn]
        to_request = [turn.to_request_ms for turn in result.cairn]
        langchain_ms = result.langchain
        ratio = statistics.median(langchain_ms) / statistics.median(cairn_cpu)
        print(
            f"{result.cell.name:<20} {result.live_messages:>9,} {result.live_tokens:>9,}  "
            f"{statistics.median(cairn_cpu):>9.2f} / {p95(cairn_cpu):>7.2f}  "
            f"{statistics.median(send):>10.2f}  {statistics.median(wall):>9.2f}  "
            f"{statistics.median(to_request):>11.1f} / {p95(to_request):>10.1f}  "
            f"{statistics.median(langchain_ms):>9.1f} / {p95(langchain_ms):>8.1f}  {ratio:>7.0f}×"
        )
    callbacks = statistics.median(turn.callbacks for r in results for turn in r.cairn)
    print()
    print(
        f"loop-thread calls a turn (send + callbacks), median: {callbacks:.0f}; the chat "
        "layer alone: the turn in the real window, every thread, is bench/bench_path.py's"
    )
    print(
        f"load average at end {load_end[0]:.2f} {load_end[1]:.2f} {load_end[2]:.2f}; "
        f"whole run {elapsed:.0f} s"
    )
    for result in results:
        if result.profile:
            print()
            print(f"=== profile of the loop thread, cell {result.cell.name} ===")
            print(result.profile)


if __name__ == "__main__":
    main()
