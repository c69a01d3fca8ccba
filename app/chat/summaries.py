"""A conversation's summaries: when to condense, the summary job, its preview and undo.

`ConversationSummaries` is the one owner of the summary job and its state (the
trigger's memory, the progress the window shows, the preview waiting for the
user). It starts the job, follows its stages, and hands what the job changed
(the memory block, the messages covered or given back) to the conversation's
state, which holds the live tail and the memory block (DESIGN §5–§7).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from app.chat.events import Activity, SummaryPreview, SummaryReport
from app.chat.gauge import ConversationGauge
from app.chat.jobs import ASKING_CLAUDE, SAVING, SummaryRequest, UndoOutcome, undo
from app.chat.loop import EventLoop
from app.chat.runner import Job, drop_kept, kept_for_thread
from app.chat.state import ConversationState
from app.chat.summary_process import SummaryCall
from app.core.context import ContextState
from app.core.errors import StorageError, UserFacingError
from app.core.policy import (
    Decision,
    PolicyInput,
    TriggerMemory,
    TriggerPolicy,
    whole_conversation_tokens,
)
from app.core.summary import Summary, SummaryDraft, SummaryMode, SummaryTier, SummaryTrigger
from app.store.errors import RecordNotFoundError
from app.store.sessions import SessionStore

if TYPE_CHECKING:
    from app.core.engine import EngineOutcome

log = logging.getLogger(__name__)

# What the summary's progress says between Cancel and the end (nothing will be saved).
CANCELLING = "Cancelling…"
# What the summary's progress says while its preview waits for the user.
WAITING_FOR_YOU = "Waiting for you to check the summary"


class ConversationSummaries:
    """One conversation's summary job and the state around it.

    Attributes:
        trigger: the trigger policy's memory (kept with the session).
        progress: what the summary being made does now, as the window shows it; None
            when none runs.
        preview: a summary drafted and waiting for the user to check it.
    """

    def __init__(self, state: ConversationState, gauge: ConversationGauge) -> None:
        self._state = state
        self._shared = state.shared
        self._gauge = gauge
        self.trigger = TriggerMemory()
        self.progress: str | None = None
        self.preview: SummaryPreview | None = None
        self._job: Job[EngineOutcome] | None = None
        self._answer: _Answer | None = None
        self._discarded = False
        self._trigger_writes = _TriggerWrites()
        self._writing = 0  # trigger writes started whose job has not ended

    @property
    def saving(self) -> bool:
        """The trigger's memory is being written (a job)."""
        return self._writing > 0

    @property
    def running(self) -> bool:
        """A summary is being made in the background."""
        return self._job is not None

    def load_trigger(self, state: dict[str, Any] | None, last_seq: int) -> None:
        """Take the trigger memory kept with the session (read on opening)."""
        self.trigger = _trigger_from(state, last_seq)

    def cancel_job(self) -> bool:
        """Cancel the summary job without a word; False when none runs."""
        if self._job is None:
            return False
        self._job.cancel()
        return True

    # --- starting a summary

    def summarize(self, instructions: str | None = None, keep_recent: int | None = None) -> bool:
        """Condense older messages now, as the user asked; False when there is nothing to
        condense yet (the reason is said) or a summary is already being made.

        `keep_recent`: how many of the newest messages stay as they are (at least the
        emergency floor); None keeps the setting's number.
        """
        conversation = self._state
        if conversation.session is None or self._job is not None:
            return False
        state = self._gauge.measure("")
        if state is None:
            return False
        decision = self._policy().should_summarize(
            self._policy_input(state, manual=True, keep_recent=keep_recent)
        )
        if not decision.summarize:
            conversation.tell(
                lambda events: events.notice_raised("Nothing to summarize yet", decision.explain())
            )
            return False
        self._start(decision, trigger=SummaryTrigger.MANUAL, instructions=instructions)
        return True

    def after_reply(self, state: ContextState | None) -> None:
        """After a reply: condense in the background when the policy says it is due.

        `state` is the next request's figures without a draft (as `ConversationGauge.measure("")`).
        """
        if self._state.session is None or self._job is not None or state is None:
            return
        policy = self._policy()
        decision = policy.should_summarize(self._policy_input(state, manual=False))
        self._remember(policy.after_decision(self.trigger, decision), save=decision.summarize)
        if decision.summarize:
            self._start(decision, trigger=SummaryTrigger(decision.trigger or "auto"))

    def start_emergency(self, text: str) -> bool:
        """`text` would not fit: condense earlier messages so that it does; False when the
        policy finds nothing to condense."""
        gauge = self._gauge
        state = gauge.with_recall(text) or gauge.required(text)  # recall's floor counts
        decision = self._policy().should_summarize(self._policy_input(state, manual=False))
        if not decision.summarize:
            return False
        self._start(decision, trigger=SummaryTrigger.EMERGENCY, draft=text)
        return True

    def _start(
        self,
        decision: Decision,
        *,
        trigger: SummaryTrigger,
        draft: str = "",
        instructions: str | None = None,
    ) -> None:
        conversation, shared = self._state, self._shared
        assert conversation.session is not None
        model, _known = shared.model_info(conversation.model_id)
        request = SummaryRequest(
            session_id=conversation.session.id,
            model=model,
            system_prompt=conversation.system_prompt,
            draft=draft,
            trigger=trigger,
            decision=decision,
            instructions=instructions,
            config=shared.config(),
            review=trigger is SummaryTrigger.MANUAL
            or (trigger is not SummaryTrigger.EMERGENCY and shared.config().preview_automatic),
        )
        count = conversation.tail.unpinned
        self._run_job(
            request, self._summarized, f"Reading {count} message{'s' if count != 1 else ''}"
        )

    def _run_job(
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
            shared.loop.post(lambda: self._progressed(text))

        answer = _Answer()
        self._answer, self._discarded = answer, False

        def review(preview: SummaryPreview) -> Sequence[SummaryDraft] | None:  # job's thread
            shared.loop.post(lambda: self._previewed(preview, answer))
            return answer.wait()

        def work(job: Job[EngineOutcome]) -> EngineOutcome:
            return shared.summary_process.run(
                call, cancelled=lambda: job.cancelled, progress=progressed, review=review
            )

        self._job = shared.runner.start(
            Job("summary", work, done=done, failed=self._failed, on_cancel=answer.discard)
        )
        self._progressed(first_stage)

    def retry_with_claude(self, summary_id: str) -> bool:
        """Ask Claude to write a basic summary again, over the same messages, as the
        summary job; False (said why) when another summary is being made.

        When Claude still cannot be reached, the basic summary stays and a notice says so.
        """
        conversation = self._state
        if conversation.session is None:
            return False
        if self._job is not None:
            conversation.tell(
                lambda events: events.notice_raised(
                    "A summary is already being made",
                    "Try again with Claude once it is done.",
                )
            )
            return False
        model, _known = self._shared.model_info(conversation.model_id)
        request = SummaryRequest(
            session_id=conversation.session.id,
            model=model,
            system_prompt=conversation.system_prompt,
            draft="",
            trigger=SummaryTrigger.MANUAL,
            decision=None,
            instructions=None,
            config=self._shared.config(),
            retry_summary_id=summary_id,
        )
        self._run_job(request, self._rewritten, ASKING_CLAUDE)
        return True

    # --- the preview and cancelling

    def _previewed(self, preview: SummaryPreview, answer: _Answer) -> None:
        if answer is not self._answer or answer.answered:
            return  # a summary that has ended, or been cancelled, meanwhile
        self.preview = preview
        self._progressed(WAITING_FOR_YOU)
        self._state.tell(lambda events: events.summary_previewed(preview))

    def accept(self, edited: Sequence[SummaryDraft] | None = None) -> None:
        """Save the previewed summary: as drafted, or `edited` (one per draft, only
        their content changed)."""
        if self.preview is None or self._answer is None:
            return
        drafts = self.preview.drafts if edited is None else tuple(edited)
        if len(drafts) != len(self.preview.drafts):
            raise ValueError("one edited draft per draft of the preview")
        self.preview = None
        self._answer.give(drafts)
        self._progressed(SAVING)

    def discard(self) -> None:
        """Drop the previewed summary: nothing is saved, every message stays as it was."""
        if self.preview is None or self._answer is None:
            return
        self.preview = None
        self._discarded = True
        self._answer.give(None)

    def cancel(self) -> None:
        """Cancel the summary being made: nothing changes (a message waiting for it stays
        in the composer)."""
        if self._job is None:
            return
        if self._state.activity is Activity.CONDENSING:
            self._state.drop_waiting()
        self._job.cancel()
        self._progressed(CANCELLING)

    # --- the job's progress and outcome

    def _progressed(self, text: str | None) -> None:
        job = self._job
        if text is not None and (job is None or (job.cancelled and text != CANCELLING)):
            return  # a late stage of a summary that has ended, or is being cancelled
        self.progress = text
        self._state.tell(lambda events: events.summary_progress(text))

    def _ended(self) -> bool:
        """Forget the summary's job; True when it had been cancelled."""
        job, self._job = self._job, None
        self.preview, self._answer = None, None
        self._progressed(None)
        return job is not None and job.cancelled

    def _summarized(self, outcome: EngineOutcome) -> None:
        conversation = self._state
        cancelled = self._ended()
        messages_before = len(conversation.tail)
        if (cancelled or self._discarded) and not outcome.changed:
            title = (
                "Summary cancelled — nothing changed"
                if cancelled
                else "Summary discarded — nothing changed"
            )
            conversation.tell(
                lambda events: events.notice_raised(title, "Every message stays as it was.")
            )
        if not outcome.changed and not outcome.covered_messages:
            conversation.go_on()
            return
        steps: list[Callable[[], None]] = []
        if outcome.changed:
            conversation.take_summaries(outcome.active_after, covered=outcome.covered_message_ids)
            state = self._gauge.measure("")
            self._remember(self._policy().after_summary(self.trigger, state), save=True)
            summaries = tuple(conversation.summaries)
            # The transcript hides what was condensed and places the cards; then the gauge.
            steps += [
                lambda: conversation.tell(lambda events: events.summaries_changed(summaries)),
                self._gauge.tell,
            ]
        if outcome.covered_messages:
            report = _report(outcome, messages_before, len(conversation.tail))
            steps.append(lambda: conversation.tell(lambda events: events.summary_made(report)))
        steps.append(conversation.go_on)
        # Each in a turn of the event loop of its own, the reply's text shown between them:
        # the transcript's change is slice enough (issue 20).
        _in_turns(conversation.shared.loop, steps)

    def _rewritten(self, outcome: EngineOutcome) -> None:
        conversation = self._state
        cancelled = self._ended()
        if outcome.changed:
            # Same messages covered: the live tail is as it was; only the card changes.
            conversation.take_summaries(outcome.active_after)
            self._gauge.memory_changed()
            conversation.tell(
                lambda events: events.notice_raised(
                    "Summary rewritten by Claude", "The messages it covers stay the same."
                )
            )
        elif cancelled:
            conversation.tell(
                lambda events: events.notice_raised(
                    "Summary cancelled — nothing changed", "The simpler summary stays."
                )
            )
        else:
            conversation.tell(
                lambda events: events.notice_raised("Summary not rewritten", outcome.message)
            )
        conversation.go_on()

    def _failed(self, error: UserFacingError) -> None:
        # The conversation is unchanged; the engine recorded the failed attempt.
        log.warning("Condensing failed: %s (%s)", error.message, error.detail)
        cancelled = self._ended()
        title, text = (
            ("Summary cancelled — nothing changed", "Every message stays as it was.")
            if cancelled
            else (
                "Earlier messages could not be summarized",
                f"{error.message} Nothing changed: every message is still here.",
            )
        )
        self._state.tell(lambda events: events.notice_raised(title, text))
        self._state.go_on()

    # --- undo

    def undo(self, summary_id: str) -> None:
        """Give a summary's originals back (only the newest when not all fit; said so)."""
        conversation, shared = self._state, self._shared
        if conversation.session is None:
            return
        session_id = conversation.session.id
        model, _known = shared.model_info(conversation.model_id)
        system_prompt, config = conversation.system_prompt, shared.config()
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
                failed=conversation.error,
            )
        )

    def _undone(self, outcome: UndoOutcome) -> None:
        conversation = self._state
        conversation.take_summaries(outcome.active_after, restored=outcome.restored)
        self._gauge.memory_changed()
        if not outcome.result.complete:
            restored = len(outcome.restored) or len(outcome.result.restored_summary_ids)
            conversation.tell(
                lambda events: events.notice_raised(
                    "Summary partly undone",
                    f"Only the newest {restored} could come back: the rest would not fit in "
                    "what Claude can read. They stay in the summary.",
                )
            )

    # --- the trigger's memory

    def _policy(self) -> TriggerPolicy:
        return TriggerPolicy(self._shared.config())

    def _policy_input(
        self, state: ContextState, *, manual: bool, keep_recent: int | None = None
    ) -> PolicyInput:
        conversation = self._state
        required = state.required  # a new ContextState each time it is asked
        return PolicyInput(
            state=required,
            live_messages=conversation.tail.unpinned,
            memory=self.trigger,
            summary_depth=max((s.depth for s in conversation.summaries), default=0),
            manual=manual,
            keep_recent=keep_recent,
            whole_tokens=whole_conversation_tokens(
                required, _archived_tokens(conversation.summaries)
            ),
        )

    def observe(self, new_messages: int, state: ContextState | None = None) -> None:
        """Tell the trigger that messages were stored and how full it is now."""
        before, policy = self.trigger, self._policy()
        if state is None and policy.reads_usage(before, new_messages=new_messages):
            state = self._gauge.measure("")
            if state is None:
                return
        # Only re-arming reads how full it is: else nothing is measured on the window's
        # thread at every message stored (issue 20), unless no figures could be (opening).
        if (state is None and not self._gauge.measurable) or self._state.session is None:
            return
        required = state.required if state is not None else None
        after = policy.observe(before, required, new_messages=new_messages)
        self._remember(after, save=after.armed != before.armed)

    def _remember(self, memory: TriggerMemory, *, save: bool) -> None:
        """Keep the trigger's memory; written with the session when it matters (a trigger,
        a summary, re-arming), and the seq it was taken at, so counts catch up on reopening."""
        self.trigger = memory
        session = self._state.session
        if not save or session is None:
            return
        state = {**memory.to_dict(), "at_seq": self._state.tail.last_seq}
        # Written by a job, off the loop's thread (a commit with its fsync; issue 20); the
        # newest memory wins whatever order the jobs run in. Until it is on disk (a few
        # milliseconds) a crash loses only this change: the conversation reopens with the
        # memory written before, counting the messages stored since it.
        session_id, writes, open_store = session.id, self._trigger_writes, self._shared.open_store
        number = writes.next_number()

        def write(_job: Job[None]) -> None:
            key = ("trigger store", open_store)
            store, kept = kept_for_thread(key, open_store, SessionStore.close)
            try:
                writes.write(number, lambda: store.set_trigger_state(session_id, state))
            except RecordNotFoundError:
                pass  # the conversation was deleted meanwhile: nothing to keep
            except StorageError:
                if kept:
                    drop_kept(key)  # a fresh connection for the next one
                raise
            finally:
                if not kept:
                    store.close()

        def ended(_result: None = None) -> None:
            self._writing -= 1

        def failed(error: UserFacingError) -> None:
            ended()
            log.warning("Could not keep the summary trigger's state: %s", error.message)

        self._writing += 1
        self._shared.runner.start(
            Job("summary trigger", write, done=ended, failed=failed, kept_thread=True)
        )


