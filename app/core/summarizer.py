"""Making one summary: rules, one LLM call, the merge, the fallback (DESIGN §6).

`Summarizer.summarize_messages` turns a stretch of messages into a condensed
draft; `Summarizer.compress_summaries` turns older summaries into a compressed
one. Neither writes anything: the engine commits the draft (or not).

Modes:
- `rule`: facets from `app.core.extract` and a rule-made narrative; never calls a model.
- `hybrid` (default): one LLM call, then the rule facets (decisions, action items,
  open questions, entities) are merged into its draft, de-duplicated.
- `llm`: one LLM call; only the retention check adds to it — and, when the
  transcript had to be cut, the rule facets of the messages the model did not
  see in full (so the note "their facts come from the rules" holds).

The retention check runs in both LLM modes: every hard fact the rules found
(identifier, number, date, URL, file name, amount, e-mail) that the draft does
not mention is added to its entities.

The LLM call is one non-streaming request forcing the tool `record_summary`,
whose input schema is generated from `LlmSummary`; the reply is validated by
pydantic. A transport error is retried once by the provider (the SDK's own
retries, with its backoff); a validation error (or a reply without usable tool
input) is not retried at all. A missing model moves down
`summarizer_models`. On final failure the result is a rule-made draft (outcome
FALLBACK, mode `rule`, shown as "basic"), or no draft at all with
`abort_on_failure` (outcome ABORTED).

The transcript the model reads is capped at `transcript_budget_tokens`: the
newest messages are kept and the oldest left out (noted in the summary). A
message too large for what is left of the budget is cut rather than split into
several calls — its head and tail are kept and its middle replaced by a marker —
so a summary always costs exactly one call; the rules still read the whole
message, and their facts are merged in.

Every text that ends up in a draft passes through `redact_secrets`, and the
transcript is redacted before it is sent. A draft never renders longer than
`max_summary_tokens`: key points, then narrative sentences, then the oldest
decisions, questions and action items, then entities are dropped, and a note says so.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from app.core.errors import ApiError, ModelNotFoundError, StructuredOutputError
from app.core.extract import Facets, extract_facets, hard_facts, redact_secrets
from app.core.models import Message, Role
from app.core.summarization_config import SummarizationConfig
from app.core.summary import (
    MAX_KEY_POINTS,
    ActionItem,
    EventOutcome,
    SourcedPoint,
    Summary,
    SummaryContent,
    SummaryDraft,
    SummaryMode,
    SummaryTier,
    SummaryTrigger,
    fact_key,
    fit,
    merge,
    render_summary_text,
)
from app.core.tokens import TokenCounter

log = logging.getLogger(__name__)

TOOL_NAME = "record_summary"

# The reply is JSON around the summary (keys, quotes, source numbers): room for twice
# the summary and some, bounded so a non-streaming call stays short.
MAX_CALL_TOKENS = 16_384
# A message is shown cut (head and tail) only when at least this much budget is left for it.
MIN_CUT_TOKENS = 256
# Rule-made lists: bounds that keep a basic summary readable.
RULE_KEY_POINTS = 12
MAX_POINT_CHARS = 300
MAX_ENTITY_CHARS = 200

StructuredCompletion = Callable[..., dict[str, Any]]
"""A `ChatProvider.complete_structured`: called with the keywords model, system, prompt,
tool_name, tool_description, input_schema and max_tokens; returns the tool's input."""


# --- what the model is asked for ---------------------------------------------------


def _source_numbers(value: Any) -> Any:
    """Accept "#12" and "12" as message numbers; drop anything that is not one."""
    if not isinstance(value, list):
        return []
    numbers: list[int] = []
    for item in value:
        if isinstance(item, bool):
            continue
        if isinstance(item, int):
            numbers.append(item)
        elif isinstance(item, str) and item.strip().lstrip("#").isdigit():
            numbers.append(int(item.strip().lstrip("#")))
    return numbers


