"""A conversation's turns: the user's message stored and sent, Claude's reply streamed.

`ConversationTurns` belongs to one conversation and runs on the loop's thread. It
checks and stores the message (condensing earlier ones first when it would not fit:
the message then waits, DESIGN §5), starts the reply as a job (`app.chat.reply`),
shows the turn once that job's request has left or 50 ms passed (`HeldTells`),
shows its text as it arrives — at most about 30 times a second — and takes in how it
ended: the reply's row (`unsaved`), what else it changed (`reply_endings`), and the
summary it may make due (`summaries`). It is the conversation's `Turns`: the parts
below it ask for a reply, or go on with what waited, through the state.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from typing import TYPE_CHECKING

from app.chat.attachments import Outgoing
from app.chat.events import Activity
from app.chat.gauge import ConversationGauge
from app.chat.loop import Callback, EventLoop, Timer
from app.chat.model_use import ModelInUse
from app.chat.reply_endings import ReplyEndings
from app.chat.runner import Job
from app.chat.state import ConversationState
from app.chat.summaries import ConversationSummaries
from app.chat.titles import ConversationTitles
from app.chat.unsaved import UnsavedReply
from app.chat.versions import MessageVersions
from app.core.dates import utc_now
from app.core.errors import (
    ContextOverflowError,
    MessageTooLargeError,
    StorageError,
    UserFacingError,
)
from app.core.live_tail import TailEntry
from app.core.models import Message, MessageStatus, Role
from app.core.text import DEFAULT_TITLE, title_from_first_message, validate_message_text

if TYPE_CHECKING:
    from app.chat.reply import ReplyJob, ReplyOutcome

# At most this many transcript updates a second while a reply streams.
TEXT_INTERVAL_SECONDS = 1 / 30
# Stand-in ids of messages shown as sending (below zero: no stored row has one).
_SENDING_IDS = itertools.count(-1, -1)
# A message sent shows once its request has left, or after this long if the request
# takes longer to build (big files, a cold archive). The composer clears at Enter; the
# row follows within 50 ms, well under the ~0.1 s a person sees as instant. A frame
# (16 ms) was tried: the request (recall first) seldom leaves that soon, so the row was
# built first and, holding the GIL, delayed the request — bench_path, same run, load
# ~1: GUI thread Enter → request 12.3-14.3 ms with a frame, 6.4 with 50 ms (main
# 16-17); the whole process's CPU to the request 27-35 ms (33-44 with a frame).
SHOW_SENDING_WITHIN_SECONDS = 0.05
# What the reply's job tells before its request left (the question stored, the reply's
# row) waits for it, or at most this long (a count or an upload before it, say).
SHOW_ALL_WITHIN_SECONDS = 0.1


class ConversationTurns:
    """Sending, and the reply on its way (one at a time)."""

    def __init__(
        self,
        state: ConversationState,
        *,
        outgoing: Outgoing,
        gauge: ConversationGauge,
        unsaved: UnsavedReply,
        condensing: ConversationSummaries,
        model: ModelInUse,
        versions: MessageVersions,
        endings: ReplyEndings,
        titles: ConversationTitles,
    ) -> None:
        self._state = state
        self._shared = state.shared
        self._outgoing = outgoing
        self._gauge = gauge
        self._unsaved = unsaved
        self._condensing = condensing
        self._model = model
        self._versions = versions
        self._endings = endings
        self._titles = titles
        self._emergency_text: str | None = None  # condensed once already for this text
        self._reply: ReplyJob | None = None
        self._reply_job: Job[ReplyOutcome] | None = None
        self._text_timer: Timer | None = None
        self._last_text_at = float("-inf")
        self._thinking_shown = ""  # the reply's thinking as last told
        self._text_shown = ""  # the reply's text as last told (its row's, once it started)
        self._sending_id = 0  # the stand-in id of the last message shown as sending
        self._held = HeldTells(self._shared.loop)  # what a turn tells before its request left
        state.asks_with(self)

    @property
    def row_pending(self) -> bool:
        """The message just sent shows soon, with its turn (`HeldTells`): not yet."""
        return self._held.row_pending

    @property
    def replying(self) -> bool:
        """A reply's job is running (off screen too)."""
        return self._reply_job is not None

    # --- sending

    def send(self, text: str) -> bool:
        """Store the user's message and ask for a reply. False keeps the text in the composer."""
        state, shared, outgoing = self._state, self._shared, self._outgoing
        if state.activity is Activity.LOADING:
            state.pending = text
            state.status("Opening the conversation…")
            return False
        if state.activity is not Activity.IDLE:
            return False
        text = outgoing.text(text)
        try:
            validate_message_text(text)
        except UserFacingError as error:
            state.error(error)
            return False
        if shared.provider() is None:
            shared.events.key_needed()
            return False
        tokens = self._gauge.tokens(text)  # counted already when the gauge measured it
        try:
            outgoing.check(shared.model_info(state.model_id)[0])
            # It fits; would it leave recall less than its floor? Then older messages
            # give way first; when nothing can be condensed, it goes as it is.
            squeezed = self._gauge.check_send(text, tokens)
        except ContextOverflowError as error:
            # Condensing earlier messages makes room, unless the message alone is too large.
            condensable = state.session is not None and not isinstance(error, MessageTooLargeError)
            if not condensable or not self._start_emergency(text):
                state.error(error)
            return False
        except UserFacingError as error:
            state.error(error)
            return False
        if squeezed and self._start_emergency(text):
            return False
        session = state.session
        if session is not None and session.title != DEFAULT_TITLE and not outgoing.draft:
            # The commit goes with the reply's job, off this thread; the message shows
            # as sending until it is on disk (`_question_stored`).
            try:
                self._unsaved.save()  # the reply the disk refused goes first
            except StorageError as error:
                state.error(error)
                return False
            return self._send_off(text, tokens)
        try:
            self._unsaved.save()  # the reply the disk refused goes first
            message = self._store_question(text, tokens)
        except StorageError as error:
            state.error(error)
            return False
        state.tail.append(TailEntry.of(message, shared.counter.count))
        self._gauge.draft = ""
        self._condensing.observe(1)
        state.tell(lambda events: events.message_added(message))
        self.start_reply()
        return True

    def _send_off(self, text: str, tokens: int) -> bool:
        """Show the message as sending and start the job that stores it, then replies.
        False when the job could not start: the message stays in the composer, unshown."""
        state = self._state
        assert state.session is not None
        self._sending_id = next(_SENDING_IDS)
        sending = Message(
            id=self._sending_id,
            session_id=state.session.id,
            seq=state.tail.last_seq + 1,
            role=Role.USER,
            content=text,
            created_at=utc_now(),
            token_estimate=tokens,
        )
        # The job first: it stores the message and builds the request on its thread. The
        # window shows the turn once the request has left (this thread's work on the row
        # would slow it down: the GIL), or after 50 ms: what the job tells before
        # then waits, in order (issue 20).
        self.start_reply(question=sending)
        if self._reply_job is None:  # it stays in the composer, never shown
            return False
        self._gauge.draft = ""
        self._held.hold(lambda: self._show_sending(sending))
        return True

    def _show_sending(self, sending: Message) -> None:
        """Show the turn begun by `_send_off`: busy, and the message as sending."""
        state = self._state
        state.status("")
        activity = state.activity  # REPLYING, set by `start_reply`, unless it ended
        state.tell(lambda events: events.activity_changed(activity))
        state.tell(lambda events: events.message_sending(sending))

    def _question_stored(self, sending_id: int, message: Message) -> None:
        """The message shown as sending is on disk: it joins the live tail."""
        state = self._state
        state.tail.append(TailEntry.of(message, self._shared.counter.count))
        self._condensing.observe(1)
        if state.session is not None and not state.deleted:
            # Told now, so the conversation moves to the top of the list as the message
            # goes, and again at the reply's end (its last-active time, cache figures).
            state.session = state.session.model_copy(update={"updated_at": message.created_at})
            self._shared.session_changed(state.session)
        state.tell(lambda events: events.message_stored(sending_id, message))

    def _store_question(self, text: str, tokens: int) -> Message:
        state, shared = self._state, self._shared
        if state.session is None:
            state.session = shared.store.create_session(
                title_from_first_message(text), state.model_id, state.new_instructions
            )
            self._titles.started(state.session, text)
        message = self._outgoing.store(shared.store, state.session.id, text, tokens)
        if state.session.title == DEFAULT_TITLE:
            state.session = shared.store.rename_session(
                state.session.id, title_from_first_message(text)
            )
        state.session = state.session.model_copy(update={"updated_at": message.created_at})
        shared.session_changed(state.session)
        return message

    def retry(self) -> None:
        """Ask again for a reply to the last question (after an error)."""
        state = self._state
        if state.activity is Activity.IDLE and state.session is not None and self._unsaved.saved():
            self.start_reply()

    def stop(self) -> None:
        """Stop the reply (its text is kept), or the condensing a message waits for."""
        state = self._state
        if state.activity is Activity.REPLYING and self._reply is not None:
            self._reply.cancel()
            self._held.run(lambda: state.status("Stopping…"))  # after the row it stops
        elif state.activity is Activity.CONDENSING and self._condensing.cancel_job():
            # The waiting message stays in the composer; it is not sent when this ends.
            state.drop_waiting()
            state.status("Stopping…")

    def forget(self) -> None:
        """The conversation was deleted: stop its work and tell nobody about it again."""
        self._state.deleted = True
        self._state.pending = None
        if self._reply_job is not None:
            self._reply_job.cancel()
        self._condensing.cancel_job()

    # --- what waited for condensing or opening

    def _start_emergency(self, text: str) -> bool:
        """The message would not fit: condense earlier messages, then send it.

        False when condensing cannot help (nothing left to condense, or it was tried
        already for this very text); the caller then says why it cannot be sent.
        """
        state, condensing = self._state, self._condensing
        if self._emergency_text == text and not condensing.running:
            self._emergency_text = None
            return False
        if not condensing.running:
            if not condensing.start_emergency(text):
                return False
            self._emergency_text = text
        # Else an automatic summary is running: try again when it is done.
        state.pending = text
        state.status("Summarizing earlier messages…")
        state.set_activity(Activity.CONDENSING)
        return True

    def go_on(self) -> None:
        """Send the message that waited for condensing or opening, unless it was stopped;
        else go on with the reply that waited for condensing (or clear the status)."""
        state = self._state
        pending, state.pending = state.pending, None
        if state.activity in (Activity.CONDENSING, Activity.LOADING):
            state.set_activity(Activity.IDLE)
        if pending is None:
            self._endings.resume()
            return
        state.status("")
        if self.send(pending):
            self._emergency_text = None
            state.tell(lambda events: events.pending_sent())

    # --- the reply

    def start_reply(
        self,
        continuing: int | None = None,
        replacing: int | None = None,
        *,
        question: Message | None = None,
    ) -> None:
        """Ask Claude for a reply (`ConversationState.start_reply` says which), or store
        `question` (shown as sending) first and answer it."""
        # Imported here, not to paint the window: the reply's machinery (recall, the
        # archive's searches) is loaded after the first paint (`AFTER_PAINT_IMPORTS`).
        from app.chat.recall import recall_budget
        from app.chat.reply import ReplyJob, ReplyOutcome, ReplyRequest

        state, shared = self._state, self._shared
        assert state.session is not None
        if (
            question is None
            and continuing is replacing is None
            and state.tail.tally.last_role is not Role.USER
        ):
            return  # nothing to answer: the newest message Claude would see is its own
        provider = shared.provider()
        if provider is None:  # a message to store stays in the composer (`_send_off`)
            shared.events.key_needed()
            return
        loop, held = shared.loop, self._held
        # The question stored and the reply's row, told from the job's thread just before
        # its request leaves: while the turn is held they wait with it, handed over without
        # a post of their own (each a wake-up of this thread); else posted.
        hand = held.hand if question is not None else lambda call: loop.post(lambda: held.run(call))
        model, summaries = shared.model_info(state.model_id), tuple(state.summaries)
        reply = ReplyJob(
            ReplyRequest(
                state.session.id,
                *model,
                state.system_prompt,
                summaries,
                continuing,
                fallback=self._model.fallback(),  # after a 404 (model_fallback)
                replacing=replacing,
                think_longer=shared.think_longer(),
                question=_stored_as(question),
            ),
            builder=shared.builder,
            recall_budget_ratio=recall_budget(shared.recall()),
            recall_across=shared.recall().across_conversations,
            provider=provider,
            open_store=shared.open_store,
            calibrations=shared.calibrations,
            calibration_file=shared.calibration_file,
            # What it tells goes through `held`: while the window waits for its request
            # to leave (`_send_off`), in order after it; else at once.
            on_started=lambda message: hand(lambda: self._started(message)),
            on_text=lambda: loop.post(lambda: held.run(self._text_arrived)),
            on_retry=lambda attempt, wait: loop.post(
                lambda: held.run(lambda: state.status(_retrying(wait)))
            ),
            on_model_switched=lambda old, new: loop.post(
                lambda: held.run(lambda: self._model.switched(old, new))
            ),
            lookups=shared.lookups(
                state.session.id, lambda call: held.run(lambda: state.tell(call))
            ),
            on_question_stored=lambda message: hand(
                lambda: self._question_stored(sending_id, message)
            ),
            uploads=shared.uploads,
            on_lookup=lambda lookup: loop.post(
                lambda: held.run(lambda: state.tell(lambda events: events.lookup_made(lookup)))
            ),
            cache_after=shared.cache_after(state.session.id),
            on_request_sent=lambda: loop.post(held.release),
        )
        sending_id = question.id if question is not None else 0
        try:
            self._reply_job = shared.runner.start(
                Job(
                    "reply",
                    reply.work,
                    # Its end shows what waited first (a failure before any request).
                    done=lambda outcome: held.run(lambda: self._reply_done(outcome), last=True),
                    failed=lambda error: held.run(
                        lambda: self._reply_done(ReplyOutcome(None, error)), last=True
                    ),
                    on_cancel=reply.cancel,
                    kept_thread=True,  # its store kept for the next reply (ReplyJob.work)
                )
            )
        except RuntimeError as error:  # no thread for it ("can't start new thread")
            state.error(_not_started(error, kept=question is not None))
            return
        self._reply, self._thinking_shown = reply, ""
        if question is not None:
            # Busy at once (a second Enter is refused), told with its row (`_show_sending`).
            state.activity = Activity.REPLYING
            return
        state.status("")
        state.set_activity(Activity.REPLYING)

    def _started(self, placeholder: Message) -> None:
        """The reply's row is streaming: a new one, or the reply it goes on writing."""
        self._versions.started(placeholder)  # a regeneration's replaces the earlier reply
        state = self._state
        entry = TailEntry.of(placeholder, self._shared.counter.count)
        if not state.tail.replace(entry):
            state.tail.append(entry)
        self._text_shown = placeholder.content  # a reply it goes on writing shows its text
        state.tell(lambda events: events.message_added(placeholder))

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
        state = self._state
        state.status("")
        if thinking != self._thinking_shown:
            self._thinking_shown = thinking
            state.tell(lambda events: events.message_thinking_changed(message_id, thinking))
        if text != self._text_shown:  # not while Claude only thinks: its row stays as it is
            self._text_shown = text
            state.tell(lambda events: events.message_text_changed(message_id, text))

    def _reply_done(self, outcome: ReplyOutcome) -> None:
        if self._text_timer is not None:
            self._text_timer.cancel()
            self._text_timer = None
        self._reply, self._reply_job = None, None
        state, gauge = self._state, self._gauge
        gauge.quoted = outcome.quoted
        if outcome.unsent is not None and not state.deleted:
            # Not on disk: never shown as sent. Its words go back to the composer (told
            # even when another conversation is on screen now: nothing typed is lost).
            sending_id, unsent = self._sending_id, outcome.unsent
            self._shared.events.message_not_sent(sending_id, unsent)
        message = self._unsaved.take(outcome.message, outcome.not_saved)
        if state.session is not None and not state.deleted:
            state.session = state.session.model_copy(update={"updated_at": utc_now()})
            self._shared.cache_read(state.session.id, outcome.cache_read)
            self._shared.session_changed(state.session)
        state.status("")
        if message is not None and message.status is MessageStatus.DECLINED:
            declined, explanation = message.id, outcome.refusal_explanation
            state.tell(lambda events: events.reply_declined(declined, explanation))
        state.set_activity(Activity.IDLE)
        self._endings.reply_done(outcome)
        self._titles.reply_done(message)
        figures = gauge.measure("")
        if outcome.error is not None:
            error = outcome.error
            state.tell(lambda events: events.error_raised(error))
        elif message is not None:
            self._condensing.observe(1, figures)
            self._condensing.after_reply(figures)
        gauge.tell(figures if not gauge.draft else None)


