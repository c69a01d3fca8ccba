"""The chat service's background work: each job gets its inputs when it starts,
opens its own database connection, and returns one result (DESIGN §7).

- `ReplyJob` owns one reply from its placeholder row to its final status: it
  builds the request once (asking the server for an exact count near the
  limit), streams, saves the text at least every second, and learns the
  calibration from the usage the API reports.
- `summarize`, `undo` and `load_conversation` are plain functions run as jobs.

Nothing here touches the service's state: results go back through the
`JobRunner`, and a reply's text through `ReplyJob.take_text`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from app.chat.events import SummaryPreview
from app.chat.runner import something_went_wrong
from app.core.calibration import Calibrations
from app.core.catalog import ModelInfo
from app.core.context import BuiltRequest, ContextBuilder
from app.core.errors import ApiError, StorageError, UserFacingError
from app.core.live_tail import LiveTail, TailEntry
from app.core.models import Message, MessageStatus, Role
from app.core.policy import Decision
from app.core.summarization_config import SummarizationConfig
from app.core.summary import Summary, SummaryDraft, SummaryMode, SummaryTrigger, UndoResult
from app.core.tokens import TokenCounter
from app.llm.provider import CancelToken, ChatProvider, ChatRequest, StreamCallbacks
from app.store.calibration_file import CalibrationFile
from app.store.errors import RecordNotFoundError
from app.store.sessions import SessionStore
from app.store.summaries import SummaryStore

if TYPE_CHECKING:
    from app.core.engine import EngineOutcome

log = logging.getLogger(__name__)

# Streamed text is written to disk at least this often, so a crash loses at most this much.
SAVE_INTERVAL_SECONDS = 1.0


# --- a reply --------------------------------------------------------------------------


@dataclass(frozen=True)
class ReplyRequest:
    """What a reply is asked with, captured on the loop's thread when it starts."""

    session_id: str
    model: ModelInfo
    model_known: bool
    system_prompt: str
    summaries: tuple[Summary, ...]


@dataclass(frozen=True)
class ReplyOutcome:
    """How a reply ended.

    Attributes:
        message: the reply's row as saved (complete, stopped or error); None when not even
            its placeholder could be saved.
        error: what went wrong, in plain words; None when the reply completed or was stopped.
    """

    message: Message | None
    error: UserFacingError | None = None


