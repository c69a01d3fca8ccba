"""Which planted facts, and which evidence messages, reach the request Cairn builds (issue 12).

Run: .venv/bin/python bench/bench_recall_eval.py [--quick] [--seed 12] [--messages 640]

The conversation is bench/planted_facts.py's: 640 messages over twelve weeks,
six everyday topics, 22 facts of each of nine kinds (names, codes and ids,
amounts, numbers with units, dates, clock times, file names, URLs, decisions),
none in the last 40 messages, a question for each that does not contain its value.

For each window (2k, 4k, 8k, 16k) and summarizer the conversation is fed, one
message at a time, into a real SQLite database (`open_database`, `SessionStore`,
`SummaryStore`, each on its own connection as the app's threads have) and the real
engine runs as the app runs it: after each reply the policy observes and
decides, and a summary is made when due. The summarizers, all behind the
interface the engine uses (`Summarizer` with its `complete` callable, the shape of
`ChatProvider.complete_structured`; no HTTP, so no fake server here):

- rule: offline rules only (`complete=None`, mode rule);
- hybrid: mode hybrid, with an extractive stand-in for Claude — it keeps, verbatim,
  the transcript's sentences that carry a digit, a name, a link or a choice, as the
  prompt asks (a diligent model; not a measure of Claude itself);
- adversarial: mode hybrid, with a fluent but fact-free stand-in — plausible
  narrative and points with no name, number or identifier. Only Cairn's own rule
  facets and retention check can keep facts then.

Both return the `search_keys` our schema requires (`stand_in_keys`): for each stretch on
one subject, the words said in more than one of its messages (the fact-free one: no name
or number) — what a model could write from the text alone, never a question's words.

Then, at the end, every question is asked: `request_for` builds the request the app
would send for it (see there), and we count whether the fact's value is anywhere in
the request's text (system + messages), and whether the message that stated it is
there verbatim (issue 8's evidence measure), beside plain truncation — the newest
messages that fit with the question — in the same run.

Prints two tables; it is not a pass/fail test.

With `--natural` (issue 22) the conversation is bench/natural_conversation.py's instead:
six months of one person's sessions with Claude, greetings and all, and 52 questions
written the way people ask them (naming the participants, paraphrasing, dated, leaning
on the turn before, needing several turns), none of them written to suit recall. It is
fed through the same engine at 4k, 8k, 16k, 32k and 200k, in rule mode and with the
fact-free stand-in for Claude, and for each question we count the share of its evidence
turns that are verbatim in the request, beside plain truncation in the same run: by
category (single fact, several turns, date questions, context-dependent) and by split
(dev questions may be looked at when tuning; test questions never), and, in a table of
its own, a second set held out (bench/natural_conversation.py's `HELD_OUT`, never looked
at while tuning; printed only with `--held-out`, so that a tuning run does not show it).
`--misses` lists the dev questions whose evidence did not reach the request.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.chat.recall import AutomaticRecall
from app.core.catalog import ModelInfo
from app.core.context import BuiltRequest, ContextBuilder, RequestInputs
from app.core.conversation import local_day
from app.core.engine import SummarizationEngine
from app.core.errors import ContextOverflowError
from app.core.models import Message, Role
from app.core.policy import TriggerMemory
from app.core.recall import is_common_word
from app.core.summarization_config import SummarizationConfig
from app.core.summarizer import Summarizer
from app.core.summary import SummaryMode, SummaryTrigger
from app.core.tokens import TokenCounter, default_counter
from app.store import SessionStore, SummaryStore, open_database
from bench.bench_evidence import sent_text, truncation_request
from bench.natural_conversation import CATEGORIES, NaturalConversation, make_natural
from bench.planted_facts import (
    DEFAULT_LENGTH,
    KINDS,
    PlantedConversation,
    make_conversation,
)

# The share of the window automatic recall may use (--recall; the app's default 5 %).
RECALL_RATIO = 0.05
WINDOWS = (2_000, 4_000, 8_000, 16_000)
MODES = ("rule", "hybrid", "adversarial")
NATURAL_WINDOWS = (4_000, 8_000, 16_000, 32_000, 200_000)
NATURAL_MODES = ("rule", "adversarial")

# --- the summarizers' stand-ins for Claude -------------------------------------------

_HEADER = re.compile(r"^\[#(\d+) · (user|assistant) · [^\]]*\]$|^\[Summary of messages #(\d+)")
# A summary's own framing (its dates, the stand-in's narrative), not something said.
_FRAMING = ("When:", "Messages #")
# What a model told to list "identifiers, file names, numbers, amounts, dates, URLs and
# names, verbatim" would pick out: links, file names, amounts, numbers with what follows
# them, codes, and two capitalised words together.
_ENTITY = re.compile(
    r"\b\d{1,2} [A-Z][a-z]+ \d{4}|https?://\S+|\b[\w-]+\.[a-z]{2,4}\b|[£€$][\d,.]+\d"
    r"|\b\d[\d,.:-]*(?: [a-zA-Z%]+)?|\b[A-Z]{1,4}\d*-?\d[\w-]*|[A-Z][a-zà-ÿśń]+ [A-Z][a-zà-ÿśń]+"
)
_TARGET = re.compile(r"under about ([\d,]+) tokens")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_SPECIFIC = re.compile(
    r"\d|https?://|\b(?:go with|chose|decided)\b|(?<=[a-z,] )[A-Z][a-z]+ [A-Z][a-zśń]+"
)


def _transcript_blocks(prompt: str) -> list[tuple[int, list[str]]]:
    """(message number, its lines) for each block of the transcript the summarizer is
    shown; a summary's list markers and headings are left out."""
    inside = prompt.split("<transcript>", 1)[-1].split("</transcript>", 1)[0]
    blocks: list[tuple[int, list[str]]] = []
    for raw in inside.splitlines():
        line = raw.strip()
        header = _HEADER.match(line)
        if header is not None:
            blocks.append((int(header.group(1) or header.group(3)), []))
        elif blocks and line and not line.endswith(":") and not line.startswith(_FRAMING):
            blocks[-1][1].append(line.lstrip("-• ").strip())
    return blocks


