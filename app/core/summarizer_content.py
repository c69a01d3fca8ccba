"""The content of a summary draft: built from the model's answer or by rules (DESIGN §6).

`ContentBuilder` de-duplicates as a draft is assembled. The model's summary is
redacted and its sources bounded (`from_llm_summary`); the rule facets are merged
into it (`merge_facets`); the retention check adds every hard fact the draft does
not mention (`retain`); `rule_content` is the basic summary made without a model;
`fit_content` keeps a draft within `max_summary_tokens`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime

from app.core.extract import Facets
from app.core.models import Message, Role
from app.core.redaction import redact_secrets
from app.core.search_keys import rule_search_keys
from app.core.summarizer_llm import LlmFact, LlmPoint, LlmSummary
from app.core.summary import (
    FACT_KINDS,
    MAX_KEY_CHARS,
    MAX_KEY_POINTS,
    MAX_SEARCH_KEYS,
    ActionItem,
    FactKind,
    LedgerFact,
    SearchKey,
    SourcedPoint,
    SummaryContent,
    fact_key,
    fit,
    render_summary_text,
    unique_facts,
)

# Rule-made lists: bounds that keep a basic summary readable. The key points are spread
# over the whole stretch (its first and last message among them), not only its end.
RULE_KEY_POINTS = 12
DaySource = Callable[[Sequence[int], str | None], date | None]
"""The day a point was said: from its source messages, else the day the model gave."""
MAX_POINT_CHARS = 300
MAX_ENTITY_CHARS = 200


@dataclass
class ContentBuilder:
    """A summary being assembled: de-duplicates as it goes, renders to `SummaryContent`."""

    narrative: str = ""
    key_points: list[SourcedPoint] = field(default_factory=list)
    decisions: list[SourcedPoint] = field(default_factory=list)
    action_items: list[ActionItem] = field(default_factory=list)
    open_questions: list[SourcedPoint] = field(default_factory=list)
    entities: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    facts: list[LedgerFact] = field(default_factory=list)
    archived_facts: int = 0
    standing: str = ""
    search_keys: list[SearchKey] = field(default_factory=list)

    def content(self) -> SummaryContent:
        return SummaryContent(
            narrative=self.narrative,
            key_points=self.key_points[:MAX_KEY_POINTS],
            decisions=self.decisions,
            action_items=self.action_items,
            open_questions=self.open_questions,
            entities=self.entities,
            notes=self.notes,
            facts=self.facts,
            archived_facts=self.archived_facts,
            standing=self.standing,
            search_keys=self.search_keys,
        )

    def add_facts(self, facts: Iterable[LedgerFact]) -> None:
        """Ledger entries added, repeats removed, the ledger kept oldest first."""
        merged = unique_facts([*self.facts, *facts])
        self.facts = sorted(merged, key=lambda fact: -1 if fact.seq is None else fact.seq)

    def text(self) -> str:
        return render_summary_text(self.content())

    def add_point(self, points: list[SourcedPoint], point: SourcedPoint | None) -> None:
        if point is None:
            return
        key = fact_key(point.text)
        if all(fact_key(existing.text) != key for existing in points):
            points.append(point)

    def add_action(self, item: ActionItem | None) -> None:
        if item is None:
            return
        key = fact_key(item.task)
        if all(fact_key(existing.task) != key for existing in self.action_items):
            self.action_items.append(item)

    def add_entity(self, entity: str) -> None:
        entity = clean_text(entity, MAX_ENTITY_CHARS)
        if entity and entity.casefold() not in {known.casefold() for known in self.entities}:
            self.entities.append(entity)

    def add_note(self, note: str) -> None:
        if note not in self.notes:
            self.notes.append(note)


def from_llm_summary(
    summary: LlmSummary, first_seq: int, last_seq: int, day_for: DaySource | None = None
) -> ContentBuilder:
    """The model's summary, redacted, with sources outside [first_seq, last_seq] dropped;
    every point dated by `day_for` (from its sources, else the model's date)."""

    def sources(numbers: Iterable[int]) -> list[int]:
        return sorted({number for number in numbers if first_seq <= number <= last_seq})

    def day(numbers: Iterable[int], said: str | None) -> date | None:
        return day_for(sources(numbers), said) if day_for is not None else parse_day(said)

    def point(item: LlmPoint) -> SourcedPoint | None:
        text = clean_text(item.text, MAX_POINT_CHARS)
        if not text:
            return None
        return SourcedPoint(
            text=text, sources=sources(item.sources), day=day(item.sources, item.date)
        )

    builder = ContentBuilder(narrative=redact_secrets(summary.narrative.strip()))
    for item in summary.key_points:
        builder.add_point(builder.key_points, point(item))
    for item in summary.decisions:
        builder.add_point(builder.decisions, point(item))
    for item in summary.open_questions:
        builder.add_point(builder.open_questions, point(item))
    for action in summary.action_items:
        task = clean_text(action.task, MAX_POINT_CHARS)
        if task:
            builder.add_action(
                ActionItem(
                    task=task,
                    owner=clean_text(action.owner or "", 100) or None,
                    due=clean_text(action.due or "", 100) or None,
                    sources=sources(action.sources),
                    day=day(action.sources, action.date),
                )
            )
    for entity in summary.entities:
        # An entity the redactor touched held a secret: half a fact is no fact.
        if redact_secrets(entity) == entity:
            builder.add_entity(entity)
    builder.add_facts(
        fact
        for fact in (llm_fact(item, sources(item.sources), day) for item in summary.facts)
        if fact is not None
    )
    builder.standing = clean_text(redact_secrets(summary.standing), MAX_POINT_CHARS)
    for key in summary.search_keys[:MAX_SEARCH_KEYS]:
        words = clean_text(redact_secrets(key.words), MAX_KEY_CHARS)
        numbers = sources(key.sources)
        if words and numbers:  # a key that points nowhere finds nothing
            builder.search_keys.append(SearchKey(words=words, sources=numbers))
    return builder


# What a model may call a kind of fact, in the ledger's words.
_KIND_WORDS: dict[str, FactKind] = {
    "person": "name",
    "people": "name",
    "place": "name",
    "organisation": "name",
    "organization": "name",
    "company": "name",
    "id": "code",
    "ids": "code",
    "amount": "money",
    "price": "money",
    "currency": "money",
    "quantity": "number",
    "measure": "number",
    "datetime": "date",
    "day": "date",
    "clock": "time",
    "filename": "file",
    "path": "file",
    "link": "url",
    "e-mail": "email",
    "mail": "email",
}


def llm_fact(
    item: LlmFact, sources: Sequence[int], day: Callable[[Sequence[int], str | None], date | None]
) -> LedgerFact | None:
    """A fact the model listed, as a ledger entry; None when it is empty or held a secret."""
    value = clean_text(item.value, MAX_ENTITY_CHARS)
    if not value or redact_secrets(item.value) != item.value:
        return None
    word = item.kind.strip().casefold()
    kind: FactKind = _KIND_WORDS.get(word, "identifier")
    for known in FACT_KINDS:
        if known == word:
            kind = known
    return LedgerFact(
        kind=kind, value=value, seq=min(sources, default=None), day=day(sources, item.date)
    )


def parse_day(said: str | None) -> date | None:
    """A day the model wrote ("2026-03-05", "2026-03-05 14:30"); None if it is not one."""
    if not said:
        return None
    try:
        return date.fromisoformat(said.strip()[:10])
    except ValueError:
        return None


def merge_facets(
    builder: ContentBuilder,
    facets: Facets,
    day_of_seq: Callable[[Iterable[int]], date | None] | None = None,
) -> None:
    """Add the rule facets the draft lacks (entities are left to `retain` and the ledger),
    each dated by its first source message."""

    def day(numbers: Iterable[int]) -> date | None:
        return day_of_seq(numbers) if day_of_seq is not None else None

    for fact in facets.decisions:
        builder.add_point(builder.decisions, facet_point(fact.text, fact.sources, day))
    for fact in facets.open_questions:
        builder.add_point(builder.open_questions, facet_point(fact.text, fact.sources, day))
    for action in facets.action_items:
        builder.add_action(
            ActionItem(
                task=redact_secrets(action.task),
                owner=action.owner,
                due=action.due,
                sources=list(action.sources),
                day=day(action.sources),
            )
        )


def retain(builder: ContentBuilder, candidates: Sequence[str], hard: set[str]) -> None:
    """The retention check: every hard fact the draft does not mention becomes an entity."""
    rendered = builder.text().casefold()
    for text in candidates:
        if text in hard and text.casefold() not in rendered:
            builder.add_entity(text)


def rule_content(
    messages: Sequence[Message],
    facets: Facets,
    when: Callable[[datetime], str],
    ledger: Sequence[LedgerFact] = (),
    day: Callable[[datetime], date] | None = None,
) -> ContentBuilder:
    """A basic summary made by rules alone; `when` shows a time as the transcript does,
    `day` gives a message's day (its points are dated by it), `ledger` is its facts."""
    first, last = messages[0], messages[-1]
    span = f"#{first.seq}–#{last.seq}" if first.seq != last.seq else f"#{first.seq}"
    count = len(messages)
    narrative = (
        f"Basic summary of {count} message{'s' if count != 1 else ''} ({span}, "
        f"{when(first.created_at)} to {when(last.created_at)}), made by "
        "rules without Claude."
    )
    opening = next(
        (
            first_sentence(redact_secrets(message.content))
            for message in messages
            if message.role is Role.USER and message.content.strip()
        ),
        "",
    )
    if opening:
        narrative += f" It began with: “{opening}”"
    builder = ContentBuilder(narrative=narrative)
    days = {message.seq: day(message.created_at) for message in messages} if day else {}

    def first_day(numbers: Iterable[int]) -> date | None:
        known = [days[number] for number in numbers if number in days]
        return min(known, default=None)

    asked = [
        message for message in messages if message.role is Role.USER and message.content.strip()
    ]
    for message in spread(asked, RULE_KEY_POINTS):
        sentence = first_sentence(redact_secrets(message.content))
        if sentence:
            builder.add_point(
                builder.key_points,
                SourcedPoint(text=sentence, sources=[message.seq], day=days.get(message.seq)),
            )
    merge_facets(builder, facets, first_day)
    builder.standing = rule_standing(builder)
    # What the stretch is findable by: each exchange by its own and its neighbours' words.
    builder.search_keys = rule_search_keys(messages)
    if ledger:
        builder.add_facts(ledger)
    else:
        for entity in facets.entities:
            builder.add_entity(entity.text)
    return builder


def rule_standing(builder: ContentBuilder) -> str:
    """Where things stand, by rule: the newest decision and the newest open question."""
    parts = []
    if builder.decisions:
        parts.append(f"latest decision: {builder.decisions[-1].text.rstrip('.')}")
    if builder.open_questions:
        parts.append(f"still open: {builder.open_questions[-1].text}")
    return "; ".join(parts)[:1].upper() + "; ".join(parts)[1:]


def spread(items: Sequence[Message], count: int) -> list[Message]:
    """At most `count` of `items`, evenly spread from the first to the last, in order."""
    if len(items) <= count:
        return list(items)
    if count == 1:
        return [items[-1]]
    step = (len(items) - 1) / (count - 1)
    return [items[round(index * step)] for index in range(count)]


def fit_content(
    content: SummaryContent | ContentBuilder, max_tokens: int, count: Callable[[str], int]
) -> SummaryContent:
    """The content within `max_tokens` (`app.core.summary.fit`'s one drop order)."""
    if isinstance(content, ContentBuilder):
        content = content.content()
    return fit(content, max_tokens, count).content


# --- helpers ---------------------------------------------------------------------------

_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")
_SPACES = re.compile(r"\s+")


def clean_text(text: str, limit: int) -> str:
    """One line of summary text: redacted, whitespace normalised, clipped."""
    text = _SPACES.sub(" ", redact_secrets(text)).strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def facet_point(
    text: str,
    sources: Iterable[int],
    day: Callable[[Iterable[int]], date | None] | None = None,
) -> SourcedPoint | None:
    """A rule facet as a point: cleaned, sources sorted, dated by `day` of its sources;
    None when nothing is left."""
    cleaned = clean_text(text, MAX_POINT_CHARS)
    if not cleaned:
        return None
    numbers = sorted(set(sources))
    return SourcedPoint(
        text=cleaned, sources=numbers, day=day(numbers) if day is not None else None
    )


def first_sentence(text: str, limit: int = 160) -> str:
    """The first sentence of the first line that is text (not a fence), cleaned."""
    for line in text.splitlines():
        line = line.strip().lstrip("#>*-• ").strip()
        if line and not line.startswith(("```", "~~~")):
            return clean_text(_SENTENCE_END.split(line, maxsplit=1)[0], limit)
    return ""


def left_out_note(count: int, kind: str) -> str:
    """The note for the `count` oldest items (`kind` "message" or "summary") not shown."""
    if kind == "message":
        if count == 1:
            return "The oldest message was too long to include; its facts come from the rules."
        return (
            f"The oldest {count} messages were too long to include; "
            "their facts come from the rules."
        )
    if count == 1:
        return "The oldest summary was too long to include."
    return f"The oldest {count} summaries were too long to include."
