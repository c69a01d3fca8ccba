"""Summaries and the audit trail: the one model of what a summary is (DESIGN §2, §6).

Shared by the engine, the summarizer, the request builder (core), the store
and the chat service. A `Summary` covers either a contiguous range of messages
(tier `condensed`) or older summaries (tier `compressed`, a summary of
summaries); the originals are never deleted by summarization.

Every concept has one definition here: the enums (tier, mode, trigger, state,
event kind and outcome), the content (`SummaryContent` with `SourcedPoint` and
`ActionItem`), its text as Claude reads it (`render_summary_text`), and the two
rules that change a content without a model: `merge` (several into one) and
`fit` (cut to a token budget, always in the same order).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from enum import StrEnum
from typing import Any, Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from app.core.dates import day_range, short_date
from app.core.models import Message

# Kept here too (old import paths); app.core.summary_kinds holds them without pydantic,
# for the window's first paint (issue 20).
from app.core.summary_kinds import EventKind as EventKind
from app.core.summary_kinds import EventOutcome as EventOutcome
from app.core.summary_kinds import SummaryMode as SummaryMode
from app.core.summary_kinds import SummaryTier as SummaryTier
from app.core.summary_kinds import archived_facts_note as archived_facts_note
from app.core.summary_kinds import dated_text as dated_text

MAX_KEY_POINTS = 30
# Search keys a summary keeps through compression (its children's with its own), and the
# characters of one: beyond that many, neighbouring keys share one (`bounded_keys`). Every
# reply reads the active summaries whole: 3,878 keys (a 100k conversation's hundred rule
# summaries) took 20-45 ms to read, 194 joined ones 0.35 ms (bench_search_keys, load ~5).
MAX_KEPT_KEYS = 200
MAX_KEY_CHARS = 200
# The messages a joined key names: recall reads a key's first 12 (recall_rank's
# KEY_SOURCES_AT_MOST), and 200 keys naming all of a 100k conversation's messages took
# 8 ms to read.
MAX_JOINED_SOURCES = 12
# Search keys of one condensed summary (a model's, or the rules').
MAX_SEARCH_KEYS = 40
# A merge keeps at most this many of each other list (the newest).
MAX_MERGED_ITEMS = 30
# `fit` keeps this many key points for as long as it can.
KEY_POINT_FLOOR = 3
# The schemas are built when a summary is first made or read, not when Cairn starts:
# the window's first paint does not wait for them.
_MODEL_CONFIG = ConfigDict(frozen=True, defer_build=True)
SHORTENED_NOTE = "Shortened to fit the summary size limit; the original messages keep every detail."


class SummaryTrigger(StrEnum):
    AUTO = "auto"
    MANUAL = "manual"
    EMERGENCY = "emergency"


class SummaryState(StrEnum):
    ACTIVE = "active"
    SUPERSEDED = "superseded"  # folded into a compressed summary
    UNDONE = "undone"


class SourcedPoint(BaseModel):
    """One line of a summary, with the message numbers (seq) it came from and the day it
    was said (None in summaries made before points were dated)."""

    model_config = _MODEL_CONFIG

    text: str
    sources: list[int] = Field(default_factory=list)
    day: date | None = None


class ActionItem(BaseModel):
    model_config = _MODEL_CONFIG

    task: str
    owner: str | None = None
    due: str | None = None
    sources: list[int] = Field(default_factory=list)
    day: date | None = None


# "error": an error message the user pasted, word for word (issue 22).
FactKind = Literal[
    "name", "code", "time", "money", "number", "date", "file", "url", "email", "identifier",
    "error",
]  # fmt: skip
FACT_KINDS: tuple[FactKind, ...] = (
    "name", "code", "time", "money", "number", "date", "file", "url", "email", "identifier",
    "error",
)  # fmt: skip


class LedgerFact(BaseModel):
    """One entry of the fact ledger: a hard fact, verbatim, with where and when it was said.

    The ledger is what trimming keeps longest (after the decisions, before nothing but
    the days line): a name, a code, an amount or a time is what a later question needs.
    """

    model_config = _MODEL_CONFIG

    kind: FactKind
    value: str
    seq: int | None = None  # the message it was first said in
    day: date | None = None  # the day of that message (local)


class SearchKey(BaseModel):
    """Words someone might later ask about a stretch of the condensed messages with (the
    topics, the things referred to, in plain words: "hobbies" for hiking and photography),
    and the messages (seq) of that stretch. Not shown to Claude: recall looks them up, so
    a question in other words than the originals' still finds them (issue 22)."""

    model_config = _MODEL_CONFIG

    words: str
    sources: list[int] = Field(default_factory=list)