# A message's header and its day: "[#12 · user · 2026-02-03 09:14]".
_DAY = re.compile(r"^\[#(\d+) · (?:user|assistant) · (\d{4}-\d{2}-\d{2})")
_KEY_WORD = re.compile(r"(?<![\w'’])[^\W\d_]+(?![\w'’])")
# The words of one key ("a few plain words", as the prompt asks): at most this many.
KEY_WORDS = 4


def _sittings(prompt: str) -> list[list[tuple[int, str]]]:
    """The transcript's messages (not summaries) by the day they were written, each as
    (its number, its text)."""
    inside = prompt.split("<transcript>", 1)[-1].split("</transcript>", 1)[0]
    sittings: dict[str, list[tuple[int, list[str]]]] = {}
    current: list[str] | None = None
    for raw in inside.splitlines():
        line = raw.strip()
        header = _DAY.match(line)
        if header is not None:
            current = []
            sittings.setdefault(header.group(2), []).append((int(header.group(1)), current))
        elif line.startswith("[Summary of messages"):
            current = None
        elif current is not None and line:
            current.append(line)
    return [[(n, " ".join(lines)) for n, lines in day] for day in sittings.values()]


def _topic_words(text: str, *, names: bool) -> list[str]:
    """The words of a message a key could use, lower case, each once: no common word,
    no number, and (unless `names`) no name — capitalised where no sentence starts, or
    never written in lower case."""
    found = list(_KEY_WORD.finditer(text))
    lower = {m.group() for m in found if m.group().islower()}
    words: list[str] = []
    for match in found:
        word = match.group()
        folded = word.lower()
        named = word[0].isupper() and (
            not _starts_sentence(text, match.start()) or folded not in lower
        )
        if len(folded) >= 3 and not is_common_word(folded) and (names or not named):
            words.append(folded)
    return list(dict.fromkeys(words))


def _subjects(day: list[tuple[int, list[str]]]) -> list[list[tuple[int, list[str]]]]:
    """A day's messages in stretches on one subject: a new one begins where a message
    shares no word with the one before it."""
    stretches: list[list[tuple[int, list[str]]]] = []
    for number, words in day:
        if stretches and set(words) & set(stretches[-1][-1][1]):
            stretches[-1].append((number, words))
        else:
            stretches.append([(number, words)])
    return stretches


