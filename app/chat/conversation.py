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
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.chat.events import Activity, ChatEvents, SummaryPreview, SummaryReport
from app.chat.jobs import (
    ASKING_CLAUDE,
    SAVING,
    LoadedConversation,
    ReplyJob,
    ReplyOutcome,
    ReplyRequest,
    SummaryRequest,
    UndoOutcome,
    load_conversation,
    undo,
)
from app.chat.loop import EventLoop, Timer
from app.chat.runner import Job, JobRunner
from app.chat.summary_process import SummaryCall, SummaryProcess
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
from app.core.models import Message, Role, Session
from app.core.policy import (
    Decision,
    PolicyInput,
    Reason,
    TriggerMemory,
    TriggerPolicy,
    nothing_to_condense,
)
from app.core.summarization_config import MIN_PRESERVE_RECENT, SummarizationConfig
from app.core.summary import Summary, SummaryDraft, SummaryMode, SummaryTrigger
from app.core.text import DEFAULT_TITLE, title_from_first_message, validate_message_text
from app.core.tokens import TokenCounter
from app.llm.provider import ChatProvider
from app.store.calibration_file import CalibrationFile
from app.store.sessions import SessionStore, utc_now
from app.store.summaries import SummaryStore

if TYPE_CHECKING:
    from app.core.engine import EngineOutcome

log = logging.getLogger(__name__)

# What the summary's progress says between Cancel and the end (nothing will be saved).
CANCELLING = "Cancelling…"
# What the summary's progress says while its preview waits for the user.
WAITING_FOR_YOU = "Waiting for you to check the summary"
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
        model_info: a model's limits, and whether they are known.
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
    is_current: Callable[[Conversation], bool]
    session_changed: Callable[[Session], None]