class SummaryContent(BaseModel):
    """What a summary says: a narrative plus structured facets."""

    model_config = _MODEL_CONFIG

    narrative: str
    key_points: list[SourcedPoint] = Field(default_factory=list, max_length=MAX_KEY_POINTS)
    decisions: list[SourcedPoint] = Field(default_factory=list)
    action_items: list[ActionItem] = Field(default_factory=list)
    open_questions: list[SourcedPoint] = Field(default_factory=list)
    # Identifiers, file names, numbers, dates, URLs: verbatim.
    entities: list[str] = Field(default_factory=list)
    # Said in the summary when the transcript had to be cut to fit the summarizer.
    notes: list[str] = Field(default_factory=list)
    # The calendar days of the first and last message covered (local), shown to Claude
    # as "When: 3–5 March 2026"; None in summaries made before they were kept.
    first_day: date | None = None
    last_day: date | None = None
    # The fact ledger (app.core.ledger), oldest first; empty in summaries made before it.
    facts: list[LedgerFact] = Field(default_factory=list)
    # Ledger entries and decisions trimmed away to fit: still in the archived originals.
    archived_facts: int = 0
    # Where things stand at the end of the stretch: the open goal, the latest decision,
    # what is still being worked on ("" when nothing is open, or before it was asked for).
    standing: str = ""
    # Search keys for recall (`SearchKey`); empty in rule summaries and older ones.
    search_keys: list[SearchKey] = Field(default_factory=list)


class SummaryDraft(BaseModel):
    """A summary made but not yet committed."""

    model_config = _MODEL_CONFIG

    session_id: str
    tier: SummaryTier
    first_seq: int
    last_seq: int
    # What it covers: message ids (condensed) or summary ids (compressed).
    message_ids: list[int] = Field(default_factory=list)
    summary_ids: list[str] = Field(default_factory=list)
    content: SummaryContent
    source_tokens: int
    summary_tokens: int
    mode: SummaryMode
    model: str | None = None
    trigger: SummaryTrigger
    instructions: str | None = None
    depth: int = 1  # 1 for condensed; a compressed summary is one deeper than what it covers

    def committed(
        self, summary_id: str, created_at: datetime, content: SummaryContent | None = None
    ) -> Summary:
        """The active `Summary` this draft becomes once stored under `summary_id`."""
        return Summary(
            id=summary_id,
            session_id=self.session_id,
            tier=self.tier,
            parent_id=None,
            first_seq=self.first_seq,
            last_seq=self.last_seq,
            content=self.content if content is None else content,
            source_tokens=self.source_tokens,
            summary_tokens=self.summary_tokens,
            mode=self.mode,
            model=self.model,
            trigger=self.trigger,
            instructions=self.instructions,
            state=SummaryState.ACTIVE,
            depth=self.depth,
            created_at=created_at,
        )


