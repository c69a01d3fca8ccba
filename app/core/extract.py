"""Rule-based facets of a stretch of conversation (DESIGN §6, step 1).

`extract_facets` reads messages and returns what a summary must not lose:
decisions, action items, open questions and entities (file names, URLs, code
identifiers, numbers with units, money, dates, e-mail addresses). It is
offline, free and deterministic: the same messages always give the same
facets, which is what `rule` mode stores and what `hybrid` mode merges into
the LLM's draft. `hard_facts` lists the verbatim strings the retention check
insists on.

Secrets never reach a summary: every message is passed through
`redact_secrets` (app.core.redaction, the one redactor, which the log filter
uses too) before anything is extracted, so no fact carries one, and an entity
that touched a redacted secret is dropped.

Each kind of fact has its rules in a module of its own: app.core.extract_decisions,
extract_actions, extract_questions and extract_entities (and extract_facts for the
ledger's names, codes and clock times); app.core.extract_text splits a message into
the sentences they read. This module gathers what they find.

The rules, in short (precision over recall: a wrong "decision" in a summary
misleads more than a missing one):

- Text is split into sentences by line and by sentence punctuation; fenced
  code blocks are not prose: only their URLs, e-mails, file names and
  `TODO`/`FIXME` comments are taken.
- Decisions: "decided", "let's go with/use/pick…", "we'll use/go with…",
  "agreed", "settled on", "final answer/decision"…, not in a question and not
  negated ("we haven't decided").
- Action items: "TODO:"/"Action:" lines; the user's own "I'll / I will / I need
  to …" (the assistant's "I'll explain…" is narration, not a commitment);
  "you need to / you must / you'll have to …" (owned by the other role);
  "can you / could you / please … by <date>" (only with a due date);
  "<Name> will / needs to …"; "we need to / we have to …" (no owner).
  A due date ("by Friday", "before 2026-04-01", "tomorrow") is split off the task.
- Open questions: a question (ends with "?", at least three words) or a
  sentence marked open ("TBD", "not sure whether", "still need to decide"…)
  that nobody of the other role answered afterwards, or that deliberates a
  choice ("should we…", "which…", "… or …?"), unless a later decision shares a
  distinctive word with it (a name, a number, an identifier) or two other
  content words.
- Entities keep their text verbatim; repeats are merged (case-sensitive for
  identifiers, file names and URLs, case-insensitive for the rest; whitespace
  normalised), with the seqs of the messages they came from.

Bounds, so a thousand-message stretch gives a summary-sized result: at most
MAX_FACTS of each list (the most recent, kept in conversation order), at most
MAX_ENTITIES entities (the most frequent, ties to the most recent, kept in
order of first mention), MAX_SOURCE_SEQS seqs per item (the most recent), and
MAX_FACT_CHARS characters per text.

Bounded work: the cost is linear in the text, and no regex call runs long
(app.core.text_scan says why, and how). What is gathered is kept as plain tuples,
which the garbage collector stops tracking. Two limits change what is read: a run
of more than MAX_WORD_CHARS characters without whitespace (a pasted blob) is not
read for entities, and a sentence of more than MAX_SENTENCE_CHARS characters is not
read for decisions, action items or questions.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator, Sequence
from typing import Generic, Literal, NamedTuple, TypeVar

from pydantic import BaseModel, ConfigDict

from app.core.extract_actions import (
    action_in,
    decision_starts,
    open_starts,
    request_starts,
    request_with_due,
    split_due,
)
from app.core.extract_decisions import is_decision
from app.core.extract_entities import (
    CASE_SENSITIVE_KINDS,
    CODE_PATTERNS,
    PROSE_PATTERNS,
    EntityKind,
    find_dates,
    find_entities,
    find_files,
    find_money,
    find_numbers,
    find_urls,
)
from app.core.extract_questions import (
    DELIBERATES,
    DELIBERATION,
    OPEN_MARKER,
    OPEN_WORDS,
    Resolutions,
    is_marked_open,
)
from app.core.extract_text import (
    CODE_TODO,
    Decision,
    Question,
    clip,
    is_question,
    normalise,
    sentence_spans,
    split_blocks,
)
from app.core.models import Message, Role
from app.core.redaction import redact_secrets
from app.core.summary import ActionItem, SourcedPoint
from app.core.text_scan import Span, fold, holds_any, positions, search_at, word_starts

T = TypeVar("T")

MAX_FACTS = 30
MAX_ENTITIES = 50
MAX_SOURCE_SEQS = 20
MAX_SENTENCE_CHARS = 4_096

# The kinds the retention check keeps verbatim: all of them (money and dates are
# numbers a reader acts on; e-mails, like URLs, are addresses that must not drift).
HARD_FACT_KINDS: frozenset[str] = frozenset(
    {"file", "url", "identifier", "number", "money", "date", "email"}
)


# --- the facets ----------------------------------------------------------------


class Entity(BaseModel):
    """A hard fact, verbatim: a file name, URL, identifier, number, amount, date or e-mail."""

    model_config = ConfigDict(frozen=True)

    kind: EntityKind
    text: str
    sources: tuple[int, ...] = ()


class Facets(BaseModel):
    """Everything the rules found in a stretch of conversation (DESIGN §2 `summary.facets`).

    Decisions and open questions are `SourcedPoint`s and action items `ActionItem`s:
    the very models a summary stores (app.core.summary), with the seqs of the
    messages each came from (an action item's `owner` is a name, "user",
    "assistant", or None).
    """

    model_config = ConfigDict(frozen=True)

    decisions: tuple[SourcedPoint, ...] = ()
    action_items: tuple[ActionItem, ...] = ()
    open_questions: tuple[SourcedPoint, ...] = ()
    entities: tuple[Entity, ...] = ()

    @property
    def is_empty(self) -> bool:
        return not (self.decisions or self.action_items or self.open_questions or self.entities)


# --- gathering -------------------------------------------------------------------


class _Found(NamedTuple, Generic[T]):
    """One fact gathered: its value, where and how often it was seen, and the seqs of the
    most recent messages it came from."""

    value: T
    first: int
    last: int
    times: int
    source_seqs: tuple[int, ...]


class _Gatherer(Generic[T]):
    """Collects facts under a de-duplication key, remembering order and frequency.

    The first wording seen is the one kept. Each fact is a plain tuple of strings and
    numbers, which the garbage collector stops tracking: thousands of them must not make
    its full collections (which hold the GIL) longer.
    """

    def __init__(self) -> None:
        # key -> (value, first index, last index, times seen, the largest seqs, ascending)
        self.items: dict[tuple[str, ...], tuple[T, int, int, int, tuple[int, ...]]] = {}

    def add(self, key: tuple[str, ...], value: T, index: int, seq: int) -> None:
        found = self.items.get(key)
        if found is None:
            self.items[key] = (value, index, index, 1, (seq,))
            return
        seqs = found[4]
        if seq not in seqs and (len(seqs) < MAX_SOURCE_SEQS or seq > seqs[0]):
            at = bisect.bisect(seqs, seq)
            seqs = (*seqs[:at], seq, *seqs[at:])[-MAX_SOURCE_SEQS:]
        self.items[key] = (found[0], found[1], index, found[3] + 1, seqs)

    def most_recent(self, limit: int) -> list[_Found[T]]:
        """Up to `limit` items, the most recently seen, in order of first mention."""
        chosen = sorted(self.items.values(), key=lambda found: found[2])[-limit:]
        return [_Found(*found) for found in sorted(chosen, key=lambda found: found[1])]

    def most_frequent(self, limit: int) -> list[_Found[T]]:
        """Up to `limit` items, the most frequent (ties: most recent), in order of first mention."""
        chosen = sorted(self.items.values(), key=lambda found: (-found[3], -found[2]))
        return [_Found(*found) for found in sorted(chosen[:limit], key=lambda found: found[1])]


def _fact_key(text: str) -> tuple[str, ...]:
    return (normalise(text).casefold().rstrip(".!?"),)


def extract_facets(messages: Sequence[Message]) -> Facets:
    """The rule-based facets of `messages` (oldest first); see the module notes."""
    decisions: _Gatherer[str] = _Gatherer()
    actions: _Gatherer[tuple[str | None, str, str | None]] = _Gatherer()
    entities: _Gatherer[tuple[EntityKind, str]] = _Gatherer()
    questions: list[Question] = []
    decision_sentences: list[Decision] = []
    last_index_of_role: dict[Role, int] = {}
    index = 0

    for message in messages:
        content = redact_secrets(message.content)
        if not content or content.isspace():
            continue
        prose, code = split_blocks(content)
        for line in code:
            todo = CODE_TODO.search(line) if "TODO" in line or "FIXME" in line else None
            if todo:
                owner = todo.group(1).strip() if todo.group(1) else None
                _add_action(actions, (owner, todo.group(2).rstrip(" */->")), index, message.seq)
        text = "\n".join(prose)
        by_user = message.role is Role.USER
        spans = sentence_spans(prose)
        folded = fold(text) if spans else ""
        for start, end in spans:
            index += 1
            if end - start > MAX_SENTENCE_CHARS:
                continue
            sentence_text = text[start:end]
            sentence_folded = folded[start:end]
            if is_question(sentence_text):
                # "Can you … by Friday?" asks for work rather than an answer.
                asks = request_starts(sentence_folded)
                request = request_with_due(sentence_text, asks, message.role) if asks else None
                if request is not None:
                    _add_action(actions, request, index, message.seq)
                elif len(sentence_text.split()) >= 3:
                    questions.append((sentence_text, message.seq, by_user, index))
                continue
            if holds_any(sentence_folded, OPEN_WORDS):
                opens = positions(sentence_folded, open_starts(sentence_folded), start)
                if search_at(OPEN_MARKER, text, opens, end):
                    questions.append((sentence_text, message.seq, by_user, index))
                    continue
            decides = positions(sentence_folded, decision_starts(sentence_folded), start)
            if decides and is_decision(text, start, end, decides):
                decisions.add(_fact_key(sentence_text), clip(sentence_text), index, message.seq)
                decision_sentences.append((sentence_text, index))
            action = action_in(text, sentence_folded, start, end, message.role)
            if action is not None:
                _add_action(actions, action, index, message.seq)
        for kind, value in find_entities(text, PROSE_PATTERNS):
            entities.add(_entity_key(kind, value), (kind, value), index, message.seq)
        if code:
            for kind, value in find_entities("\n".join(code), CODE_PATTERNS):
                entities.add(_entity_key(kind, value), (kind, value), index, message.seq)
        index += 1
        last_index_of_role[message.role] = index

    open_questions: _Gatherer[str] = _Gatherer()
    resolutions = Resolutions(decision_sentences)
    for text, seq, by_user, index in questions:
        if _is_open(text, by_user, index, last_index_of_role, resolutions):
            open_questions.add(_fact_key(text), clip(text), index, seq)

    return Facets(
        decisions=_facts(decisions),
        action_items=tuple(
            ActionItem(
                owner=found.value[0],
                task=found.value[1],
                due=found.value[2],
                sources=list(found.source_seqs),
            )
            for found in actions.most_recent(MAX_FACTS)
        ),
        open_questions=_facts(open_questions),
        entities=tuple(
            Entity(kind=found.value[0], text=found.value[1], sources=found.source_seqs)
            for found in entities.most_frequent(MAX_ENTITIES)
        ),
    )


def _add_action(
    actions: _Gatherer[tuple[str | None, str, str | None]],
    action: tuple[str | None, str],
    index: int,
    seq: int,
) -> None:
    owner, raw_task = action
    task, due = split_due(raw_task)
    if task:
        actions.add(_action_key(owner, task, due), (owner, task, due), index, seq)


def _is_open(
    text: str,
    by_user: bool,
    index: int,
    last_index_of_role: dict[Role, int],
    resolutions: Resolutions,
) -> bool:
    other = Role.ASSISTANT if by_user else Role.USER
    answered = last_index_of_role.get(other, -1) > index
    folded = fold(text)
    marked = is_marked_open(text, folded)
    deliberates = search_at(DELIBERATION, text, word_starts(folded, DELIBERATES)) is not None
    if answered and not (marked or deliberates):
        return False
    return not resolutions.settled(text, index)


def _action_key(owner: str | None, task: str, due: str | None) -> tuple[str, ...]:
    return ((owner or "").casefold(), *_fact_key(task), (due or "").casefold())


def _entity_key(kind: str, value: str) -> tuple[str, ...]:
    return (kind, value if kind in CASE_SENSITIVE_KINDS else value.casefold())


def _facts(gatherer: _Gatherer[str]) -> tuple[SourcedPoint, ...]:
    return tuple(
        SourcedPoint(text=found.value, sources=list(found.source_seqs))
        for found in gatherer.most_recent(MAX_FACTS)
    )


def hard_facts(facets: Facets) -> set[str]:
    """The verbatim strings a summary must keep (identifiers, numbers, dates, URLs,
    file names, amounts, e-mails): the retention check adds any the LLM's draft lacks."""
    return {entity.text for entity in facets.entities if entity.kind in HARD_FACT_KINDS}


# What `entity_spans` can look for, and how each is found (as `extract_facets` finds it).
SpannedKind = Literal["file", "url", "number", "money", "date"]
_SPAN_FINDERS: dict[SpannedKind, Callable[[str], Iterator[Span]]] = {
    "file": find_files,
    "url": find_urls,
    "number": find_numbers,
    "money": find_money,
    "date": find_dates,
}


def entity_spans(text: str, kind: SpannedKind) -> Iterator[Span]:
    """Where `text` holds entities of `kind`, in order, as `extract_facets` finds them
    (without its redaction and de-duplication): for a caller that needs only where."""
    return _SPAN_FINDERS[kind](text)
