"""A chat service without Qt: a real SQLite file, the fake server through the real SDK,
an in-memory keyring, and a `QueueLoop` the test runs."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from app.chat.events import Activity, ChatEvents, SummaryPreview, SummaryReport
from app.chat.loop import QueueLoop
from app.chat.service import ChatService, ServiceDependencies
from app.core.caching import CacheUse
from app.core.catalog import ModelInfo
from app.core.context import ContextState
from app.core.errors import UserFacingError
from app.core.lookup import Lookup
from app.core.models import Message, Session
from app.core.paths import AppPaths
from app.core.settings import AppSettings, load_settings
from app.core.summary import Summary
from app.core.tokens import default_counter
from app.llm.anthropic_provider import AnthropicProvider
from app.secrets.keystore import SERVICE_NAME, USERNAME, KeyStore
from app.store.calibration_file import CalibrationFile
from app.store.database import open_database
from app.store.model_cache import ModelCache
from app.store.sessions import SessionStore
from app.store.summaries import SummaryStore
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.keyring_backend import MemoryKeyring

TEST_KEY = "sk-ant-api03-test-key-0123456789abcdef"
SMALL = ModelInfo(
    id="claude-small", display_name="Claude Small", max_input_tokens=4_000, max_tokens=400
)


@dataclass
class RecordingEvents(ChatEvents):
    """Every event, in order, as (name, arguments).

    A summary's preview is accepted as it is (posted to the loop, as a user would click
    Accept) while `accept_previews`; a test of the preview itself turns it off and answers.
    """

    seen: list[tuple[str, tuple[Any, ...]]] = field(default_factory=list)
    accept_previews: bool = True
    accept: Callable[[], None] | None = None

    def named(self, name: str) -> list[tuple[Any, ...]]:
        return [arguments for event, arguments in self.seen if event == name]

    def clear(self) -> None:
        self.seen.clear()

    def sessions_listed(self, sessions: Sequence[Session], current_id: str | None) -> None:
        self.seen.append(("sessions_listed", (list(sessions), current_id)))

    def session_changed(self, session: Session) -> None:
        self.seen.append(("session_changed", (session,)))

    def cache_use_changed(self, use: CacheUse) -> None:
        self.seen.append(("cache_use_changed", (use,)))

    def session_removed(self, session_id: str) -> None:
        self.seen.append(("session_removed", (session_id,)))

    def conversation_opened(
        self, session: Session | None, page: Sequence[Message], has_earlier: bool
    ) -> None:
        self.seen.append(("conversation_opened", (session, list(page), has_earlier)))

    def message_added(self, message: Message) -> None:
        self.seen.append(("message_added", (message,)))

    def message_sending(self, message: Message) -> None:
        self.seen.append(("message_sending", (message,)))

    def message_stored(self, sending_id: int, message: Message) -> None:
        self.seen.append(("message_stored", (sending_id, message)))

    def message_not_sent(self, sending_id: int, text: str) -> None:
        self.seen.append(("message_not_sent", (sending_id, text)))

    def message_text_changed(self, message_id: int, text: str) -> None:
        self.seen.append(("message_text_changed", (message_id, text)))

    def message_updated(self, message: Message) -> None:
        self.seen.append(("message_updated", (message,)))

    def message_removed(self, message_id: int) -> None:
        self.seen.append(("message_removed", (message_id,)))

    def unsaved_changed(self, message_id: int | None) -> None:
        self.seen.append(("unsaved_changed", (message_id,)))

    def activity_changed(self, activity: Activity) -> None:
        self.seen.append(("activity_changed", (activity,)))

    def context_changed(self, state: ContextState | None) -> None:
        self.seen.append(("context_changed", (state,)))

    def summaries_changed(self, summaries: Sequence[Summary]) -> None:
        self.seen.append(("summaries_changed", (tuple(summaries),)))

    def summary_made(self, report: SummaryReport) -> None:
        self.seen.append(("summary_made", (report,)))

    def error_raised(self, error: UserFacingError) -> None:
        self.seen.append(("error_raised", (error,)))

    def notice_raised(self, title: str, text: str) -> None:
        self.seen.append(("notice_raised", (title, text)))

    def restore_progressed(self, share: float | None) -> None:
        self.seen.append(("restore_progressed", (share,)))

    def status_changed(self, text: str) -> None:
        self.seen.append(("status_changed", (text,)))

    def key_needed(self) -> None:
        self.seen.append(("key_needed", ()))

    def models_changed(self, models: Sequence[ModelInfo], selected: str) -> None:
        self.seen.append(("models_changed", (list(models), selected)))

    def pending_sent(self) -> None:
        self.seen.append(("pending_sent", ()))

    def summary_progress(self, text: str | None) -> None:
        self.seen.append(("summary_progress", (text,)))

    def lookup_made(self, lookup: Lookup) -> None:
        self.seen.append(("lookup_made", (lookup,)))

    def summary_previewed(self, preview: SummaryPreview) -> None:
        self.seen.append(("summary_previewed", (preview,)))
        if self.accept_previews and self.accept is not None:
            self.accept()


class CountingStore(SessionStore):
    """The loop thread's store, counting the reads a turn must never make."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.tail_reads = 0
        self.appends = 0  # messages stored on the loop's thread

    def append_message(self, *args: Any, **kwargs: Any) -> Message:
        self.appends += 1
        return super().append_message(*args, **kwargs)

    def live_messages(self, session_id: str) -> list[Message]:
        self.tail_reads += 1
        return super().live_messages(session_id)

    def live_entries(self, session_id: str) -> list[Any]:
        self.tail_reads += 1
        return super().live_entries(session_id)