class Summary(BaseModel):
    """A committed summary (a row of the `summary` table), as the memory block shows it."""

    model_config = _MODEL_CONFIG

    id: str
    session_id: str
    tier: SummaryTier
    parent_id: str | None  # the compressed summary that folded this one in, if any
    first_seq: int
    last_seq: int
    content: SummaryContent
    source_tokens: int
    summary_tokens: int
    mode: SummaryMode
    model: str | None
    trigger: SummaryTrigger
    instructions: str | None
    state: SummaryState
    depth: int
    created_at: datetime

    def text(self) -> str:
        """The summary as plain text for the memory block."""
        return render_summary_text(self.content)

    @property
    def label(self) -> str:
        """The line above the summary in the memory block."""
        return section_label(self.first_seq, self.last_seq)


def section_label(first_seq: int, last_seq: int) -> str:
    """The line above a summary of messages `first_seq`–`last_seq` in the memory block."""
    if first_seq == last_seq:
        return f"## Message {first_seq}"
    return f"## Messages {first_seq}–{last_seq}"


class SummaryEvent(BaseModel):
    """One line of the audit trail (the `event` table)."""

    model_config = _MODEL_CONFIG

    session_id: str
    kind: EventKind
    outcome: EventOutcome
    summary_id: str | None = None
    reason: str = ""
    ratio_before: float | None = None
    ratio_after: float | None = None
    tokens_before: int | None = None
    tokens_after: int | None = None
    duration_ms: float | None = None
    error_class: str | None = None
    detail: str | None = None
    created_at: datetime | None = None  # set by the store when None


class UndoResult(BaseModel):
    model_config = _MODEL_CONFIG

    summary_id: str
    restored_message_ids: list[int]
    complete: bool  # False: only the newest originals fit back into the live context
    # Undoing a compressed summary gives back the summaries it covered, not messages.
    restored_summary_ids: list[str] = Field(default_factory=list)


class SummaryRepository(Protocol):
    """What the engine needs from storage (implemented by app.store.summaries)."""

    def live_messages(self, session_id: str) -> list[Message]: ...

    def active_summaries(self, session_id: str) -> list[Summary]: ...

    def summaries(self, session_id: str, *, include_inactive: bool = True) -> list[Summary]:
        """Every summary of the conversation (or only the active ones)."""
        ...

    def covered_messages(self, summary_id: str) -> list[Message]:
        """The originals a summary stands for, down its chain, oldest first."""
        ...

    def commit_summary(self, draft: SummaryDraft) -> Summary:
        """Insert the summary and mark what it covers, in one transaction.

        Raises `SummaryConflictError` (nothing changed) when any covered message
        is no longer live (or pinned), or any covered summary no longer active.
        """
        ...

    def replace_summary(self, summary_id: str, draft: SummaryDraft) -> Summary:
        """Put `draft` in the place of an active condensed summary covering the same
        messages, in one transaction; the old one is set aside (`undone`).

        Raises `SummaryConflictError` (nothing changed) when the old summary is no
        longer active or the draft does not cover exactly its messages.
        """
        ...

    def undo_summary(self, summary_id: str, *, budget_tokens: int | None = None) -> UndoResult:
        """Give the originals back to the live context (newest first within the budget)."""
        ...

    def record_event(self, event: SummaryEvent) -> None: ...


def fact_text(fact: LedgerFact) -> str:
    """One ledger entry as Claude reads it: "AX-7731 (code, #12, 3 Mar 2026)"."""
    where: list[str] = [fact.kind]
    if fact.seq is not None:
        where.append(f"#{fact.seq}")
    if fact.day is not None:
        where.append(short_date(fact.day))
    return f"{fact.value} ({', '.join(where)})"


