"""The user's actions on one committed summary: undo it (as much as fits), or have Claude
rewrite a basic one (DESIGN §5, §6)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from app.core.catalog import ModelInfo
from app.core.context import ContextState
from app.core.engine_condense import Condenser
from app.core.engine_measure import EngineMeasure
from app.core.engine_record import EngineRecorder
from app.core.engine_types import (
    Clock,
    EngineOutcome,
    RunContext,
    Step,
)
from app.core.errors import SummaryConflictError
from app.core.models import Message, Role
from app.core.summary import (
    EventKind,
    EventOutcome,
    Summary,
    SummaryMode,
    SummaryRepository,
    SummaryTier,
    UndoResult,
)

log = logging.getLogger("app.core.engine")


class SummaryRevision:
    """Undoes a summary, or rewrites a basic one with Claude, keeping invariants 3 and 4.

    Attributes:
        repo: where summaries are kept.
        measure: the request's figures, the memory cap, fitting a rewritten draft.
        recorder: records each undo and rewrite.
        condenser: drafts a rewrite over the same messages.
    """

    def __init__(
        self,
        repo: SummaryRepository,
        measure: EngineMeasure,
        recorder: EngineRecorder,
        condenser: Condenser,
        clock: Clock,
    ) -> None:
        self.repo = repo
        self.measure = measure
        self.recorder = recorder
        self.condenser = condenser
        self._clock = clock

    def undo(
        self, session_id: str, summary_id: str, *, model: ModelInfo, system_prompt: str = ""
    ) -> UndoResult:
        """Give a summary's originals back, as many (newest first) as fit the window now.

        A full undo never makes the next request overflow: when not everything
        fits, only the newest originals come back (`complete=False`), starting
        with a user turn where possible; when nothing fits, nothing changes.
        """
        started = self._clock()
        live = self.repo.live_messages(session_id)
        active = self.repo.active_summaries(session_id)
        before = self.measure.estimate(model, system_prompt, active, live, "")
        target = next((s for s in active if s.id == summary_id), None)
        budget: int | None = None
        if target is not None:
            budget = self._undo_budget(model, system_prompt, target, active, live)
        result = self.repo.undo_summary(summary_id, budget_tokens=budget)
        after = self.measure.state(session_id, model=model, system_prompt=system_prompt)
        restored = len(result.restored_message_ids) + len(result.restored_summary_ids)
        self.recorder.record(
            session_id,
            EventKind.UNDO,
            EventOutcome.OK if result.complete else EventOutcome.PARTIAL,
            before=before,
            after=after,
            started=started,
            summary_id=summary_id,
            reason="user",
            detail=f"{restored} restored",
        )
        return result

    def _undo_budget(
        self,
        model: ModelInfo,
        system_prompt: str,
        target: Summary,
        active: Sequence[Summary],
        live: Sequence[Message],
    ) -> int | None:
        """The repository's budget (raw tokens) so the undo keeps invariants 3 and 4."""
        others = [s for s in active if s.id != target.id]
        if target.tier is SummaryTier.CONDENSED:
            covered = self._covered_messages(target)
            # Everything back: does the request without this summary fit?
            tail = sorted([*live, *covered], key=lambda m: m.seq)
            after_all = self.measure.estimate(model, system_prompt, others, tail, "")
            if after_all.fits:
                return None
            # Measured with the builder, not added up: restoring a user turn in front
            # of the tail can make a leading assistant turn count again.
            for count in range(len(covered) - 1, 0, -1):
                back = covered[-count:]
                if back[0].role is not Role.USER:
                    continue  # the API would drop a restored block that starts mid-turn
                tail = sorted([*live, *back], key=lambda m: m.seq)
                if self.measure.estimate(model, system_prompt, active, tail, "").fits:
                    return sum(self.measure.message_tokens(m) for m in back)
            return 0
        children = self._children(target)
        newest_first = sorted(children, key=lambda s: s.last_seq, reverse=True)
        for count in range(len(newest_first), 0, -1):
            returning = newest_first[:count]
            trial = [*others, *returning] if count == len(newest_first) else [*active, *returning]
            state = self.measure.estimate(model, system_prompt, trial, live, "")
            memory = self.measure.memory_tokens(model, trial)
            if state.fits and memory <= self.measure.memory_cap(model, len(trial)):
                if count == len(newest_first):
                    return None
                return sum(s.summary_tokens for s in returning)
        return 0

    def _covered_messages(self, target: Summary) -> list[Message]:
        return [m for m in self.repo.covered_messages(target.id) if m.summary_id == target.id]

    def _children(self, target: Summary) -> list[Summary]:
        every = self.repo.summaries(target.session_id, include_inactive=True)
        return [s for s in every if s.parent_id == target.id]

    def retry_with_llm(
        self,
        session_id: str,
        summary_id: str,
        *,
        model: ModelInfo,
        system_prompt: str = "",
        cancelled: Callable[[], bool] = lambda: False,
    ) -> EngineOutcome:
        """Ask the summarizer again for an active condensed summary ("Try again with
        Claude" on a basic one), over exactly the same messages, and put its draft in
        the old one's place (fitted to its budget like any other).

        The engine's summarizer should be one in LLM mode that aborts on failure; a
        draft that is not the model's own (a rule fallback) is refused all the same.
        When Claude fails, the run is cancelled or the summary changed meanwhile,
        nothing changes and the outcome says so (ABORTED, FAILED or CONFLICT).
        """
        started = self._clock()
        before = self.measure.state(session_id, model=model, system_prompt=system_prompt)
        step = Step()
        context = RunContext(session_id, model, system_prompt, "", cancelled)
        target = next(
            (s for s in self.repo.active_summaries(session_id) if s.id == summary_id), None
        )
        originals = [] if target is None else self._covered_messages(target)
        if target is None or target.tier is not SummaryTier.CONDENSED or not originals:
            self.recorder.stop(context, step, EventOutcome.CONFLICT, "retry", "no longer active")
            return self._retry_outcome(session_id, step, before, before)
        if cancelled():
            self.recorder.stop(context, step, EventOutcome.ABORTED, "retry", "cancelled")
            return self._retry_outcome(session_id, step, before, before)
        result = self.condenser.draft_run(
            context, step, originals, trigger=target.trigger, instructions=target.instructions
        )
        outcome, detail = result.outcome, result.detail
        summary: Summary | None = None
        draft = result.draft
        if draft is None or draft.mode is SummaryMode.RULE or outcome is not EventOutcome.OK:
            outcome = EventOutcome.ABORTED if draft is None else EventOutcome.FAILED
            detail = detail or "Claude did not write it"
        elif cancelled():
            outcome, detail = EventOutcome.ABORTED, "cancelled"
        else:
            fitted, trimmed = self.measure.fit(model, draft)
            try:
                summary = self.repo.replace_summary(summary_id, fitted)
                detail = f"rewrites {summary_id}" + (
                    "; trimmed to fit its budget" if trimmed else ""
                )
            except SummaryConflictError as error:
                outcome, detail = EventOutcome.CONFLICT, str(error)
                log.info("A rewritten summary was not saved: the conversation changed (%s)", error)
        after = self.measure.state(session_id, model=model, system_prompt=system_prompt)
        self.recorder.attempted(
            session_id,
            step,
            outcome,
            summary,
            before=before,
            after=after,
            started=started,
            reason="retry",
            error_class=result.error_class,
            detail=detail,
            summary_id=summary_id,
        )
        return self._retry_outcome(session_id, step, before, after)

    def _retry_outcome(
        self, session_id: str, step: Step, before: ContextState, after: ContextState
    ) -> EngineOutcome:
        outcome = step.outcomes[-1]
        if step.made:
            message = "Summary rewritten by Claude."
        elif outcome is EventOutcome.CONFLICT:
            message = "This summary changed meanwhile; nothing was rewritten."
        elif outcome is EventOutcome.ABORTED and step.detail == "cancelled":
            message = "Rewriting the summary was stopped; the basic summary stays."
        else:
            message = "Claude still can't write it; the simpler summary stays."
        active = tuple(self.repo.active_summaries(session_id))
        return EngineOutcome(
            outcome=outcome,
            summaries=tuple(step.made),
            state_before=before,
            state_after=after,
            llm_calls=step.llm_calls,
            message=message,
            active_after=active,
        )