def stand_in_keys(prompt: str, *, names: bool) -> list[dict[str, Any]]:
    """The `search_keys` a model following our prompt could write from the transcript
    alone: for each stretch on one subject (messages of a day going on with the words of
    the one before), the words said in more than one of its messages, most often first
    (`names`: a name too; the fact-free stand-in writes none, nor any number), and the
    messages about them (saying one, or replying to one that does). Only words of the
    stretch itself: a stand-in cannot write "hobbies" for "pottery", as a model might."""
    keys: list[dict[str, Any]] = []
    for day in _sittings(prompt):
        said = [(number, _topic_words(text, names=names)) for number, text in day]
        for stretch in _subjects(said):
            counts = Counter(word for _, words in stretch for word in words)
            order = {w: n for n, w in enumerate(w for _, words in stretch for w in words)}
            topic = sorted(
                (w for w in counts if counts[w] > 1), key=lambda w: (-counts[w], order[w])
            )
            topic = topic[:KEY_WORDS]
            # The messages about it: those saying one of its words, and the reply to each.
            about = [n for n, (_, words) in enumerate(stretch) if set(words) & set(topic)]
            sources = sorted({stretch[i][0] for n in about for i in (n, n + 1) if i < len(stretch)})
            if topic:
                keys.append({"words": " ".join(topic), "sources": sources})
    return keys


def _starts_sentence(text: str, position: int) -> bool:
    before = text[:position].rstrip()
    return not before or before[-1] in '.!?:"“'


def extractive_claude(**arguments: Any) -> dict[str, Any]:
    """A diligent summarizer: the sentences carrying specifics, verbatim, oldest first,
    and the identifiers, names and numbers in them as entities, as many as the length
    the prompt asks for allows (about 4 characters a token)."""
    prompt = str(arguments["prompt"])
    blocks = _transcript_blocks(prompt)
    target = _TARGET.search(prompt)
    room = 4 * (int(target.group(1).replace(",", "")) if target else 800)
    points: list[dict[str, Any]] = []
    entities: list[str] = []
    for number, lines in blocks:
        for line in lines:
            for sentence in _SENTENCE.split(line):
                if not _SPECIFIC.search(sentence):
                    continue
                found = [e.rstrip(".,") for e in _ENTITY.findall(sentence) if e not in entities]
                cost = len(sentence) + 4 + sum(len(e) + 2 for e in found)
                if room > cost and len(points) < 30:
                    room -= cost
                    points.append({"text": sentence, "sources": [number]})
                    entities.extend(found)
    first = blocks[0][0] if blocks else 1
    last = blocks[-1][0] if blocks else 1
    return {
        "narrative": f"Messages #{first}–#{last} went on with the plans; the points list "
        "what was settled.",
        "key_points": points,
        "decisions": [],
        "action_items": [],
        "open_questions": [],
        "entities": entities,
        "standing": "",
        "search_keys": stand_in_keys(prompt, names=True),
    }


def fact_free_claude(**arguments: Any) -> dict[str, Any]:
    """Fluent, plausible and empty: no name, number, date or identifier at all."""
    blocks = _transcript_blocks(str(arguments["prompt"]))
    sources = [number for number, _ in blocks[:3]] or [1]
    return {
        "narrative": "The conversation moved steadily between several ongoing plans. The user "
        "weighed the options carefully and the assistant offered practical, balanced advice; "
        "both agreed to keep things flexible and revisit the details later.",
        "key_points": [
            {"text": "Several practical options were compared in some depth.", "sources": sources},
            {"text": "The costs and the timing were discussed at length.", "sources": sources},
            {"text": "A few people involved were mentioned along the way.", "sources": sources},
        ],
        "decisions": [{"text": "They settled on the approach discussed.", "sources": sources}],
        "action_items": [],
        "open_questions": [{"text": "Some details remain to be confirmed.", "sources": sources}],
        "entities": [],
        "standing": "",
        "search_keys": stand_in_keys(str(arguments["prompt"]), names=False),
    }


def summarizer_for(mode: str, counter: TokenCounter) -> tuple[SummarizationConfig, Summarizer]:
    complete: Callable[..., dict[str, Any]] | None = {
        "rule": None,
        "hybrid": extractive_claude,
        "adversarial": fact_free_claude,
    }[mode]
    config = SummarizationConfig(mode=SummaryMode.RULE if mode == "rule" else SummaryMode.HYBRID)
    return config, Summarizer(config, complete=complete, counter=counter)


# --- the app's path --------------------------------------------------------------------


