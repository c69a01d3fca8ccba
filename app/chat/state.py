"""What one conversation is, as every part of it reads and changes it (DESIGN §1).

A conversation is assembled (`app.chat.conversation`) from parts, each owning one
concern: the files of the next message (`attachments.Outgoing`), the gauge and the
draft (`gauge`), a reply the disk did not take (`unsaved`), summaries (`summaries`),
pins (`pins`), the model (`model_use`), instructions (`instructions`), versions (`versions`), how
replies end (`reply_endings`), a turn — the message sent, the reply streamed
(`turns`) — and opening a stored conversation (`opening`). Every part depends on
this module, and on the parts below it, never on one above it nor on the
`Conversation` that assembles them.

`ConversationState` is what they share: the stored session and the model, the live
tail and the memory block, what the conversation is busy with and what waits for it
to be done, and the one way to tell the front end. A part that must ask for a reply
(Continue, Regenerate, an edit) or go on with what waited (condensing ended) does so
through `start_reply` and `go_on`: the `Turns` that does both is given by the
assembler.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from app.chat.events import Activity, ChatEvents
from app.chat.lookups import LookupsFactory, no_lookups
from app.chat.loop import EventLoop
from app.chat.model_fallback import ModelChoice
from app.chat.runner import JobRunner
from app.chat.summary_process import SummaryProcess
from app.chat.uploads import FileUploads
from app.core.calibration import Calibrations
from app.core.catalog import ModelInfo
from app.core.context import ContextBuilder
from app.core.errors import UserFacingError
from app.core.live_tail import LiveTail, TailEntry
from app.core.models import Session
from app.core.settings import RecallSettings
from app.core.summarization_config import SummarizationConfig
from app.core.summary import Summary
from app.core.tokens import TokenCounter
from app.llm.provider import ChatProvider
from app.store.cache_use import CacheRead
from app.store.calibration_file import CalibrationFile
from app.store.sessions import SessionStore
from app.store.summaries import SummaryStore


@dataclass
class Shared:
    """What every conversation uses, owned by the `ChatService`.

    Attributes:
        store: the loop thread's own store (short writes: the user's message, a pin).
        open_store, open_summaries: a store on a new connection, for a job's thread.
        provider: the provider for the current key and address; None without a key.
        api_key, base_url: what the summary process makes its own client with.
        database: the cairn.db file, for the summary process.
        summary_process: where summaries are made (a process of their own).
        config: the summarization settings now in force.
        recall: the recall settings now in force.
        model_info: a model's limits, and whether they are known.
        model_choice: the models a reply falls back to, and the model new conversations
            start with.
        is_current: whether a conversation is the one on screen.
    """

    loop: EventLoop
    runner: JobRunner
    events: ChatEvents
    store: SessionStore
    open_store: Callable[[], SessionStore]
    open_summaries: Callable[[], SummaryStore]
    builder: ContextBuilder
    counter: TokenCounter
    calibrations: Calibrations
    calibration_file: CalibrationFile
    provider: Callable[[], ChatProvider | None]
    api_key: Callable[[], str | None]
    base_url: Callable[[], str | None]
    database: Path
    summary_process: SummaryProcess
    config: Callable[[], SummarizationConfig]
    model_info: Callable[[str], tuple[ModelInfo, bool]]
    model_choice: ModelChoice
    is_current: Callable[[ConversationState], bool]
    session_changed: Callable[[Session], None]
    recall: Callable[[], RecallSettings]
    # The archive tool's loop for a reply of a conversation (None: the tool is off).
    lookups: LookupsFactory = no_lookups
    # The instructions a new conversation starts with (Settings).
    default_instructions: Callable[[], str] = lambda: ""
    # Settings → "Think longer" (app.core.thinking).
    think_longer: Callable[[], bool] = lambda: False
    # Files uploaded once through the Files API (None: always base64).
    uploads: FileUploads | None = None
    # The seq after which a reply's job reads the conversation's cache figures, off the
    # loop's thread (None: it does not; app.chat.cache_use), and where they go once read.
    cache_after: Callable[[str], int | None] = lambda _session_id: None
    cache_read: Callable[[str, CacheRead | None], None] = lambda _session_id, _read: None


class Turns(Protocol):
    """Asking Claude, as the parts below it need it (`app.chat.turns.ConversationTurns`)."""

    def start_reply(self, continuing: int | None, replacing: int | None) -> None:
        """Ask for a reply (see `ConversationState.start_reply`)."""

    def go_on(self) -> None:
        """Send what waited (see `ConversationState.go_on`)."""


class ConversationState:
    """One conversation's state, shared by its parts; changed on the loop's thread only.

    Attributes:
        shared: what every conversation uses (stores, the job runner, the settings…).
        session: the stored conversation; None until its first message is sent.
        new_instructions: a new conversation's instructions, stored with its first message.
        model_id: the model that answers.
        tail: the live tail (messages no summary covers), compact.
        summaries: the memory block's active summaries, oldest first.
        activity: what it is busy with.
        loaded: its live tail and memory block were read (a new one's at once).
        deleted: it was deleted: nobody is told about it again.
        pending: a message waiting to be sent, until the conversation has opened or
            earlier messages are condensed (it stays in the composer meanwhile).
        waiting_reply: a reply to go on writing once earlier messages are condensed.
    """

    def __init__(self, shared: Shared, session: Session | None, model_id: str) -> None:
        self.shared = shared
        self.session = session
        self.model_id = model_id
        self.new_instructions = shared.default_instructions() if session is None else ""
        self.tail = LiveTail()
        self.summaries: list[Summary] = []
        self.activity = Activity.IDLE
        # A stored conversation's tail and memory block are read once, on opening.
        self.loaded = session is None
        self.deleted = False
        self.pending: str | None = None
        self.waiting_reply: int | None = None
        self._turns: Turns | None = None

    # --- reading

    @property
    def session_id(self) -> str | None:
        return self.session.id if self.session is not None else None

    @property
    def system_prompt(self) -> str:
        """The instructions sent as the system prompt (a new one's, until it is stored)."""
        return self.session.system_prompt if self.session is not None else self.new_instructions

    # --- changing

    def set_activity(self, activity: Activity) -> None:
        if activity is not self.activity:
            self.activity = activity
            self.tell(lambda events: events.activity_changed(activity))

    def take_summaries(
        self,
        active: Sequence[Summary],
        *,
        covered: Collection[int] = (),
        restored: Sequence[TailEntry] = (),
    ) -> None:
        """Take in what a summary job changed: the memory block's summaries now, and the
        messages it condensed (out of the live tail) or gave back (into it)."""
        if covered:
            self.tail.remove(covered)
        if restored:
            self.tail.restore(restored)
        self.summaries = list(active)

    def drop_waiting(self) -> None:
        """What waited for condensing is not done: the message stays in the composer, the
        cut-off reply stays as it is."""
        self.pending = self.waiting_reply = None

    # --- asking Claude (the conversation's `Turns`)

    def asks_with(self, turns: Turns) -> None:
        """The `Turns` that starts its replies (given once, by the assembler)."""
        self._turns = turns

    def start_reply(self, *, continuing: int | None = None, replacing: int | None = None) -> None:
        """Ask Claude for a reply: to the newest question, or going on writing the reply
        `continuing`, or writing the reply `replacing` again as its next version."""
        assert self._turns is not None, "a conversation asks once it is assembled"
        self._turns.start_reply(continuing, replacing)

    def go_on(self) -> None:
        """Condensing or opening ended: send the message that waited for it, or go on with
        the reply that did."""
        assert self._turns is not None, "a conversation asks once it is assembled"
        self._turns.go_on()

    # --- telling the front end

    def tell(self, call: Callable[[ChatEvents], None]) -> None:
        """Tell the front end, if this conversation is the one on screen."""
        if self.shared.is_current(self) and not self.deleted:
            call(self.shared.events)

    def status(self, text: str) -> None:
        self.tell(lambda events: events.status_changed(text))

    def error(self, error: UserFacingError) -> None:
        self.tell(lambda events: events.error_raised(error))