def _stored_as(question: Message | None) -> tuple[str, int] | None:
    """What a reply's job stores of a message shown as sending: its text and tokens."""
    if question is None:
        return None
    return question.content, question.token_estimate or 0


def _not_started(error: RuntimeError, *, kept: bool) -> UserFacingError:
    """Why nothing was asked when the reply's job could not start, in plain words
    (`kept`: the message to send stays in the composer)."""
    then = "Your message is still in the box below: close some programs, then send it again."
    return UserFacingError(
        "Cairn could not start asking Claude: this computer is short of resources right "
        f"now. {then if kept else 'Close some programs, then try again.'}",
        title="Couldn't send your message",
        detail=f"the reply's thread did not start: {error}",
    )


def _now() -> float:
    return time.monotonic()


def _retrying(wait: float | None) -> str:
    """The status line while the SDK waits to ask again."""
    suffix = f" in {wait:.0f} s" if wait and wait >= 1 else ""
    return f"Claude is busy — retrying{suffix}…"


class HeldTells:
    """What a turn tells the front end between Enter and its request leaving (issue 20).

    While the reply's job builds the request, the window's thread waits: its work on the
    rows would compete with the job's for the GIL. `hold` starts that wait with what shows
    the turn (its row); `run` queues what comes meanwhile (and runs at once otherwise).
    After `SHOW_SENDING_WITHIN_SECONDS` the row shows (a slow build never leaves the user
    looking at nothing); the rest runs on `release` (the request left), when the job ends
    first, or after `SHOW_ALL_WITHIN_SECONDS`: in order, once each, one per loop turn.
    What the job's thread tells while a turn is held it `hand`s over: it waits with the
    rest, taken in when anything of the turn runs next (the request left: one post, one
    wake-up of the loop's thread, instead of one each).
    """

    def __init__(self, loop: EventLoop) -> None:
        self._loop = loop
        self._waiting: deque[Callback] | None = None  # None: nothing held, `run` runs
        self._held = False  # the rest waits for `release`
        self._ready = 0  # how many of `_waiting` run before `release` (the wait passed)
        self._row_at = 0  # how many of `_waiting` show the turn's row (what came before too)
        self._timer: Timer | None = None
        self._draining = False  # the next of `_waiting` is posted
        self._row_pending = False  # `hold`'s row has not run yet
        # Handed from another thread while held (None: not held, `hand` posts); its lock.
        self._handed: list[Callback] | None = None
        self._handing = threading.Lock()

    def hold(self, row: Callback) -> None:
        """Hold what the turn tells, `row` first, until `release` (the row after 50 ms)."""
        if self._waiting is None:
            self._waiting = deque()
        self._row_pending = True

        def show() -> None:
            self._row_pending = False
            row()

        self._waiting.append(show)
        self._held, self._ready, self._row_at = True, 0, len(self._waiting)
        with self._handing:
            if self._handed is None:
                self._handed = []
        self._restart_timer(SHOW_SENDING_WITHIN_SECONDS, self._wait_passed)

    def hand(self, callback: Callback) -> None:
        """From any thread: `callback` waits with what is held, in order, without a post of
        its own while a turn is held; else it is posted, to `run` on the loop's thread."""
        with self._handing:
            if self._handed is not None:
                self._handed.append(callback)
                return
        self._loop.post(lambda: self.run(callback))

    def _take_handed(self, *, close: bool) -> None:
        """What was handed over so far joins what waits (`close`: later ones are posted)."""
        with self._handing:
            handed = self._handed
            self._handed = None if close else ([] if handed else handed)
        if handed and self._waiting is not None:
            self._waiting.extend(handed)
        elif handed:  # nothing waits any more: they run now, in order
            for callback in handed:
                callback()

    @property
    def row_pending(self) -> bool:
        """What shows the turn (`hold`'s row) has not run yet."""
        return self._row_pending

    def run(self, callback: Callback, *, last: bool = False) -> None:
        """Run `callback` now, or after what waits; `last`: nothing more comes, so
        what waits need not wait any longer (the job ended before its request left)."""
        if self._waiting is None:
            callback()
            return
        self._take_handed(close=False)  # told before it
        self._waiting.append(callback)
        if last:
            self.release()

    def release(self) -> None:
        """The request left: what waited runs."""
        self._held = False
        self._take_handed(close=True)
        self._restart_timer(None, None)
        self._drain()

    def _wait_passed(self) -> None:
        self._timer = None
        self._ready = self._row_at
        self._drain()
        wait = SHOW_ALL_WITHIN_SECONDS - SHOW_SENDING_WITHIN_SECONDS
        self._restart_timer(wait, self.release)

    def _drain(self) -> None:
        if not self._draining:
            self._next()

    def _next(self) -> None:
        self._draining = False
        waiting = self._waiting
        if waiting is None or (self._held and not self._ready):
            return
        if waiting:
            self._ready = max(0, self._ready - 1)
            self._draining = True  # a `release` it calls runs nothing inside it
            try:
                waiting.popleft()()  # may hold a new turn (a message that waited, sent)
            finally:
                self._draining = False
        if waiting and (not self._held or self._ready):
            self._draining = True
            self._loop.post(self._next)
        elif not waiting and not self._held:
            self._waiting = None

    def _restart_timer(self, seconds: float | None, callback: Callback | None) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if seconds is not None and callback is not None:
            self._timer = self._loop.call_later(seconds, callback)