@dataclass
class Conversation:
    """One conversation as the app holds it: its stores, engine and model."""

    session_id: str
    store: SessionStore
    summaries: SummaryStore
    engine: SummarizationEngine
    builder: ContextBuilder
    model: ModelInfo
    system_prompt: str = ""
    # The share of the window automatic recall may use (0: off; the app's default 5 %).
    recall_ratio: float = 0.05


def request_for(
    conversation: Conversation, question: str, asked_at: datetime | None = None
) -> BuiltRequest:
    """The request the app would send if the user asked `question` now.

    Mirrors the send path on main: `Conversation.send` checks the question fits and,
    if not, condenses first (an emergency summary: `SummarizationEngine.run` with the
    question as the draft); then `ReplyJob._build` builds the request with
    `ContextBuilder.build_request` from the conversation's system prompt, its active
    summaries and its live tail. The question is passed as the draft instead of being
    stored first, so the database stays as the conversation left it for the next
    question; the builder adds it as the last user turn just as the stored message
    would be. Recall is gathered as `ReplyJob._build` gathers it (`AutomaticRecall`
    over the store's `RecallIndex`), for the question as the newest user message.
    """
    model, engine = conversation.model, conversation.engine

    def build() -> BuiltRequest:
        summaries = conversation.summaries.active_summaries(conversation.session_id)
        tail = conversation.store.live_messages(conversation.session_id)  # as ReplyJob
        asked = Message(
            id=-1,
            session_id=conversation.session_id,
            seq=(tail[-1].seq + 1) if tail else 1,
            role=Role.USER,
            content=question,
            created_at=asked_at or (tail[-1].created_at if tail else datetime.now().astimezone()),
        )
        recall = AutomaticRecall(conversation.builder, conversation.recall_ratio).gather(
            conversation.store.recall_index(),
            session_id=conversation.session_id,
            inputs=RequestInputs(
                model=model,
                system_prompt=conversation.system_prompt,
                summaries=summaries,
                tail=[*tail, asked],
            ),
        )
        return conversation.builder.build_request(
            RequestInputs(
                model=model,
                system_prompt=conversation.system_prompt,
                summaries=summaries,
                tail=tail,
                draft=question,
            ),
            recall=recall,
        )

    try:
        return build()
    except ContextOverflowError:
        engine.run(
            conversation.session_id,
            model=model,
            system_prompt=conversation.system_prompt,
            draft=question,
            trigger=SummaryTrigger.EMERGENCY,
        )
        return build()


class Clock:
    """The store's clock: each message is stored at the time the conversation says."""

    def __init__(self) -> None:
        self.now = datetime.now().astimezone()

    def __call__(self) -> datetime:
        return self.now


# --- one run ---------------------------------------------------------------------------


@dataclass
class Figures:
    """What one window × summarizer run found."""

    facts: Counter[str] = field(default_factory=Counter)
    evidence: int = 0
    truncation_facts: Counter[str] = field(default_factory=Counter)
    truncation_evidence: int = 0
    questions: int = 0
    summaries: int = 0
    seconds: float = 0.0


def run(
    planted: PlantedConversation,
    window: int,
    mode: str,
    counter: TokenCounter,
    folder: Path,
    *,
    truncation: bool,
) -> Figures:
    """Feed the conversation through the engine, then ask every question; with
    `truncation`, measure plain truncation too (the same for every summarizer)."""
    started = time.perf_counter()
    model = ModelInfo(
        id=f"bench-{window}",
        display_name=f"{window // 1000}k",
        max_input_tokens=window,
        max_tokens=window // 8,
    )
    path = folder / f"{mode}-{window}.db"
    clock = Clock()
    opened = open_database(path)
    store = SessionStore(opened.connection, database=path, clock=clock)
    summaries = SummaryStore.open(path, clock=clock)
    last_day = local_day(planted.messages[-1].sent_at)
    builder = ContextBuilder(counter, today=lambda: last_day)  # asked the day it ended
    config, summarizer = summarizer_for(mode, counter)
    engine = SummarizationEngine(config, summaries, summarizer, builder)
    session = store.create_session("Planted facts", model.id)
    conversation = Conversation(
        session.id, store, summaries, engine, builder, model, recall_ratio=RECALL_RATIO
    )
    memory = TriggerMemory()
    stored: list[Message] = []
    figures = Figures()
    try:
        for chat in planted.messages:
            clock.now = chat.sent_at
            role = Role.USER if chat.role == "user" else Role.ASSISTANT
            stored.append(
                store.append_message(
                    session.id, role, chat.text, token_estimate=counter.count(chat.text)
                )
            )
            memory = engine.policy.observe(
                memory, engine.state(session.id, model=model), new_messages=1
            )
            if role is not Role.ASSISTANT:
                continue
            decision = engine.decide(session.id, model=model, memory=memory)
            memory = engine.policy.after_decision(memory, decision)
            if decision.summarize:
                outcome = engine.run(
                    session.id,
                    model=model,
                    trigger=SummaryTrigger(decision.trigger or "auto"),
                    decision=decision,
                )
                if outcome.changed:
                    memory = engine.policy.after_summary(memory, outcome.state_after)
        for fact in planted.facts:
            evidence = stored[fact.index].content
            sent = sent_text(request_for(conversation, fact.question))
            figures.questions += 1
            figures.facts[fact.kind] += fact.value in sent
            figures.evidence += evidence in sent
            if truncation:
                truncated = sent_text(truncation_request(builder, model, stored, fact.question))
                figures.truncation_facts[fact.kind] += fact.value in truncated
                figures.truncation_evidence += evidence in truncated
        figures.summaries = len(summaries.summaries(session.id))
    finally:
        summaries.close()
        store.close()
    figures.seconds = time.perf_counter() - started
    return figures


