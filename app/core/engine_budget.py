"""Keeping the memory block in budget (invariant 4): merging the oldest summaries, by
the summarizer within `max_depth` and by rule beyond it (DESIGN §3, §5)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from app.core.context import ContextBuilder
from app.core.engine_measure import EngineMeasure
from app.core.engine_record import EngineRecorder
from app.core.engine_types import (
    Clock,
    MessageSummarizer,
    RuleResult,
    RunContext,
    Step,
    SummarizeResultLike,
    with_days,
)
from app.core.summarization_config import SummarizationConfig
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
    merge,
    render_summary_text,
)


class MemoryBudget:
    """Merges or trims the oldest active summaries until the memory block fits its cap.

    Attributes:
        config: the summarization settings (`max_depth`, `max_summary_tokens`).
        repo: where summaries are kept.
        summarizer: merges summaries into a compressed one.
        builder: counts a rule merge's tokens.
        measure: the memory block's size and cap.
        recorder: commits merges and records them.
    """

    def __init__(
        self,
        config: SummarizationConfig,
        repo: SummaryRepository,
        summarizer: MessageSummarizer,
        builder: ContextBuilder,
        measure: EngineMeasure,
        recorder: EngineRecorder,
        clock: Clock,
    ) -> None:
        self.config = config
        self.repo = repo
        self.summarizer = summarizer
        self.builder = builder
        self.measure = measure
        self.recorder = recorder
        self._clock = clock

    def enforce(
        self, context: RunContext, step: Step, *, trigger: SummaryTrigger, reason: str
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
            if not active or self.measure.memory_tokens(model, active) <= self.measure.memory_cap(
                model, len(active)
            ):
                return
            if context.cancelled():
                self.recorder.stop(context, step, EventOutcome.ABORTED, reason, "cancelled")
                return
            group = self._compression_group(context.session_id, active)
            started = self._clock()
            before = self.measure.state(
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
                    result = with_days(result, days.first_day, days.last_day)
                if result.draft is None and result.outcome is not EventOutcome.ABORTED:
                    # The summarizer could not merge them: merge by rule, so the
                    # budget still holds (the originals stay archived either way).
                    result = self._rule_merge(context.session_id, group, trigger, depth)
                    step.trims += 1
            else:
                if len(group) == 1:
                    # Pins keep every summary apart: trim the largest by what is over.
                    excess = self.measure.memory_tokens(model, active) - self.measure.memory_cap(
                        model, len(active)
                    )
                    text_cap = max(
                        1, group[0].summary_tokens - math.ceil(excess / self.measure.ratio(model))
                    )
                group = self._unwrapped(context, group, reason)
                depth = max(s.depth for s in group) + 1
                if depth > max_depth:
                    return  # max_depth 1 and a lone condensed summary: _fit already capped it
                result = self._rule_merge(context.session_id, group, trigger, depth)
                step.trims += 1
            if (
                self.recorder.commit(
                    context, step, result, before, started, reason, text_cap=text_cap
                )
                is None
            ):
                return
            step.compressions += 1
            if len(group) == 1:
                return

    def _unwrapped(
        self, context: RunContext, group: Sequence[Summary], reason: str
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
    ) -> RuleResult:
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
        return RuleResult(draft=draft, detail=f"merged {len(group)} summaries by rule")
