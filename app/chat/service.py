"""The chat service: Cairn's conversations, settings, models and key, without Qt.

`ChatService` is what a front end talks to (the window, whose controller turns
its events into Qt signals; tests directly). It owns every piece of state the
window shows: the list of conversations, the one on screen (a `Conversation`,
whose parts the front end acts on), the models, the settings. The front end calls
its methods and its parts', and listens to `ChatEvents`; it never reads the store
to find out what changed. Everything runs on one thread (the loop's); background
work comes back there through the `JobRunner`.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from app.chat.archive import SummaryArchive
from app.chat.attachments import ComposerAttachments
from app.chat.backups import Backups
from app.chat.cache_use import CacheUseTracker
from app.chat.conversation import Conversation
from app.chat.credentials import Credentials
from app.chat.credentials import ProviderFactory as ProviderFactory
from app.chat.events import Activity, ChatEvents, HistoryEntry
from app.chat.exports import Exports
from app.chat.history import History
from app.chat.lookups import ArchiveLookups
from app.chat.loop import EventLoop
from app.chat.model_fallback import ModelChoice
from app.chat.model_wait import ModelListWait
from app.chat.runner import Job, JobRunner
from app.chat.state import Shared
from app.chat.summary_process import SummaryProcess
from app.chat.uploads import FileUploads
from app.core.catalog import (
    FALLBACK_MODELS,
    ModelInfo,
    clean_model_list,
    model_limits,
    pick_default_model,
)
from app.core.context import ContextBuilder
from app.core.errors import ApiKeyRejectedError, StorageError, UserFacingError
from app.core.models import Message, Session
from app.core.settings import AppSettings, save_settings
from app.core.summary import Summary
from app.core.tokens import TokenCounter, default_counter
from app.secrets.keystore import KeyStore
from app.store.calibration_file import CalibrationFile
from app.store.model_cache import ModelCache
from app.store.sessions import SessionStore
from app.store.summaries import SummaryStore

if TYPE_CHECKING:
    from app.store.lookups import LookupStore

log = logging.getLogger(__name__)

PAGE_SIZE = 50
# The tokenizer loads (and older messages are counted) this long after start-up,
# so that the first paint does not wait for it.
WARM_UP_DELAY_SECONDS = 0.25
# What painting the window does not need, imported where first used (issue 20), and
# imported in the warm-up, one module a turn of the loop, so that the first send, search
# or summary does not wait for them.
AFTER_PAINT_IMPORTS = (
    "app.core.recall",
    "app.core.recall_rank",
    "app.core.search_keys",
    "app.chat.recall",
    "app.store.lookups",
    "app.core.search",
    "app.store.search",
    "app.chat.reply",
)


@dataclass
class ServiceDependencies:
    """What the service needs from the outside world; tests pass fakes or temporary paths.

    Attributes:
        store: the loop thread's store, on the connection `open_database` returned.
        database: its file (for the summary process, which opens its own connection).
        open_store, open_summaries: a store on a new connection, for a job's thread.
    """

    store: SessionStore
    database: Path
    open_store: Callable[[], SessionStore]
    open_summaries: Callable[[], SummaryStore]
    keystore: KeyStore
    provider_factory: ProviderFactory
    settings: AppSettings
    settings_path: Path
    calibration_file: CalibrationFile
    model_cache: ModelCache
    counter: TokenCounter = field(default_factory=default_counter)
    # The data folder may only be read (app.store.database.open_read_only): nothing is
    # written at start (no recovery, no count, no backup); writes asked for are refused.
    read_only: bool = False


class ChatService:
    """Cairn's conversations and settings, for one front end (see the module notes).

    A front end acts on the conversation on screen through its parts
    (`current.turns.stop()`, `current.condensing.summarize()`,
    `current.versions.regenerate(message)`…: `app.chat.conversation` lists them), and
    on the rest through the service's own.

    Attributes:
        current: the conversation on screen.
        models: the models to offer (the server's list, else the bundled one).
        runner: runs background work; `shutdown` waits for it.
        credentials: the API key (the key dialogs' `KeyManager`).
        archive: what a summary stands for, and the archive searches of the replies.
        history: finding what was said, and the History window's reads.
        attachments: the composer's files (read, checked and kept in the background),
            handed to the conversation on screen.
        exports: export and import of conversations.
        backups: the daily backup, restoring one, deleting archived originals.
    """

    def __init__(self, deps: ServiceDependencies, loop: EventLoop, events: ChatEvents) -> None:
        self._deps = deps
        self._events = events
        self._settings = deps.settings
        self.runner = JobRunner(loop)
        self.loop = loop
        self.counter = deps.counter
        self.calibrations = deps.calibration_file.load()
        cached = deps.model_cache.load()
        self.models: list[ModelInfo] = list(cached.models if cached else FALLBACK_MODELS)
        self.credentials = Credentials(
            deps.keystore,
            deps.provider_factory,
            base_url=lambda: self._settings.api_base_url,
            runner=self.runner,
            saved=self.refresh_models,
        )
        self._models_job: Job[list[ModelInfo]] | None = None
        self.model_wait = ModelListWait(loop, lambda: self.current)
        self._shut_down = False
        # The SDK is loaded (by the model list) when the user starts typing, not at start.
        self._network_prepared = False
        self._mended = True  # what a crash left is mended (see `writes_resumed`)
        self._tidy_job: Job[bool] | None = None
        self.summary_process = SummaryProcess()
        self.cache_use = CacheUseTracker(
            deps.store,
            deps.open_store,
            self.runner,
            events,
            lambda: self.current.state.session_id,
        )
        self.model_choice = ModelChoice(
            lambda: self._settings, deps.settings_path, lambda: self.models
        )
        # Files uploaded once (Files API), and their deletion with their messages.
        self.uploads = FileUploads(
            deps.database,
            self.runner,
            loop,
            self.credentials.provider,
            found=lambda: self.current.gauge.tell(),
        )
        self._shared = _shared(self, deps, loop, events)
        # Conversations off screen stay open while a job of theirs runs.
        self._open: dict[str, Conversation] = {}
        # What a summary stands for, and the archive searches Claude ran for a reply:
        # `archive.originals(summary_id)`, `archive.lookups(message_ids)`.
        self.archive = SummaryArchive(deps.open_summaries, lambda: _open_lookups(deps.database))
        self.exports = Exports(
            self.runner, events, deps.store, deps.database, lambda: self.current.state.session_id
        )
        self.backups = _backups(self, deps.database, events)  # backups, restore, originals
        self.history = History.on(deps.database, self.runner, events)  # search, History window
        self.current = self._new_conversation()
        self.attachments = ComposerAttachments(
            self.runner,
            deps.database,
            deps.counter,
            lambda: self.current.outgoing,
            lambda: self.current.state.model_id,
        )

    # --- start and stop

    def start(self, *, writable: bool = True) -> None:
        """Show the newest conversation, then warm up the tokenizer (the models are listed
        when the user starts typing: `prepare_network`).

        Not `writable` while the database's check after a crash runs (its writes are
        held): what the crash left to mend waits for `writes_resumed`.
        """
        can_write = writable and not self._deps.read_only
        recovered = self._deps.store.recover_interrupted() if can_write else 0
        self._mended = writable
        sessions = self._deps.store.list_sessions()
        if sessions:
            self._show(self._conversation_for(sessions[0]))
        else:
            self._show(self._new_conversation())
        self._events.sessions_listed(sessions, self.current.state.session_id)
        self._tell_recovered(recovered)
        self._events.models_changed(self.models, self.current.state.model_id)
        # Not before the conversation is on screen: loading the tokenizer is work that
        # would slow that paint.
        self.loop.call_later(WARM_UP_DELAY_SECONDS, self._warm_up)

    def prepare_network(self) -> None:
        """Get ready to talk to Claude, in the background: list the models (which loads
        the SDK, ~45 MiB and a second of CPU, on a worker) and delete the uploads left to
        delete. Called when the user starts typing a message, so the first send does not
        wait for the SDK, and someone who only reads never loads it; at the latest when a
        message is sent. Once per run; a bad key is reported when the list finds it."""
        if self._network_prepared or self._shut_down or not self.credentials.has_key():
            return
        self._network_prepared = True
        self.refresh_models()
        if not self._deps.read_only:  # it writes what it deleted
            self.uploads.purge()  # what was left to delete; and whether the server keeps files

    def writes_resumed(self) -> None:
        """The database passed its check after a crash: mend what the crash left (replies
        cut off while streaming, messages not counted yet)."""
        if self._mended or self._shut_down:
            return
        self._mended = True
        try:
            recovered = self._deps.store.recover_interrupted()
        except StorageError as error:
            log.warning("Could not mark interrupted replies: %s (%s)", error.message, error.detail)
            recovered = 0
        current = self.current
        if current.state.session is not None and not current.state.activity.busy:
            # It showed the replies the crash cut off as still being written: shown
            # again as they are now, and its live tail read again.
            current.opening.load()
            self._show(current)
        self._tell_recovered(recovered)
        self._backfill()  # the warm-up counted nothing while writes were held
        self.tidy_search_index()  # nor tidied the index (an upgrade's walk just built it)

    def _tell_recovered(self, recovered: int) -> None:
        if recovered:
            self._events.notice_raised(
                "Recovered",
                "Cairn was closed while Claude was replying. The text that had arrived was "
                f"kept in {recovered} repl{'ies' if recovered != 1 else 'y'}, marked as stopped.",
            )

    def shutdown(self) -> None:
        """Stop every reply (its text is kept) and summary, and wait for their threads."""
        self._shut_down = True
        self.model_wait.close()
        self.runner.shutdown()
        self._deps.calibration_file.flush()  # what replies learned and left for later
        self.archive.close()
        self.history.close()
        self.summary_process.close()
        self.credentials.close()
        self.attachments.close()

    def save_unsaved(self) -> int:
        """A last try at the replies the disk did not take (before quitting); how many
        are still kept in memory only."""
        left = 0
        for conversation in {id(c): c for c in (self.current, *self._open.values())}.values():
            if conversation.unsaved.kept is not None and not conversation.unsaved.saved():
                left += 1
        return left

    def _warm_up(self) -> None:
        if self._shut_down:
            return
        self._backfill()
        if not self._deps.read_only:
            self.backups.start_daily()
            self.tidy_search_index()
        self._import_after_paint(list(AFTER_PAINT_IMPORTS))

    def _import_after_paint(self, modules: list[str]) -> None:
        """Import `modules` one a turn of the loop (each a few milliseconds at most)."""
        if self._shut_down or not modules:
            return
        importlib.import_module(modules.pop(0))
        self.loop.post(lambda: self._import_after_paint(modules))

    def tidy_search_index(self) -> None:
        """Merge the search index's segments in the background, when worth it and writes
        are not held (app.store.search_upkeep: one transaction, on a worker)."""
        if self._deps.read_only or self._shut_down:
            return
        if self._tidy_job is not None and not self._tidy_job.finished:
            return
        database = self._deps.database

        def work(job: Job[bool]) -> bool:
            from app.store.search_upkeep import tidy_index

            return tidy_index(database, stop=lambda: job.cancelled)

        def tidied(done: bool) -> None:
            if done:
                log.info("Tidied the search index")

        def failed(error: UserFacingError) -> None:  # it is tried again at the next start
            log.warning("Could not tidy the search index: %s (%s)", error.message, error.detail)

        self._tidy_job = self.runner.start(
            Job("tidy-search-index", work, done=tidied, failed=failed)
        )

    def _backfill(self) -> None:
        """Load the tokenizer, and count the messages stored without an estimate (a job)."""
        counter, open_store, mended = self.counter, self._deps.open_store, self._mended

        read_only = self._deps.read_only

        def load_and_backfill(_job: object) -> int:
            counter.load()
            if read_only or not mended:
                return 0  # writes are held until the check after a crash passes
            store = open_store()
            try:
                return store.backfill_token_estimates(counter.count)
            finally:
                store.close()

        self.runner.start(
            Job("warm-up", load_and_backfill, done=self._counted, failed=self._count_failed)
        )

    def _counted(self, backfilled: int) -> None:
        if backfilled:
            log.info("Counted tokens of %d older messages", backfilled)
            current = self.current
            if current.state.session is not None and current.state.activity is Activity.IDLE:
                current.opening.load()  # their estimates were guesses until now
                return
        self.current.gauge.tell()  # the figures, first known now (they may warm summaries)

    def _count_failed(self, error: UserFacingError) -> None:
        log.warning("Could not count older messages: %s (%s)", error.message, error.detail)
        self.current.gauge.tell()

    # --- conversations

    def new_conversation(self) -> None:
        """An empty conversation on screen; it is stored when its first message is sent."""
        self._show(self._new_conversation())
        self._events.models_changed(self.models, self.current.state.model_id)

    def open_session(self, session_id: str) -> None:
        """Put a stored conversation on screen."""
        if self.current.state.session_id == session_id:
            return
        conversation = self._open.get(session_id)
        if conversation is None:
            session = self._deps.store.get_session(session_id)
            if session is None:
                self._events.session_removed(session_id)
                return
            conversation = self._conversation_for(session)
        self._show(conversation)
        self._events.models_changed(self.models, conversation.state.model_id)

    def earlier_page(self, before_seq: int) -> tuple[list[Message], bool]:
        """The messages before `before_seq` on screen (a page), and whether more exist."""
        session_id = self.current.state.session_id
        if session_id is None:
            return [], False
        page = self._deps.store.messages(session_id, before_seq=before_seq, limit=PAGE_SIZE + 1)
        return page[-PAGE_SIZE:], len(page) > PAGE_SIZE

    # --- what a summary stands for (reads, on the loop's thread: short indexed queries)

    def summary_children(self, summary_id: str) -> list[Summary]:
        """The summaries a compressed summary folded in, oldest first (none for condensed)."""
        session_id = self.current.state.session_id
        return [] if session_id is None else self.archive.children(session_id, summary_id)

    def summary_history(self) -> list[HistoryEntry]:
        """The conversation on screen's audit trail (every summary and undo), oldest first."""
        session_id = self.current.state.session_id
        return [] if session_id is None else self.archive.history(session_id)

    def rename_session(self, session_id: str, title: str) -> None:
        title = " ".join(title.split())
        if not title:
            return
        try:
            session = self._deps.store.rename_session(session_id, title)
        except StorageError as error:
            self._events.error_raised(error)
            stored = self._deps.store.get_session(session_id)
            if stored is not None:
                self._events.session_changed(stored)  # put the old title back
            return
        conversation = self._open.get(session_id)
        if conversation is None and self.current.state.session_id == session_id:
            conversation = self.current  # the one on screen is not among the others
        if conversation is not None:
            conversation.state.session = session
        self._events.session_changed(session)

    def delete_session(self, session_id: str) -> None:
        """Delete a conversation (the window asked the user first)."""
        try:
            self._deps.store.delete_session(session_id)
        except StorageError as error:
            self._events.error_raised(error)
            return
        self.uploads.purge()  # its files' uploads, in the background
        # A reply still streaming into it stops; its last writes find no row, harmlessly.
        conversation = self._open.pop(session_id, None)
        if conversation is not None:
            conversation.turns.forget()
        self._events.session_removed(session_id)
        if self.current.state.session_id == session_id:
            remaining = self._deps.store.list_sessions()
            if remaining:
                self.open_session(remaining[0].id)
            else:
                self.new_conversation()

    # --- the conversation on screen

    def send(self, text: str) -> bool:
        """Send a message in the conversation on screen; False keeps it in the composer
        (a message that waits for the model list is sent later: see `ModelListWait`).
        The composer's files go with it once handed over (`attachments.hand_over`)."""
        # Before this run's list arrives (or even is asked for: nothing was typed, the
        # text was put in the composer some other way).
        self.prepare_network()
        if self.credentials.has_key() and self.model_wait.hold(self.current, text):
            return False
        return self.current.turns.send(text)

    # --- models

    def refresh_models(self) -> None:
        """List the models in the background; keep the bundled list if that fails."""
        provider = self.credentials.provider()
        if self._models_job is not None or self._shut_down or provider is None:
            return
        cache = self._deps.model_cache

        def fetch(_job: object) -> list[ModelInfo]:
            models = clean_model_list(provider.list_models())
            if models:
                cache.save(models)
            return models

        self._models_job = self.runner.start(
            Job("models", fetch, done=self._models_listed, failed=self._models_failed)
        )

    def _models_listed(self, models: list[ModelInfo]) -> None:
        self._models_job = None
        if not models:
            self.model_wait.settle()
            return
        self.models = list(models)
        for conversation in (self.current, *self._open.values()):
            state = conversation.state
            configured = state.session.model if state.session else None
            state.model_id = pick_default_model(configured or self._settings.model, self.models)
        self._events.models_changed(self.models, self.current.state.model_id)
        self._events.context_changed(self.current.gauge.measure())
        self.model_wait.settle()

    def _models_failed(self, error: UserFacingError) -> None:
        # The bundled list stays; a bad key is worth saying now, the rest can wait.
        self._models_job = None
        self.model_wait.settle()
        log.warning("Could not list models: %s (%s)", error.message, error.detail)
        if isinstance(error, ApiKeyRejectedError):
            self._events.error_raised(error)

    # --- settings

    @property
    def store(self) -> SessionStore:
        """The loop thread's store (on the connection `open_database` returned)."""
        return self._deps.store

    @property
    def settings(self) -> AppSettings:
        """The settings in force (a copy: change them with `update_settings`)."""
        return self._settings.model_copy(deep=True)

    def update_settings(self, settings: AppSettings) -> None:
        """Save new settings and put them in force; the next decision follows them."""
        old = self._settings
        self._settings = settings.model_copy(deep=True)
        try:
            save_settings(self._deps.settings_path, self._settings)
        except StorageError as error:
            self._events.error_raised(error)
        if settings.model and settings.model != self.current.state.model_id:
            self.current.model.select(settings.model)
        if settings.api_base_url != old.api_base_url:
            self.refresh_models()
        self._events.context_changed(self.current.gauge.measure())

    # --- inside

    def _new_conversation(self) -> Conversation:
        return Conversation(
            self._shared, None, pick_default_model(self._settings.model, self.models)
        )

    def _conversation_for(self, session: Session) -> Conversation:
        return Conversation(
            self._shared, session, pick_default_model(session.model or None, self.models)
        )

    def _show(self, conversation: Conversation) -> None:
        """Put `conversation` on screen; the one it replaces stays open while it works."""
        previous, state = self.current, conversation.state
        before = previous.state
        if previous is not conversation and before.session_id is not None:
            if (previous.has_jobs or previous.unsaved.kept) and not before.deleted:
                self._open[before.session_id] = previous
            else:
                self._open.pop(before.session_id, None)
        self.current = conversation
        if state.session_id is not None:
            self._open[state.session_id] = conversation
        newest: Sequence[Message] = []
        if state.session_id is not None:
            newest = self._deps.store.messages(state.session_id, limit=PAGE_SIZE + 1)
        page, has_earlier = conversation.unsaved.over(newest[-PAGE_SIZE:]), len(newest) > PAGE_SIZE
        self._events.conversation_opened(state.session, page, has_earlier)
        conversation.unsaved.opened()  # a reply the disk did not take yet: its text and mark
        self.cache_use.opened(state.session_id)
        self._events.activity_changed(state.activity)
        condensing = conversation.condensing
        self._events.summary_progress(condensing.progress)
        if condensing.preview is not None:
            self._events.summary_previewed(condensing.preview)
        if state.loaded:
            self._events.summaries_changed(tuple(state.summaries))
            self._events.context_changed(conversation.gauge.measure())
        else:
            conversation.opening.load()


def _backups(service: ChatService, database: Path, events: ChatEvents) -> Backups:
    """The service's safekeeping, wired to what it must know of the conversations."""

    def busy() -> bool:
        # A reply kept until the disk takes it would be saved into the restored file.
        conversations = (service.current, *service._open.values())
        return any(c.has_jobs or c.unsaved.kept for c in conversations)

    def summaries_touched(session_id: str) -> None:
        if service.current.state.session_id == session_id:
            events.summaries_changed(tuple(service.current.state.summaries))

    return Backups(
        database,
        service.runner,
        events,
        busy=busy,
        reload=service.start,
        summaries_touched=summaries_touched,
        post=service.loop.post,
        originals_deleted=service.uploads.purge,
    )


def _open_lookups(database: Path) -> LookupStore:
    # Imported here: the archive's searches are read when a summary is opened, not to paint.
    from app.store.lookups import LookupStore

    return LookupStore.open(database)


def _shared(
    service: ChatService, deps: ServiceDependencies, loop: EventLoop, events: ChatEvents
) -> Shared:
    """What every conversation of `service` shares (its jobs, stores, settings, models)."""
    return Shared(
        loop=loop,
        runner=service.runner,
        events=events,
        store=deps.store,
        open_store=deps.open_store,
        open_summaries=deps.open_summaries,
        builder=ContextBuilder(deps.counter, service.calibrations),
        counter=deps.counter,
        calibrations=service.calibrations,
        calibration_file=deps.calibration_file,
        provider=service.credentials.provider,
        api_key=service.credentials.api_key,
        base_url=lambda: service._settings.api_base_url,
        database=deps.database,
        summary_process=service.summary_process,
        config=lambda: service._settings.summarization,
        model_info=lambda model_id: model_limits(model_id, service.models),
        model_choice=service.model_choice,
        is_current=lambda state: state is service.current.state,
        session_changed=service.cache_use.following(events.session_changed),
        cache_after=service.cache_use.reading_after,
        cache_read=service.cache_use.read_by_reply,
        recall=lambda: service._settings.recall,
        default_instructions=lambda: service._settings.new_conversation_instructions(),
        think_longer=lambda: service._settings.think_longer,
        uploads=service.uploads,
        lookups=lambda session_id, tell: ArchiveLookups.for_reply(
            service._settings.recall,
            deps.database,
            session_id,
            lambda lookup: loop.post(lambda: tell(lambda events: events.lookup_made(lookup))),
            deps.counter.count,
        ),
    )