class LlmPoint(BaseModel):
    """One statement of the summary, with the messages it comes from."""

    model_config = ConfigDict(extra="ignore")

    text: str = Field(description="One statement; identifiers, numbers and dates verbatim.")
    sources: list[int] = Field(
        default_factory=list,
        description="The numbers (#) of the messages this statement comes from.",
    )

    _sources = field_validator("sources", mode="before")(_source_numbers)


class LlmActionItem(BaseModel):
    """Something someone is to do."""

    model_config = ConfigDict(extra="ignore")

    task: str = Field(description="What is to be done.")
    owner: str | None = Field(default=None, description="Who does it, if the messages say.")
    due: str | None = Field(default=None, description="When it is due, verbatim, if said.")
    sources: list[int] = Field(
        default_factory=list,
        description="The numbers (#) of the messages this comes from.",
    )

    _sources = field_validator("sources", mode="before")(_source_numbers)


class LlmSummary(BaseModel):
    """The input of the `record_summary` tool: the summary as the model writes it."""

    model_config = ConfigDict(extra="ignore")

    narrative: str = Field(
        min_length=1,
        description="A few sentences: what was discussed and concluded, and when.",
    )
    key_points: list[LlmPoint] = Field(
        max_length=MAX_KEY_POINTS,
        description=f"The most important points, at most {MAX_KEY_POINTS}, oldest first.",
    )
    decisions: list[LlmPoint] = Field(description="What was decided. Empty if nothing was.")
    action_items: list[LlmActionItem] = Field(
        description="Tasks someone took on or was given. Empty if none."
    )
    open_questions: list[LlmPoint] = Field(
        description="Questions still unanswered at the end. Empty if none."
    )
    entities: list[str] = Field(
        description="Identifiers, file names, numbers, amounts, dates, URLs and names, verbatim."
    )

    @field_validator("narrative")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the narrative is blank")
        return value

    @field_validator("key_points", mode="before")
    @classmethod
    def _at_most_max_key_points(cls, value: Any) -> Any:
        # A model that writes 31 points has still written a good summary: keep the first 30.
        return value[:MAX_KEY_POINTS] if isinstance(value, list) else value


def summary_tool_schema() -> dict[str, Any]:
    """The JSON schema of `LlmSummary`, self-contained (every `$ref` inlined)."""
    schema = LlmSummary.model_json_schema()
    definitions: dict[str, Any] = schema.pop("$defs", {})

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            reference = node.get("$ref")
            if isinstance(reference, str) and reference.startswith("#/$defs/"):
                return inline(definitions[reference.removeprefix("#/$defs/")])
            return {key: inline(value) for key, value in node.items()}
        if isinstance(node, list):
            return [inline(item) for item in node]
        return node

    inlined: dict[str, Any] = inline(schema)
    return inlined


_SCHEMA = summary_tool_schema()

SYSTEM_PROMPT = (
    "You write the memory of a long conversation between a user and Claude, an AI "
    "assistant. Your summary replaces the older messages, so whatever you leave out is "
    f"gone from the conversation. Answer only by calling the tool `{TOOL_NAME}`."
)

_RULES = """\
Rules:
- Keep when things happened: use the dates and times shown in the headers.
- Copy identifiers, file names, numbers, amounts, dates, URLs and names exactly as written.
- Invent nothing: write only what the text below says. Leave a list empty when nothing fits it.
- For every point, give the numbers (#) of the messages it comes from.
- At most {max_points} key points. Keep the whole summary under about {target} tokens."""


# --- the result ----------------------------------------------------------------------


@dataclass(frozen=True)
class SummarizeResult:
    """What one summarization attempt produced.

    Attributes:
        draft: the summary to commit; None when nothing should change (ABORTED).
        outcome: OK (as configured), FALLBACK (the LLM failed; a rule-made "basic"
            draft), or ABORTED (the LLM failed and `abort_on_failure` is set).
        error_class: the class name of the error that ended the LLM pass, if any.
        llm_calls: requests made to the summarizer model (retries included).
        detail: technical detail of the failure, or of what was cut, for the log.
    """

    draft: SummaryDraft | None
    outcome: EventOutcome
    error_class: str | None
    llm_calls: int
    detail: str | None = None


