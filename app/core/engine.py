"""The summarization engine: plan, summarize, commit, keep the memory in budget (DESIGN §3, §5, §6).

`SummarizationEngine` ties the trigger policy, the summarizer and the summary
repository together. The chat service decides on the GUI thread from the state
it already holds (`TriggerPolicy.should_summarize`), and hands `run` to a
worker when a summary is due. Two pieces are public on their own:

- `plan` (pure): which live messages one condensing pass covers, in runs;
- `SummarizationEngine.apply`: a draft fitted to its budget and committed
  atomically (or `SummaryConflictError`, with nothing written).

One `run` is the whole step:

1. Condense the oldest unpinned live messages: for room (the threshold, an
   emergency) just far enough to bring the next request down to
   `target_ratio`; else (the user, a count trigger) all but the newest
   `keep_recent`. The newest `preserve_recent` always stay (a floor; 2 in an
   emergency). A condensed summary covers a contiguous run of unpinned live
   messages, so a pinned message, or an older active summary (after an undo),
   splits the range into runs: each run gets its own summary, oldest first —
   pins stay exactly where they are, and every summary's range stays honest.
   The kept tail starts with a user turn, since the API drops a leading
   assistant turn.
2. Keep the memory block in budget (invariant 4): every summary is trimmed
   by rule to `min(max_summary_tokens, 10 % of the window)` less the block's
   preamble before it is committed, which alone keeps the block under
   `max_summary_tokens × summaries kept`; while the block still exceeds 10 % of
   the window, the oldest summaries are merged — condensed ones into a
   compressed summary by the summarizer while the depth allows it, and beyond
   `max_depth` by rule (narrative shortened, oldest points dropped, entities
   kept longest).
3. Emergency: one pass condenses enough to bring the request down to the
   target (under the reset level); should the summaries come out longer than
   estimated and it still not fit (invariant 3), condense again, down to the
   newest 2 messages.

With a `review` (the preview a user checks), step 1 first drafts all its runs
and shows them; only what the review returns is committed, and a discard
commits nothing.

Every attempt is recorded as a `SummaryEvent`. Nothing here deletes a
message; a failed or conflicting step changes nothing (DESIGN §6).
"""

from __future__ import annotations

import itertools
import logging
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Protocol

from app.core.catalog import ModelInfo
from app.core.context import MEMORY_PREAMBLE, ContextBuilder, ContextState
from app.core.conversation import local_day
from app.core.errors import SummaryConflictError
from app.core.models import Message, Role
from app.core.policy import Decision, PolicyInput, Reason, TriggerMemory, TriggerPolicy
from app.core.summarization_config import MIN_PRESERVE_RECENT, SummarizationConfig
from app.core.summary import (
    EventKind,
    EventOutcome,
    Summary,
    SummaryDraft,
    SummaryEvent,
    SummaryMode,
    SummaryRepository,
    SummaryTier,
    SummaryTrigger,
    UndoResult,
    fit,
    merge,
    render_summary_text,
    section_label,
)

log = logging.getLogger(__name__)

# The memory block may take at most this share of the window (DESIGN §3, invariant 4).
MEMORY_WINDOW_SHARE = 0.10
# The builder counts one token for the blank line before each memory section.
_SECTION_SEPARATOR_TOKENS = 1
# Triggers about room: they condense just far enough to reach target_ratio.
_FOR_ROOM = frozenset({Reason.THRESHOLD, Reason.EMERGENCY})
# Safety bound on the emergency loop; each pass covers at least one more message.
_MAX_EMERGENCY_PASSES = 8

Clock = Callable[[], float]
# Shown a condensing step's drafts before they are committed: returns those to commit
# (their content maybe edited), or None to discard them.
Review = Callable[[Sequence[SummaryDraft]], Sequence[SummaryDraft] | None]


# --- what the engine needs from its collaborators ----------------------------------


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


# --- results ---------------------------------------------------------------------


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
class _Step:
    """What a run has done so far."""

    made: list[Summary] = field(default_factory=list)
    covered: set[int] = field(default_factory=set)
    outcomes: list[EventOutcome] = field(default_factory=list)
    llm_calls: int = 0
    compressions: int = 0
    trims: int = 0
    stopped: EventOutcome | None = None  # a step that failed: nothing more is tried
    detail: str = ""