# --- the natural questions ------------------------------------------------------------


@dataclass
class NaturalFigures:
    """What one window × summarizer run found for the natural questions: per question,
    the share of its evidence turns in Cairn's request and in plain truncation's."""

    cairn: list[float] = field(default_factory=list)
    truncation: list[float] = field(default_factory=list)
    summaries: int = 0
    seconds: float = 0.0
    misses: list[str] = field(default_factory=list)


def feed(
    conversation: Conversation, clock: Clock, texts: list[tuple[Role, str, datetime]]
) -> list[Message]:
    """Store the messages one at a time, the engine summarizing when due, as the app does."""
    engine, store, model = conversation.engine, conversation.store, conversation.model
    session_id, counter = conversation.session_id, conversation.builder.counter
    memory = TriggerMemory()
    stored: list[Message] = []
    for role, text, sent_at in texts:
        clock.now = sent_at
        stored.append(
            store.append_message(session_id, role, text, token_estimate=counter.count(text))
        )
        memory = engine.policy.observe(
            memory, engine.state(session_id, model=model), new_messages=1
        )
        if role is not Role.ASSISTANT:
            continue
        decision = engine.decide(session_id, model=model, memory=memory)
        memory = engine.policy.after_decision(memory, decision)
        if decision.summarize:
            outcome = engine.run(
                session_id,
                model=model,
                trigger=SummaryTrigger(decision.trigger or "auto"),
                decision=decision,
            )
            if outcome.changed:
                memory = engine.policy.after_summary(memory, outcome.state_after)
    return stored


@dataclass
class NaturalRun:
    """The natural conversation fed through the engine at one window and mode, the
    clock at the questions' day: what each question's request is built from."""

    model: ModelInfo
    builder: ContextBuilder
    store: SessionStore
    summaries: SummaryStore
    session_id: str
    conversation: Conversation
    stored: list[Message]


@contextmanager
def natural_run(
    natural: NaturalConversation,
    path: Path,
    window: int,
    mode: str,
    counter: TokenCounter,
    recall_ratio: float | None = None,
) -> Iterator[NaturalRun]:
    """Feed the conversation into a new database at `path`, as the app would; recall's
    share of the window is `recall_ratio`, else `--recall`'s (read when called: a
    default bound at definition kept the flag from reaching the natural runs)."""
    if recall_ratio is None:
        recall_ratio = RECALL_RATIO
    model = ModelInfo(
        id=f"bench-{window}",
        display_name=f"{window // 1000}k",
        max_input_tokens=window,
        max_tokens=window // 8,
    )
    clock = Clock()
    opened = open_database(path)
    store = SessionStore(opened.connection, database=path, clock=clock)
    summaries = SummaryStore.open(path, clock=clock)
    asked_day = local_day(natural.asked_at)
    builder = ContextBuilder(counter, today=lambda: asked_day)
    config, summarizer = summarizer_for(mode, counter)
    engine = SummarizationEngine(config, summaries, summarizer, builder)
    session = store.create_session("Maya", model.id)
    conversation = Conversation(
        session.id, store, summaries, engine, builder, model, recall_ratio=recall_ratio
    )
    try:
        stored = feed(
            conversation,
            clock,
            [
                (Role.USER if m.role == "user" else Role.ASSISTANT, m.text, m.sent_at)
                for m in natural.messages
            ],
        )
        clock.now = natural.asked_at
        yield NaturalRun(model, builder, store, summaries, session.id, conversation, stored)
    finally:
        summaries.close()
        store.close()


