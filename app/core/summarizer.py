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

This module orchestrates; the concerns live beside it: `summarizer_llm` (the tool
schema, the prompt and the call), `summarizer_transcript` (the transcript within its
budget) and `summarizer_content` (the rule-made summary, the merge and the retention
check).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date, tzinfo

from app.core.extract import extract_facets, hard_facts
from app.core.extract_facts import ledger_facts
from app.core.models import Message
from app.core.redaction import redact_secrets
from app.core.structured_call import StructuredCompletion
from app.core.summarization_config import SummarizationConfig
from app.core.summarizer_content import (
    ContentBuilder,
    fit_content,
    from_llm_summary,
    left_out_note,
    merge_facets,
    parse_day,
    retain,
    rule_content,
)
from app.core.summarizer_llm import (
    SYSTEM_PROMPT,
    TOOL_NAME,
    LlmActionItem,
    LlmAnswer,
    LlmPoint,
    LlmSummary,
    ask_for_summary,
    build_prompt,
    summary_tool_schema,
)
from app.core.summarizer_transcript import Block, Transcript, TranscriptBuilder, cut_detail
from app.core.summary import (
    EventOutcome,
    Summary,
    SummaryContent,
    SummaryDraft,
    SummaryMode,
    SummaryTier,
    SummaryTrigger,
    bounded_keys,
    merge,
    render_summary_text,
)
from app.core.tokens import TokenCounter

# What this module offered before its concerns moved into the `summarizer_*` modules.
__all__ = [
    "SYSTEM_PROMPT",
    "TOOL_NAME",
    "LlmActionItem",
    "LlmPoint",
    "LlmSummary",
    "StructuredCompletion",
    "SummarizeResult",
    "Summarizer",
    "summary_tool_schema",
]

log = logging.getLogger(__name__)


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