class _TriggerWrites:
    """A conversation's trigger writes, numbered as asked: one at a time, and one older
    than what is on disk is skipped (jobs may run in any order)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._asked = 0
        self._written = 0

    def next_number(self) -> int:  # on the loop's thread
        self._asked += 1
        return self._asked

    def write(self, number: int, write: Callable[[], None]) -> None:  # on a job's thread
        with self._lock:
            if number > self._written:
                write()
                self._written = number


def _in_turns(loop: EventLoop, steps: Sequence[Callable[[], None]]) -> None:
    """Run `steps` in order, each in a turn of `loop` of its own.

    Chained with zero-delay timers, not `post`: Qt delivers the events posted meanwhile
    in one go, so posted steps would run back to back, no timer (an input, a repaint
    asked for by one) between them."""
    if not steps:
        return
    first, rest = steps[0], steps[1:]

    def step() -> None:
        first()
        _in_turns(loop, rest)

    loop.call_later(0, step)


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


def _archived_tokens(summaries: Sequence[Summary]) -> int | None:
    """The archived originals' tokens (raw), when every active summary covers messages
    (a compressed summary keeps only its summaries' sizes): None when unknown."""
    if any(s.tier is not SummaryTier.CONDENSED for s in summaries):
        return None
    return sum(s.source_tokens for s in summaries)
