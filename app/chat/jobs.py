"""The chat service's background work: each job gets its inputs when it starts,
opens its own database connection, and returns one result (DESIGN §7).

- A reply is `app.chat.reply.ReplyJob`.
- `summarize`, `undo` and `load_conversation` are plain functions run as jobs.

Nothing here touches the service's state: results go back through the
`JobRunner`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from app.chat.events import SummaryPreview
from app.core.catalog import ModelInfo
from app.core.context import ContextBuilder, RequestInputs
from app.core.live_tail import LiveTail, TailEntry
from app.core.models import Message
from app.core.policy import Decision
from app.core.summarization_config import SummarizationConfig
from app.core.summary import Summary, SummaryDraft, SummaryMode, SummaryTrigger, UndoResult
from app.core.tokens import TokenCounter
from app.llm.provider import ChatProvider
from app.store.sessions import SessionStore
from app.store.summaries import SummaryStore

if TYPE_CHECKING:
    from app.core.engine import EngineOutcome

log = logging.getLogger(__name__)

# --- summaries ------------------------------------------------------------------------

# The stages of a summary the window shows (the first, "Reading 42 messages", is said
# by the conversation, which knows the count).
ASKING_CLAUDE = "Asking Claude for a summary"
SAVING = "Saving"


@dataclass(frozen=True)
class SummaryRequest:
    """What a summary job is asked to do, captured on the loop's thread."""

    session_id: str
    model: ModelInfo
    system_prompt: str
    draft: str
    trigger: SummaryTrigger
    decision: Decision | None
    instructions: str | None
    config: SummarizationConfig
    # The user checks the drafts before they are saved (the preview).
    review: bool = False
    # "Try again with Claude": rewrite this basic summary, over the same messages.
    retry_summary_id: str | None = None


# Shown the preview; returns the drafts to save (maybe edited), or None to discard them.
Reviewer = Callable[[SummaryPreview], Sequence[SummaryDraft] | None]


def summarize(
    request: SummaryRequest,
    *,
    builder: ContextBuilder,
    counter: TokenCounter,
    provider: ChatProvider | None,
    open_summaries: Callable[[], SummaryStore],
    cancelled: Callable[[], bool],
    progress: Callable[[str], None] = lambda _text: None,
    review: Reviewer | None = None,
) -> EngineOutcome:
    """Condense and keep the memory in budget (`SummarizationEngine.run`), on a worker.

    With `request.retry_summary_id`, rewrites that basic summary with Claude instead
    (`SummarizationEngine.retry_with_llm`), never falling back to rules.
    With `review` (and `request.review`), the drafts are shown to it with their figures
    before anything is saved; it returns those to save, or None to discard them.

    Runs in the summary process; the app's own process never imports the summarizer
    (its rules compile at import: ~70 ms the window's first paint need not wait for).
    `progress` hears the stages a user is shown: asking Claude, then saving.
    """
    from app.core.engine import SummarizationEngine
    from app.core.summarizer import Summarizer

    complete: Callable[..., dict[str, Any]] | None = None
    if provider is not None:
        structured = provider.complete_structured

        def complete(**arguments: Any) -> dict[str, Any]:
            progress(ASKING_CLAUDE)
            try:
                return structured(**arguments)
            finally:
                progress(SAVING)

    repo = open_summaries()
    try:
        if request.retry_summary_id is not None:
            # Claude only, no rule fallback: when it fails, the basic summary stays.
            config = request.config.model_copy(
                update={"mode": SummaryMode.LLM, "abort_on_failure": True}
            )
            summarizer = Summarizer(config, complete=complete, counter=counter)
            return SummarizationEngine(config, repo, summarizer, builder).retry_with_llm(
                request.session_id,
                request.retry_summary_id,
                model=request.model,
                system_prompt=request.system_prompt,
                cancelled=cancelled,
            )
        summarizer = Summarizer(request.config, complete=complete, counter=counter)
        engine = SummarizationEngine(request.config, repo, summarizer, builder)

        def reviewed(drafts: Sequence[SummaryDraft]) -> Sequence[SummaryDraft] | None:
            assert review is not None
            return review(_preview(request, repo, builder, drafts))

        return engine.run(
            request.session_id,
            model=request.model,
            system_prompt=request.system_prompt,
            draft=request.draft,
            trigger=request.trigger,
            decision=request.decision,
            instructions=request.instructions,
            cancelled=cancelled,
            review=reviewed if request.review and review is not None else None,
        )
    finally:
        repo.close()


