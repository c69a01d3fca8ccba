"""The controller: turns user actions into store writes and worker threads.

It owns the GUI thread's store connection and the running workers; the
window only calls its methods and listens to its signals (DESIGN §7).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal

from app.core.calibration import Calibrations
from app.core.catalog import (
    FALLBACK_MODELS,
    ModelInfo,
    clean_model_list,
    model_limits,
    pick_default_model,
)
from app.core.context import (
    DEFAULT_TRIGGER_RATIO,
    BuiltRequest,
    ContextBuilder,
    ContextState,
)
from app.core.conversation import to_api_messages
from app.core.engine import EngineOutcome, SummarizationEngine
from app.core.errors import (
    ApiKeyRejectedError,
    ContextOverflowError,
    MessageTooLargeError,
    StorageError,
    UserFacingError,
)
from app.core.models import Message, MessageStatus, Role, Session
from app.core.policy import Decision, TriggerMemory
from app.core.settings import AppSettings, save_settings
from app.core.summarization_config import SummarizationConfig
from app.core.summarizer import Summarizer
from app.core.summary import Summary, SummaryTrigger
from app.core.text import DEFAULT_TITLE, title_from_first_message, validate_message_text
from app.core.tokens import TokenCounter, default_counter
from app.llm.provider import ChatProvider, ChatRequest
from app.secrets.keystore import KeyStore
from app.store.calibration_file import CalibrationFile
from app.store.model_cache import ModelCache
from app.store.sessions import SessionStore
from app.store.summaries import SummaryStore
from app.ui.workers import CallWorker, ChatWorker, ThreadTracker

log = logging.getLogger(__name__)

PAGE_SIZE = 50
# At most this many transcript updates a second while a reply streams.
RENDER_INTERVAL_MS = 33

ProviderFactory = Callable[[str | None, str | None], ChatProvider]
"""(api_key, base_url) -> provider; called on worker threads."""


@dataclass(frozen=True)
class Dependencies:
    """What the controller needs from the outside world; tests pass fakes or temp paths."""

    store: SessionStore
    store_factory: Callable[[], SessionStore]
    keystore: KeyStore
    provider_factory: ProviderFactory
    settings: AppSettings
    settings_path: Path
    calibration_file: CalibrationFile
    model_cache: ModelCache
    summaries: SummaryStore
    summary_store_factory: Callable[[], SummaryStore]
    summarization: SummarizationConfig = field(default_factory=SummarizationConfig)
    counter: TokenCounter | None = None


class ChatController(QObject):
    """Everything a conversation does, minus the widgets.

    Signals:
        sessions_changed(list, object): all sessions, and the current id (or None).
        session_opened(object, list, bool): session (None when new), newest page, has_earlier.
        earlier_loaded(list, bool): an older page, and whether more exist.
        message_added(Message), message_text_changed(int, str), message_updated(Message)
        streaming_changed(bool): a reply started or ended.
        error_raised(UserFacingError): show it in plain words (with Retry when it makes sense).
        notice_raised(str, str): a quiet notice (title, text).
        status_changed(str): a transient status line ("Claude is busy — retrying…").
        key_needed(): no API key is known; the window asks for one.
        models_changed(list, str): models to offer, and the selected id.
        context_changed(object): the gauge's figures for the next request (ContextState),
            or None while the tokenizer is still loading.
        pending_sent(): a message held back while earlier messages were condensed was sent.
    """

    sessions_changed = Signal(list, object)
    session_opened = Signal(object, list, bool)
    earlier_loaded = Signal(list, bool)
    message_added = Signal(object)
    message_text_changed = Signal(int, str)
    message_updated = Signal(object)
    streaming_changed = Signal(bool)
    error_raised = Signal(object)
    notice_raised = Signal(str, str)
    status_changed = Signal(str)
    key_needed = Signal()
    models_changed = Signal(list, str)
    context_changed = Signal(object)
    pending_sent = Signal()

    def __init__(self, deps: Dependencies, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.deps = deps
        self.store = deps.store
        self.settings = deps.settings
        self.tracker = ThreadTracker(self)
        cached = deps.model_cache.load()
        self.models: list[ModelInfo] = list(cached.models if cached else FALLBACK_MODELS)
        self.counter = deps.counter or default_counter()
        self.calibrations: Calibrations = deps.calibration_file.load()
        self.builder = ContextBuilder(self.counter, self.calibrations)
        # The live tail of the open conversation, kept so a keystroke costs O(tail) sums,
        # not a database read.
        self._tail: list[Message] = []
        self._memory: list[Summary] = []
        self._draft = ""
        config = deps.summarization
        # On this thread the engine only decides (cheap); summaries are made on a worker.
        self.engine = SummarizationEngine(
            config,
            deps.summaries,
            Summarizer(config, complete=None, counter=self.counter),
            self.builder,
        )
        self._trigger_memory: dict[str, TriggerMemory] = {}
        self._summarize_worker: CallWorker | None = None
        self._condense_cancelled = False
        # Text waiting to be sent once an emergency summary has made room for it.
        self._pending_send: str | None = None
        self._emergency_text: str | None = None
        self.current: Session | None = None
        self.oldest_seq: int | None = None
        self.worker: ChatWorker | None = None
        self._last_render = 0.0
        self._render_timer = QTimer(self)
        self._render_timer.setSingleShot(True)
        self._render_timer.timeout.connect(self._render_stream)
        self._models_worker: CallWorker | None = None
        self._worker_session_id: str | None = None
        self._shut_down = False
        self._worker_visible = False
        self.selected_model = pick_default_model(self.settings.model, self.models)

    # -- keys and providers ------------------------------------------------------

    def api_key(self) -> str | None:
        """The key to use: the one the user gave Cairn, else the SDK's ANTHROPIC_API_KEY."""
        return self.deps.keystore.get() or os.environ.get("ANTHROPIC_API_KEY") or None

    def has_api_key(self) -> bool:
        return self.api_key() is not None

    def check_key(self, key: str) -> None:
        """Runs on a worker thread: raise unless `key` is accepted."""
        self.deps.provider_factory(key, self.settings.api_base_url).check_key()

    # -- start-up ----------------------------------------------------------------

    def start(self) -> None:
        """Show the newest conversation, then ask the server which models it offers."""
        recovered = self.store.recover_interrupted()
        sessions = self.store.list_sessions()
        if sessions:
            self.open_session(sessions[0].id)
        else:
            self.new_conversation()
        if recovered:
            self.notice_raised.emit(
                "Recovered",
                f"Cairn was closed while Claude was replying. The text that had arrived "
                f"was kept in {recovered} reply{'s' if recovered != 1 else ''}, marked as stopped.",
            )
        self.models_changed.emit(self.models, self.selected_model)
        # Not before the conversation is on screen: loading the tokenizer and importing
        # the SDK (for the model list) are a second of work that would slow that paint.
        QTimer.singleShot(250, self._warm_up)

    def _warm_up(self) -> None:
        if self._shut_down:
            return
        counter, store_factory = self.counter, self.deps.store_factory

        def load_and_backfill() -> int:
            counter.load()
            store = store_factory()
            try:
                return store.backfill_token_estimates(counter.count)
            finally:
                store.close()

        worker = CallWorker(load_and_backfill)
        worker.succeeded.connect(self._counter_ready)
        worker.failed.connect(self._counter_failed)
        self.tracker.start(worker)
        if self.has_api_key():
            self.refresh_models()

    def _counter_ready(self, backfilled: int) -> None:
        if backfilled:
            log.info("Counted tokens of %d older messages", backfilled)
            self._reload_tail()
        self.update_context()

    def _counter_failed(self, error: UserFacingError) -> None:
        log.warning("Could not count older messages: %s (%s)", error.message, error.detail)
        self.update_context()

    def refresh_models(self) -> None:
        """List the models in the background; keep the bundled list if that fails."""
        if self._models_worker is not None or self._shut_down:
            return
        provider_factory, cache = self.deps.provider_factory, self.deps.model_cache
        key, base_url = self.api_key(), self.settings.api_base_url

        def fetch() -> list[ModelInfo]:
            models = clean_model_list(provider_factory(key, base_url).list_models())
            if models:
                cache.save(models)
            return models

        worker = CallWorker(fetch)
        worker.succeeded.connect(self._models_loaded)
        worker.failed.connect(self._models_failed)
        worker.finished.connect(self._models_done)
        self._models_worker = worker
        self.tracker.start(worker)

    def _models_done(self) -> None:
        self._models_worker = None

    def _models_loaded(self, models: list[ModelInfo]) -> None:
        if not models:
            return
        self.models = list(models)
        configured = self.current.model if self.current else self.settings.model
        self.selected_model = pick_default_model(configured, self.models)
        self.models_changed.emit(self.models, self.selected_model)
        self.update_context()

    def _models_failed(self, error: UserFacingError) -> None:
        # The bundled list stays; a bad key is worth saying now, the rest can wait.
        log.warning("Could not list models: %s (%s)", error.message, error.detail)
        if isinstance(error, ApiKeyRejectedError):
            self.error_raised.emit(error)

    # -- conversations -------------------------------------------------------------

    def _emit_sessions(self) -> None:
        current_id = self.current.id if self.current else None
        self.sessions_changed.emit(self.store.list_sessions(), current_id)

    def new_conversation(self) -> None:
        """An empty conversation; it is stored when its first message is sent."""
        if self.worker is not None:
            self._worker_visible = False
        self.current = None
        self.oldest_seq = None
        self.selected_model = pick_default_model(self.settings.model, self.models)
        self.models_changed.emit(self.models, self.selected_model)
        self._emit_sessions()
        self.session_opened.emit(None, [], False)
        self._reload_tail()

    def open_session(self, session_id: str) -> None:
        if self.current is not None and self.current.id == session_id:
            return
        session = self.store.get_session(session_id)
        if session is None:
            self._emit_sessions()
            return
        if self.worker is not None:
            # The reply keeps streaming into the store; it shows again when the user comes back.
            self._worker_visible = self._worker_session_id == session_id
        self.current = session
        page = self.store.messages(session.id, limit=PAGE_SIZE)
        self.oldest_seq = page[0].seq if page else None
        has_earlier = bool(page) and self.store.count_messages(session.id) > len(page)
        if session.model:
            self.selected_model = pick_default_model(session.model, self.models)
            self.models_changed.emit(self.models, self.selected_model)
        self._emit_sessions()
        self.session_opened.emit(session, page, has_earlier)
        self._reload_tail()

    def load_earlier(self) -> None:
        if self.current is None or self.oldest_seq is None:
            return
        page = self.store.messages(self.current.id, before_seq=self.oldest_seq, limit=PAGE_SIZE)
        if page:
            self.oldest_seq = page[0].seq
        has_earlier = bool(page) and page[0].seq > 1 and self._has_before(page[0].seq)
        self.earlier_loaded.emit(page, has_earlier)

    def _has_before(self, seq: int) -> bool:
        assert self.current is not None
        return bool(self.store.messages(self.current.id, before_seq=seq, limit=1))

    def rename_session(self, session_id: str, title: str) -> None:
        title = " ".join(title.split())
        if not title:
            return
        try:
            session = self.store.rename_session(session_id, title)
        except StorageError as error:
            self.error_raised.emit(error)
            self._emit_sessions()
            return
        if self.current is not None and self.current.id == session_id:
            self.current = session
        self._emit_sessions()

    def delete_session(self, session_id: str) -> None:
        if self.worker is not None and self.current is not None and self.current.id == session_id:
            self.stop()
            self.worker.wait()
        try:
            self.store.delete_session(session_id)
        except StorageError as error:
            self.error_raised.emit(error)
            return
        if self.current is not None and self.current.id == session_id:
            self.current = None
            remaining = self.store.list_sessions()
            if remaining:
                self.open_session(remaining[0].id)
                return
            self.new_conversation()
            return
        self._emit_sessions()

    def select_model(self, model_id: str) -> None:
        """The picker changed: use it for this conversation and for new ones."""
        if not model_id or model_id == self.selected_model:
            return
        self.selected_model = model_id
        self.update_context()
        self.settings.model = model_id
        try:
            save_settings(self.deps.settings_path, self.settings)
            if self.current is not None:
                self.current = self.store.set_session_model(self.current.id, model_id)
        except StorageError as error:
            self.error_raised.emit(error)

    def save_settings(self) -> None:
        save_settings(self.deps.settings_path, self.settings)

    # -- how full the context is ------------------------------------------------------

    def _reload_tail(self) -> None:
        session_id = self.current.id if self.current else None
        self._tail = self.store.live_messages(session_id) if session_id else []
        self._memory = self.deps.summaries.active_summaries(session_id) if session_id else []
        self.update_context()

    def set_draft(self, text: str) -> None:
        """The composer's text changed (debounced by the window)."""
        self._draft = text
        self.update_context()

    def model_info(self) -> tuple[ModelInfo, bool]:
        """The selected model's limits, and whether they are known (not a safe default)."""
        return model_limits(self.selected_model, self.models)

    def context_state(self, draft: str | None = None) -> ContextState:
        model, known = self.model_info()
        return self.builder.estimate_state(
            model=model,
            system_prompt=self.current.system_prompt if self.current else "",
            summaries=self._memory,
            tail=self._tail,
            draft=self._draft if draft is None else draft,
            trigger_ratio=DEFAULT_TRIGGER_RATIO,
            model_known=known,
        )

    def update_context(self) -> None:
        """Tell the gauge; never waits for the tokenizer to load on this (GUI) thread."""
        if not self.counter.ready:
            self.context_changed.emit(None)
            return
        self.context_changed.emit(self.context_state())

    def _check_fits(self, text: str) -> None:
        """Raise (plain words, with the numbers) when `text` cannot be sent as things stand."""
        model, known = self.model_info()
        self.builder.build_request(
            model=model,
            system_prompt=self.current.system_prompt if self.current else "",
            summaries=self._memory,
            tail=self._tail,
            draft=text,
            model_known=known,
        )

    # -- sending -------------------------------------------------------------------

    @property
    def streaming(self) -> bool:
        """A reply is being written, or earlier messages condensed before a send."""
        return self.worker is not None or self._pending_send is not None

    def send(self, text: str) -> bool:
        """Store the user's message and ask for a reply. False keeps the text in the composer."""
        if self.streaming:
            return False
        try:
            validate_message_text(text)
        except UserFacingError as error:
            self.error_raised.emit(error)
            return False
        if not self.has_api_key():
            self.key_needed.emit()
            return False
        try:
            self._check_fits(text)
        except ContextOverflowError as error:
            if self.current is None or isinstance(error, MessageTooLargeError):
                self.error_raised.emit(error)
                return False
            # Condense earlier messages first; the text is sent once there is room.
            if not self._start_emergency(text):
                self.error_raised.emit(error)
            return False
        except UserFacingError as error:
            self.error_raised.emit(error)
            return False
        try:
            if self.current is None:
                self.current = self.store.create_session(
                    title_from_first_message(text), self.selected_model
                )
            message = self.store.append_message(self.current.id, Role.USER, text)
            if self.current.title == DEFAULT_TITLE:
                self.current = self.store.rename_session(
                    self.current.id, title_from_first_message(text)
                )
        except StorageError as error:
            self.error_raised.emit(error)
            return False
        if self.oldest_seq is None:
            self.oldest_seq = message.seq
        self._tail.append(message)
        self._draft = ""
        self._observe(1)
        self.message_added.emit(message)
        self._emit_sessions()
        self._start_reply()
        return True

    def retry(self) -> None:
        """Ask again for a reply to the last question (after an error)."""
        if self.worker is None and self.current is not None:
            self._start_reply()

    def _start_reply(self) -> None:
        assert self.current is not None
        session = self.current
        turns = to_api_messages(self._tail)
        if not turns or turns[-1]["role"] != Role.USER.value:
            return  # nothing to answer: the newest sendable turn is Claude's
        if not self.has_api_key():
            self.key_needed.emit()
            return
        model, known = self.model_info()
        builder, tail, system_prompt = self.builder, list(self._tail), session.system_prompt
        memory = list(self._memory)

        def prepare(provider: ChatProvider) -> BuiltRequest:
            def exact_count(built: BuiltRequest) -> int:
                return provider.count_tokens(
                    ChatRequest(built.model, built.messages, built.max_tokens, built.system)
                )

            return builder.build_request(
                model=model,
                system_prompt=system_prompt,
                summaries=memory,
                tail=tail,
                model_known=known,
                exact_count=exact_count,
            )

        try:
            placeholder = self.store.append_message(
                session.id,
                Role.ASSISTANT,
                "",
                status=MessageStatus.STREAMING,
                model=model.id,
            )
        except StorageError as error:
            self.error_raised.emit(error)
            return
        self.message_added.emit(placeholder)
        key, base_url = self.api_key(), self.settings.api_base_url
        provider_factory = self.deps.provider_factory
        worker = ChatWorker(
            message_id=placeholder.id,
            prepare=prepare,
            provider_factory=lambda: provider_factory(key, base_url),
            store_factory=self.deps.store_factory,
        )
        worker.text_arrived.connect(self._text_arrived)
        worker.retry_scheduled.connect(self._retry_scheduled)
        worker.reply_finished.connect(self._reply_finished)
        worker.reply_failed.connect(self._reply_failed)
        self.worker = worker
        self._worker_session_id = session.id
        self._worker_visible = True
        self.status_changed.emit("")
        self.streaming_changed.emit(True)
        self.tracker.start(worker)

    def stop(self) -> None:
        """Stop the reply being written; the text so far is kept."""
        if self._pending_send is not None:
            self._condense_cancelled = True
            self.status_changed.emit("Stopping…")
        if self.worker is not None:
            self.worker.cancel()
            self.status_changed.emit("Stopping…")

    def _text_arrived(self) -> None:
        elapsed_ms = (time.monotonic() - self._last_render) * 1000
        if elapsed_ms >= RENDER_INTERVAL_MS:
            self._render_stream()
        elif not self._render_timer.isActive():
            self._render_timer.start(max(1, int(RENDER_INTERVAL_MS - elapsed_ms)))

    def _render_stream(self) -> None:
        worker = self.worker
        if worker is None:
            return
        self._last_render = time.monotonic()
        text = worker.take_text()
        self.status_changed.emit("")
        if self._worker_visible:
            self.message_text_changed.emit(worker.message_id, text)

    def _retry_scheduled(self, attempt: int, wait: float | None) -> None:
        suffix = f" in {wait:.0f} s" if wait and wait >= 1 else ""
        self.status_changed.emit(f"Claude is busy — retrying{suffix}…")

    def _reply_done(self) -> bool:
        """Forget the worker; True when its conversation is still on screen."""
        self._render_timer.stop()
        visible = self._worker_visible
        self.worker = None
        self.status_changed.emit("")
        self.streaming_changed.emit(False)
        return visible

    def _reply_finished(self, message: Message) -> None:
        worker = self.worker
        visible = self._reply_done()
        if visible:
            self.message_updated.emit(message)
        if worker is not None and worker.built is not None and message.usage is not None:
            self._learn(worker.built, message)
        self._refresh_current_session()
        if worker is not None and self._worker_session_id is not None:
            self._observe(1, self._worker_session_id)
            self._maybe_summarize(self._worker_session_id)

    def _learn(self, built: BuiltRequest, message: Message) -> None:
        """Correct future estimates with what the API reported for this request."""
        assert message.usage is not None
        if self.calibrations.learn_usage(built.model, built.raw_input_tokens, message.usage):
            self.deps.calibration_file.save(self.calibrations)

    def _reply_failed(self, message: Message | None, error: UserFacingError) -> None:
        visible = self._reply_done()
        if message is not None and visible:
            self.message_updated.emit(message)
        self._refresh_current_session()
        self.error_raised.emit(error)

    def _refresh_current_session(self) -> None:
        if self.current is not None:
            session = self.store.get_session(self.current.id)
            if session is not None:
                self.current = session
        self._emit_sessions()
        self._reload_tail()

    # -- condensing earlier messages (DESIGN §5–§7) ---------------------------------

    def _observe(self, new_messages: int, session_id: str | None = None) -> None:
        """Tell the trigger policy that messages were stored and how full it is now."""
        session_id = session_id or (self.current.id if self.current else None)
        if session_id is None or not self.counter.ready:
            return
        model, _known = self.model_info()
        memory = self._trigger_memory.get(session_id, TriggerMemory())
        state = self.engine.state(session_id, model=model)
        self._trigger_memory[session_id] = self.engine.policy.observe(
            memory, state, new_messages=new_messages
        )

    def _maybe_summarize(self, session_id: str) -> None:
        """After a reply: condense in the background when the policy says it is due."""
        if self._summarize_worker is not None or self._shut_down or not self.counter.ready:
            return
        model, _known = self.model_info()
        memory = self._trigger_memory.get(session_id, TriggerMemory())
        decision = self.engine.decide(session_id, model=model, memory=memory)
        self._trigger_memory[session_id] = self.engine.policy.after_decision(memory, decision)
        if decision.summarize:
            self._run_summarizer(session_id, decision)

    def _start_emergency(self, text: str) -> bool:
        """The message would not fit: condense earlier messages, then send it.

        False when condensing cannot help (nothing left to condense, or it was
        tried already for this text); the caller then shows why it cannot be sent.
        """
        assert self.current is not None
        if self._emergency_text == text and self._summarize_worker is None:
            self._emergency_text = None
            return False  # condensed once for this very text, and it still does not fit
        self._pending_send = text
        self._condense_cancelled = False
        self.status_changed.emit("Condensing earlier messages…")
        self.streaming_changed.emit(True)
        if self._summarize_worker is not None:
            return True  # an automatic summary is running: try again when it is done
        model, _known = self.model_info()
        session_id = self.current.id
        memory = self._trigger_memory.get(session_id, TriggerMemory())
        decision = self.engine.decide(session_id, model=model, draft=text, memory=memory)
        if not decision.summarize:
            self._pending_send = None
            self.status_changed.emit("")
            self.streaming_changed.emit(False)
            return False
        self._emergency_text = text
        self._run_summarizer(session_id, decision, draft=text)
        return True

    def _run_summarizer(self, session_id: str, decision: Decision, draft: str = "") -> None:
        model, _known = self.model_info()
        session = self.store.get_session(session_id)
        system_prompt = session.system_prompt if session else ""
        config, counter, builder = self.deps.summarization, self.counter, self.builder
        open_repo, provider_factory = self.deps.summary_store_factory, self.deps.provider_factory
        key, base_url = self.api_key(), self.settings.api_base_url
        cancelled = lambda: self._condense_cancelled or self._shut_down  # noqa: E731

        def run() -> EngineOutcome:
            repo = open_repo()
            try:
                provider = provider_factory(key, base_url) if key else None
                summarizer = Summarizer(
                    config,
                    complete=provider.complete_structured if provider else None,
                    counter=counter,
                )
                engine = SummarizationEngine(config, repo, summarizer, builder)
                return engine.run(
                    session_id,
                    model=model,
                    system_prompt=system_prompt,
                    draft=draft,
                    trigger=SummaryTrigger(decision.trigger or SummaryTrigger.AUTO),
                    decision=decision,
                    cancelled=cancelled,
                )
            finally:
                repo.close()

        worker = CallWorker(run)
        worker.succeeded.connect(lambda outcome: self._summarized(session_id, outcome))
        worker.failed.connect(self._summarize_failed)
        worker.finished.connect(self._summarize_done)
        self._summarize_worker = worker
        self.tracker.start(worker)

    def _summarize_done(self) -> None:
        self._summarize_worker = None
        pending, self._pending_send = self._pending_send, None
        if pending is None:
            return
        self.status_changed.emit("")
        self.streaming_changed.emit(False)
        if self._condense_cancelled or self._shut_down:
            self._emergency_text = None
            return
        if self.send(pending):
            self._emergency_text = None
            self.pending_sent.emit()

    def _summarized(self, session_id: str, outcome: EngineOutcome) -> None:
        if outcome.changed:
            memory = self._trigger_memory.get(session_id, TriggerMemory())
            self._trigger_memory[session_id] = self.engine.policy.after_summary(
                memory, outcome.state_after
            )
        if self.current is not None and self.current.id == session_id:
            self._reload_tail()
        if outcome.covered_messages:
            count = outcome.covered_messages
            self.notice_raised.emit(
                "Earlier messages condensed",
                f"Cairn condensed {count} older message{'s' if count != 1 else ''} so Claude "
                "can keep up. Nothing was deleted: every message is still on this computer.",
            )

    def _summarize_failed(self, error: UserFacingError) -> None:
        # The conversation is unchanged; a failed attempt is recorded by the engine.
        log.warning("Condensing failed: %s (%s)", error.message, error.detail)

    def shutdown(self) -> None:
        """Stop the reply (keeping its text) and wait for every thread."""
        self._shut_down = True
        self._render_timer.stop()
        self.tracker.stop_all()
        self.worker = None