_STOPPING = frozenset(
    {EventOutcome.ABORTED, EventOutcome.FAILED, EventOutcome.CONFLICT, EventOutcome.PARTIAL}
)


# --- pure helpers ----------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    """What one condensing pass covers: contiguous runs of live messages, oldest first.

    Attributes:
        runs: each becomes one condensed summary.
        kept: the live messages that stay verbatim (the newest, and every pinned one).
    """

    runs: tuple[tuple[Message, ...], ...]
    kept: int

    @property
    def covered(self) -> int:
        """How many messages the pass condenses."""
        return sum(len(run) for run in self.runs)

    @property
    def empty(self) -> bool:
        return not self.runs


def plan(
    live: Sequence[Message],
    active: Sequence[Summary],
    preserve_recent: int,
    *,
    fewer_if_needed: bool = False,
    enough: Callable[[Sequence[Message]], bool] | None = None,
) -> Plan:
    """The runs of live messages one condensing pass covers, oldest first (pure).

    The pinned messages are never covered, and the newest `preserve_recent`
    unpinned ones always stay (a floor). With `enough` — told the oldest unpinned
    messages a pass would cover, True when that brings the next request down to
    its target — the pass covers the fewest that are enough (assumed to be
    monotone: covering more never makes the request larger), else as many as
    the floor allows. The kept tail starts with a user turn, since the API drops
    a leading assistant turn: a cut moves back to one, or, with
    `fewer_if_needed` (an emergency), may go past the floor to one, keeping
    fewer. Runs break at a pinned message and at an active summary's range, so
    each run is contiguous.
    """
    candidates = [m for m in live if not m.pinned]
    floor = max(0, preserve_recent)
    most = len(candidates) - floor
    if most <= 0 and not fewer_if_needed:
        return Plan(runs=(), kept=len(live))
    limit = len(candidates) - 1 if fewer_if_needed else most

    def starts_a_turn(cut: int) -> bool:
        return cut == len(candidates) or candidates[cut].role is Role.USER

    cuts = [cut for cut in range(1, limit + 1) if starts_a_turn(cut)]
    within = [cut for cut in cuts if cut <= most]
    beyond = [cut for cut in cuts if cut >= most]
    fallback: int | None
    if fewer_if_needed:
        # No user turn to start on: all but the newest go, the request must fit.
        fallback = beyond[0] if beyond else max(0, len(candidates) - 1)
    else:
        fallback = within[-1] if within else None
    cut = fallback
    if enough is not None and cuts:
        # The fewest covered that are enough: the smallest cut whose request meets the target.
        low, high = 0, len(cuts)
        while low < high:
            middle = (low + high) // 2
            if enough(candidates[: cuts[middle]]):
                high = middle
            else:
                low = middle + 1
        if low < len(cuts):
            cut = cuts[low]
    if not cut:
        return Plan(runs=(), kept=len(live))
    covered = candidates[:cut]
    barriers = sorted(
        [m.seq for m in live if m.pinned] + [s.first_seq for s in active],
    )
    runs: list[list[Message]] = [[covered[0]]]
    for before, after in itertools.pairwise(covered):
        if any(before.seq < seq < after.seq for seq in barriers):
            runs.append([after])
        else:
            runs[-1].append(after)
    return Plan(runs=tuple(tuple(run) for run in runs), kept=len(live) - len(covered))


# --- the engine ------------------------------------------------------------------


class SummarizationEngine:
    """Plans, makes and commits summaries for one or more conversations (thread-safe
    as long as its repository is used from one thread at a time).

    Attributes:
        config: the summarization settings.
        repo: where summaries are kept.
        summarizer: makes drafts (rule, hybrid or LLM).
        builder: measures the next request the way it will be sent.
        policy: decides when to summarize.
    """

    def __init__(
        self,
        config: SummarizationConfig,
        repo: SummaryRepository,
        summarizer: MessageSummarizer,
        builder: ContextBuilder,
        *,
        clock: Clock = time.perf_counter,
    ) -> None:
        self.config = config
        self.repo = repo
        self.summarizer = summarizer
        self.builder = builder
        self.policy = TriggerPolicy(config)
        self._clock = clock

    # --- reading the state

    def state(
        self, session_id: str, *, model: ModelInfo, system_prompt: str = "", draft: str = ""
    ) -> ContextState:
        """The next request's figures: system + memory + live tail + draft."""
        live = self.repo.live_messages(session_id)
        active = self.repo.active_summaries(session_id)
        return self._state(model, system_prompt, active, live, draft)

    def decide(
        self,
        session_id: str,
        *,
        model: ModelInfo,
        system_prompt: str = "",
        draft: str = "",
        memory: TriggerMemory,
        manual: bool = False,
    ) -> Decision:
        """Whether a summary is due now (the policy on the live state). Cheap: O(live tail)."""
        live = self.repo.live_messages(session_id)
        active = self.repo.active_summaries(session_id)
        state = self._state(model, system_prompt, active, live, draft)
        return self.policy.should_summarize(self._policy_input(state, live, active, memory, manual))

    # --- the step

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
        keep_recent: int | None = None,
        cancelled: Callable[[], bool] = lambda: False,
        review: Review | None = None,
    ) -> EngineOutcome:
        """Condense, keep the memory in budget, and make the next request fit.

        Callable from a worker thread. `decision` is what `decide` said (asked
        again when None, as a manual request when `trigger` is MANUAL).
        A summary for room (the threshold, an emergency) condenses the oldest
        messages just far enough to bring the next request down to
        `target_ratio`; one the user asked for (or a count trigger) condenses
        everything but the newest `keep_recent` (at least `preserve_recent`).
        """
        live = self.repo.live_messages(session_id)
        active = self.repo.active_summaries(session_id)
        state_before = self._state(model, system_prompt, active, live, draft)
        if decision is None:
            decision = self.policy.should_summarize(
                self._policy_input(
                    state_before,
                    live,
                    active,
                    TriggerMemory(),
                    trigger is SummaryTrigger.MANUAL,
                )
            )
        if decision.summarize and decision.reason is Reason.EMERGENCY:
            trigger = SummaryTrigger.EMERGENCY
        step = _Step()
        context = _RunContext(session_id, model, system_prompt, draft, cancelled)
        reason = decision.reason.value if decision.summarize else "budget"

        if decision.summarize:
            floor = decision.preserve_recent
            for_room = decision.reason in _FOR_ROOM
            if decision.reason is Reason.EMERGENCY:
                # However many of the newest messages the target lets stay: one pass
                # brings the request back under the reset level, not two messages at a time.
                floor = MIN_PRESERVE_RECENT
            elif not for_room and keep_recent is not None:
                floor = max(floor, keep_recent)
            self._condense(
                context,
                step,
                preserve_recent=floor,
                trigger=trigger,
                reason=reason,
                instructions=instructions,
                fewer_if_needed=False,
                to_target=for_room,
                review=review,
            )
        if step.stopped is None:
            self._enforce_memory_budget(context, step, trigger=trigger, reason=reason)
        passes = 0
        while step.stopped is None and passes < _MAX_EMERGENCY_PASSES:
            now = self.state(session_id, model=model, system_prompt=system_prompt, draft=draft)
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
                self._enforce_memory_budget(
                    context, step, trigger=SummaryTrigger.EMERGENCY, reason=Reason.EMERGENCY.value
                )
            if len(step.made) == before and passes > 1:
                break  # nothing more can be condensed: pinned or newest messages fill it
        state_after = self.state(session_id, model=model, system_prompt=system_prompt, draft=draft)
        return self._outcome(session_id, step, state_before, state_after)

    # --- rewriting a basic summary

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
        before = self.state(session_id, model=model, system_prompt=system_prompt)
        step = _Step()
        context = _RunContext(session_id, model, system_prompt, "", cancelled)
        target = next(
            (s for s in self.repo.active_summaries(session_id) if s.id == summary_id), None
        )
        originals = [] if target is None else self._covered_messages(target)
        if target is None or target.tier is not SummaryTier.CONDENSED or not originals:
            self._stop(context, step, EventOutcome.CONFLICT, "retry", "no longer active")
            return self._retry_outcome(session_id, step, before, before)
        if cancelled():
            self._stop(context, step, EventOutcome.ABORTED, "retry", "cancelled")
            return self._retry_outcome(session_id, step, before, before)
        result = self._draft_run(
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
            fitted, trimmed = self._fit(model, draft)
            try:
                summary = self.repo.replace_summary(summary_id, fitted)
                detail = f"rewrites {summary_id}" + (
                    "; trimmed to fit its budget" if trimmed else ""
                )
            except SummaryConflictError as error:
                outcome, detail = EventOutcome.CONFLICT, str(error)
                log.info("A rewritten summary was not saved: the conversation changed (%s)", error)
        after = self.state(session_id, model=model, system_prompt=system_prompt)
        self._record(
            session_id,
            EventKind.SUMMARIZE,
            outcome,
            before=before,
            after=after,
            started=started,
            summary_id=summary.id if summary is not None else summary_id,
            reason="retry",
            error_class=result.error_class,
            detail=detail,
        )
        step.outcomes.append(outcome)
        if summary is not None:
            step.made.append(summary)
        else:
            step.stopped, step.detail = outcome, detail or ""
        return self._retry_outcome(session_id, step, before, after)

    def _retry_outcome(
        self, session_id: str, step: _Step, before: ContextState, after: ContextState
    ) -> EngineOutcome:
        outcome = step.outcomes[-1]
        if step.made:
            message = "Summary rewritten by Claude."
        elif outcome is EventOutcome.CONFLICT:
            message = "This summary changed meanwhile; nothing was rewritten."
        elif outcome is EventOutcome.ABORTED and step.detail == "cancelled":
            message = "Rewriting the summary was stopped; the basic summary stays."
        else:
            message = "Claude still can't be reached; the basic summary stays."
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

    # --- undo

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
        before = self._state(model, system_prompt, active, live, "")
        target = next((s for s in active if s.id == summary_id), None)
        budget: int | None = None
        if target is not None:
            budget = self._undo_budget(model, system_prompt, target, active, live)
        result = self.repo.undo_summary(summary_id, budget_tokens=budget)
        after = self.state(session_id, model=model, system_prompt=system_prompt)
        restored = len(result.restored_message_ids) + len(result.restored_summary_ids)
        self._record(
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

    def _record(
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

    # --- inside: measuring

    def _state(
        self,
        model: ModelInfo,
        system_prompt: str,
        active: Sequence[Summary],
        live: Sequence[Message],
        draft: str,
    ) -> ContextState:
        return self.builder.estimate_state(
            model=model,
            system_prompt=system_prompt,
            summaries=active,
            tail=live,
            draft=draft,
            trigger_ratio=self.config.trigger_ratio,
        )

    def _policy_input(
        self,
        state: ContextState,
        live: Sequence[Message],
        active: Sequence[Summary],
        memory: TriggerMemory,
        manual: bool,
    ) -> PolicyInput:
        unpinned = [m for m in live if not m.pinned]
        return PolicyInput(
            state=state,
            live_messages=len(unpinned),
            memory=memory,
            summary_depth=max((s.depth for s in active), default=0),
            manual=manual,
            tail_tokens=tuple(self._message_tokens(m) for m in unpinned),
        )

    def _message_tokens(self, message: Message) -> int:
        if message.token_estimate is not None:
            return message.token_estimate
        return self.builder.counter.count(message.content)

    def _ratio(self, model: ModelInfo) -> float:
        calibrations = self.builder.calibrations
        if calibrations is None:
            return 1.0
        return max(1e-6, calibrations.for_model(model.id).ratio)

    def memory_cap(self, model: ModelInfo, kept: int) -> int:
        """Invariant 4's bound on the memory block for `kept` summaries."""
        return min(
            self.config.max_summary_tokens * kept,
            math.floor(model.max_input_tokens * MEMORY_WINDOW_SHARE),
        )

    def memory_tokens(self, model: ModelInfo, active: Sequence[Summary]) -> int:
        """The memory block's tokens as the builder counts them (calibrated)."""
        if not active:
            return 0
        state = self.builder.estimate_state(model=model, summaries=active)
        return state.breakdown.memory

    def _preamble(self) -> int:
        return self.builder.counter.count(MEMORY_PREAMBLE)

    def _section_overhead(self, first_seq: int, last_seq: int) -> int:
        label = section_label(first_seq, last_seq)
        return _SECTION_SEPARATOR_TOKENS + self.builder.counter.count(f"{label}\n")

    def _days_line(self) -> int:
        """The most a summary's "When:" line takes (the longest a day range is written)."""
        return self.builder.counter.count("When: 30 September 2026 – 30 December 2027\n")

    def _text_cap(self, model: ModelInfo, first_seq: int, last_seq: int) -> int:
        """The most tokens one summary's text may take (raw, before calibration).

        A section (label + text) of at most min(max_summary_tokens, 10 % window)
        less the preamble keeps the block under max_summary_tokens × kept, and a
        single summary under 10 % of the window, whatever else is active.
        """
        cap = self.memory_cap(model, 1)
        raw_cap = math.floor(cap / self._ratio(model)) - 1
        overhead = self._preamble() + self._section_overhead(first_seq, last_seq)
        return max(1, raw_cap - overhead)

    def _fit(
        self, model: ModelInfo, draft: SummaryDraft, text_cap: int | None = None
    ) -> tuple[SummaryDraft, bool]:
        """The draft trimmed by rule to its cap, with its token count made exact."""
        cap = self._text_cap(model, draft.first_seq, draft.last_seq)
        if text_cap is not None:
            cap = min(cap, text_cap)
        fitted = fit(draft.content, cap, self.builder.counter.count)
        tokens = self.builder.counter.count(render_summary_text(fitted.content))
        update = {"content": fitted.content, "summary_tokens": tokens}
        return draft.model_copy(update=update), fitted.trimmed

    def apply(
        self, draft: SummaryDraft, *, model: ModelInfo, text_cap: int | None = None
    ) -> tuple[Summary, bool]:
        """Fit `draft` to its budget (invariant 4) and commit it atomically.

        Returns the committed summary and whether it had to be trimmed. Raises
        `SummaryConflictError`, with nothing written, when what it covers changed.
        """
        fitted, trimmed = self._fit(model, draft, text_cap)
        return self.repo.commit_summary(fitted), trimmed

    # --- inside: condensing

    def _meets_target(
        self, context: _RunContext, live: Sequence[Message], active: Sequence[Summary]
    ) -> Callable[[Sequence[Message]], bool]:
        """Whether covering the given oldest messages brings the next request down to
        `target_ratio` of the usable window, with the new summary counted at its target
        length (its budget at most), as the builder will count it."""
        model = context.model

        def enough(covered: Sequence[Message]) -> bool:
            gone = {m.id for m in covered}
            tail = [m for m in live if m.id not in gone]
            state = self._state(model, context.system_prompt, active, tail, context.draft)
            source = sum(self._message_tokens(m) for m in covered)
            first, last = covered[0].seq, covered[-1].seq
            text = min(
                self.config.target_summary_tokens(source), self._text_cap(model, first, last)
            )
            section = self._section_overhead(first, last) + text + self._days_line()
            if not active:
                section += self._preamble()
            added = math.ceil(section * self._ratio(model))
            # Invariant 4 holds after the run: the block ends no larger than its cap.
            memory = min(state.breakdown.memory + added, self.memory_cap(model, len(active) + 1))
            used = state.used - state.breakdown.memory + memory
            return used <= self.config.target_ratio * state.usable

        return enough

    def _condense(
        self,
        context: _RunContext,
        step: _Step,
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
        enough = self._meets_target(context, live, active) if to_target else None
        if to_target:
            now = self._state(context.model, context.system_prompt, active, live, context.draft)
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
                self._stop(context, step, EventOutcome.ABORTED, reason, "cancelled")
                return
            started = self._clock()
            before = self.state(
                context.session_id,
                model=context.model,
                system_prompt=context.system_prompt,
                draft=context.draft,
            )
            result = self._draft_run(context, step, run, trigger=trigger, instructions=instructions)
            self._commit(context, step, result, before, started, reason)
            if step.stopped is not None:
                return

    def _draft_run(
        self,
        context: _RunContext,
        step: _Step,
        run: Sequence[Message],
        *,
        trigger: SummaryTrigger,
        instructions: str | None,
    ) -> SummarizeResultLike:
        result = self.summarizer.summarize_messages(
            context.session_id, run, trigger=trigger, instructions=instructions
        )
        step.llm_calls += result.llm_calls
        return _with_days(
            result,
            date.fromordinal(local_day(run[0].created_at)),
            date.fromordinal(local_day(run[-1].created_at)),
        )

    def _condense_reviewed(
        self,
        context: _RunContext,
        step: _Step,
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
                self._stop(context, step, EventOutcome.ABORTED, reason, "cancelled")
                return
            started = self._clock()
            result = self._draft_run(context, step, run, trigger=trigger, instructions=instructions)
            if result.draft is None:
                before = self.state(
                    context.session_id,
                    model=context.model,
                    system_prompt=context.system_prompt,
                    draft=context.draft,
                )
                self._commit(context, step, result, before, started, reason)
                return
            results.append((result, self._fit(context.model, result.draft)[0]))
        if context.cancelled():
            self._stop(context, step, EventOutcome.ABORTED, reason, "cancelled")
            return
        answer = review([draft for _result, draft in results])
        if answer is None or context.cancelled():
            detail = "cancelled" if context.cancelled() else "discarded"
            self._stop(context, step, EventOutcome.ABORTED, reason, detail)
            return
        if len(answer) != len(results):
            raise ValueError(f"review returned {len(answer)} drafts for {len(results)}")
        for (result, draft), reviewed in zip(results, answer, strict=True):
            started = self._clock()
            before = self.state(
                context.session_id,
                model=context.model,
                system_prompt=context.system_prompt,
                draft=context.draft,
            )
            # Only the content may change: what a draft covers is the engine's to say.
            edited = draft.model_copy(update={"content": reviewed.content})
            self._commit(
                context,
                step,
                _RuleResult(
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

    def _commit(
        self,
        context: _RunContext,
        step: _Step,
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
        after = self.state(
            context.session_id,
            model=context.model,
            system_prompt=context.system_prompt,
            draft=context.draft,
        )
        self._record(
            context.session_id,
            EventKind.SUMMARIZE,
            outcome,
            before=before,
            after=after,
            started=started,
            summary_id=summary.id if summary is not None else None,
            reason=reason,
            error_class=result.error_class,
            detail=detail,
        )
        step.outcomes.append(outcome)
        if summary is not None:
            step.made.append(summary)
        else:
            step.stopped = outcome
            step.detail = detail or ""
        return summary

    def _stop(
        self, context: _RunContext, step: _Step, outcome: EventOutcome, reason: str, detail: str
    ) -> None:
        state = self.state(
            context.session_id,
            model=context.model,
            system_prompt=context.system_prompt,
            draft=context.draft,
        )
        self._record(
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

    # --- inside: the memory budget

    def _enforce_memory_budget(
        self, context: _RunContext, step: _Step, *, trigger: SummaryTrigger, reason: str
    ) -> None:
        """Merge the oldest summaries until invariant 4 holds.

        Within `max_depth` the summarizer merges them into a compressed summary.
        Beyond it, the merge is made by rule: a member already at `max_depth` is
        first unwrapped (undone back to the summaries it covered), and the rule
        merge of those, trimmed to fit, takes its place one level up — so the
        oldest content is trimmed, not summarized once more, and no chain is
        ever deeper than `max_depth`.
        """
        model = context.model
        max_depth = self.config.max_depth
        # Each pass leaves at least one summary fewer (a lone one is trimmed once).
        for _ in range(1_000):
            active = self.repo.active_summaries(context.session_id)
            if not active or self.memory_tokens(model, active) <= self.memory_cap(
                model, len(active)
            ):
                return
            if context.cancelled():
                self._stop(context, step, EventOutcome.ABORTED, reason, "cancelled")
                return
            group = self._compression_group(context.session_id, active)
            started = self._clock()
            before = self.state(
                context.session_id,
                model=model,
                system_prompt=context.system_prompt,
                draft=context.draft,
            )
            depth = max(s.depth for s in group) + 1
            text_cap: int | None = None
            result: SummarizeResultLike
            if len(group) >= 2 and depth <= max_depth:
                result = self.summarizer.compress_summaries(
                    context.session_id, group, trigger=trigger
                )
                step.llm_calls += result.llm_calls
                days = merge([s.content for s in group])
                if days.first_day is not None and days.last_day is not None:
                    result = _with_days(result, days.first_day, days.last_day)
                if result.draft is None and result.outcome is not EventOutcome.ABORTED:
                    # The summarizer could not merge them: merge by rule, so the
                    # budget still holds (the originals stay archived either way).
                    result = self._rule_merge(context.session_id, group, trigger, depth)
                    step.trims += 1
            else:
                if len(group) == 1:
                    # Pins keep every summary apart: trim the largest by what is over.
                    excess = self.memory_tokens(model, active) - self.memory_cap(model, len(active))
                    text_cap = max(
                        1, group[0].summary_tokens - math.ceil(excess / self._ratio(model))
                    )
                group = self._unwrapped(context, group, reason)
                depth = max(s.depth for s in group) + 1
                if depth > max_depth:
                    return  # max_depth 1 and a lone condensed summary: _fit already capped it
                result = self._rule_merge(context.session_id, group, trigger, depth)
                step.trims += 1
            if (
                self._commit(context, step, result, before, started, reason, text_cap=text_cap)
                is None
            ):
                return
            step.compressions += 1
            if len(group) == 1:
                return

    def _unwrapped(
        self, context: _RunContext, group: Sequence[Summary], reason: str
    ) -> list[Summary]:
        """`group` with every member at max_depth undone back into the summaries it covered."""
        unwrapped: list[Summary] = []
        for summary in group:
            if summary.tier is not SummaryTier.COMPRESSED or summary.depth < self.config.max_depth:
                unwrapped.append(summary)
                continue
            result = self.repo.undo_summary(summary.id, budget_tokens=None)
            restored = set(result.restored_summary_ids)
            children = [
                s for s in self.repo.active_summaries(context.session_id) if s.id in restored
            ]
            self.repo.record_event(
                SummaryEvent(
                    session_id=context.session_id,
                    kind=EventKind.UNDO,
                    outcome=EventOutcome.OK,
                    summary_id=summary.id,
                    reason=reason,
                    detail=f"unwrapped into {len(children)} summaries to trim by rule "
                    f"(max depth {self.config.max_depth})",
                )
            )
            unwrapped.extend(children)
        return sorted(unwrapped, key=lambda s: s.first_seq)

    def _compression_group(self, session_id: str, active: Sequence[Summary]) -> list[Summary]:
        """The oldest summaries to merge: adjacent (no unpinned live message between).

        Condensed summaries first (the oldest half, at least two), so recent
        detail stays longest; then the two oldest summaries; a lone summary is
        trimmed on its own.
        """
        # A pinned message may sit inside a compressed range (the store allows it):
        # otherwise many pins would keep the memory block from ever shrinking.
        live = [m for m in self.repo.live_messages(session_id) if not m.pinned]
        ordered = sorted(active, key=lambda s: s.first_seq)

        def adjacent(before: Summary, after: Summary) -> bool:
            return not any(before.last_seq < m.seq < after.first_seq for m in live)

        def oldest_adjacent(candidates: list[Summary], wanted: int) -> list[Summary]:
            for start in range(len(candidates) - 1):
                group = [candidates[start]]
                for summary in candidates[start + 1 :]:
                    if len(group) == wanted or not adjacent(group[-1], summary):
                        break
                    if ordered.index(summary) != ordered.index(group[-1]) + 1:
                        break
                    group.append(summary)
                if len(group) >= 2:
                    return group
            return []

        condensed = [s for s in ordered if s.tier is SummaryTier.CONDENSED]
        if len(condensed) >= 2:
            group = oldest_adjacent(condensed, max(2, len(condensed) // 2))
            if group:
                return group
        group = oldest_adjacent(ordered, 2)
        if group:
            return group
        # Nothing can be merged: trim the largest summary on its own.
        return [max(ordered, key=lambda s: s.summary_tokens)]

    def _rule_merge(
        self, session_id: str, group: Sequence[Summary], trigger: SummaryTrigger, depth: int
    ) -> _RuleResult:
        """A compressed draft made by rule from `group` (no LLM): merged, then trimmed by `_fit`."""
        content = merge([s.content for s in group])
        draft = SummaryDraft(
            session_id=session_id,
            tier=SummaryTier.COMPRESSED,
            first_seq=min(s.first_seq for s in group),
            last_seq=max(s.last_seq for s in group),
            summary_ids=[s.id for s in group],
            content=content,
            source_tokens=sum(s.summary_tokens for s in group),
            summary_tokens=self.builder.counter.count(render_summary_text(content)),
            mode=SummaryMode.RULE,
            model=None,
            trigger=trigger,
            depth=depth,
        )
        return _RuleResult(draft=draft, detail=f"merged {len(group)} summaries by rule")

    # --- inside: undo

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
            after_all = self._state(model, system_prompt, others, tail, "")
            if after_all.fits:
                return None
            # Measured with the builder, not added up: restoring a user turn in front
            # of the tail can make a leading assistant turn count again.
            for count in range(len(covered) - 1, 0, -1):
                back = covered[-count:]
                if back[0].role is not Role.USER:
                    continue  # the API would drop a restored block that starts mid-turn
                tail = sorted([*live, *back], key=lambda m: m.seq)
                if self._state(model, system_prompt, active, tail, "").fits:
                    return sum(self._message_tokens(m) for m in back)
            return 0
        children = self._children(target)
        newest_first = sorted(children, key=lambda s: s.last_seq, reverse=True)
        for count in range(len(newest_first), 0, -1):
            returning = newest_first[:count]
            trial = [*others, *returning] if count == len(newest_first) else [*active, *returning]
            state = self._state(model, system_prompt, trial, live, "")
            memory = self.memory_tokens(model, trial)
            if state.fits and memory <= self.memory_cap(model, len(trial)):
                if count == len(newest_first):
                    return None
                return sum(s.summary_tokens for s in returning)
        return 0

    def _covered_messages(self, target: Summary) -> list[Message]:
        return [m for m in self.repo.covered_messages(target.id) if m.summary_id == target.id]

    def _children(self, target: Summary) -> list[Summary]:
        every = self.repo.summaries(target.session_id, include_inactive=True)
        return [s for s in every if s.parent_id == target.id]

    # --- inside: the result

    def _outcome(
        self, session_id: str, step: _Step, state_before: ContextState, state_after: ContextState
    ) -> EngineOutcome:
        if not step.outcomes:
            outcome = None
            message = "Nothing to condense yet."
        elif step.stopped is not None:
            outcome = step.stopped
            message = {
                EventOutcome.ABORTED: "Summarizing was stopped; nothing else changed.",
                EventOutcome.FAILED: "The summary could not be made; nothing else changed.",
                EventOutcome.CONFLICT: "The conversation changed meanwhile; it will be "
                "condensed again later.",
            }.get(step.stopped, "Summarizing stopped.")
        elif EventOutcome.FALLBACK in step.outcomes:
            outcome = EventOutcome.FALLBACK
            message = "Older messages were condensed into a basic summary. Nothing was deleted."
        else:
            outcome = EventOutcome.OK
            message = "Older messages were condensed. Nothing was deleted."
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


@dataclass(frozen=True)
class _RunContext:
    session_id: str
    model: ModelInfo
    system_prompt: str
    draft: str
    cancelled: Callable[[], bool]


def _with_days(result: SummarizeResultLike, first: date, last: date) -> SummarizeResultLike:
    """`result` with the days its summary covers set in the content (the memory block
    shows them, so Claude knows when things were said)."""
    if result.draft is None:
        return result
    content = result.draft.content.model_copy(update={"first_day": first, "last_day": last})
    return _RuleResult(
        draft=result.draft.model_copy(update={"content": content}),
        outcome=result.outcome,
        error_class=result.error_class,
        llm_calls=0,  # already counted
        detail=result.detail,
    )


@dataclass(frozen=True)
class _RuleResult:
    """A rule-made draft, shaped like the summarizer's result."""

    draft: SummaryDraft | None
    outcome: EventOutcome = EventOutcome.OK
    error_class: str | None = None
    llm_calls: int = 0
    detail: str | None = None