def _preview(
    request: SummaryRequest,
    repo: SummaryStore,
    builder: ContextBuilder,
    drafts: Sequence[SummaryDraft],
) -> SummaryPreview:
    """The drafts with their figures: the next request now, and as it would be once the
    drafts are saved (measured the way it will be sent)."""
    live = repo.live_messages(request.session_id)
    active = repo.active_summaries(request.session_id)
    covered = {message_id for draft in drafts for message_id in draft.message_ids}
    tail = [m for m in live if m.id not in covered]
    now = datetime.now(UTC)
    would_be = [d.committed(f"preview-{i}", now) for i, d in enumerate(drafts)]

    def used(summaries: Sequence[Summary], messages: Sequence[Message]) -> int:
        inputs = RequestInputs(
            model=request.model,
            system_prompt=request.system_prompt,
            summaries=sorted(summaries, key=lambda s: s.first_seq),
            tail=messages,
            draft=request.draft,
            trigger_ratio=request.config.trigger_ratio,
        )
        return builder.estimate_state(inputs).used

    return SummaryPreview(
        drafts=tuple(drafts),
        condensed=len(live) - len(tail),
        kept=len(tail),
        tokens_before=used(active, live),
        tokens_after=used([*active, *would_be], tail),
        trigger=request.trigger,
    )


@dataclass(frozen=True)
class UndoOutcome:
    """What an undo gave back, ready for the conversation to take in.

    Attributes:
        result: the store's account (complete, or only the newest originals).
        restored: the originals back in the live tail, in compact form.
        active_after: the memory block's summaries now.
    """

    result: UndoResult
    restored: tuple[TailEntry, ...]
    active_after: tuple[Summary, ...]


def undo(
    session_id: str,
    summary_id: str,
    *,
    model: ModelInfo,
    system_prompt: str,
    config: SummarizationConfig,
    builder: ContextBuilder,
    counter: TokenCounter,
    open_summaries: Callable[[], SummaryStore],
    open_store: Callable[[], SessionStore],
) -> UndoOutcome:
    """Give a summary's originals back, as many as fit (`SummarizationEngine.undo`)."""
    from app.core.engine import SummarizationEngine
    from app.core.summarizer import Summarizer  # see `summarize`

    repo = open_summaries()
    try:
        engine = SummarizationEngine(
            config, repo, Summarizer(config, complete=None, counter=counter), builder
        )
        result = engine.undo(session_id, summary_id, model=model, system_prompt=system_prompt)
        active = tuple(repo.active_summaries(session_id))
    finally:
        repo.close()
    store = open_store()
    try:
        restored = store.messages_by_id(result.restored_message_ids)
    finally:
        store.close()
    return UndoOutcome(result, tuple(TailEntry.of(m, counter.count) for m in restored), active)


# --- opening a conversation -------------------------------------------------------------


@dataclass(frozen=True)
class LoadedConversation:
    """What a conversation holds beyond its newest page, read and built off the loop's
    thread (a tail of 100,000 messages takes a few hundred ms to read and tally).

    Attributes:
        tail: the live tail, handed over to the loop's thread, which owns it from then on.
    """

    tail: LiveTail
    summaries: tuple[Summary, ...]
    trigger_state: dict[str, Any] | None


def load_conversation(
    session_id: str,
    *,
    open_store: Callable[[], SessionStore],
    open_summaries: Callable[[], SummaryStore],
) -> LoadedConversation:
    """The live tail (compact), the memory block and the trigger's memory of a conversation."""
    store = open_store()
    try:
        tail = store.live_tail(session_id)
        trigger_state = store.trigger_state(session_id)
    finally:
        store.close()
    repo = open_summaries()
    try:
        summaries = tuple(repo.active_summaries(session_id))
    finally:
        repo.close()
    return LoadedConversation(tail, summaries, trigger_state)