def run_natural(
    natural: NaturalConversation, window: int, mode: str, counter: TokenCounter, folder: Path
) -> NaturalFigures:
    """Feed the conversation through the engine, then ask every question."""
    started = time.perf_counter()
    figures = NaturalFigures()
    path = folder / f"natural-{mode}-{window}.db"
    with natural_run(natural, path, window, mode, counter) as run:
        for question in natural.questions:
            sent = sent_text(request_for(run.conversation, question.text, natural.asked_at))
            truncated = sent_text(
                truncation_request(run.builder, run.model, run.stored, question.text)
            )
            evidence = [run.stored[index].content for index in question.evidence]
            found = sum(text in sent for text in evidence) / len(evidence)
            figures.cairn.append(found)
            figures.truncation.append(sum(text in truncated for text in evidence) / len(evidence))
            if found < 1 and question.split == "dev":
                figures.misses.append(question.text)
        figures.summaries = len(run.summaries.summaries(run.session_id))
    figures.seconds = time.perf_counter() - started
    return figures


def print_natural(
    natural: NaturalConversation,
    results: dict[tuple[int, str], NaturalFigures],
    windows: tuple[int, ...],
    *,
    misses: bool,
    held_out: bool = True,
) -> None:
    questions = natural.questions
    first = [n for n, q in enumerate(questions) if q.split != "held-out"]
    kept_out = [n for n, q in enumerate(questions) if q.split == "held-out"]
    tables: list[tuple[str, list[int], tuple[str, ...]]] = [
        ("the first set", first, ("dev", "test"))
    ]
    if held_out:
        tables.append(("the held-out set (never looked at while tuning)", kept_out, ()))
    for title, chosen, splits in tables:
        groups: list[tuple[str, list[int]]] = [
            (category, [n for n in chosen if questions[n].category == category])
            for category in CATEGORIES
        ]
        groups += [
            (f"{split} half", [n for n in chosen if questions[n].split == split])
            for split in splits
        ]
        groups.append(("all", chosen))
        print(
            f"\nNatural questions, {title}: share of their evidence turns verbatim in the request"
        )
        header = f"{'window':>6} {'':<18}" + "".join(f"{name:>10}" for name, _ in groups)
        print(header)
        print(f"{'':>6} {'(questions)':<18}" + "".join(f"{len(ns):>10}" for _, ns in groups))
        for window in windows:
            rows = [(f"Cairn {mode}", results[window, mode].cairn) for mode in NATURAL_MODES]
            rows.append(("truncation", results[window, NATURAL_MODES[0]].truncation))
            for name, shares in rows:
                cells = "".join(
                    f"{sum(shares[n] for n in ns) / max(1, len(ns)):>10.2f}" for _, ns in groups
                )
                print(f"{window // 1000:>5}k {name:<18}{cells}")
    if misses:
        for window in windows:
            for mode in NATURAL_MODES:
                missed = results[window, mode].misses
                print(f"\n{window // 1000}k {mode}: {len(missed)} dev questions missed")
                for text in missed:
                    print(f"  - {text}")


def main_natural(args: argparse.Namespace) -> None:
    counter = default_counter()
    args.seed = 22 if args.seed is None else args.seed
    natural = make_natural(args.seed)
    tokens = sum(counter.count(m.text) for m in natural.messages)
    days = len({m.sent_at.date() for m in natural.messages})
    print(
        f"{len(natural.messages)} messages, {tokens:,} tokens, {days} sessions; "
        f"{len(natural.questions)} natural questions (held-out ones included); seed {args.seed}"
    )
    windows: tuple[int, ...] = (4_000, 16_000) if args.quick else NATURAL_WINDOWS
    if args.windows:
        windows = tuple(int(w) * 1_000 for w in args.windows.split(","))
    results: dict[tuple[int, str], NaturalFigures] = {}
    shm = Path("/dev/shm")
    with tempfile.TemporaryDirectory(dir=shm if shm.is_dir() else None) as folder:
        for window in windows:
            for mode in NATURAL_MODES:
                figures = run_natural(natural, window, mode, counter, Path(folder))
                results[window, mode] = figures
                print(
                    f"  {window // 1000:>3}k {mode:<12} {figures.summaries:>3} summaries made, "
                    f"{figures.seconds:5.1f} s",
                    flush=True,
                )
    print_natural(natural, results, windows, misses=args.misses, held_out=args.held_out)
    if not args.held_out:
        print("\n(the held-out set's table: --held-out, once tuning is done)")