@dataclass
class _LlmAnswer:
    summary: LlmSummary | None
    model: str | None
    calls: int
    error: BaseException | None = None
    detail: str | None = None


@dataclass(frozen=True)
class _Block:
    """One item of the transcript: a message or an older summary."""

    header: str
    content: str
    tokens: int  # of the content (an estimate is fine: the budget is a soft cap)
    label: str  # how a note names it ("Message #12")


@dataclass(frozen=True)
class _Transcript:
    text: str
    left_out: int  # the oldest blocks, not shown
    cut: tuple[int, ...]  # indexes of the blocks shown only in part


@dataclass
class _ContentBuilder:
    """A summary being assembled: de-duplicates as it goes, renders to `SummaryContent`."""

    narrative: str = ""
    key_points: list[SourcedPoint] = field(default_factory=list)
    decisions: list[SourcedPoint] = field(default_factory=list)
    action_items: list[ActionItem] = field(default_factory=list)
    open_questions: list[SourcedPoint] = field(default_factory=list)
    entities: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def content(self) -> SummaryContent:
        return SummaryContent(
            narrative=self.narrative,
            key_points=self.key_points[:MAX_KEY_POINTS],
            decisions=self.decisions,
            action_items=self.action_items,
            open_questions=self.open_questions,
            entities=self.entities,
            notes=self.notes,
        )

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
        entity = _clean_text(entity, MAX_ENTITY_CHARS)
        if entity and entity.casefold() not in {known.casefold() for known in self.entities}:
            self.entities.append(entity)

    def add_note(self, note: str) -> None:
        if note not in self.notes:
            self.notes.append(note)


# --- the summarizer --------------------------------------------------------------------


