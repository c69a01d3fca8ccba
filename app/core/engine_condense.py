"""One summarization step: condense the oldest live messages, keep the memory in budget,
and make the next request fit (DESIGN §3, §5; see `app.core.engine`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import date

from app.core.catalog import ModelInfo
from app.core.context import ContextState
from app.core.conversation import local_day
from app.core.engine_budget import MemoryBudget
from app.core.engine_measure import EngineMeasure
from app.core.engine_plan import Plan, plan
from app.core.engine_record import EngineRecorder
from app.core.engine_types import (
    Clock,
    EngineOutcome,
    MessageSummarizer,
    Review,
    RuleResult,
    RunContext,
    Step,
    SummarizeResultLike,
    with_days,
)
from app.core.models import Message
from app.core.policy import Decision, Reason, TriggerMemory, TriggerPolicy
from app.core.summarization_config import MIN_PRESERVE_RECENT, SummarizationConfig
from app.core.summary import (
    EventOutcome,
    SummaryDraft,
    SummaryRepository,
    SummaryTrigger,
)

# Triggers about room: they condense just far enough to reach target_ratio.
_FOR_ROOM = frozenset({Reason.THRESHOLD, Reason.EMERGENCY})
# Safety bound on the emergency loop; each pass covers at least one more message.
_MAX_EMERGENCY_PASSES = 8


class Condenser:
    """Runs one step: plans the runs, drafts, reviews and commits them, then keeps the
    memory in budget and the request under the window.

    Attributes:
        config: the summarization settings.
        repo: where summaries are kept.
        summarizer: makes drafts (rule, hybrid or LLM).
        policy: decides when to summarize (asked when a run has no decision).
        measure: the request's figures and the target estimate.
        recorder: commits drafts and records every attempt.
        budget: keeps the memory block in budget.
    """

    def __init__(
        self,
        config: SummarizationConfig,
        repo: SummaryRepository,
        summarizer: MessageSummarizer,
        policy: TriggerPolicy,
        measure: EngineMeasure,
        recorder: EngineRecorder,
        budget: MemoryBudget,
        clock: Clock,
    ) -> None:
        self.config = config
        self.repo = repo
        self.summarizer = summarizer
        self.policy = policy
        self.measure = measure
        self.recorder = recorder
        self.budget = budget
        self._clock = clock

    def run(
        self,
        session_id: str,
        *,
        model: ModelInfo,
        system_prompt: str = "",
        draft: str = "",
        trigger: SummaryTrigger,
        decision: Decision | None = None,
        instructions: str | None = None,
        cancelled: Callable[[], bool] = lambda: False,
        review: Review | None = None,
    ) -> EngineOutcome:
        """Condense, keep the memory in budget, and make the next request fit.

        Callable from a worker thread. `decision` is what the policy said (asked
        again when None, as a manual request when `trigger` is MANUAL); the newest
        `decision.preserve_recent` messages stay. A summary for room (the threshold,
        an emergency) condenses the oldest messages just far enough to bring the next
        request down to `target_ratio`; one the user asked for (or a count trigger)
        condenses everything else.
        """
        live = self.repo.live_messages(session_id)
        active = self.repo.active_summaries(session_id)
        state_before = self.measure.estimate(model, system_prompt, active, live, draft)
        if decision is None:
            decision = self.policy.should_summarize(
                self.measure.policy_input(
                    state_before,
                    live,
                    active,
                    TriggerMemory(),
                    trigger is SummaryTrigger.MANUAL,
                )
            )
        if decision.summarize and decision.reason is Reason.EMERGENCY:
            trigger = SummaryTrigger.EMERGENCY
        step = Step()
        context = RunContext(session_id, model, system_prompt, draft, cancelled)
        reason = decision.reason.value if decision.summarize else "budget"

        if decision.summarize:
            for_room = decision.reason in _FOR_ROOM
            self._condense(
                context,
                step,
                preserve_recent=decision.preserve_recent,
                trigger=trigger,
                reason=reason,
                instructions=instructions,
                fewer_if_needed=False,
                to_target=for_room,
                review=review,
            )
        if step.stopped is None:
            self.budget.enforce(context, step, trigger=trigger, reason=reason)
        passes = 0
        while step.stopped is None and passes < _MAX_EMERGENCY_PASSES:
            now = self.measure.state(
                session_id, model=model, system_prompt=system_prompt, draft=draft
            )
            if now.fits:
                break
            passes += 1
            before = len(step.made)
            self._condense(
                context,
                step,
                preserve_recent=MIN_PRESERVE_RECENT,
                trigger=SummaryTrigger.EMERGENCY,
                reason=Reason.EMERGENCY.value,
                instructions=instructions,
                fewer_if_needed=passes > 1,
                to_target=True,
            )
            if step.stopped is None:
                self.budget.enforce(
                    context, step, trigger=SummaryTrigger.EMERGENCY, reason=Reason.EMERGENCY.value
                )
            if len(step.made) == before and passes > 1:
                break  # nothing more can be condensed: pinned or newest messages fill it
        state_after = self.measure.state(
            session_id, model=model, system_prompt=system_prompt, draft=draft
        )
        return self._outcome(session_id, step, state_before, state_after)

    def _condense(
        self,
        context: RunContext,
        step: Step,
        *,
        preserve_recent: int,
        trigger: SummaryTrigger,
        reason: str,
        instructions: str | None,
        fewer_if_needed: bool,
        to_target: bool = False,
        review: Review | None = None,
    ) -> None:
        live = self.repo.live_messages(context.session_id)
        active = self.repo.active_summaries(context.session_id)
        enough = self.measure.meets_target(context, live, active) if to_target else None
        if to_target:
            now = self.measure.estimate(
                context.model, context.system_prompt, active, live, context.draft
            )
            if now.used <= self.config.target_ratio * now.usable:
                return  # already at the target: condensing now would only add a summary
        planned = plan(
            live, active, preserve_recent, fewer_if_needed=fewer_if_needed, enough=enough
        )
        if review is not None and not planned.empty:
            self._condense_reviewed(
                context,
                step,
                planned,
                trigger=trigger,
                reason=reason,
                instructions=instructions,
                review=review,
            )
            return
        for run in planned.runs:
            if context.cancelled():
                self.recorder.stop(context, step, EventOutcome.ABORTED, reason, "cancelled")
                return
            started = self._clock()
            before = self.measure.now(context)
            result = self.draft_run(context, step, run, trigger=trigger, instructions=instructions)
            self.recorder.commit(context, step, result, before, started, reason)
            if step.stopped is not None:
                return

    def draft_run(
        self,
        context: RunContext,
        step: Step,
        run: Sequence[Message],
        *,
        trigger: SummaryTrigger,
        instructions: str | None,
    ) -> SummarizeResultLike:
        """The summarizer's draft of one run, with the days it covers set."""
        result = self.summarizer.summarize_messages(
            context.session_id, run, trigger=trigger, instructions=instructions
        )
        step.llm_calls += result.llm_calls
        return with_days(
            result,
            date.fromordinal(local_day(run[0].created_at)),
            date.fromordinal(local_day(run[-1].created_at)),
        )

    def _condense_reviewed(
        self,
        context: RunContext,
        step: Step,
        planned: Plan,
        *,
        trigger: SummaryTrigger,
        reason: str,
        instructions: str | None,
        review: Review,
    ) -> None:
        """Draft every run, let `review` see (and maybe edit) the drafts, then commit
        what it returns; None from `review` discards them all."""
        results: list[tuple[SummarizeResultLike, SummaryDraft]] = []
        for run in planned.runs:
            if context.cancelled():
                self.recorder.stop(context, step, EventOutcome.ABORTED, reason, "cancelled")
                return
            started = self._clock()
            result = self.draft_run(context, step, run, trigger=trigger, instructions=instructions)
            if result.draft is None:
                before = self.measure.now(context)
                self.recorder.commit(context, step, result, before, started, reason)
                return
            results.append((result, self.measure.fit(context.model, result.draft)[0]))
        if context.cancelled():
            self.recorder.stop(context, step, EventOutcome.ABORTED, reason, "cancelled")
            return
        answer = review([draft for _result, draft in results])
        if answer is None or context.cancelled():
            detail = "cancelled" if context.cancelled() else "discarded"
            self.recorder.stop(context, step, EventOutcome.ABORTED, reason, detail)
            return
        if len(answer) != len(results):
            raise ValueError(f"review returned {len(answer)} drafts for {len(results)}")
        for (result, draft), reviewed in zip(results, answer, strict=True):
            started = self._clock()
            before = self.measure.now(context)
            # Only the content may change: what a draft covers is the engine's to say.
            edited = draft.model_copy(update={"content": reviewed.content})
            self.recorder.commit(
                context,
                step,
                RuleResult(
                    draft=edited,
                    outcome=result.outcome,
                    error_class=result.error_class,
                    detail=result.detail,
                ),
                before,
                started,
                reason,
            )
            if step.stopped is not None:
                return

    def _outcome(
        self, session_id: str, step: Step, state_before: ContextState, state_after: ContextState
    ) -> EngineOutcome:
        if not step.outcomes:
            outcome = None
            message = "Nothing to summarize yet."
        elif step.stopped is not None:
            outcome = step.stopped
            message = {
                EventOutcome.ABORTED: "Summarizing was stopped; nothing else changed.",
                EventOutcome.FAILED: "The summary could not be made; nothing else changed.",
                EventOutcome.CONFLICT: "The conversation changed meanwhile; it will be "
                "summarized again later.",
            }.get(step.stopped, "Summarizing stopped.")
        elif EventOutcome.FALLBACK in step.outcomes:
            outcome = EventOutcome.FALLBACK
            message = (
                "Older messages were summarized by Cairn itself (Claude could not write "
                "the summary). Nothing was deleted."
            )
        else:
            outcome = EventOutcome.OK
            message = "Older messages were summarized. Nothing was deleted."
        if not state_after.fits:
            message += " The next message still would not fit: shorten it or unpin messages."
        return EngineOutcome(
            outcome=outcome,
            summaries=tuple(step.made),
            state_before=state_before,
            state_after=state_after,
            llm_calls=step.llm_calls,
            message=message,
            compressions=step.compressions,
            trims=step.trims,
            covered_message_ids=frozenset(step.covered),
            active_after=tuple(self.repo.active_summaries(session_id)),
        )
