"""Writing for the summarization engine: committing fitted drafts and recording every
attempt in the audit trail (DESIGN §6)."""

from __future__ import annotations

import logging

from app.core.catalog import ModelInfo
from app.core.context import ContextState
from app.core.engine_measure import EngineMeasure
from app.core.engine_types import (
    Clock,
    RunContext,
    Step,
    SummarizeResultLike,
)
from app.core.errors import SummaryConflictError
from app.core.summary import (
    EventKind,
    EventOutcome,
    Summary,
    SummaryDraft,
    SummaryEvent,
    SummaryRepository,
    SummaryTier,
)

log = logging.getLogger("app.core.engine")


class EngineRecorder:
    """Commits summaries and records each attempt as a `SummaryEvent`.

    Attributes:
        repo: where summaries and events are written.
        measure: fits drafts and measures the request before and after.
    """

    def __init__(self, repo: SummaryRepository, measure: EngineMeasure, clock: Clock) -> None:
        self.repo = repo
        self.measure = measure
        self._clock = clock

    def apply(
        self, draft: SummaryDraft, *, model: ModelInfo, text_cap: int | None = None
    ) -> tuple[Summary, bool]:
        """Fit `draft` to its budget (invariant 4) and commit it atomically.

        Returns the committed summary and whether it had to be trimmed. Raises
        `SummaryConflictError`, with nothing written, when what it covers changed.
        """
        fitted, trimmed = self.measure.fit(model, draft, text_cap)
        return self.repo.commit_summary(fitted), trimmed

    def commit(
        self,
        context: RunContext,
        step: Step,
        result: SummarizeResultLike,
        before: ContextState,
        started: float,
        reason: str,
        *,
        text_cap: int | None = None,
    ) -> Summary | None:
        """Commit a summarizer's (or rule) draft and record the attempt."""
        outcome = result.outcome
        summary: Summary | None = None
        detail = result.detail
        if result.draft is None or context.cancelled():
            if result.draft is not None:
                outcome, detail = EventOutcome.ABORTED, "cancelled"
            elif outcome in (EventOutcome.OK, EventOutcome.FALLBACK):
                outcome = EventOutcome.FAILED
        else:
            try:
                summary, trimmed = self.apply(result.draft, model=context.model, text_cap=text_cap)
                if trimmed:
                    detail = (detail + "; " if detail else "") + "trimmed to fit its budget"
                if summary.tier is SummaryTier.CONDENSED:
                    step.covered.update(result.draft.message_ids)
            except SummaryConflictError as error:
                outcome, detail = EventOutcome.CONFLICT, str(error)
                log.info("A summary was not saved: the conversation changed (%s)", error)
        self.attempted(
            context.session_id,
            step,
            outcome,
            summary,
            before=before,
            after=self.measure.now(context),
            started=started,
            reason=reason,
            error_class=result.error_class,
            detail=detail,
        )
        return summary

    def attempted(
        self,
        session_id: str,
        step: Step,
        outcome: EventOutcome,
        summary: Summary | None,
        *,
        before: ContextState,
        after: ContextState,
        started: float,
        reason: str,
        error_class: str | None,
        detail: str | None,
        summary_id: str | None = None,
    ) -> None:
        """Record one summarize attempt, and note in `step` what it made or where it stopped
        (`summary_id`: the summary it was about, when it made none)."""
        self.record(
            session_id,
            EventKind.SUMMARIZE,
            outcome,
            before=before,
            after=after,
            started=started,
            summary_id=summary.id if summary is not None else summary_id,
            reason=reason,
            error_class=error_class,
            detail=detail,
        )
        step.outcomes.append(outcome)
        if summary is not None:
            step.made.append(summary)
        else:
            step.stopped = outcome
            step.detail = detail or ""

    def stop(
        self, context: RunContext, step: Step, outcome: EventOutcome, reason: str, detail: str
    ) -> None:
        state = self.measure.now(context)
        self.record(
            context.session_id,
            EventKind.SUMMARIZE,
            outcome,
            before=state,
            after=state,
            reason=reason,
            detail=detail,
        )
        step.outcomes.append(outcome)
        step.stopped = outcome
        step.detail = detail

    def record(
        self,
        session_id: str,
        kind: EventKind,
        outcome: EventOutcome,
        *,
        before: ContextState,
        after: ContextState,
        started: float | None = None,
        summary_id: str | None = None,
        reason: str = "",
        error_class: str | None = None,
        detail: str | None = None,
    ) -> None:
        """One line of the audit trail, with how full the context was before and after."""
        self.repo.record_event(
            SummaryEvent(
                session_id=session_id,
                kind=kind,
                outcome=outcome,
                summary_id=summary_id,
                reason=reason,
                ratio_before=before.ratio,
                ratio_after=after.ratio,
                tokens_before=before.used,
                tokens_after=after.used,
                duration_ms=0.0 if started is None else (self._clock() - started) * 1000,
                error_class=error_class,
                detail=detail,
            )
        )