class Conversation:
    """A conversation on screen, or one with a job still running.

    Attributes:
        session: the stored conversation; None until its first message is sent.
        model_id: the model that answers.
        tail: the live tail (messages no summary covers), compact.
        summaries: the memory block's active summaries, oldest first.
        trigger: the trigger policy's memory (kept with the session).
        activity: what it is busy with.
    """

    def __init__(self, shared: Shared, session: Session | None, model_id: str) -> None:
        self._shared = shared
        self.session = session
        self.model_id = model_id
        self.tail = LiveTail()
        self.summaries: list[Summary] = []
        self.trigger = TriggerMemory()
        self.activity = Activity.IDLE
        # A stored conversation's tail and memory block are read once, by `load`.
        self.loaded = session is None
        self.deleted = False
        self._draft = ""
        self._pending: str | None = None  # a message waiting to be sent
        self._emergency_text: str | None = None  # condensed once already for this text
        self._reply: ReplyJob | None = None
        self._reply_job: Job[ReplyOutcome] | None = None
        self._summary_job: Job[EngineOutcome] | None = None
        # What the summary being made does now, as the window shows it; None when none runs.
        self.summary_progress: str | None = None
        # A summary drafted and waiting for the user to check it (the preview).
        self.preview: SummaryPreview | None = None
        self._answer: _Answer | None = None
        self._discarded = False
        self._text_timer: Timer | None = None
        self._last_text_at = float("-inf")

    # --- reading

    @property
    def session_id(self) -> str | None:
        return self.session.id if self.session is not None else None

    @property
    def system_prompt(self) -> str:
        return self.session.system_prompt if self.session is not None else ""

    @property
    def summarizing(self) -> bool:
        """A summary is being made in the background."""
        return self._summary_job is not None

    @property
    def has_jobs(self) -> bool:
        """Work is still running for it, so it must stay open off screen."""
        return (
            self._reply_job is not None
            or self._summary_job is not None
            or self.activity is Activity.LOADING
        )

    def context_state(self, draft: str | None = None) -> ContextState | None:
        """The gauge's figures for the next request; None until they can be known."""
        if not self._shared.counter.ready or self.activity is Activity.LOADING:
            return None
        model, known = self._shared.model_info(self.model_id)
        return self._shared.builder.estimate_state(
            model=model,
            system_prompt=self.system_prompt,
            summaries=self.summaries,
            tail_tally=self.tail.tally,
            draft=self._draft if draft is None else draft,
            trigger_ratio=self._shared.config().trigger_ratio,
            model_known=known,
        )

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
        self.tail = loaded.tail
        self.summaries = list(loaded.summaries)
        self.trigger = _trigger_from(loaded.trigger_state, self.tail.last_seq)
        self._set_activity(Activity.IDLE)
        self._tell_summaries()
        self._tell_context()
        self._send_pending()

    def _load_failed(self, error: UserFacingError) -> None:
        self.loaded = True  # what could be read is all there is: an empty tail
        self._set_activity(Activity.IDLE)
        self._pending = None
        self._error(error)

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
        try:
            validate_message_text(text)
        except UserFacingError as error:
            self._error(error)
            return False
        if self._shared.provider() is None:
            self._shared.events.key_needed()
            return False
        tokens = self._shared.counter.count(text)
        try:
            self._check_fits(text, tokens)
        except ContextOverflowError as error:
            # Condensing earlier messages makes room, unless the message alone is too large.
            condensable = self.session is not None and not isinstance(error, MessageTooLargeError)
            if not condensable or not self._start_emergency(text):
                self._error(error)
            return False
        except UserFacingError as error:
            self._error(error)
            return False
        try:
            message = self._store_question(text, tokens)
        except StorageError as error:
            self._error(error)
            return False
        self.tail.append(TailEntry.of(message, self._shared.counter.count))
        self._draft = ""
        self._observe(1)
        self._tell(lambda events: events.message_added(message))
        self._start_reply()
        return True

    def _store_question(self, text: str, tokens: int) -> Message:
        shared = self._shared
        if self.session is None:
            self.session = shared.store.create_session(
                title_from_first_message(text), self.model_id
            )
        message = shared.store.append_message(
            self.session.id, Role.USER, text, token_estimate=tokens
        )
        if self.session.title == DEFAULT_TITLE:
            self.session = shared.store.rename_session(
                self.session.id, title_from_first_message(text)
            )
        self.session = self.session.model_copy(update={"updated_at": message.created_at})
        shared.session_changed(self.session)
        return message

    def _check_fits(self, text: str, tokens: int) -> None:
        """Raise, in plain words with the numbers, when `text` cannot be sent as things stand."""
        model, known = self._shared.model_info(self.model_id)
        self._shared.builder.check_fits(
            model=model,
            system_prompt=self.system_prompt,
            summaries=self.summaries,
            tail_tally=self.tail.tally,
            draft=text,
            draft_tokens=tokens,
            model_known=known,
        )

    def retry(self) -> None:
        """Ask again for a reply to the last question (after an error)."""
        if self.activity is Activity.IDLE and self.session is not None:
            self._start_reply()

    def forget(self) -> None:
        """The conversation was deleted: stop its work and tell nobody about it again."""
        self.deleted = True
        self._pending = None
        for job in (self._reply_job, self._summary_job):
            if job is not None:
                job.cancel()

    def stop(self) -> None:
        """Stop the reply (its text is kept), or the condensing a message waits for."""
        if self.activity is Activity.REPLYING and self._reply is not None:
            self._reply.cancel()
            self._status("Stopping…")
        elif self.activity is Activity.CONDENSING and self._summary_job is not None:
            # The waiting message stays in the composer; it is not sent when this ends.
            self._pending = None
            self._summary_job.cancel()
            self._status("Stopping…")

    # --- the reply

    def _start_reply(self) -> None:
        assert self.session is not None
        if self.tail.tally.last_role is not Role.USER:
            return  # nothing to answer: the newest message Claude would see is its own
        provider = self._shared.provider()
        if provider is None:
            self._shared.events.key_needed()
            return
        shared, loop = self._shared, self._shared.loop
        model, known = shared.model_info(self.model_id)
        reply = ReplyJob(
            ReplyRequest(self.session.id, model, known, self.system_prompt, tuple(self.summaries)),
            builder=shared.builder,
            provider=provider,
            open_store=shared.open_store,
            calibrations=shared.calibrations,
            calibration_file=shared.calibration_file,
            on_started=lambda message: loop.post(lambda: self._reply_started(message)),
            on_text=lambda: loop.post(self._text_arrived),
            on_retry=lambda attempt, wait: loop.post(lambda: self._retrying(wait)),
        )
        self._reply = reply
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

    def _reply_started(self, placeholder: Message) -> None:
        self.tail.append(TailEntry.of(placeholder, self._shared.counter.count))
        self._tell(lambda events: events.message_added(placeholder))

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
        self._status("")
        self._tell(lambda events: events.message_text_changed(message_id, text))

    def _retrying(self, wait: float | None) -> None:
        suffix = f" in {wait:.0f} s" if wait and wait >= 1 else ""
        self._status(f"Claude is busy — retrying{suffix}…")

    def _reply_done(self, outcome: ReplyOutcome) -> None:
        if self._text_timer is not None:
            self._text_timer.cancel()
            self._text_timer = None
        self._reply, self._reply_job = None, None
        message = outcome.message
        if message is not None:
            entry = TailEntry.of(message, self._shared.counter.count)
            if not self.tail.replace(entry):
                self.tail.append(entry)
            self._tell(lambda events: events.message_updated(message))
        if self.session is not None and not self.deleted:
            self.session = self.session.model_copy(update={"updated_at": utc_now()})
            self._shared.session_changed(self.session)
        self._status("")
        self._set_activity(Activity.IDLE)
        state = self.context_state(draft="")
        if outcome.error is not None:
            error = outcome.error
            self._tell(lambda events: events.error_raised(error))
        elif message is not None:
            self._observe(1, state)
            self._maybe_summarize(state)
        self._tell_context(state if not self._draft else None)

    # --- condensing earlier messages (DESIGN §5–§7)

    def summarize(self, instructions: str | None = None, keep_recent: int | None = None) -> bool:
        """Condense older messages now, as the user asked; False when there is nothing to
        condense yet (the reason is said) or a summary is already being made.

        `keep_recent`: how many of the newest messages stay as they are (at least the
        emergency floor); None keeps the setting's number.
        """
        if self.session is None or self._summary_job is not None:
            return False
        state = self.context_state(draft="")
        if state is None:
            return False
        decision = self._policy().should_summarize(self._policy_input(state, manual=True))
        if decision.summarize and keep_recent is not None:
            keep = max(MIN_PRESERVE_RECENT, keep_recent)
            if self.tail.unpinned <= keep:
                decision = replace(
                    decision,
                    summarize=False,
                    reason=Reason.TOO_FEW_MESSAGES,
                    preserve_recent=keep,
                    explanation=nothing_to_condense(keep),
                )
            else:
                decision = replace(decision, preserve_recent=keep)
        if not decision.summarize:
            self._tell(
                lambda events: events.notice_raised("Nothing to condense yet", decision.explain())
            )
            return False
        self._start_summary(decision, trigger=SummaryTrigger.MANUAL, instructions=instructions)
        return True

    def _maybe_summarize(self, state: ContextState | None) -> None:
        """After a reply: condense in the background when the policy says it is due.

        `state` is the next request's figures without a draft (as `context_state("")`).
        """
        if self.session is None or self._summary_job is not None or state is None:
            return
        policy = self._policy()
        decision = policy.should_summarize(self._policy_input(state, manual=False))
        self._remember(policy.after_decision(self.trigger, decision), save=decision.summarize)
        if decision.summarize:
            self._start_summary(decision, trigger=SummaryTrigger(decision.trigger or "auto"))

    def _start_emergency(self, text: str) -> bool:
        """The message would not fit: condense earlier messages, then send it.

        False when condensing cannot help (nothing left to condense, or it was tried
        already for this very text); the caller then says why it cannot be sent.
        """
        if self._emergency_text == text and self._summary_job is None:
            self._emergency_text = None
            return False
        if self._summary_job is None:
            model, known = self._shared.model_info(self.model_id)
            state = self._shared.builder.estimate_state(
                model=model,
                system_prompt=self.system_prompt,
                summaries=self.summaries,
                tail_tally=self.tail.tally,
                draft=text,
                trigger_ratio=self._shared.config().trigger_ratio,
                model_known=known,
            )
            decision = self._policy().should_summarize(self._policy_input(state, manual=False))
            if not decision.summarize:
                return False
            self._start_summary(decision, trigger=SummaryTrigger.EMERGENCY, draft=text)
            self._emergency_text = text
        # Else an automatic summary is running: try again when it is done.
        self._pending = text
        self._status("Condensing earlier messages…")
        self._set_activity(Activity.CONDENSING)
        return True

    def _start_summary(
        self,
        decision: Decision,
        *,
        trigger: SummaryTrigger,
        draft: str = "",
        instructions: str | None = None,
    ) -> None:
        assert self.session is not None
        shared = self._shared
        model, _known = shared.model_info(self.model_id)
        request = SummaryRequest(
            session_id=self.session.id,
            model=model,
            system_prompt=self.system_prompt,
            draft=draft,
            trigger=trigger,
            decision=decision,
            instructions=instructions,
            config=shared.config(),
            review=trigger is SummaryTrigger.MANUAL
            or (trigger is not SummaryTrigger.EMERGENCY and shared.config().preview_automatic),
        )
        count = self.tail.unpinned
        self._run_summary_job(
            request, self._summarized, f"Reading {count} message{'s' if count != 1 else ''}"
        )

    def _run_summary_job(
        self, request: SummaryRequest, done: Callable[[EngineOutcome], None], first_stage: str
    ) -> None:
        """Start `request` in the summary process as the conversation's summary job."""
        shared = self._shared
        call = SummaryCall(
            request=request,
            database=shared.database,
            api_key=shared.api_key(),
            base_url=shared.base_url(),
            calibrations=shared.calibrations.to_dict(),
        )

        def progressed(text: str) -> None:  # on the job's thread
            shared.loop.post(lambda: self._summary_progressed(text))

        answer = _Answer()
        self._answer, self._discarded = answer, False

        def review(preview: SummaryPreview) -> Sequence[SummaryDraft] | None:  # job's thread
            shared.loop.post(lambda: self._previewed(preview, answer))
            return answer.wait()

        def work(job: Job[EngineOutcome]) -> EngineOutcome:
            return shared.summary_process.run(
                call, cancelled=lambda: job.cancelled, progress=progressed, review=review
            )

        self._summary_job = shared.runner.start(
            Job(
                "summary",
                work,
                done=done,
                failed=self._summary_failed,
                on_cancel=answer.discard,
            )
        )
        self._summary_progressed(first_stage)

    def retry_summary_with_claude(self, summary_id: str) -> bool:
        """Ask Claude to write a basic summary again, over the same messages, as the
        summary job; False (said why) when another summary is being made.

        When Claude still cannot be reached, the basic summary stays and a notice says so.
        """
        if self.session is None:
            return False
        if self._summary_job is not None:
            self._tell(
                lambda events: events.notice_raised(
                    "A summary is already being made",
                    "Try again with Claude once it is done.",
                )
            )
            return False
        model, _known = self._shared.model_info(self.model_id)
        request = SummaryRequest(
            session_id=self.session.id,
            model=model,
            system_prompt=self.system_prompt,
            draft="",
            trigger=SummaryTrigger.MANUAL,
            decision=None,
            instructions=None,
            config=self._shared.config(),
            retry_summary_id=summary_id,
        )
        self._run_summary_job(request, self._rewritten, ASKING_CLAUDE)
        return True

    def _rewritten(self, outcome: EngineOutcome) -> None:
        cancelled = self._summary_ended()
        if outcome.changed:
            # Same messages covered: the live tail is as it was; only the card changes.
            self.summaries = list(outcome.active_after)
            self._tell_summaries()
            self._tell_context()
            self._tell(
                lambda events: events.notice_raised(
                    "Summary rewritten by Claude", "The messages it covers stay the same."
                )
            )
        elif cancelled:
            self._tell(
                lambda events: events.notice_raised(
                    "Summary cancelled — nothing changed", "The basic summary stays."
                )
            )
        else:
            self._tell(
                lambda events: events.notice_raised("Summary not rewritten", outcome.message)
            )
        self._send_pending()

    def _previewed(self, preview: SummaryPreview, answer: _Answer) -> None:
        if answer is not self._answer or answer.answered:
            return  # a summary that has ended, or been cancelled, meanwhile
        self.preview = preview
        self._summary_progressed(WAITING_FOR_YOU)
        self._tell(lambda events: events.summary_previewed(preview))

    def accept_summary(self, edited: Sequence[SummaryDraft] | None = None) -> None:
        """Save the previewed summary: as drafted, or `edited` (one per draft, only
        their content changed)."""
        if self.preview is None or self._answer is None:
            return
        drafts = self.preview.drafts if edited is None else tuple(edited)
        if len(drafts) != len(self.preview.drafts):
            raise ValueError("one edited draft per draft of the preview")
        self.preview = None
        self._answer.give(drafts)
        self._summary_progressed(SAVING)

    def discard_summary(self) -> None:
        """Drop the previewed summary: nothing is saved, every message stays as it was."""
        if self.preview is None or self._answer is None:
            return
        self.preview = None
        self._discarded = True
        self._answer.give(None)

    def cancel_summary(self) -> None:
        """Cancel the summary being made: nothing changes (a message waiting for it stays
        in the composer)."""
        if self._summary_job is None:
            return
        if self.activity is Activity.CONDENSING:
            self._pending = None
        self._summary_job.cancel()
        self._summary_progressed(CANCELLING)

    def _summary_progressed(self, text: str | None) -> None:
        job = self._summary_job
        if text is not None and (job is None or (job.cancelled and text != CANCELLING)):
            return  # a late stage of a summary that has ended, or is being cancelled
        self.summary_progress = text
        self._tell(lambda events: events.summary_progress(text))

    def _summary_ended(self) -> bool:
        """Forget the summary's job; True when it had been cancelled."""
        job, self._summary_job = self._summary_job, None
        self.preview, self._answer = None, None
        self._summary_progressed(None)
        return job is not None and job.cancelled

    def _summarized(self, outcome: EngineOutcome) -> None:
        cancelled = self._summary_ended()
        messages_before = len(self.tail)
        if (cancelled or self._discarded) and not outcome.changed:
            title = (
                "Summary cancelled — nothing changed"
                if cancelled
                else "Summary discarded — nothing changed"
            )
            self._tell(lambda events: events.notice_raised(title, "Every message stays as it was."))
        if outcome.changed:
            self.tail.remove(outcome.covered_message_ids)
            self.summaries = list(outcome.active_after)
            state = self.context_state(draft="")
            self._remember(self._policy().after_summary(self.trigger, state), save=True)
            self._tell_summaries()
            self._tell_context()
        if outcome.covered_messages:
            report = _report(outcome, messages_before, len(self.tail))
            self._tell(lambda events: events.summary_made(report))
        self._send_pending()

    def _summary_failed(self, error: UserFacingError) -> None:
        # The conversation is unchanged; the engine recorded the failed attempt.
        log.warning("Condensing failed: %s (%s)", error.message, error.detail)
        cancelled = self._summary_ended()
        title, text = (
            ("Summary cancelled — nothing changed", "Every message stays as it was.")
            if cancelled
            else (
                "Earlier messages could not be condensed",
                f"{error.message} Nothing changed: every message is still here.",
            )
        )
        self._tell(lambda events: events.notice_raised(title, text))
        self._send_pending()

    def _send_pending(self) -> None:
        """Send the message that waited for condensing or opening, unless it was stopped."""
        pending, self._pending = self._pending, None
        if self.activity in (Activity.CONDENSING, Activity.LOADING):
            self._set_activity(Activity.IDLE)
        if pending is None:
            self._status("")
            return
        self._status("")
        if self.send(pending):
            self._emergency_text = None
            self._tell(lambda events: events.pending_sent())

    # --- undo and pins

    def undo_summary(self, summary_id: str) -> None:
        """Give a summary's originals back (only the newest when not all fit; said so)."""
        if self.session is None:
            return
        shared, session_id = self._shared, self.session.id
        model, _known = shared.model_info(self.model_id)
        system_prompt, config = self.system_prompt, shared.config()
        shared.runner.start(
            Job(
                "undo",
                lambda _job: undo(
                    session_id,
                    summary_id,
                    model=model,
                    system_prompt=system_prompt,
                    config=config,
                    builder=shared.builder,
                    counter=shared.counter,
                    open_summaries=shared.open_summaries,
                    open_store=shared.open_store,
                ),
                done=self._undone,
                failed=self._error,
            )
        )

    def _undone(self, outcome: UndoOutcome) -> None:
        self.tail.restore(outcome.restored)
        self.summaries = list(outcome.active_after)
        self._tell_summaries()
        self._tell_context()
        if not outcome.result.complete:
            restored = len(outcome.restored) or len(outcome.result.restored_summary_ids)
            self._tell(
                lambda events: events.notice_raised(
                    "Summary partly undone",
                    f"Only the newest {restored} could come back: the rest would not fit in "
                    "what Claude can read. They stay in the summary.",
                )
            )

    def pin(self, message_id: int, pinned: bool = True) -> None:
        """Pin a live message (never condensed) or unpin it."""
        try:
            message = self._shared.store.set_pinned(message_id, pinned)
        except UserFacingError as error:
            self._error(error)
            return
        self.tail.set_pinned(message_id, pinned)
        self._tell(lambda events: events.message_updated(message))

    # --- the trigger's memory

    def _policy(self) -> TriggerPolicy:
        return TriggerPolicy(self._shared.config())

    def _policy_input(self, state: ContextState, *, manual: bool) -> PolicyInput:
        return PolicyInput(
            state=state,
            live_messages=self.tail.unpinned,
            memory=self.trigger,
            summary_depth=max((s.depth for s in self.summaries), default=0),
            manual=manual,
            tail_tokens=self.tail.unpinned_tokens(),
            pinned_tokens=self.tail.pinned_tokens,
        )

    def _observe(self, new_messages: int, state: ContextState | None = None) -> None:
        """Tell the trigger that messages were stored and how full it is now."""
        if state is None:
            state = self.context_state(draft="")
        if state is None or self.session is None:
            return
        before = self.trigger
        after = self._policy().observe(before, state, new_messages=new_messages)
        self._remember(after, save=after.armed != before.armed)

    def _remember(self, memory: TriggerMemory, *, save: bool) -> None:
        """Keep the trigger's memory; written with the session when it matters (a trigger,
        a summary, re-arming), and the seq it was taken at, so counts catch up on reopening."""
        self.trigger = memory
        if not save or self.session is None:
            return
        state = {**memory.to_dict(), "at_seq": self.tail.last_seq}
        try:
            self._shared.store.set_trigger_state(self.session.id, state)
        except StorageError as error:
            log.warning("Could not keep the summary trigger's state: %s", error)

    # --- telling the front end

    def _tell(self, call: Callable[[ChatEvents], None]) -> None:
        if self._shared.is_current(self) and not self.deleted:
            call(self._shared.events)

    def _tell_context(self, state: ContextState | None = None) -> None:
        """Tell the gauge; `state` when the caller has the figures already."""
        if state is None:
            state = self.context_state()
        self._tell(lambda events: events.context_changed(state))

    def _tell_summaries(self) -> None:
        summaries = tuple(self.summaries)
        self._tell(lambda events: events.summaries_changed(summaries))

    def _set_activity(self, activity: Activity) -> None:
        if activity is not self.activity:
            self.activity = activity
            self._tell(lambda events: events.activity_changed(activity))

    def _status(self, text: str) -> None:
        self._tell(lambda events: events.status_changed(text))

    def _error(self, error: UserFacingError) -> None:
        self._tell(lambda events: events.error_raised(error))


