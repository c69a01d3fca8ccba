"""One open conversation: its live tail, memory block, trigger memory and activity.

A `Conversation` is the one owner of that state (DESIGN §1). Every change
goes through it and is applied incrementally — a message stored is one
append to the `LiveTail`, a reply finished one replace, a summary one removal
of what it covered, an undo one restore — so a turn costs the same whatever
the history, and nothing is re-read to find out what changed. Background work
(the reply, a summary, an undo, reading a long conversation) runs as jobs; the
conversation takes in their results on the loop's thread.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from app.chat.attachments import Outgoing
from app.chat.events import Activity, ChatEvents, SummaryPreview
from app.chat.gauge import ConversationGauge
from app.chat.jobs import LoadedConversation, load_conversation
from app.chat.lookups import LookupsFactory, no_lookups
from app.chat.loop import EventLoop, Timer
from app.chat.model_fallback import ModelChoice
from app.chat.recall import recall_budget
from app.chat.reply import ReplyJob, ReplyOutcome, ReplyRequest
from app.chat.reply_endings import ReplyEndings
from app.chat.runner import Job, JobRunner
from app.chat.summaries import CANCELLING as CANCELLING
from app.chat.summaries import ConversationSummaries
from app.chat.summary_process import SummaryProcess
from app.chat.unsaved import UnsavedReply
from app.chat.versions import MessageVersions
from app.core.calibration import Calibrations
from app.core.catalog import ModelInfo
from app.core.context import ContextBuilder, ContextState
from app.core.errors import (
    ContextOverflowError,
    MessageTooLargeError,
    StorageError,
    UserFacingError,
)
from app.core.live_tail import LiveTail, TailEntry
from app.core.models import Message, MessageStatus, Role, Session
from app.core.settings import RecallSettings
from app.core.summarization_config import SummarizationConfig
from app.core.summary import Summary
from app.core.text import DEFAULT_TITLE, title_from_first_message, validate_message_text
from app.core.tokens import TokenCounter
from app.llm.provider import ChatProvider
from app.store.calibration_file import CalibrationFile
from app.store.sessions import SessionStore, utc_now
from app.store.summaries import SummaryStore

log = logging.getLogger(__name__)

# At most this many transcript updates a second while a reply streams.
TEXT_INTERVAL_SECONDS = 1 / 30


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
        model_choice: the model each conversation uses (and falls to after a 404).
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
    is_current: Callable[[Conversation], bool]
    session_changed: Callable[[Session], None]
    recall: Callable[[], RecallSettings]
    # The archive tool's loop for a reply of a conversation (None: the tool is off).
    lookups: LookupsFactory = no_lookups
    # The instructions a new conversation starts with (Settings).
    default_instructions: Callable[[], str] = lambda: ""
    # Settings → "Think longer" (app.core.thinking).
    think_longer: Callable[[], bool] = lambda: False


class Conversation:
    """A conversation on screen, or one with a job still running.

    Attributes:
        session: the stored conversation; None until its first message is sent.
        new_instructions: a new conversation's instructions, stored with its first message.
        model_id: the model that answers.
        tail: the live tail (messages no summary covers), compact.
        summaries: the memory block's active summaries, oldest first.
        condensing: its summaries' job and state (the trigger's memory, progress,
            preview): `ConversationSummaries`.
        unsaved: a reply the disk did not take yet, kept until it can be: `UnsavedReply`.
        gauge: measures the next request (`ConversationGauge`).
        activity: what it is busy with.
    """

    def __init__(self, shared: Shared, session: Session | None, model_id: str) -> None:
        self._shared = shared
        self.session = session
        self.model_id = model_id
        self.new_instructions = shared.default_instructions() if session is None else ""
        self.tail = LiveTail()
        self.summaries: list[Summary] = []
        self.condensing = ConversationSummaries(self, shared)
        self.endings = ReplyEndings(self, shared)  # Continue; declined, cut-off replies
        self.versions = MessageVersions(self, shared)  # edit, regenerate, other versions
        self.unsaved = UnsavedReply(self, shared)
        self.gauge = ConversationGauge(self, shared)
        self.outgoing = Outgoing(shared, lambda: self._tell_context())  # files to send
        self.activity = Activity.IDLE
        # A stored conversation's tail and memory block are read once, by `load`.
        self.loaded = session is None
        self.deleted = False
        self._draft = ""
        self._pending: str | None = None  # a message waiting to be sent
        self._emergency_text: str | None = None  # condensed once already for this text
        self._reply: ReplyJob | None = None
        self._reply_job: Job[ReplyOutcome] | None = None
        self._text_timer: Timer | None = None
        self._last_text_at = float("-inf")
        self._thinking_shown = ""  # the reply's thinking as last told

    # --- reading

    @property
    def session_id(self) -> str | None:
        return self.session.id if self.session is not None else None

    @property
    def system_prompt(self) -> str:
        """The instructions sent as the system prompt (a new one's, until it is stored)."""
        return self.session.system_prompt if self.session is not None else self.new_instructions

    @property
    def summarizing(self) -> bool:
        """A summary is being made in the background."""
        return self.condensing.running

    @property
    def summary_progress(self) -> str | None:
        """What the summary being made does now; None when none runs."""
        return self.condensing.progress

    @property
    def preview(self) -> SummaryPreview | None:
        """A summary drafted and waiting for the user to check it."""
        return self.condensing.preview

    @property
    def has_jobs(self) -> bool:
        """Work is still running for it, so it must stay open off screen."""
        return (
            self._reply_job is not None
            or self.condensing.running
            or self.activity is Activity.LOADING
        )

    def context_state(self, draft: str | None = None) -> ContextState | None:
        """The gauge's figures for the next request; None until they can be known."""
        if self.activity is Activity.LOADING:
            return None
        draft = self.outgoing.text(self._draft if draft is None else draft)
        return self.gauge.state(draft, self.outgoing.draft_tokens(draft))

    # --- opening

    def load(self) -> None:
        """Read the live tail and memory block (in the background: a long conversation's
        tail takes a moment); a message sent meanwhile waits for it."""
        if self.session is None or self.activity is Activity.LOADING:
            return
        session_id, shared = self.session.id, self._shared
        self._set_activity(Activity.LOADING)
        shared.runner.start(
            Job(
                "open",
                lambda _job: load_conversation(
                    session_id, open_store=shared.open_store, open_summaries=shared.open_summaries
                ),
                done=self._loaded,
                failed=self._load_failed,
            )
        )

    def _loaded(self, loaded: LoadedConversation) -> None:
        self.loaded = True
        self.tail = self.unsaved.over_tail(loaded.tail)
        if self.session is not None:
            self.outgoing.load(self.session.id)  # what the gauge needs of the files
        self.summaries = list(loaded.summaries)
        self.condensing.load_trigger(loaded.trigger_state, self.tail.last_seq)
        self._set_activity(Activity.IDLE)
        self.tell_summaries()
        self.send_pending()

    def _load_failed(self, error: UserFacingError) -> None:
        self.loaded = True  # what could be read is all there is: an empty tail
        self._set_activity(Activity.IDLE)
        self._pending = None
        self.error(error)

    # --- the draft and the gauge

    def set_draft(self, text: str) -> None:
        self._draft = text
        self._tell_context()

    # --- sending

    def send(self, text: str) -> bool:
        """Store the user's message and ask for a reply. False keeps the text in the composer."""
        if self.activity is Activity.LOADING:
            self._pending = text
            self._status("Opening the conversation…")
            return False
        if self.activity is not Activity.IDLE:
            return False
        text = self.outgoing.text(text)
        try:
            validate_message_text(text)
        except UserFacingError as error:
            self.error(error)
            return False
        if self._shared.provider() is None:
            self._shared.events.key_needed()
            return False
        tokens = self.outgoing.tokens(text)
        try:
            self.outgoing.check(self._shared.model_info(self.model_id)[0])
            self.gauge.check_fits(text, tokens)
        except ContextOverflowError as error:
            # Condensing earlier messages makes room, unless the message alone is too large.
            condensable = self.session is not None and not isinstance(error, MessageTooLargeError)
            if not condensable or not self._start_emergency(text):
                self.error(error)
            return False
        except UserFacingError as error:
            self.error(error)
            return False
        # It fits, but would leave recall less than its floor: older messages give way
        # first; when nothing can be condensed, it goes as it is.
        squeezed = self.session is not None and self.gauge.squeezes_recall(text, tokens)
        if squeezed and self._start_emergency(text):
            return False
        try:
            self.unsaved.save()  # the reply the disk refused goes first
            message = self._store_question(text, tokens)
        except StorageError as error:
            self.error(error)
            return False
        self.tail.append(TailEntry.of(message, self._shared.counter.count))
        self._draft = ""
        self.condensing.observe(1)
        self.tell(lambda events: events.message_added(message))
        self._start_reply()
        return True

    def _store_question(self, text: str, tokens: int) -> Message:
        shared = self._shared
        if self.session is None:
            self.session = shared.store.create_session(
                title_from_first_message(text), self.model_id, self.new_instructions
            )
        message = self.outgoing.store(shared.store, self.session.id, text, tokens)
        if self.session.title == DEFAULT_TITLE:
            self.session = shared.store.rename_session(
                self.session.id, title_from_first_message(text)
            )
        self.session = self.session.model_copy(update={"updated_at": message.created_at})
        shared.session_changed(self.session)
        return message

    def retry(self) -> None:
        """Ask again for a reply to the last question (after an error)."""
        if self.activity is Activity.IDLE and self.session is not None and self.unsaved.saved():
            self._start_reply()

    def forget(self) -> None:
        """The conversation was deleted: stop its work and tell nobody about it again."""
        self.deleted = True
        self._pending = None
        if self._reply_job is not None:
            self._reply_job.cancel()
        self.condensing.cancel_job()

    def stop(self) -> None:
        """Stop the reply (its text is kept), or the condensing a message waits for."""
        if self.activity is Activity.REPLYING and self._reply is not None:
            self._reply.cancel()
            self._status("Stopping…")
        elif self.activity is Activity.CONDENSING and self.condensing.cancel_job():
            # The waiting message stays in the composer; it is not sent when this ends.
            self._pending = self.endings.waiting = None
            self._status("Stopping…")

    # --- the reply

    def _start_reply(self, continuing: int | None = None, replacing: int | None = None) -> None:
        assert self.session is not None
        if continuing is replacing is None and self.tail.tally.last_role is not Role.USER:
            return  # nothing to answer: the newest message Claude would see is its own
        provider = self._shared.provider()
        if provider is None:
            self._shared.events.key_needed()
            return
        shared, loop = self._shared, self._shared.loop
        model, summaries = shared.model_info(self.model_id), tuple(self.summaries)
        fallback = shared.model_choice.fallback(self.model_id)  # after a 404 (model_fallback)
        reply = ReplyJob(
            ReplyRequest(
                self.session.id,
                *model,
                self.system_prompt,
                summaries,
                continuing,
                fallback=fallback,
                replacing=replacing,
                think_longer=shared.think_longer(),
            ),
            builder=shared.builder,
            recall_budget_ratio=recall_budget(shared.recall()),
            recall_across=shared.recall().across_conversations,
            provider=provider,
            open_store=shared.open_store,
            calibrations=shared.calibrations,
            calibration_file=shared.calibration_file,
            on_started=lambda message: loop.post(lambda: self.versions.started(message)),
            on_text=lambda: loop.post(self._text_arrived),
            on_retry=lambda attempt, wait: loop.post(lambda: self._status(_retrying(wait))),
            on_model_switched=lambda old, new: loop.post(
                lambda: shared.model_choice.switched(self, old, new)
            ),
            lookups=shared.lookups(self.session.id, self.tell),
        )
        self._reply, self._thinking_shown = reply, ""
        self._reply_job = shared.runner.start(
            Job(
                "reply",
                reply.work,
                done=self._reply_done,
                failed=lambda error: self._reply_done(ReplyOutcome(None, error)),
                on_cancel=reply.cancel,
            )
        )
        self._status("")
        self._set_activity(Activity.REPLYING)

    def _text_arrived(self) -> None:
        """Show the reply's text, at most about 30 times a second."""
        if self._text_timer is not None:
            return
        wait = self._last_text_at + TEXT_INTERVAL_SECONDS - _now()
        if wait > 0:
            self._text_timer = self._shared.loop.call_later(wait, self._show_text)
        else:
            self._show_text()

    def _show_text(self) -> None:
        self._text_timer = None
        reply = self._reply
        if reply is None or reply.message_id is None:
            return
        self._last_text_at = _now()
        text, message_id = reply.take_text(), reply.message_id
        thinking = reply.thinking_so_far()
        self._status("")
        if thinking != self._thinking_shown:
            self._thinking_shown = thinking
            self.tell(lambda events: events.message_thinking_changed(message_id, thinking))
        self.tell(lambda events: events.message_text_changed(message_id, text))

    def _reply_done(self, outcome: ReplyOutcome) -> None:
        if self._text_timer is not None:
            self._text_timer.cancel()
            self._text_timer = None
        self._reply, self._reply_job = None, None
        self.gauge.quoted = outcome.quoted
        message = self.unsaved.take(outcome.message, outcome.not_saved)
        if self.session is not None and not self.deleted:
            self.session = self.session.model_copy(update={"updated_at": utc_now()})
            self._shared.session_changed(self.session)
        self._status("")
        if message is not None and message.status is MessageStatus.DECLINED:
            declined, explanation = message.id, outcome.refusal_explanation
            self.tell(lambda events: events.reply_declined(declined, explanation))
        self._set_activity(Activity.IDLE)
        self.endings.reply_done(outcome)
        state = self.context_state(draft="")
        if outcome.error is not None:
            error = outcome.error
            self.tell(lambda events: events.error_raised(error))
        elif message is not None:
            self.condensing.observe(1, state)
            self.condensing.after_reply(state)
        self._tell_context(state if not self._draft else None)

    # --- condensing earlier messages (DESIGN §5–§7; the job is `ConversationSummaries`)

    def _start_emergency(self, text: str) -> bool:
        """The message would not fit: condense earlier messages, then send it.

        False when condensing cannot help (nothing left to condense, or it was tried
        already for this very text); the caller then says why it cannot be sent.
        """
        if self._emergency_text == text and not self.condensing.running:
            self._emergency_text = None
            return False
        if not self.condensing.running:
            if not self.condensing.start_emergency(text):
                return False
            self._emergency_text = text
        # Else an automatic summary is running: try again when it is done.
        self._pending = text
        self._status("Condensing earlier messages…")
        self._set_activity(Activity.CONDENSING)
        return True

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

    def drop_pending(self) -> None:
        """The message waiting for condensing is not sent (it stays in the composer)."""
        self._pending = self.endings.waiting = None

    def send_pending(self) -> None:
        """Send the message that waited for condensing or opening, unless it was stopped."""
        pending, self._pending = self._pending, None
        if self.activity in (Activity.CONDENSING, Activity.LOADING):
            self._set_activity(Activity.IDLE)
        if pending is None:
            self.endings.resume()  # a reply that waited for condensing, else clears the status
            return
        self._status("")
        if self.send(pending):
            self._emergency_text = None
            self.tell(lambda events: events.pending_sent())

    # --- pins

    def pin(self, message_id: int, pinned: bool = True) -> None:
        """Pin a live message (never condensed) or unpin it."""
        try:
            message = self._shared.store.set_pinned(message_id, pinned)
        except UserFacingError as error:
            self.error(error)
            return
        self.tail.set_pinned(message_id, pinned)
        self.tell(lambda events: events.message_updated(message))

    # --- telling the front end

    def tell(self, call: Callable[[ChatEvents], None]) -> None:
        if self._shared.is_current(self) and not self.deleted:
            call(self._shared.events)

    def _tell_context(self, state: ContextState | None = None) -> None:
        """Tell the gauge; `state` when the caller has the figures already."""
        if state is None:
            state = self.context_state()
        self.tell(lambda events: events.context_changed(state))

    def tell_summaries(self) -> None:
        """Tell the memory block and the gauge (the summaries changed)."""
        summaries = tuple(self.summaries)
        self.tell(lambda events: events.summaries_changed(summaries))
        self._tell_context()

    def _set_activity(self, activity: Activity) -> None:
        if activity is not self.activity:
            self.activity = activity
            self.tell(lambda events: events.activity_changed(activity))

    def _status(self, text: str) -> None:
        self.tell(lambda events: events.status_changed(text))

    def error(self, error: UserFacingError) -> None:
        self.tell(lambda events: events.error_raised(error))


def _now() -> float:
    return time.monotonic()


def _retrying(wait: float | None) -> str:
    """The status line while the SDK waits to ask again."""
    suffix = f" in {wait:.0f} s" if wait and wait >= 1 else ""
    return f"Claude is busy — retrying{suffix}…"