class Summarizer:
    """Makes summary drafts from messages or older summaries (see the module notes).

    Thread-safe as long as `complete` is: it keeps no state between calls. Runs on
    a worker thread (the LLM call blocks).

    Attributes:
        config: the summarization settings it was made with.
    """

    def __init__(
        self,
        config: SummarizationConfig,
        *,
        complete: StructuredCompletion | None,
        counter: TokenCounter,
        transcript_budget_tokens: int = 60_000,
        tz: tzinfo | None = None,
    ) -> None:
        """`complete` is None when no model can be reached (no key): `llm` and `hybrid`
        then fail over as on any LLM failure. `tz` is the time zone the transcript
        shows times in (None: the machine's own)."""
        self.config = config
        self._complete = complete
        self._counter = counter
        self._transcript_budget = max(1, transcript_budget_tokens)
        self._tz = tz

    # -- public

    def summarize_messages(
        self,
        session_id: str,
        messages: Sequence[Message],
        *,
        trigger: SummaryTrigger,
        instructions: str | None = None,
        model_order: Sequence[str] | None = None,
    ) -> SummarizeResult:
        """A condensed draft covering exactly `messages` (any order; at least one)."""
        if not messages:
            raise ValueError("summarize_messages needs at least one message")
        ordered = sorted(messages, key=lambda message: message.seq)
        first_seq, last_seq = ordered[0].seq, ordered[-1].seq
        focus = _clean_instructions(instructions)
        source_tokens = sum(self._message_tokens(message) for message in ordered)
        facets = extract_facets(ordered)
        mode = SummaryMode(self.config.mode)

        def draft(
            content: SummaryContent, used_mode: SummaryMode, model: str | None
        ) -> SummaryDraft:
            return SummaryDraft(
                session_id=session_id,
                tier=SummaryTier.CONDENSED,
                first_seq=first_seq,
                last_seq=last_seq,
                message_ids=[message.id for message in ordered],
                content=content,
                source_tokens=source_tokens,
                summary_tokens=self._counter.count(render_summary_text(content)),
                mode=used_mode,
                model=model,
                trigger=trigger,
                instructions=focus,
                depth=1,
            )

        def rule_draft() -> SummaryDraft:
            return draft(self._fit(self._rule_content(ordered, facets)), SummaryMode.RULE, None)

        if mode is SummaryMode.RULE:
            return SummarizeResult(rule_draft(), EventOutcome.OK, None, 0)

        blocks = [self._message_block(message) for message in ordered]
        transcript = self._transcript(blocks)
        prompt = self._prompt(
            intro=(
                f"Summarize the conversation below: messages #{first_seq}–#{last_seq}, "
                "oldest first. Each message starts with its number, who wrote it, and its "
                "date and time."
            ),
            transcript=transcript.text,
            instructions=focus,
            target=self.config.target_summary_tokens(source_tokens),
        )
        answer = self._ask(prompt, model_order)
        if answer.summary is None:
            return self._failure(answer, rule_draft)

        builder = self._from_llm(answer.summary, first_seq, last_seq)
        not_seen = [ordered[index] for index in transcript.cut]
        not_seen += ordered[: transcript.left_out]
        if transcript.left_out:
            builder.add_note(_left_out_note(transcript.left_out, "message"))
        for index in transcript.cut:
            builder.add_note(
                f"{blocks[index].label} was too long to read in full; its middle was left "
                "out, and its facts come from the rules."
            )
        if mode is SummaryMode.HYBRID:
            self._merge_facets(builder, facets)
        elif not_seen:
            self._merge_facets(builder, extract_facets(sorted(not_seen, key=lambda m: m.seq)))
        self._retain(builder, [entity.text for entity in facets.entities], hard_facts(facets))
        return SummarizeResult(
            draft(self._fit(builder), mode, answer.model),
            EventOutcome.OK,
            None,
            answer.calls,
            _cut_detail(transcript),
        )

    def compress_summaries(
        self,
        session_id: str,
        summaries: Sequence[Summary],
        *,
        trigger: SummaryTrigger,
    ) -> SummarizeResult:
        """A compressed draft covering `summaries` (any order; at least one).

        `source_tokens` is what the summaries cost in the memory block (the sum of
        their `summary_tokens`): what the compressed summary replaces.
        """
        if not summaries:
            raise ValueError("compress_summaries needs at least one summary")
        ordered = sorted(summaries, key=lambda summary: (summary.first_seq, summary.last_seq))
        first_seq = min(summary.first_seq for summary in ordered)
        last_seq = max(summary.last_seq for summary in ordered)
        source_tokens = sum(summary.summary_tokens for summary in ordered)
        mode = SummaryMode(self.config.mode)
        children = merge([summary.content for summary in ordered])

        def draft(
            content: SummaryContent, used_mode: SummaryMode, model: str | None
        ) -> SummaryDraft:
            return SummaryDraft(
                session_id=session_id,
                tier=SummaryTier.COMPRESSED,
                first_seq=first_seq,
                last_seq=last_seq,
                summary_ids=[summary.id for summary in ordered],
                content=content,
                source_tokens=source_tokens,
                summary_tokens=self._counter.count(render_summary_text(content)),
                mode=used_mode,
                model=model,
                trigger=trigger,
                instructions=None,
                depth=max(summary.depth for summary in ordered) + 1,
            )

        def rule_draft() -> SummaryDraft:
            return draft(self._fit(children), SummaryMode.RULE, None)

        if mode is SummaryMode.RULE:
            return SummarizeResult(rule_draft(), EventOutcome.OK, None, 0)

        blocks = [self._summary_block(summary) for summary in ordered]
        transcript = self._transcript(blocks)
        prompt = self._prompt(
            intro=(
                f"Merge the summaries below, oldest first, into one summary of messages "
                f"#{first_seq}–#{last_seq}. Keep what still matters; drop what was superseded."
            ),
            transcript=transcript.text,
            instructions=None,
            target=self.config.target_summary_tokens(source_tokens),
        )
        answer = self._ask(prompt, None)
        if answer.summary is None:
            return self._failure(answer, rule_draft)

        builder = self._from_llm(answer.summary, first_seq, last_seq)
        if transcript.left_out:
            builder.add_note(_left_out_note(transcript.left_out, "summary"))
        if mode is SummaryMode.HYBRID:
            for point in children.decisions:
                builder.add_point(builder.decisions, point)
            for item in children.action_items:
                builder.add_action(item)
            for point in children.open_questions:
                builder.add_point(builder.open_questions, point)
        self._retain(builder, children.entities, set(children.entities))
        return SummarizeResult(
            draft(self._fit(builder), mode, answer.model),
            EventOutcome.OK,
            None,
            answer.calls,
            _cut_detail(transcript),
        )

    # -- the LLM call

    def _ask(self, prompt: str, model_order: Sequence[str] | None) -> _LlmAnswer:
        """One structured call; down the model list only when a model does not exist.

        Transport failures are retried by the provider (the SDK's retries: once, with
        its backoff, honouring retry-after), never here; a bad answer is not retried.
        """
        complete = self._complete
        models = list(model_order if model_order is not None else self.config.summarizer_models)
        if complete is None or not models:
            return _LlmAnswer(None, None, 0, detail="no summarizer model is available")
        calls = 0
        last_error: BaseException | None = None
        for model in models:
            calls += 1
            try:
                raw = complete(
                    model=model,
                    system=SYSTEM_PROMPT,
                    prompt=prompt,
                    tool_name=TOOL_NAME,
                    tool_description=self._tool_description(),
                    input_schema=_SCHEMA,
                    max_tokens=self._call_max_tokens(),
                )
            except ModelNotFoundError as error:
                log.info("Summarizer model %s is not available; trying the next one", model)
                last_error = error
                continue
            except (ApiError, StructuredOutputError) as error:
                return _LlmAnswer(None, model, calls, error, error.detail or str(error))
            try:
                summary = LlmSummary.model_validate(raw)
            except ValidationError as error:
                return _LlmAnswer(None, model, calls, error, _validation_detail(error))
            return _LlmAnswer(summary, model, calls)
        detail = "none of the summarizer models is available"
        return _LlmAnswer(None, None, calls, last_error, detail)

    def _call_max_tokens(self) -> int:
        return min(MAX_CALL_TOKENS, 2 * self.config.max_summary_tokens + 1024)

    def _tool_description(self) -> str:
        return (
            "Record the summary of the conversation. Keep identifiers, numbers and dates "
            "verbatim, invent nothing, and leave lists empty when nothing fits them. "
            f"The whole summary must stay under {self.config.max_summary_tokens} tokens."
        )

    def _failure(
        self, answer: _LlmAnswer, rule_draft: Callable[[], SummaryDraft]
    ) -> SummarizeResult:
        error_class = type(answer.error).__name__ if answer.error is not None else "NoSummarizer"
        if self.config.abort_on_failure:
            log.warning(
                "The summary could not be made (%s: %s); nothing changes",
                error_class,
                answer.detail,
            )
            return SummarizeResult(
                None, EventOutcome.ABORTED, error_class, answer.calls, answer.detail
            )
        log.warning(
            "The summarizer model failed (%s: %s); making a basic summary by rules",
            error_class,
            answer.detail,
        )
        return SummarizeResult(
            rule_draft(), EventOutcome.FALLBACK, error_class, answer.calls, answer.detail
        )

    # -- the prompt and the transcript

    def _prompt(self, *, intro: str, transcript: str, instructions: str | None, target: int) -> str:
        rules = _RULES.format(max_points=MAX_KEY_POINTS, target=target)
        wrapped = f"<transcript>\n{transcript}\n</transcript>"
        focus = (
            f"The user asks you to focus on this:\n<focus>\n{instructions}\n</focus>"
            if instructions
            else ""
        )
        custom = self.config.render_prompt(
            transcript=wrapped, instructions=instructions or "", target_tokens=target
        )
        if custom is not None:
            template = self.config.prompt_template or ""
            if focus and "{instructions}" not in template:
                custom += "\n\n" + focus
            return custom
        return "\n\n".join(part for part in (intro, rules, wrapped, focus) if part)

    def _message_block(self, message: Message) -> _Block:
        content = redact_secrets(message.content)
        when = self._when(message.created_at)
        return _Block(
            header=f"[#{message.seq} · {message.role.value} · {when}]",
            content=content,
            tokens=self._message_tokens(message),
            label=f"Message #{message.seq}",
        )

    def _summary_block(self, summary: Summary) -> _Block:
        text = redact_secrets(summary.text())
        return _Block(
            header=f"[Summary of messages #{summary.first_seq}–#{summary.last_seq}]",
            content=text,
            tokens=summary.summary_tokens or self._counter.count(text),
            label=f"The summary of messages #{summary.first_seq}–#{summary.last_seq}",
        )

    def _transcript(self, blocks: Sequence[_Block]) -> _Transcript:
        """The newest blocks that fit the budget; a block too large for what is left is
        cut (head and tail kept) when enough is left, and everything older is left out."""
        budget = self._transcript_budget
        used = 0
        shown: list[str] = []
        cut: list[int] = []
        first_shown = len(blocks)
        for index in range(len(blocks) - 1, -1, -1):
            block = blocks[index]
            header_tokens = self._counter.count(block.header) + 2
            cost = header_tokens + block.tokens
            if used + cost <= budget:
                shown.append(f"{block.header}\n{block.content}")
                used += cost
                first_shown = index
                continue
            room = budget - used - header_tokens
            if room >= MIN_CUT_TOKENS or not shown:
                content = _head_and_tail(block.content, max(room, 32), self._counter)
                if content != block.content:
                    cut.append(index)
                shown.append(f"{block.header}\n{content}")
                first_shown = index
            break
        shown.reverse()
        if first_shown:
            shown.insert(0, f"(The {first_shown} oldest items are not shown here.)")
        return _Transcript("\n\n".join(shown), first_shown, tuple(sorted(cut)))

    def _when(self, moment: datetime) -> str:
        if moment.tzinfo is not None:
            moment = moment.astimezone(self._tz)
        return moment.strftime("%Y-%m-%d %H:%M")

    def _message_tokens(self, message: Message) -> int:
        if message.token_estimate is not None:
            return message.token_estimate
        return self._counter.count_message(message.content)

    # -- building the content

    def _from_llm(self, summary: LlmSummary, first_seq: int, last_seq: int) -> _ContentBuilder:
        """The model's summary, redacted, with sources outside [first_seq, last_seq] dropped."""

        def sources(numbers: Iterable[int]) -> list[int]:
            return sorted({number for number in numbers if first_seq <= number <= last_seq})

        def point(item: LlmPoint) -> SourcedPoint | None:
            text = _clean_text(item.text, MAX_POINT_CHARS)
            return SourcedPoint(text=text, sources=sources(item.sources)) if text else None

        builder = _ContentBuilder(narrative=redact_secrets(summary.narrative.strip()))
        for item in summary.key_points:
            builder.add_point(builder.key_points, point(item))
        for item in summary.decisions:
            builder.add_point(builder.decisions, point(item))
        for item in summary.open_questions:
            builder.add_point(builder.open_questions, point(item))
        for action in summary.action_items:
            task = _clean_text(action.task, MAX_POINT_CHARS)
            if task:
                builder.add_action(
                    ActionItem(
                        task=task,
                        owner=_clean_text(action.owner or "", 100) or None,
                        due=_clean_text(action.due or "", 100) or None,
                        sources=sources(action.sources),
                    )
                )
        for entity in summary.entities:
            # An entity the redactor touched held a secret: half a fact is no fact.
            if redact_secrets(entity) == entity:
                builder.add_entity(entity)
        return builder

    @staticmethod
    def _merge_facets(builder: _ContentBuilder, facets: Facets) -> None:
        """Add the rule facets the draft lacks (entities are left to `_retain`)."""
        for fact in facets.decisions:
            builder.add_point(builder.decisions, _facet_point(fact.text, fact.sources))
        for fact in facets.open_questions:
            builder.add_point(builder.open_questions, _facet_point(fact.text, fact.sources))
        for action in facets.action_items:
            builder.add_action(
                ActionItem(
                    task=redact_secrets(action.task),
                    owner=action.owner,
                    due=action.due,
                    sources=list(action.sources),
                )
            )

    @staticmethod
    def _retain(builder: _ContentBuilder, candidates: Sequence[str], hard: set[str]) -> None:
        """The retention check: every hard fact the draft does not mention becomes an entity."""
        rendered = builder.text().casefold()
        for text in candidates:
            if text in hard and text.casefold() not in rendered:
                builder.add_entity(text)

    def _rule_content(self, messages: Sequence[Message], facets: Facets) -> _ContentBuilder:
        first, last = messages[0], messages[-1]
        span = f"#{first.seq}–#{last.seq}" if first.seq != last.seq else f"#{first.seq}"
        count = len(messages)
        narrative = (
            f"Basic summary of {count} message{'s' if count != 1 else ''} ({span}, "
            f"{self._when(first.created_at)} to {self._when(last.created_at)}), made by "
            "rules without Claude."
        )
        opening = next(
            (
                _first_sentence(redact_secrets(message.content))
                for message in messages
                if message.role is Role.USER and message.content.strip()
            ),
            "",
        )
        if opening:
            narrative += f" It began with: “{opening}”"
        builder = _ContentBuilder(narrative=narrative)
        asked = [
            message for message in messages if message.role is Role.USER and message.content.strip()
        ]
        for message in asked[-RULE_KEY_POINTS:]:
            sentence = _first_sentence(redact_secrets(message.content))
            if sentence:
                builder.add_point(
                    builder.key_points, SourcedPoint(text=sentence, sources=[message.seq])
                )
        self._merge_facets(builder, facets)
        for entity in facets.entities:
            builder.add_entity(entity.text)
        return builder

    def _fit(self, content: SummaryContent | _ContentBuilder) -> SummaryContent:
        """The content within max_summary_tokens (`app.core.summary.fit`'s one drop order)."""
        if isinstance(content, _ContentBuilder):
            content = content.content()
        return fit(content, self.config.max_summary_tokens, self._counter.count).content