def _trigger_from(state: dict[str, Any] | None, last_seq: int) -> TriggerMemory:
    """The trigger memory kept with a session, with the messages stored since counted."""
    if state is None:
        return TriggerMemory()
    data = dict(state)
    at_seq = data.pop("at_seq", last_seq)
    try:
        memory = TriggerMemory.from_dict(data)
    except ValueError as error:
        log.warning("The summary trigger's state could not be read (%s); starting afresh", error)
        return TriggerMemory()
    since = max(0, last_seq - at_seq) if isinstance(at_seq, int) else 0
    return TriggerMemory(
        armed=memory.armed,
        messages_since_trigger=memory.messages_since_trigger + since,
        messages_since_summary=(
            None if memory.messages_since_summary is None else memory.messages_since_summary + since
        ),
    )


def _report(outcome: EngineOutcome, messages_before: int, messages_after: int) -> SummaryReport:
    """The banner's numbers for a summary that condensed messages."""
    made = outcome.summaries
    active = {summary.id for summary in outcome.active_after}
    # Undo takes back what is still active (a condensed summary may have been folded
    # into a compressed one at once).
    undoable = [summary.id for summary in made if summary.id in active]
    return SummaryReport(
        summary_ids=tuple(undoable or [summary.id for summary in made]),
        condensed=outcome.covered_messages,
        messages_before=messages_before,
        messages_after=messages_after,
        tokens_before=outcome.state_before.used,
        tokens_after=outcome.state_after.used,
        trigger=made[0].trigger if made else SummaryTrigger.AUTO,
        basic=any(summary.mode is SummaryMode.RULE for summary in made),
    )


def _now() -> float:
    return time.monotonic()


class _Answer:
    """The user's answer to a preview, handed from the loop's thread to the job's."""

    def __init__(self) -> None:
        self._given = threading.Event()
        self._drafts: Sequence[SummaryDraft] | None = None

    @property
    def answered(self) -> bool:
        return self._given.is_set()

    def give(self, drafts: Sequence[SummaryDraft] | None) -> None:
        """The drafts to save, or None to discard them (the first answer counts)."""
        if not self._given.is_set():
            self._drafts = drafts
            self._given.set()

    def discard(self) -> None:
        """Cancelled, or the app is closing: nothing is saved."""
        self.give(None)

    def wait(self) -> Sequence[SummaryDraft] | None:
        self._given.wait()
        return self._drafts