def render_summary_text(content: SummaryContent) -> str:
    """Plain text of a summary, as Claude reads it in the memory block."""
    lines = []
    if content.first_day is not None and content.last_day is not None:
        lines.append(f"When: {day_range(content.first_day, content.last_day)}")
    lines.append(content.narrative.strip())
    if content.standing.strip():
        lines.append(f"Where things stand now: {content.standing.strip()}")
    # A summary of one day says so once ("When:"), not after every point.
    one_day = content.first_day is not None and content.first_day == content.last_day

    def dated(text: str, day: date | None) -> str:
        return text if one_day else dated_text(text, day)

    def section(title: str, items: Sequence[str]) -> None:
        if items:
            lines.append(f"{title}:")
            lines.extend(f"- {item}" for item in items)

    section("Key points", [dated(p.text, p.day) for p in content.key_points])
    section("Decisions", [dated(p.text, p.day) for p in content.decisions])
    section(
        "Action items",
        [
            dated(
                item.task
                + (f" (owner: {item.owner})" if item.owner else "")
                + (f" (due: {item.due})" if item.due else ""),
                item.day,
            )
            for item in content.action_items
        ],
    )
    section("Open questions", [dated(p.text, p.day) for p in content.open_questions])
    section("Facts, verbatim", [fact_text(fact) for fact in content.facts])
    in_ledger = {fact.value.casefold() for fact in content.facts}
    entities = [entity for entity in content.entities if entity.casefold() not in in_ledger]
    if entities:
        lines.append("Names, numbers and references: " + "; ".join(entities))
    lines.extend(content.notes)
    if content.archived_facts:
        lines.append(archived_facts_note(content.archived_facts))
    return "\n".join(line for line in lines if line)


# --- merging and fitting, by rule --------------------------------------------------

_SPACES = re.compile(r"\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")
_Item = TypeVar("_Item", SourcedPoint, ActionItem)


def fact_key(text: str) -> str:
    """What makes two lines of a summary "the same": case, spacing and end punctuation aside."""
    return _SPACES.sub(" ", text).strip().casefold().rstrip(".!?;:")


def _item_key(item: SourcedPoint | ActionItem) -> str:
    return fact_key(item.text if isinstance(item, SourcedPoint) else item.task)


def unique_items(items: Iterable[_Item]) -> list[_Item]:
    """`items` without repeats (by `fact_key`), the first of each kept, in order."""
    seen: set[str] = set()
    kept: list[_Item] = []
    for item in items:
        key = _item_key(item)
        if key not in seen:
            seen.add(key)
            kept.append(item)
    return kept


def unique_texts(texts: Iterable[str]) -> list[str]:
    """`texts` without repeats (case and spacing aside), the first of each kept, in order."""
    seen: set[str] = set()
    kept: list[str] = []
    for text in texts:
        key = _SPACES.sub(" ", text).strip().casefold()
        if key and key not in seen:
            seen.add(key)
            kept.append(text)
    return kept


def merge(contents: Sequence[SummaryContent]) -> SummaryContent:
    """Several summaries' contents as one, oldest first, repeats removed (no model).

    Narratives are joined; each list keeps its items in order without repeats,
    at most `MAX_KEY_POINTS` key points and `MAX_MERGED_ITEMS` of each other
    list — the newest, since what was said last is likelier to still hold (the
    decisions left out are counted in `archived_facts`); every entity and every
    ledger entry is kept (they are the hard facts a summary must not lose).
    """
    decisions = unique_items(p for c in contents for p in c.decisions)
    return SummaryContent(
        narrative=" ".join(c.narrative.strip() for c in contents if c.narrative.strip()),
        key_points=unique_items(p for c in contents for p in c.key_points)[-MAX_KEY_POINTS:],
        decisions=decisions[-MAX_MERGED_ITEMS:],
        action_items=unique_items(a for c in contents for a in c.action_items)[-MAX_MERGED_ITEMS:],
        open_questions=unique_items(p for c in contents for p in c.open_questions)[
            -MAX_MERGED_ITEMS:
        ],
        entities=unique_texts(e for c in contents for e in c.entities),
        notes=unique_texts(n for c in contents for n in c.notes),
        first_day=min((c.first_day for c in contents if c.first_day is not None), default=None),
        last_day=max((c.last_day for c in contents if c.last_day is not None), default=None),
        facts=unique_facts(f for c in contents for f in c.facts),
        archived_facts=sum(c.archived_facts for c in contents)
        + max(0, len(decisions) - MAX_MERGED_ITEMS),
        # Where things stand is where the newest left them; every stretch keeps its keys.
        standing=next((c.standing for c in reversed(contents) if c.standing.strip()), ""),
        search_keys=bounded_keys([k for c in contents for k in c.search_keys]),
    )