# --- helpers ---------------------------------------------------------------------------

_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")
_SPACES = re.compile(r"\s+")


def _clean_text(text: str, limit: int) -> str:
    """One line of summary text: redacted, whitespace normalised, clipped."""
    text = _SPACES.sub(" ", redact_secrets(text)).strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _facet_point(text: str, sources: Iterable[int]) -> SourcedPoint | None:
    cleaned = _clean_text(text, MAX_POINT_CHARS)
    return SourcedPoint(text=cleaned, sources=sorted(set(sources))) if cleaned else None


def _first_sentence(text: str, limit: int = 160) -> str:
    for line in text.splitlines():
        line = line.strip().lstrip("#>*-• ").strip()
        if line and not line.startswith(("```", "~~~")):
            return _clean_text(_SENTENCE_END.split(line, maxsplit=1)[0], limit)
    return ""


def _clean_instructions(instructions: str | None) -> str | None:
    if instructions is None or not instructions.strip():
        return None
    return redact_secrets(instructions.strip())


def _left_out_note(count: int, kind: str) -> str:
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


def _cut_detail(transcript: _Transcript) -> str | None:
    if not transcript.left_out and not transcript.cut:
        return None
    return f"transcript capped: {transcript.left_out} left out, {len(transcript.cut)} cut"


def _validation_detail(error: ValidationError) -> str:
    problems = [
        f"{'.'.join(str(part) for part in item['loc']) or 'input'}: {item['msg']}"
        for item in error.errors(include_url=False, include_input=False)[:5]
    ]
    return f"{error.error_count()} validation error(s): " + "; ".join(problems)


def _head_and_tail(text: str, tokens: int, counter: TokenCounter) -> str:
    """`text` within about `tokens`: its head and tail, the middle replaced by a marker."""
    total = counter.count(text)
    if total <= tokens:
        return text
    keep = max(16, tokens - 24)  # room for the marker
    characters = max(2, int(len(text) * keep / total))
    while True:
        head = text[: characters // 2]
        tail = text[len(text) - (characters - characters // 2) :]
        if counter.count(head) + counter.count(tail) <= keep or characters <= 2:
            break
        characters = int(characters * 0.85)
    left_out = total - counter.count(head) - counter.count(tail)
    marker = f"\n[… about {left_out:,} tokens of this message are left out here …]\n"
    return head + marker + tail
