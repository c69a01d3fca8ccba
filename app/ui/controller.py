"""The controller: turns user actions into store writes and worker threads.

It owns the GUI thread's store connection and the running workers; the
window only calls its methods and listens to its signals (DESIGN §7).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
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
from app.core.errors import ApiKeyRejectedError, StorageError, UserFacingError
from app.core.models import Message, MessageStatus, Role, Session
from app.core.settings import AppSettings, save_settings
from app.core.text import DEFAULT_TITLE, title_from_first_message, validate_message_text
from app.core.tokens import TokenCounter, default_counter
from app.llm.provider import ChatProvider, ChatRequest
from app.secrets.keystore import KeyStore
from app.store.calibration_file import CalibrationFile
from app.store.model_cache import ModelCache
from app.store.sessions import SessionStore
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
        self._draft = ""
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

    def make_provider(self, api_key: str | None = None) -> ChatProvider:
        return self.deps.provider_factory(api_key or self.api_key(), self.settings.api_base_url)

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
        self._tail = self.store.live_messages(self.current.id) if self.current else []
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
            tail=self._tail,
            draft=text,
            model_known=known,
        )

    # -- sending -------------------------------------------------------------------

    @property
    def streaming(self) -> bool:
        return self.worker is not None

    def send(self, text: str) -> bool:
        """Store the user's message and ask for a reply. False keeps the text in the composer."""
        if self.worker is not None:
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

        def prepare(provider: ChatProvider) -> BuiltRequest:
            def exact_count(built: BuiltRequest) -> int:
                return provider.count_tokens(
                    ChatRequest(built.model, built.messages, built.max_tokens, built.system)
                )

            return builder.build_request(
                model=model,
                system_prompt=system_prompt,
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

    def shutdown(self) -> None:
        """Stop the reply (keeping its text) and wait for every thread."""
        self._shut_down = True
        self._render_timer.stop()
        self.tracker.stop_all()
        self.worker = None