@dataclass
class Chat:
    """A running service and what it needs, for one test."""

    service: ChatService
    loop: QueueLoop
    events: RecordingEvents
    store: CountingStore
    paths: AppPaths
    server: FakeAnthropicServer

    def run_until(self, done: Callable[[], bool], timeout: float = 15.0) -> None:
        self.loop.run_until(done, timeout)

    def idle(self) -> None:
        """Wait until the conversation on screen is idle and no job of it runs."""
        current = lambda: self.service.current  # noqa: E731
        self.run_until(lambda: current().state.activity is Activity.IDLE and not current().has_jobs)

    def send(self, text: str) -> None:
        """Send `text` and wait for the reply (or the failure) to end; a message that
        waits while earlier ones are condensed is waited for too."""
        waited = len(self.events.named("pending_sent"))
        if not self.service.send(text):
            activity = self.service.current.state.activity
            assert activity in (Activity.CONDENSING, Activity.LOADING), self.events.named(
                "error_raised"
            )
            self.run_until(lambda: len(self.events.named("pending_sent")) > waited)
        self.idle()

    def start_streaming(self, text: str, parts: int, *, word: str = "part", until: str = "") -> str:
        """Send `text` to a reply of `parts` words ("part0 part1 …") streamed 20 ms apart,
        and return its whole text once the text on screen holds `until` (by default, once
        any has arrived): the rest is still on its way."""
        pieces = [f"{word}{i} " for i in range(parts)]
        self.server.add_reply("".join(pieces), chunks=pieces, chunk_delay=0.02)
        assert self.service.send(text)
        told = lambda: self.events.named("message_text_changed")  # noqa: E731
        self.run_until(lambda: any(until in shown for _, shown in told()))
        return "".join(pieces)

    def stored(self) -> list[Message]:
        session_id = self.service.current.state.session_id
        assert session_id is not None
        return self.store.messages(session_id)

    def summaries(self) -> SummaryStore:
        return SummaryStore.open(self.paths.database)


@pytest.fixture
def start_chat(
    fake_server: FakeAnthropicServer, cairn_home: Path, memory_keyring: MemoryKeyring
) -> Iterator[Callable[..., Chat]]:
    """Starts a service on this test's CAIRN_HOME (call again after `shutdown` to restart)."""
    started: list[Chat] = []
    memory_keyring.passwords[(SERVICE_NAME, USERNAME)] = TEST_KEY

    def start(
        *,
        settings: AppSettings | None = None,
        with_key: bool = True,
        wait_for_models: bool = True,
        writable: bool = True,
    ) -> Chat:
        if not with_key:
            memory_keyring.passwords.clear()
        paths = AppPaths.from_environment()
        paths.ensure()
        opened = open_database(paths.database)
        store = CountingStore(opened.connection, database=opened.path)
        database = paths.database
        loaded = settings or load_settings(paths.settings_file).settings
        loaded = loaded.model_copy(update={"api_base_url": fake_server.base_url})
        loop = QueueLoop()
        events = RecordingEvents()
        deps = ServiceDependencies(
            store=store,
            database=database,
            open_store=lambda: SessionStore.open(database),
            open_summaries=lambda: SummaryStore.open(database),
            keystore=KeyStore(),
            provider_factory=lambda key, url: AnthropicProvider(key, url),
            settings=loaded,
            settings_path=paths.settings_file,
            calibration_file=CalibrationFile.in_data_dir(paths),
            model_cache=ModelCache.in_data_dir(paths),
            counter=default_counter(),
        )
        service = ChatService(deps, loop, events)
        events.accept = lambda: loop.post(service.current.condensing.accept)
        chat = Chat(service, loop, events, store, paths, fake_server)
        started.append(chat)
        service.start(writable=writable)
        if wait_for_models:
            service.prepare_network()  # as the window does when the user starts typing
        chat.run_until(
            lambda: (
                service.counter.ready
                and service.runner.running == 0
                and (
                    service.model_wait.settled
                    or not service.credentials.has_key()
                    or not wait_for_models
                )
            )
        )
        return chat

    yield start
    for chat in started:
        chat.service.shutdown()
        assert chat.service.runner.running == 0, "a background task outlived the service"
        chat.store.close()