class ReplyJob:
    """Streams one reply into a row it creates, and saves it as it arrives.

    `work` runs on a worker thread. `on_started(message)`, `on_text()` and
    `on_retry(attempt, wait)` are called from that thread: the caller makes them
    post to its loop. `on_text` fires once per batch of text: it is armed again
    only when the loop takes the text with `take_text`, so a fast stream never
    floods the loop.
    """

    def __init__(
        self,
        request: ReplyRequest,
        *,
        builder: ContextBuilder,
        provider: ChatProvider,
        open_store: Callable[[], SessionStore],
        calibrations: Calibrations,
        calibration_file: CalibrationFile,
        on_started: Callable[[Message], None],
        on_text: Callable[[], None],
        on_retry: Callable[[int, float | None], None],
    ) -> None:
        self.request = request
        self._builder = builder
        self._provider = provider
        self._open_store = open_store
        self._calibrations = calibrations
        self._calibration_file = calibration_file
        self._on_started = on_started
        self._on_text = on_text
        self._on_retry = on_retry
        self._cancel = CancelToken()
        self._lock = threading.Lock()
        self._text = ""
        self._notified = False
        self.message_id: int | None = None

    def cancel(self) -> None:
        """Stop the reply (from any thread); what arrived is kept, marked stopped."""
        self._cancel.cancel()

    def take_text(self) -> str:
        """The whole text so far; arms the next `on_text`."""
        with self._lock:
            self._notified = False
            return self._text

    # --- on the worker thread

    def work(self, _job: object = None) -> ReplyOutcome:
        store = self._open_store()
        try:
            return self._reply(store)
        finally:
            store.close()

    def _reply(self, store: SessionStore) -> ReplyOutcome:
        request = self.request
        try:
            placeholder = store.append_message(
                request.session_id,
                Role.ASSISTANT,
                "",
                status=MessageStatus.STREAMING,
                model=request.model.id,
            )
        except StorageError as error:
            return ReplyOutcome(None, error)
        except RecordNotFoundError:
            return ReplyOutcome(None)  # the conversation was deleted meanwhile
        self.message_id = placeholder.id
        self._on_started(placeholder)
        try:
            built = self._build(store)
            result = self._provider.stream_reply(
                ChatRequest(built.model, built.messages, built.max_tokens, built.system),
                StreamCallbacks(on_text=self._text_arrived(store), on_retry=self._on_retry),
                self._cancel,
            )
        except UserFacingError as error:
            partial = error.partial_text if isinstance(error, ApiError) else ""
            received = self.take_text()
            return self._fail(store, error, partial if len(partial) >= len(received) else received)
        except Exception:
            log.exception("Unexpected failure while streaming a reply")
            return self._fail(store, something_went_wrong(), self.take_text())
        status = MessageStatus.STOPPED if result.cancelled else MessageStatus.COMPLETE
        text = result.text if len(result.text) >= len(self._text) else self.take_text()
        try:
            message = store.finish_message(
                placeholder.id, text, status, usage=result.usage, model=result.model
            )
        except StorageError as error:
            return ReplyOutcome(None, error)
        except RecordNotFoundError:
            return ReplyOutcome(None)  # the conversation was deleted meanwhile
        with self._lock:
            self._text = text
        if result.usage is not None:
            self._learn(built, result.usage.total_input_tokens)
        return ReplyOutcome(message)

    def _build(self, store: SessionStore) -> BuiltRequest:
        """The request, built once here: near the limit the server counts it exactly."""
        request, provider = self.request, self._provider

        def exact_count(built: BuiltRequest) -> int:
            return provider.count_tokens(
                ChatRequest(built.model, built.messages, built.max_tokens, built.system)
            )

        return self._builder.build_request(
            model=request.model,
            system_prompt=request.system_prompt,
            summaries=request.summaries,
            tail=store.live_messages(request.session_id),
            model_known=request.model_known,
            exact_count=exact_count,
        )

    def _text_arrived(self, store: SessionStore) -> Callable[[str], None]:
        last_save = time.monotonic()
        assert self.message_id is not None
        message_id = self.message_id

        def on_text(delta: str) -> None:
            nonlocal last_save
            with self._lock:
                self._text += delta
                notify = not self._notified
                self._notified = True
                text = self._text
            if notify:
                self._on_text()
            now = time.monotonic()
            if now - last_save >= SAVE_INTERVAL_SECONDS:
                last_save = now
                try:
                    store.update_message_content(message_id, text)
                except StorageError as error:
                    # Keep streaming: the final save reports the problem if it persists.
                    log.warning("Could not save streamed text: %s", error)
                except RecordNotFoundError:
                    self.cancel()  # the conversation was deleted: nobody wants the rest

        return on_text

    def _fail(self, store: SessionStore, error: UserFacingError, text: str) -> ReplyOutcome:
        assert self.message_id is not None
        try:
            message: Message | None = store.finish_message(
                self.message_id, text, MessageStatus.ERROR
            )
        except StorageError as storage_error:
            log.warning("Could not save the failed reply: %s", storage_error)
            message = None
        except RecordNotFoundError:
            message = None  # the conversation was deleted meanwhile
        return ReplyOutcome(message, error)

    def _learn(self, built: BuiltRequest, actual_input_tokens: int) -> None:
        """Correct future estimates with what the API reported for this request."""
        if self._calibrations.learn(built.model, built.raw_input_tokens, actual_input_tokens):
            self._calibration_file.save(self._calibrations)


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
    # A manual summary: how many of the newest messages stay (None: the floor).
    keep_recent: int | None = None
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
            keep_recent=request.keep_recent,
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
        return builder.estimate_state(
            model=request.model,
            system_prompt=request.system_prompt,
            summaries=sorted(summaries, key=lambda s: s.first_seq),
            tail=messages,
            draft=request.draft,
            trigger_ratio=request.config.trigger_ratio,
        ).used

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