# --- the tables --------------------------------------------------------------------------


def print_tables(
    planted: PlantedConversation, results: dict[tuple[int, str], Figures], windows: tuple[int, ...]
) -> None:
    per_kind = Counter(fact.kind for fact in planted.facts)
    total = len(planted.facts)
    print("\nFacts present in the request built for their question (value anywhere in it):")
    header = f"{'window':>6} {'summarizer':<12}" + "".join(f"{k:>9}" for k in KINDS)
    print(header + f"{'total':>10}")
    print(f"{'':>6} {'(of)':<12}" + "".join(f"{per_kind[k]:>9}" for k in KINDS) + f"{total:>10}")
    for window in windows:
        rows = [(mode, results[window, mode].facts) for mode in MODES]
        rows.append(("truncation", results[window, MODES[0]].truncation_facts))
        for name, found in rows:
            cells = "".join(f"{found[k]:>9}" for k in KINDS)
            share = sum(found.values()) / total
            print(f"{window // 1000:>5}k {name:<12}{cells}{sum(found.values()):>5} {share:>4.0%}")
    print("\nEvidence (the message that stated the fact) verbatim in the request:")
    print(f"{'window':>6} | " + " | ".join(f"{'Cairn ' + m:>17}" for m in MODES) + " | truncation")
    for window in windows:
        cells = " | ".join(f"{results[window, m].evidence / total:>17.2f}" for m in MODES)
        truncation = results[window, MODES[0]].truncation_evidence / total
        print(f"{window // 1000:>5}k | {cells} | {truncation:>10.2f}")


def main() -> None:
    global RECALL_RATIO
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--messages", type=int, default=DEFAULT_LENGTH)
    parser.add_argument(
        "--quick", action="store_true", help="windows 4k and 16k only, 440 messages"
    )
    parser.add_argument(
        "--recall",
        type=float,
        default=0.05,
        help="share of the window automatic recall may use (0: off; default 0.05)",
    )
    parser.add_argument(
        "--natural", action="store_true", help="the natural questions (issue 22) instead"
    )
    parser.add_argument("--misses", action="store_true", help="list the dev questions missed")
    parser.add_argument(
        "--held-out",
        action="store_true",
        help="with --natural: the held-out set's table too (at the end of a round of tuning)",
    )
    parser.add_argument(
        "--windows", default="", help="with --natural: these windows only, in thousands (8,16)"
    )
    args = parser.parse_args()
    RECALL_RATIO = args.recall
    if args.natural:
        main_natural(args)
        return
    args.seed = 12 if args.seed is None else args.seed
    windows = (4_000, 16_000) if args.quick else WINDOWS
    length = 440 if args.quick else args.messages
    counter = default_counter()
    planted = make_conversation(args.seed, length)
    tokens = sum(counter.count(m.text) for m in planted.messages)
    days = len({m.sent_at.date() for m in planted.messages})
    print(
        f"{len(planted.messages)} messages, {tokens:,} tokens, {days} days; "
        f"{len(planted.facts)} planted facts ({len(planted.facts) // len(KINDS)} per kind), "
        f"none in the last 40 messages; seed {args.seed}"
    )
    results: dict[tuple[int, str], Figures] = {}
    shm = Path("/dev/shm")
    with tempfile.TemporaryDirectory(dir=shm if shm.is_dir() else None) as folder:
        for window in windows:
            for mode in MODES:
                figures = run(
                    planted, window, mode, counter, Path(folder), truncation=mode == MODES[0]
                )
                results[window, mode] = figures
                print(
                    f"  {window // 1000:>2}k {mode:<12} {figures.summaries:>3} summaries made, "
                    f"{figures.seconds:5.1f} s",
                    flush=True,
                )
    print_tables(planted, results, windows)


if __name__ == "__main__":
    main()
