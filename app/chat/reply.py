"""One reply, from its placeholder row to its final status (DESIGN §3, §7).

`ReplyJob` builds the request once (asking the server for an exact count near
the limit), streams, saves the text at least every second, and learns the
calibration from the usage the API reports. It runs on a worker thread with its
own database connection; nothing here touches the service's state: the result
goes back through the `JobRunner`, and the text through `ReplyJob.take_text`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from app.chat.attachments import (
    AttachedFiles,
    attachment_blocks,
    carrying_files,
    explain_too_large,
)
from app.chat.lookups import ArchiveLookups, StreamFunction
from app.chat.model_fallback import model_unavailable
from app.chat.recall import AutomaticRecall, keep_quoted_elsewhere, quoted_elsewhere
from app.chat.runner import drop_kept, kept_for_thread, something_went_wrong
from app.chat.stop_reasons import CONTINUE_PROMPT, MAX_PAUSE_CONTINUATIONS, status_of
from app.chat.unsaved import NotSaved, not_saved_error
from app.chat.uploads import FileUploads
from app.core.calibration import Calibrations
from app.core.catalog import ModelInfo
from app.core.context import BuiltRequest, ContextBuilder, RequestInputs
from app.core.dates import utc_now
from app.core.errors import ApiError, ModelNotFoundError, StorageError, UserFacingError
from app.core.lookup import Lookup
from app.core.models import Message, MessageStatus, Role, Usage
from app.core.recall import RecallBlock
from app.core.summary import Summary
from app.core.thinking import thinking_request
from app.llm.provider import CancelToken, ChatProvider, ChatRequest, StreamCallbacks
from app.store.cache_use import CacheRead
from app.store.calibration_file import CalibrationFile
from app.store.errors import MessageNotFoundError, RecordNotFoundError
from app.store.sessions import SessionStore

log = logging.getLogger(__name__)

# Streamed text is written to disk at least this often, so a crash loses at most this much.
SAVE_INTERVAL_SECONDS = 1.0


@dataclass(frozen=True)
class ReplyRequest:
    """What a reply is asked with, captured on the loop's thread when it starts."""

    session_id: str
    model: ModelInfo
    model_known: bool
    system_prompt: str
    summaries: tuple[Summary, ...]
    # The reply to go on writing (cut off, paused or stopped); None asks a new one.
    continuing: int | None = None
    # The model to ask once if `model` answers 404 (app.chat.model_fallback), with
    # whether its limits are known; None when no other model is listed.
    fallback: tuple[ModelInfo, bool] | None = None
    # Claude's reply to write again (app.chat.versions): the new one becomes its next version.
    replacing: int | None = None
    # Settings → "Think longer" when the reply started (app.core.thinking).
    think_longer: bool = False
    # The user's message to store first, on the job's thread (its text and tokens): the
    # loop's thread shows it as sending meanwhile, and never waits for the disk.
    question: tuple[str, int] | None = None


@dataclass(frozen=True)
class ReplyOutcome:
    """How a reply ended.

    Attributes:
        message: the reply's row as saved (complete, stopped or error); None when not even
            its placeholder could be saved.
        error: what went wrong, in plain words; None when the reply completed or was stopped.
        stop_reason: the API's last word on how it ended (app.chat.stop_reasons).
        changed: other rows this reply changed (the question of a declined reply).
        discarded: the id of a row that received nothing and was deleted.
        not_saved: the reply as it ended, when the disk did not take it (kept in memory).
        quoted: raw tokens the last request quoted from the archive (its recall block).
        unsent: the question the disk did not take (`ReplyRequest.question`): it goes back
            to the composer.
        cache_read: the conversation's cache figures after `cache_after`, read on the
            job's thread once the reply was saved (app.chat.cache_use); None: not asked,
            nothing saved, or the disk did not answer.
    """

    message: Message | None
    error: UserFacingError | None = None
    stop_reason: str | None = None
    changed: tuple[Message, ...] = ()
    discarded: int | None = None
    not_saved: NotSaved | None = None
    quoted: int = 0
    # With a refusal: its explanation from `stop_details`, None when the API gave none.
    refusal_explanation: str | None = None
    unsent: str | None = None
    # The conversation's cache figures read after the reply was saved (`cache_after`).
    cache_read: CacheRead | None = None


