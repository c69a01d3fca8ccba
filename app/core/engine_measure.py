"""Measuring for the summarization engine: the next request's figures, the memory
block's caps (invariant 4), a summary's text cap, and fitting a draft to it (DESIGN §3)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from app.core.catalog import ModelInfo
from app.core.context import MEMORY_PREAMBLE, ContextBuilder, ContextState, RequestInputs
from app.core.engine_types import (
    RunContext,
)
from app.core.models import Message
from app.core.policy import PolicyInput, TriggerMemory, whole_conversation_tokens
from app.core.summarization_config import SummarizationConfig
from app.core.summary import (
    Summary,
    SummaryDraft,
    SummaryRepository,
    SummaryTier,
    fit,
    render_summary_text,
    section_label,
)

# The memory block may take at most this share of the window (DESIGN §3, invariant 4).
MEMORY_WINDOW_SHARE = 0.10
# The builder counts one token for the blank line before each memory section.
_SECTION_SEPARATOR_TOKENS = 1


class EngineMeasure:
    """Measures requests, memory blocks and summaries the way the builder will count them.

    Attributes:
        config: the summarization settings.
        repo: where the live messages and active summaries are read from.
        builder: measures the next request the way it will be sent.
    """

    def __init__(
        self, config: SummarizationConfig, repo: SummaryRepository, builder: ContextBuilder
    ) -> None:
        self.config = config
        self.repo = repo
        self.builder = builder

    def state(
        self, session_id: str, *, model: ModelInfo, system_prompt: str = "", draft: str = ""
    ) -> ContextState:
        """The next request's figures: system + memory + live tail + draft."""
        live = self.repo.live_messages(session_id)
        active = self.repo.active_summaries(session_id)
        return self.estimate(model, system_prompt, active, live, draft)

    def now(self, context: RunContext) -> ContextState:
        """The figures of the request a run is making room for, as it stands now."""
        return self.state(
            context.session_id,
            model=context.model,
            system_prompt=context.system_prompt,
            draft=context.draft,
        )

    def estimate(
        self,
        model: ModelInfo,
        system_prompt: str,
        active: Sequence[Summary],
        live: Sequence[Message],
        draft: str,
    ) -> ContextState:
        """The figures of a request with these summaries and live messages (no reading)."""
        inputs = RequestInputs(
            model=model,
            system_prompt=system_prompt,
            summaries=active,
            tail=live,
            draft=draft,
            trigger_ratio=self.config.trigger_ratio,
        )
        return self.builder.estimate_state(inputs)

    def policy_input(
        self,
        state: ContextState,
        live: Sequence[Message],
        active: Sequence[Summary],
        memory: TriggerMemory,
        manual: bool,
        keep_recent: int | None = None,
    ) -> PolicyInput:
        unpinned = [m for m in live if not m.pinned]
        # The archived originals' tokens, known when every active summary covers messages.
        archived: int | None = None
        if all(s.tier is SummaryTier.CONDENSED for s in active):
            archived = sum(s.source_tokens for s in active)
        return PolicyInput(
            state=state,
            live_messages=len(unpinned),
            memory=memory,
            summary_depth=max((s.depth for s in active), default=0),
            manual=manual,
            keep_recent=keep_recent,
            whole_tokens=whole_conversation_tokens(state, archived),
        )

    def message_tokens(self, message: Message) -> int:
        if message.token_estimate is not None:
            return message.token_estimate
        return self.builder.counter.count(message.content)

    def ratio(self, model: ModelInfo) -> float:
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
        state = self.builder.estimate_state(RequestInputs(model=model, summaries=active))
        return state.breakdown.memory

    def preamble(self) -> int:
        return self.builder.counter.count(MEMORY_PREAMBLE)

    def section_overhead(self, first_seq: int, last_seq: int) -> int:
        label = section_label(first_seq, last_seq)
        return _SECTION_SEPARATOR_TOKENS + self.builder.counter.count(f"{label}\n")

    def days_line(self) -> int:
        """The most a summary's "When:" line takes (the longest a day range is written)."""
        return self.builder.counter.count("When: 30 September 2026 – 30 December 2027\n")

    def text_cap(self, model: ModelInfo, first_seq: int, last_seq: int) -> int:
        """The most tokens one summary's text may take (raw, before calibration).

        A section (label + text) of at most min(max_summary_tokens, 10 % window)
        less the preamble keeps the block under max_summary_tokens × kept, and a
        single summary under 10 % of the window, whatever else is active.
        """
        cap = self.memory_cap(model, 1)
        raw_cap = math.floor(cap / self.ratio(model)) - 1
        overhead = self.preamble() + self.section_overhead(first_seq, last_seq)
        return max(1, raw_cap - overhead)

    def fit(
        self, model: ModelInfo, draft: SummaryDraft, text_cap: int | None = None
    ) -> tuple[SummaryDraft, bool]:
        """The draft trimmed by rule to its cap, with its token count made exact."""
        cap = self.text_cap(model, draft.first_seq, draft.last_seq)
        if text_cap is not None:
            cap = min(cap, text_cap)
        fitted = fit(draft.content, cap, self.builder.counter.count)
        tokens = self.builder.counter.count(render_summary_text(fitted.content))
        update = {"content": fitted.content, "summary_tokens": tokens}
        return draft.model_copy(update=update), fitted.trimmed

    def meets_target(
        self, context: RunContext, live: Sequence[Message], active: Sequence[Summary]
    ) -> Callable[[Sequence[Message]], bool]:
        """Whether covering the given oldest messages brings the next request down to
        `target_ratio` of the usable window, with the new summary counted at its target
        length (its budget at most), as the builder will count it."""
        model = context.model

        def enough(covered: Sequence[Message]) -> bool:
            gone = {m.id for m in covered}
            tail = [m for m in live if m.id not in gone]
            state = self.estimate(model, context.system_prompt, active, tail, context.draft)
            source = sum(self.message_tokens(m) for m in covered)
            first, last = covered[0].seq, covered[-1].seq
            # A rule summary is not written to a length: with its fact ledger it can reach
            # max_summary_tokens, so the plan counts it at that to land at the target.
            wanted = (
                self.config.max_summary_tokens
                if self.config.mode == "rule"
                else self.config.target_summary_tokens(source)
            )
            text = min(wanted, self.text_cap(model, first, last))
            section = self.section_overhead(first, last) + text + self.days_line()
            if not active:
                section += self.preamble()
            added = math.ceil(section * self.ratio(model))
            # Invariant 4 holds after the run: the block ends no larger than its cap.
            memory = min(state.breakdown.memory + added, self.memory_cap(model, len(active) + 1))
            used = state.used - state.breakdown.memory + memory
            return used <= self.config.target_ratio * state.usable

        return enough