@dataclass(frozen=True)
class _Cover:
    """All of a draft but what it says: what it covers and how it was asked for."""

    session_id: str
    tier: SummaryTier
    first_seq: int
    last_seq: int
    source_tokens: int
    trigger: SummaryTrigger
    counter: TokenCounter
    message_ids: Sequence[int] = ()
    summary_ids: Sequence[str] = ()
    instructions: str | None = None
    depth: int = 1

    def draft(self, content: SummaryContent, mode: SummaryMode, model: str | None) -> SummaryDraft:
        """The draft saying `content`, made in `mode` by `model` (None: by rule)."""
        return SummaryDraft(
            session_id=self.session_id,
            tier=self.tier,
            first_seq=self.first_seq,
            last_seq=self.last_seq,
            message_ids=list(self.message_ids),
            summary_ids=list(self.summary_ids),
            content=content,
            source_tokens=self.source_tokens,
            summary_tokens=self.counter.count(render_summary_text(content)),
            mode=mode,
            model=model,
            trigger=self.trigger,
            instructions=self.instructions,
            depth=self.depth,
        )


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
        self._transcripts = TranscriptBuilder(counter, transcript_budget_tokens, tz)

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
        source_tokens = sum(self._transcripts.message_tokens(message) for message in ordered)
        facets = extract_facets(ordered)
        ledger = ledger_facts(ordered, self._transcripts.day, facets)
        days = {message.seq: self._transcripts.day(message.created_at) for message in ordered}

        def first_day(numbers: Iterable[int]) -> date | None:
            return min((days[n] for n in numbers if n in days), default=None)

        def day_for(numbers: Sequence[int], said: str | None) -> date | None:
            return first_day(numbers) or parse_day(said)

        cover = _Cover(
            session_id,
            SummaryTier.CONDENSED,
            first_seq,
            last_seq,
            source_tokens,
            trigger,
            self._counter,
            message_ids=[message.id for message in ordered],
            instructions=focus,
        )
        mode = SummaryMode(self.config.mode)

        def finish(
            summary: LlmSummary, transcript: Transcript, blocks: Sequence[Block]
        ) -> ContentBuilder:
            builder = from_llm_summary(summary, first_seq, last_seq, day_for)
            not_seen = [ordered[index] for index in transcript.cut]
            not_seen += ordered[: transcript.left_out]
            if transcript.left_out:
                builder.add_note(left_out_note(transcript.left_out, "message"))
            for index in transcript.cut:
                builder.add_note(
                    f"{blocks[index].label} was too long to read in full; its middle was left "
                    "out, and its facts come from the rules."
                )
            if mode is SummaryMode.HYBRID:
                merge_facets(builder, facets, first_day)
            elif not_seen:
                merge_facets(
                    builder, extract_facets(sorted(not_seen, key=lambda m: m.seq)), first_day
                )
            # The rules' ledger in every mode: a fact the model left out is still kept.
            builder.add_facts(ledger)
            retain(builder, [entity.text for entity in facets.entities], hard_facts(facets))
            return builder

        return self._make(
            cover,
            mode,
            rules=lambda: rule_content(
                ordered, facets, self._transcripts.when, ledger, self._transcripts.day
            ),
            blocks=lambda: [self._transcripts.message_block(message) for message in ordered],
            intro=(
                f"Summarize the conversation below: messages #{first_seq}–#{last_seq}, "
                "oldest first. Each message starts with its number, who wrote it, and its "
                "date and time."
            ),
            model_order=model_order,
            finish=finish,
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
        children = merge([summary.content for summary in ordered])
        cover = _Cover(
            session_id,
            SummaryTier.COMPRESSED,
            first_seq,
            last_seq,
            source_tokens,
            trigger,
            self._counter,
            summary_ids=[summary.id for summary in ordered],
            depth=max(summary.depth for summary in ordered) + 1,
        )
        mode = SummaryMode(self.config.mode)

        def finish(
            summary: LlmSummary, transcript: Transcript, _blocks: Sequence[Block]
        ) -> ContentBuilder:
            builder = from_llm_summary(
                summary, first_seq, last_seq, _children_days(ordered, children)
            )
            if transcript.left_out:
                builder.add_note(left_out_note(transcript.left_out, "summary"))
            # The children's ledger is kept whole, whatever the model wrote; `fit` trims it
            # last and counts what it drops.
            builder.add_facts(children.facts)
            builder.archived_facts += children.archived_facts
            if mode is SummaryMode.HYBRID:
                for point in children.key_points:
                    builder.add_point(builder.key_points, point)
                for point in children.decisions:
                    builder.add_point(builder.decisions, point)
                for item in children.action_items:
                    builder.add_action(item)
                for point in children.open_questions:
                    builder.add_point(builder.open_questions, point)
            retain(builder, children.entities, set(children.entities))
            # Every stretch keeps its keys, coarser beyond MAX_KEPT_KEYS.
            builder.search_keys = bounded_keys([*children.search_keys, *builder.search_keys])
            builder.standing = builder.standing or children.standing
            return builder

        return self._make(
            cover,
            mode,
            rules=lambda: children,
            blocks=lambda: [self._transcripts.summary_block(summary) for summary in ordered],
            intro=(
                f"Merge the summaries below, oldest first, into one summary of messages "
                f"#{first_seq}–#{last_seq}. Keep what still matters; drop what was superseded."
            ),
            model_order=None,
            finish=finish,
        )

    def _make(
        self,
        cover: _Cover,
        mode: SummaryMode,
        *,
        rules: Callable[[], SummaryContent | ContentBuilder],
        blocks: Callable[[], Sequence[Block]],
        intro: str,
        model_order: Sequence[str] | None,
        finish: Callable[[LlmSummary, Transcript, Sequence[Block]], ContentBuilder],
    ) -> SummarizeResult:
        """The one course of both kinds: the rules' draft in `rule` mode; otherwise the
        model's summary of the transcript of `blocks`, completed by `finish` — or, when
        the model gives none, the rules' draft (FALLBACK) or nothing (ABORTED)."""

        def rule_draft() -> SummaryDraft:
            return cover.draft(self._fit(rules()), SummaryMode.RULE, None)

        if mode is SummaryMode.RULE:
            return SummarizeResult(rule_draft(), EventOutcome.OK, None, 0)

        shown = blocks()
        transcript = self._transcripts.build(shown)
        prompt = build_prompt(
            self.config,
            intro=intro,
            transcript=transcript.text,
            instructions=cover.instructions,
            target=self.config.target_summary_tokens(cover.source_tokens),
        )
        answer = ask_for_summary(self._complete, self.config, prompt, model_order)
        if answer.summary is None:
            return self._failure(answer, rule_draft)
        return SummarizeResult(
            cover.draft(self._fit(finish(answer.summary, transcript, shown)), mode, answer.model),
            EventOutcome.OK,
            None,
            answer.calls,
            cut_detail(transcript),
        )

    def _failure(
        self, answer: LlmAnswer, rule_draft: Callable[[], SummaryDraft]
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

    def _fit(self, content: SummaryContent | ContentBuilder) -> SummaryContent:
        """The content within max_summary_tokens (`app.core.summary.fit`'s one drop order)."""
        return fit_content(content, self.config.max_summary_tokens, self._counter.count)


# --- helpers ---------------------------------------------------------------------------


def _children_days(
    children: Sequence[Summary], merged: SummaryContent
) -> Callable[[Sequence[int], str | None], date | None]:
    """When a message behind a compressed summary was said: the day its children gave a
    point or fact from it, else the day of a child that covers one day, else the day the
    model wrote."""
    days: dict[int, date] = {}
    points = [*merged.key_points, *merged.decisions, *merged.open_questions]
    dated = [(p.sources, p.day) for p in points] + [(a.sources, a.day) for a in merged.action_items]
    for sources, day in dated:
        if day is not None:
            for number in sources:
                days.setdefault(number, day)
    for fact in merged.facts:
        if fact.day is not None and fact.seq is not None:
            days.setdefault(fact.seq, fact.day)

    def day_for(numbers: Sequence[int], said: str | None) -> date | None:
        known = [days[number] for number in numbers if number in days]
        for number in numbers:
            for child in children:
                one_day = child.content.first_day
                covers = child.first_seq <= number <= child.last_seq
                if covers and one_day is not None and one_day == child.content.last_day:
                    known.append(one_day)
        return min(known, default=None) or parse_day(said)

    return day_for


def _clean_instructions(instructions: str | None) -> str | None:
    if instructions is None or not instructions.strip():
        return None
    return redact_secrets(instructions.strip())