def bounded_keys(keys: Sequence[SearchKey], most: int = MAX_KEPT_KEYS) -> list[SearchKey]:
    """`keys` in order, at most `most` of them: beyond that, each run of neighbouring keys
    becomes one — their words joined (up to `MAX_KEY_CHARS`, each key's first words
    first) and up to `MAX_JOINED_SOURCES` of their sources (each key's first first) — so
    every stretch keeps its words in a key, a coarser one."""
    if len(keys) <= most:
        return list(keys)
    size = -(-len(keys) // most)
    joined: list[SearchKey] = []
    for start in range(0, len(keys), size):
        run = keys[start : start + size]
        lists = [key.words.split() for key in run]
        words: list[str] = []
        used = -1
        for depth in range(max(len(w) for w in lists)):
            for listed in lists:
                if depth < len(listed) and used + 1 + len(listed[depth]) <= MAX_KEY_CHARS:
                    words.append(listed[depth])
                    used += 1 + len(listed[depth])
        named: list[int] = []
        for depth in range(max(len(key.sources) for key in run)):
            for key in run:
                if depth < len(key.sources) and len(named) < MAX_JOINED_SOURCES:
                    named.append(key.sources[depth])
        sources = sorted(set(named))
        joined.append(SearchKey(words=" ".join(words), sources=sources))
    return joined


def unique_facts(facts: Iterable[LedgerFact]) -> list[LedgerFact]:
    """`facts` without repeats (the same value, case and spacing aside), the first
    mention of each kept, in order: the ledger says when a fact was first said. A fact
    that is only words of another fact first said in the same message goes too ("2026"
    and "1,250" beside "28 Nov 2026" and "1,250 euros", as a model may list them)."""
    seen: set[str] = set()
    kept: list[LedgerFact] = []
    for fact in facts:
        key = _SPACES.sub(" ", fact.value).strip().casefold()
        if key and key not in seen:
            seen.add(key)
            kept.append(fact)
    return [
        fact
        for fact in kept
        if not any(
            other.seq == fact.seq and _words_of(fact.value, other.value)
            for other in kept
            if other is not fact
        )
    ]


def _words_of(part: str, whole: str) -> bool:
    """`part` stands in `whole` as whole words (not inside a longer word or number)."""
    if len(part) >= len(whole):
        return False
    return re.search(rf"(?<!\w){re.escape(part)}(?!\w)", whole, re.IGNORECASE) is not None


@dataclass(frozen=True)
class Fitted:
    """What `fit` made: the content, and whether anything had to go."""

    content: SummaryContent
    trimmed: bool


def fit(content: SummaryContent, max_tokens: int, count: Callable[[str], int]) -> Fitted:
    """`content` cut by rule until its text takes at most `max_tokens`.

    The one drop order, from what matters least to what matters most:
    1. the oldest key points, down to `KEY_POINT_FLOOR`;
    2. the narrative's last sentences (its first stays);
    3. the oldest open questions, then action items;
    4. the remaining key points, oldest first;
    5. the narrative, shortened to its first words ("…");
    6. the notes (a note says when anything was cut, while there is room for it);
    7. entities without a source (the model's list of names and numbers), oldest first,
       then where things stand now;
    8. the decisions, then the fact ledger, oldest first, last of all, since they are
       what a later question needs; each one dropped is counted ("N older facts are in
       the archive"), and the originals keep it, where recall finds it;
    9. the days it covers ("When:") and that count, only when nothing else is left.
    Deterministic; the result always fits
    (an empty text does). Each step finds how much to drop by bisection, so a
    long history costs O(log n) counts per list.
    """

    def size(candidate: SummaryContent) -> int:
        return count(render_summary_text(candidate))

    if size(content) <= max_tokens:
        return Fitted(content, trimmed=False)
    notes = content.notes if SHORTENED_NOTE in content.notes else [*content.notes, SHORTENED_NOTE]
    trimmed = content.model_copy(update={"notes": notes})
    steps: list[Callable[[SummaryContent], SummaryContent]] = [
        lambda c: _drop_oldest(c, "key_points", max_tokens, size, keep=KEY_POINT_FLOOR),
        lambda c: _drop_last_sentences(c, max_tokens, size),
        lambda c: _drop_oldest(c, "open_questions", max_tokens, size),
        lambda c: _drop_oldest(c, "action_items", max_tokens, size),
        lambda c: _drop_oldest(c, "key_points", max_tokens, size),
        lambda c: _shorten_narrative(c, max_tokens, size),
        lambda c: _drop_oldest(c, "notes", max_tokens, size),
        lambda c: _drop_oldest(c, "entities", max_tokens, size),
        lambda c: c.model_copy(update={"standing": ""}),
        lambda c: _drop_oldest(c, "decisions", max_tokens, size, counted=True),
        lambda c: _drop_oldest(c, "facts", max_tokens, size, counted=True),
        # The "When:" line last: with everything else gone, an empty text must fit.
        lambda c: c.model_copy(update={"first_day": None, "last_day": None, "archived_facts": 0}),
    ]
    for step in steps:
        if size(trimmed) <= max_tokens:
            break
        trimmed = step(trimmed)
    return Fitted(trimmed, trimmed=True)


def _fewest(total: int, fits: Callable[[int], bool]) -> int:
    """The smallest k in 0..total with fits(k), given fits is monotonic; total if none."""
    if fits(0):
        return 0
    if not fits(total):
        return total
    return 1 + bisect.bisect_left(range(1, total), True, key=fits)


def _drop_oldest(
    content: SummaryContent,
    name: str,
    max_tokens: int,
    size: Callable[[SummaryContent], int],
    *,
    keep: int = 0,
    counted: bool = False,
) -> SummaryContent:
    """The fewest oldest items of list `name` dropped (keeping at least `keep`) so it fits;
    `counted`: each one dropped is added to `archived_facts`."""
    items: list[Any] = list(getattr(content, name))
    droppable = max(0, len(items) - keep)
    archived = content.archived_facts

    def without(dropped: int) -> SummaryContent:
        update: dict[str, Any] = {name: items[dropped:]}
        if counted:
            update["archived_facts"] = archived + dropped
        return content.model_copy(update=update)

    dropped = _fewest(droppable, lambda k: size(without(k)) <= max_tokens)
    return without(dropped)


def _drop_last_sentences(
    content: SummaryContent, max_tokens: int, size: Callable[[SummaryContent], int]
) -> SummaryContent:
    """The narrative's fewest last sentences dropped so it fits; the first one stays."""
    sentences = _SENTENCE_END.split(content.narrative.strip())

    def without(dropped: int) -> SummaryContent:
        return content.model_copy(
            update={"narrative": " ".join(sentences[: len(sentences) - dropped])}
        )

    return without(_fewest(len(sentences) - 1, lambda k: size(without(k)) <= max_tokens))


def _shorten_narrative(
    content: SummaryContent, max_tokens: int, size: Callable[[SummaryContent], int]
) -> SummaryContent:
    """The longest word-prefix of the narrative (ending in "…") that fits, maybe none."""
    words = content.narrative.split()

    def with_words(kept: int) -> SummaryContent:
        text = " ".join(words[:kept]) + " …" if kept else ""
        return content.model_copy(update={"narrative": text})

    dropped = _fewest(len(words), lambda k: size(with_words(len(words) - k)) <= max_tokens)
    return with_words(len(words) - dropped)
