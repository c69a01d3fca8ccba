"""What the summarization engine's parts share: its collaborators' shape, a run's
context and progress, and what a run returns (see `app.core.engine`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Protocol

from app.core.catalog import ModelInfo
from app.core.context import ContextState
from app.core.models import Message
from app.core.summary import (
    EventOutcome,
    Summary,
    SummaryDraft,
    SummaryTier,
    SummaryTrigger,
)

# --- what the engine needs from its collaborators, and what it returns


Clock = Callable[[], float]


# Shown a condensing step's drafts before they are committed: returns those to commit
# (their content maybe edited), or None to discard them.
Review = Callable[[Sequence[SummaryDraft]], Sequence[SummaryDraft] | None]


class SummarizeResultLike(Protocol):
    """What `Summarizer.summarize_messages` / `compress_summaries` return."""

    @property
    def draft(self) -> SummaryDraft | None: ...

    @property
    def outcome(self) -> EventOutcome: ...

    @property
    def error_class(self) -> str | None: ...

    @property
    def llm_calls(self) -> int: ...

    @property
    def detail(self) -> str | None: ...


class MessageSummarizer(Protocol):
    """The part of `app.core.summarizer.Summarizer` the engine uses."""

    def summarize_messages(
        self,
        session_id: str,
        messages: Sequence[Message],
        *,
        trigger: SummaryTrigger,
        instructions: str | None = None,
    ) -> SummarizeResultLike: ...

    def compress_summaries(
        self, session_id: str, summaries: Sequence[Summary], *, trigger: SummaryTrigger
    ) -> SummarizeResultLike: ...


@dataclass(frozen=True)
class EngineOutcome:
    """What one `SummarizationEngine.run` did.

    Attributes:
        outcome: OK, FALLBACK (a "basic" rule summary stood in), ABORTED, FAILED or
            CONFLICT; None when nothing was due and nothing changed.
        summaries: the summaries committed, in order (condensed, compressed, trimmed).
        state_before: the next request's figures before the step.
        state_after: the same after it.
        llm_calls: calls made to the summarizer model.
        message: one plain sentence for the UI and the log.
        compressions: merges of summaries into a compressed one (summarizer or rule).
        trims: rule merges/trims made because the depth cap was reached.
        covered_message_ids: the messages newly condensed (no longer live).
        active_after: the active summaries once the run ended, oldest first: what the
            memory block holds now.
    """

    outcome: EventOutcome | None
    summaries: tuple[Summary, ...]
    state_before: ContextState
    state_after: ContextState
    llm_calls: int = 0
    message: str = ""
    compressions: int = 0
    trims: int = 0
    covered_message_ids: frozenset[int] = frozenset()
    active_after: tuple[Summary, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.summaries)

    @property
    def covered_messages(self) -> int:
        """How many messages were newly condensed, as the banner says it."""
        return sum(
            s.last_seq - s.first_seq + 1 for s in self.summaries if s.tier is SummaryTier.CONDENSED
        )


@dataclass
class Step:
    """What a run has done so far."""

    made: list[Summary] = field(default_factory=list)
    covered: set[int] = field(default_factory=set)
    outcomes: list[EventOutcome] = field(default_factory=list)
    llm_calls: int = 0
    compressions: int = 0
    trims: int = 0
    stopped: EventOutcome | None = None  # a step that failed: nothing more is tried
    detail: str = ""


@dataclass(frozen=True)
class RunContext:
    session_id: str
    model: ModelInfo
    system_prompt: str
    draft: str
    cancelled: Callable[[], bool]


@dataclass(frozen=True)
class RuleResult:
    """A rule-made draft, shaped like the summarizer's result."""

    draft: SummaryDraft | None
    outcome: EventOutcome = EventOutcome.OK
    error_class: str | None = None
    llm_calls: int = 0
    detail: str | None = None


def with_days(result: SummarizeResultLike, first: date, last: date) -> SummarizeResultLike:
    """`result` with the days its summary covers set in the content (the memory block
    shows them, so Claude knows when things were said)."""
    if result.draft is None:
        return result
    content = result.draft.content.model_copy(update={"first_day": first, "last_day": last})
    return RuleResult(
        draft=result.draft.model_copy(update={"content": content}),
        outcome=result.outcome,
        error_class=result.error_class,
        llm_calls=0,  # already counted
        detail=result.detail,
    )