class ReplyJob:
    """Streams one reply into a row it creates, and saves it as it arrives.

    `work` runs on a worker thread. It stores `request.question` first, if any, and
    calls `on_question_stored(message)` once it is on disk, just before `on_started` (see
    `_announce`: both wait for the request to be built). `on_started(message)`, `on_text()`,
    `on_retry(attempt, wait)` and `on_model_switched(old, new)` (the model answered
    404: the reply asks `request.fallback` instead) are called from that thread: the
    caller makes them post to its loop. `on_text` fires once per batch of text: it is armed again
    only when the loop takes the text with `take_text`, so a fast stream never
    floods the loop. `recall_budget_ratio` (captured on the loop's thread; 0: off) is
    the share of the window the recall block may use. With `cache_after`, the
    conversation's cache figures after that seq are read once the reply is saved
    (`ReplyOutcome.cache_read`), so the loop's thread need not.
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
        on_model_switched: Callable[[str, str], None],
        recall_budget_ratio: float = 0.0,
        lookups: ArchiveLookups | None = None,
        recall_across: bool = False,
        on_question_stored: Callable[[Message], None] = lambda _message: None,
        uploads: FileUploads | None = None,
        on_lookup: Callable[[Lookup], None] = lambda _lookup: None,
        cache_after: int | None = None,
        on_request_sent: Callable[[], None] = lambda: None,
    ) -> None:
        self.request = request
        # Called once, when the reply's first request is handed to httpx (its body
        # encoded): the loop's thread shows the turn then (app.chat.turns, issue 20).
        self._on_request_sent: Callable[[], None] | None = on_request_sent
        self._cache_after = cache_after
        self._on_question_stored = on_question_stored
        self._builder = builder
        self._provider = provider
        self._open_store = open_store
        self._calibrations = calibrations
        self._calibration_file = calibration_file
        self._on_started = on_started
        self._on_text = on_text
        self._on_retry = on_retry
        self._on_model_switched = on_model_switched
        self._switched_from: ModelInfo | None = None  # the model that answered 404
        self._recall_budget_ratio = recall_budget_ratio
        self._recall_across = recall_across  # Settings → Memory: other conversations too
        self._lookups = lookups  # the archive tool's loop (None: no tools offered)
        self._cancel = CancelToken()
        # The files its requests refer to by `file_id` (None: every file as base64).
        self._uploads = None if uploads is None else uploads.for_reply(provider, self._cancel)
        self._lock = threading.Lock()
        self._text = ""
        self._thinking = ""  # the thinking shown above the reply, so far
        self._prefix = ""  # the text of the reply this job goes on writing, as it was
        self._earlier_status: MessageStatus | None = None  # and its status then
        self._earlier_usage: Usage | None = None  # and what it cost so far
        self._notified = False
        self._guessed = False  # the request carries a file whose tokens are a guess
        self._files: AttachedFiles | None = None  # the files the last request built carries
        self.message_id: int | None = None
        self._row: Message | None = None  # the placeholder (`_not_saved` starts from it)
        self._starting: Message | None = None  # the row as `on_started` will tell it
        self._stored_question: Message | None = None  # as `on_question_stored` will tell it
        self._quoted = 0  # raw tokens the last request built quoted from the archive
        # Called (from the worker) once the quotes recall took from the user's other
        # conversations are saved with the reply, so its line names and opens them.
        self._on_lookup = on_lookup
        self._kept_elsewhere = False

    def cancel(self) -> None:
        """Stop the reply (from any thread); what arrived is kept, marked stopped."""
        self._cancel.cancel()

    def take_text(self) -> str:
        """The whole text so far; arms the next `on_text`."""
        with self._lock:
            self._notified = False
            return self._text

    def thinking_so_far(self) -> str:
        """The thinking shown above the reply so far (armed with the text)."""
        with self._lock:
            return self._thinking

    def _thinking_arrived(self, delta: str) -> None:
        """A `thinking_delta`: shown above the reply as it comes, never in its text."""
        with self._lock:
            self._thinking += delta
            notify = not self._notified
            self._notified = True
        if notify:
            self._on_text()

    def _request_sent(self) -> None:
        told, self._on_request_sent = self._on_request_sent, None
        if told is not None:
            told()

    # --- on the worker thread

    def work(self, _job: object = None) -> ReplyOutcome:
        # On a runner's kept thread (`Job(kept_thread=True)`) the store of the reply
        # before, its connection open, its schema read and its pages cached (opening and
        # closing one cost ~2 ms a reply on bench_path's 155k:100k); else one of its own.
        key = ("reply store", self._open_store)
        store, kept = kept_for_thread(key, self._open_store, SessionStore.close)
        healthy = False
        try:
            outcome = self._reply(store)
            cache_read = self._cache_read(store, outcome)
            healthy = store.idle and not isinstance(outcome.error, StorageError)
            return replace(outcome, quoted=self._quoted, cache_read=cache_read)
        finally:
            if not kept:
                store.close()
            elif not healthy:  # the disk failed it, or a bug left it mid-way: a fresh one next
                drop_kept(key)

    def _cache_read(self, store: SessionStore, outcome: ReplyOutcome) -> CacheRead | None:
        """The cache figures after `cache_after`, once the reply is saved; None when not
        asked, nothing was saved, or the disk did not answer (the loop's thread reads)."""
        after = self._cache_after
        if after is None or outcome.message is None:
            return None
        try:
            use, last = store.cache_use(self.request.session_id, after)
        except StorageError:
            return None
        return CacheRead(after, use, last)

    def _reply(self, store: SessionStore) -> ReplyOutcome:
        request = self.request
        question = request.question
        placeholder: Message | None = None
        if question is not None:
            text, tokens = question
            try:
                if request.replacing is None and request.continuing is None:
                    # The question and its reply's row in one commit (one fsync).
                    stored, placeholder = store.append_question(
                        request.session_id, text, token_estimate=tokens, model=request.model.id
                    )
                else:
                    stored = store.append_message(
                        request.session_id, Role.USER, text, token_estimate=tokens
                    )
            except StorageError as error:
                return ReplyOutcome(None, error, unsent=text)
            except RecordNotFoundError:
                return ReplyOutcome(None)  # the conversation was deleted meanwhile
            self._stored_question = stored  # told with the reply's row (`_announce`)
        try:
            try:
                if placeholder is None:
                    placeholder = self._placeholder(store)
            except StorageError as error:
                return ReplyOutcome(None, error)
            except RecordNotFoundError:
                return ReplyOutcome(None)  # the conversation was deleted meanwhile
            self.message_id, self._row = placeholder.id, placeholder
            self._starting = placeholder.model_copy(update={"status": MessageStatus.STREAMING})
            return self._stream(store, placeholder)
        finally:
            self._announce()  # an error before any request: the rows show how it ended

    def _announce(self) -> None:
        """Tell `on_question_stored` and `on_started` (once each): the question on disk,
        then the reply's row. Not as soon as they are stored, but once the request is
        built, or before anything that waits on the network (a count, an upload): the
        loop's thread then updates the transcript while the request travels, not while
        this thread builds it (the question shows as sending a few milliseconds longer:
        never as sent before it is on disk). Both show before any of the reply's text."""
        stored, self._stored_question = self._stored_question, None
        if stored is not None:
            self._on_question_stored(stored)
        starting, self._starting = self._starting, None
        if starting is not None:
            self._on_started(starting)

    def _stream(self, store: SessionStore, placeholder: Message) -> ReplyOutcome:
        """Ask for the reply (again, after a pause) until it ends; save how it ended."""
        pauses = 0
        # Going on with a reply (Continue, or a paused turn) sends its text as Claude's
        # turn and then a user turn asking to go on: never a prefill, which models from
        # Claude 4.6 on refuse (app.chat.stop_reasons.CONTINUE_PROMPT).
        draft = CONTINUE_PROMPT if self.request.continuing is not None else ""
        while True:
            try:
                # Recall goes with a new reply's first request only (see `_build`).
                fresh = self.request.continuing is None and not pauses
                built = self._build(store, CONTINUE_PROMPT if pauses else draft, recall=fresh)
                stream: StreamFunction = self._provider.stream_reply
                if self._lookups is not None:
                    stream = self._lookups.bind(self._provider, store, placeholder.id, built)
                thinking = thinking_request(
                    self.request.model, built.max_tokens, think_longer=self.request.think_longer
                )
                self._announce()
                result = stream(
                    ChatRequest(
                        built.model,
                        built.messages,
                        built.max_tokens,
                        built.system,
                        thinking=thinking.thinking,
                        output_config=thinking.output_config,
                    ),
                    StreamCallbacks(
                        on_text=self._text_arrived(store),
                        on_retry=self._on_retry,
                        on_thinking=self._thinking_arrived,
                        on_request_sent=self._request_sent,
                    ),
                    self._cancel,
                )
            except UserFacingError as error:
                error = explain_too_large(error, self._files)  # a 413 names the largest file
                partial = error.partial_text if isinstance(error, ApiError) else ""
                received = self.take_text()[len(self._prefix) :]
                if isinstance(error, ModelNotFoundError) and not (partial or received):
                    if self._files_were_gone():
                        continue  # the same request, with the files the server lost uploaded again
                    if self._fall_to_next_model():
                        continue  # the same request, to the next listed model
                    error = model_unavailable(self.request.model, self._switched_from, error)
                return self._fail(
                    store, error, partial if len(partial) >= len(received) else received
                )
            except Exception:
                log.exception("Unexpected failure while streaming a reply")
                return self._fail(
                    store, something_went_wrong(), self.take_text()[len(self._prefix) :]
                )
            status = status_of(result.stop_reason, cancelled=result.cancelled)
            received = self.take_text()
            text = self._prefix + result.text
            text = text if len(text) >= len(received) else received
            try:
                # Stopped before anything arrived (a retry wait, say): no empty row either.
                nothing = result.cancelled and self._earlier_status is None and not text.strip()
                if nothing and self._discard(store, placeholder.id):
                    return ReplyOutcome(None, discarded=placeholder.id)
                # What the reply cost: every request of it, a continuation's added to
                # the text it goes on from (cache_use sums the stored usage).
                usage = None if result.usage is None else result.usage.plus(self._earlier_usage)
                self._earlier_usage = usage or self._earlier_usage
                message = store.finish_message(
                    placeholder.id,
                    text,
                    status,
                    usage=usage,
                    model=result.model,
                    thinking=self._shown_thinking(result.thinking),
                    thinking_seconds=result.thinking_seconds or None,
                    refusal=result.refusal.explanation if result.refusal else None,
                )
                changed: tuple[Message, ...] = ()
                if status is MessageStatus.DECLINED:
                    rows = store.messages_by_id(store.replies.decline(placeholder.id))
                    message = next(row for row in rows if row.id == placeholder.id)
                    changed = tuple(row for row in rows if row.id != placeholder.id)
            except StorageError as error:
                return self._not_saved(error, text, status, result.usage, result.model)
            except RecordNotFoundError:
                return ReplyOutcome(None)  # the conversation was deleted meanwhile
            with self._lock:
                self._text = text
            if result.usage is not None:
                first = result.first_input_tokens
                self._learn(built, result.usage.total_input_tokens if first is None else first)
            if status is MessageStatus.PAUSED and pauses < MAX_PAUSE_CONTINUATIONS:
                # The paused turn goes back as Claude's turn, followed by a user turn
                # asking to go on ("send the assistant content back to continue":
                # https://platform.claude.com/docs/build-with-claude/handling-stop-reasons),
                # so the request still ends with the user on every model.
                pauses += 1
                self._prefix, self._earlier_status = text, status
                continue
            return ReplyOutcome(
                message,
                stop_reason=result.stop_reason,
                changed=changed,
                refusal_explanation=result.refusal.explanation if result.refusal else None,
            )

    def _shown_thinking(self, final: str) -> str | None:
        """The thinking to keep with the reply: the streamed text (every round of a tool
        loop), else the final message's; None keeps what the row has (a continuation)."""
        with self._lock:
            streamed = self._thinking.strip()
        return streamed or final.strip() or None

    def _placeholder(self, store: SessionStore) -> Message:
        """The row the reply streams into: a new one, or the reply it goes on writing."""
        request = self.request
        if request.replacing is not None:
            new_id, _seq = store.versions.regenerate(request.replacing, request.model.id)
            return store.messages_by_id({new_id})[0]
        if request.continuing is None:
            return store.append_message(
                request.session_id,
                Role.ASSISTANT,
                "",
                status=MessageStatus.STREAMING,
                model=request.model.id,
            )
        (message,) = store.messages_by_id({request.continuing}) or (None,)
        if message is None:
            raise MessageNotFoundError(request.continuing)
        self._prefix, self._earlier_status = message.content, message.status
        self._earlier_usage = message.usage
        with self._lock:
            self._text = self._prefix
        return message

    def _files_were_gone(self) -> bool:
        """A 404 for a request that referred to uploaded files: whether the server had let
        some go (forgotten, to be uploaded again; once a reply). Else the 404 is the model's."""
        files = self._files
        if self._uploads is None or files is None:
            return False
        return self._uploads.recover(files.references)

    def _fall_to_next_model(self) -> bool:
        """The model answered 404: ask the next listed one instead, once. False when
        there is none, or it was asked already."""
        request = self.request
        if request.fallback is None or self._switched_from is not None:
            return False
        model, known = request.fallback
        log.info("Model %s is not available; asking %s instead", request.model.id, model.id)
        self._switched_from = request.model
        self.request = replace(request, model=model, model_known=known, fallback=None)
        self._on_model_switched(self._switched_from.id, model.id)
        return True

    def _discard(self, store: SessionStore, message_id: int) -> bool:
        """Delete a row that received nothing; a regeneration's shows the earlier reply."""
        replacing = self.request.replacing
        if replacing is None:
            return store.replies.discard_empty(message_id)
        return store.versions.discard_regenerated(message_id, replacing)

    def _build(self, store: SessionStore, draft: str = "", *, recall: bool = True) -> BuiltRequest:
        """The request, built once here: near the limit the server counts it exactly.

        `draft`, when given, is a last user turn sent but never stored (Continue's).
        `recall` gathers the recall block for the newest question: only a new reply's
        first request does. A continuation (Continue, a paused turn) goes on from
        Claude's own words; gathering again would quote the archive a second time for
        the same question, now beside Continue's prompt, in a request whose newest
        turn is not the question.
        """
        request, provider, cancel = self.request, self._provider, self._cancel

        def exact_count(built: BuiltRequest) -> int:
            self._announce()  # a request to the server first: the row shows meanwhile
            # Stoppable, and its retries told like the reply's (Stop means stop).
            return provider.count_tokens(
                ChatRequest(
                    built.model, built.messages, built.max_tokens, built.system, tools=built.tools
                ),
                cancel=cancel,
                on_retry=self._on_retry,
            )

        tail = store.live_messages(request.session_id)
        tail_tally = self._builder.tally(tail)  # one walk, for recall's budget and the request
        carrying = carrying_files(tail)  # one scan of the tail, for both
        if carrying:
            self._announce()  # its files may be uploaded first: the row shows meanwhile
        # Inside the API's limits on a whole request's files: the oldest may go as a note.
        files = attachment_blocks(
            store.database,
            tail,
            request.model,
            self._builder.counter.count,
            self._uploads,
            carrying=carrying,
        )
        self._files = files
        self._guessed = files.guessed  # a PDF counted per page: its usage can't calibrate
        lookups = self._lookups
        tools = lookups.offer(archived=bool(request.summaries)) if lookups is not None else None
        inputs = RequestInputs(
            model=request.model,
            system_prompt=request.system_prompt,
            summaries=request.summaries,
            tail=tail,
            tail_tally=tail_tally,
            model_known=request.model_known,
            tools=tools,
        )
        block = self._recall(store, inputs) if recall else None
        built = self._builder.build_request(
            replace(inputs, draft=draft, files_saved=files.plan.saved_tokens),
            exact_count=exact_count,
            recall=block,
            files=files.blocks,
        )
        if recall:  # what the gauge counts: the quotes of the reply's first request
            self._quoted = built.raw_recall_tokens
            if built.raw_recall_tokens:
                self._keep_quoted_elsewhere(store, block)
        return built

    def _keep_quoted_elsewhere(self, store: SessionStore, block: RecallBlock | None) -> None:
        """Keep the quotes the request took from other conversations with the reply (once,
        for its first request)."""
        if self._kept_elsewhere or self.message_id is None:
            return
        lookup = quoted_elsewhere(self.message_id, block, utc_now())
        if lookup is not None:
            self._announce()  # the line of lookups goes on the reply's row
            self._kept_elsewhere = True
            keep_quoted_elsewhere(store.database, lookup)
            self._on_lookup(lookup)

    def _recall(self, store: SessionStore, inputs: RequestInputs) -> RecallBlock | None:
        """The recall block for the newest question of `inputs.tail` (None: off, or nothing
        found); measured without the draft and the files left out, as ever."""
        return AutomaticRecall(
            self._builder, self._recall_budget_ratio, self._recall_across
        ).gather(store.recall_index(), session_id=self.request.session_id, inputs=inputs)

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

    def _fail(self, store: SessionStore, error: UserFacingError, received: str) -> ReplyOutcome:
        """Save what arrived; a reply that went on from earlier text keeps its status
        (that text stands), and a new one that received nothing leaves no row."""
        assert self.message_id is not None
        text = self._prefix + received
        try:
            nothing = self._earlier_status is None and not text.strip()
            if nothing and self._discard(store, self.message_id):
                return ReplyOutcome(None, error, discarded=self.message_id)
            message: Message | None = store.finish_message(
                self.message_id, text, self._earlier_status or MessageStatus.ERROR
            )
        except StorageError as storage_error:
            return self._not_saved(storage_error, text, self._earlier_status or MessageStatus.ERROR)
        except RecordNotFoundError:
            message = None  # the conversation was deleted meanwhile
        return ReplyOutcome(message, error)

    def _not_saved(
        self,
        error: StorageError,
        text: str,
        status: MessageStatus,
        usage: Usage | None = None,
        model: str | None = None,
    ) -> ReplyOutcome:
        """The disk did not take the reply's end: hand it back to be kept in memory."""
        assert self._row is not None
        log.warning("Could not save the reply's end: %s", error.detail or error)
        with self._lock:
            self._text = text
        update = {"content": text, "status": status, "usage": usage, "token_estimate": None}
        ended = self._row.model_copy(update=update | ({"model": model} if model else {}))
        return ReplyOutcome(None, not_saved_error(error), not_saved=NotSaved(ended, error))

    def _learn(self, built: BuiltRequest, actual_input_tokens: int) -> None:
        """Correct future estimates with what the API reported for this request."""
        if self._guessed:
            return
        if self._calibrations.learn(built.model, built.raw_input_tokens, actual_input_tokens):
            # Written now when the gauge would show the change, else later (a hair's move).
            self._calibration_file.keep(self._calibrations)
