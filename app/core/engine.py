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
   `Decision.preserve_recent` (the policy's to say: the setting's number, the
   user's own, 2 in an emergency). A condensed summary covers a contiguous run of unpinned live
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

import time

from app.core.catalog import ModelInfo
from app.core.context import ContextBuilder
from app.core.engine_budget import MemoryBudget
from app.core.engine_condense import Condenser
from app.core.engine_measure import MEMORY_WINDOW_SHARE, EngineMeasure
from app.core.engine_plan import Plan, plan
from app.core.engine_record import EngineRecorder
from app.core.engine_revise import SummaryRevision
from app.core.engine_types import (
    Clock,
    EngineOutcome,
    MessageSummarizer,
    Review,
    SummarizeResultLike,
)
from app.core.policy import Decision, TriggerMemory, TriggerPolicy
from app.core.summarization_config import SummarizationConfig
from app.core.summary import SummaryRepository

__all__ = [
    "MEMORY_WINDOW_SHARE",
    "Clock",
    "EngineOutcome",
    "MessageSummarizer",
    "Plan",
    "Review",
    "SummarizationEngine",
    "SummarizeResultLike",
    "plan",
]


class SummarizationEngine:
    """Plans, makes and commits summaries for one or more conversations (thread-safe
    as long as its repository is used from one thread at a time).

    The public entry point: each concern has one owner it delegates to —
    `measure` (the request's figures, memory caps, fitting a draft), `recorder`
    (commits and the audit trail), `budget` (invariant 4), `condenser` (one
    `run`) and `revision` (undo, and rewriting a basic summary with Claude).

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
        self.measure = EngineMeasure(config, repo, builder)
        self.recorder = EngineRecorder(repo, self.measure, clock)
        self.budget = MemoryBudget(
            config, repo, summarizer, builder, self.measure, self.recorder, clock
        )
        self.condenser = Condenser(
            config, repo, summarizer, self.policy, self.measure, self.recorder, self.budget, clock
        )
        self.revision = SummaryRevision(repo, self.measure, self.recorder, self.condenser, clock)
        # The engine's verbs are its parts' own methods (one signature and one docstring
        # each, read there):
        self.state = self.measure.state  # the next request's figures
        self.run = self.condenser.run  # the whole step; callable from a worker thread
        self.retry_with_llm = self.revision.retry_with_llm  # "Try again with Claude"
        self.undo = self.revision.undo  # a summary's originals back, as many as fit
        self.apply = self.recorder.apply  # a draft fitted to its budget and committed
        self.memory_cap = self.measure.memory_cap  # invariant 4's bound
        self.memory_tokens = self.measure.memory_tokens  # the memory block, calibrated

    def decide(
        self,
        session_id: str,
        *,
        model: ModelInfo,
        system_prompt: str = "",
        draft: str = "",
        memory: TriggerMemory,
        manual: bool = False,
        keep_recent: int | None = None,
    ) -> Decision:
        """Whether a summary is due now (the policy on the live state). Cheap: O(live tail).

        The app decides from the state its conversation holds (app.chat.summaries); this
        is for replaying a conversation through the engine alone (tests, bench/).
        """
        live = self.repo.live_messages(session_id)
        active = self.repo.active_summaries(session_id)
        state = self.measure.estimate(model, system_prompt, active, live, draft)
        return self.policy.should_summarize(
            self.measure.policy_input(state, live, active, memory, manual, keep_recent)
        )
