"""What a conversation does when a reply ends other than complete (app.chat.stop_reasons).

`ReplyEndings` belongs to one conversation and runs on the loop's thread. It lets the
user go on writing a reply cut off at its length limit, paused or stopped (Continue);
takes in the rows a reply changed besides its own (the question of a declined reply,
now left out of what Claude sees) or deleted (a failed reply that received nothing);
and, when a reply filled the context window, condenses earlier messages and goes on
with it once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from app.chat.events import Activity, ChatEvents
from app.chat.state import ConversationState
from app.chat.stop_reasons import CONTINUABLE_STATUSES, fills_the_window
from app.chat.summaries import ConversationSummaries
from app.chat.unsaved import UnsavedReply
from app.chat.versions import MessageVersions
from app.core.errors import InvalidInputError
from app.core.live_tail import TailEntry
from app.core.models import Message, Role

if TYPE_CHECKING:
    from app.chat.reply import ReplyOutcome

CONDENSING_TO_FINISH = "Summarizing earlier messages so Claude can finish its reply…"


class ReplyEndings:
    """Continue, and the aftermath of a reply that did not simply complete.

    The reply waiting for condensing to end is the state's `waiting_reply`.
    """

    def __init__(
        self,
        state: ConversationState,
        versions: MessageVersions,
        condensing: ConversationSummaries,
        unsaved: UnsavedReply,
    ) -> None:
        self._state = state
        self._versions = versions
        self._condensing = condensing
        self._unsaved = unsaved
        self._window_retried: int | None = None  # the reply condensed for once already

    def can_continue(self, message: Message) -> bool:
        """Whether Continue applies to `message`: Claude's newest live message, cut off,
        paused or stopped, while nothing else runs."""
        state = self._state
        entry = state.tail.find(message.id)
        return (
            state.activity is Activity.IDLE
            and message.role is Role.ASSISTANT
            and message.status in CONTINUABLE_STATUSES
            and entry is not None
            and entry.seq == state.tail.last_seq
        )

    def continue_reply(self, message: Message) -> bool:
        """Go on writing `message` into the same row; False (said in words) when it cannot."""
        if not self.can_continue(message):
            self._state.error(
                InvalidInputError(
                    "Only Claude's latest reply can be continued, once it has stopped."
                )
            )
            return False
        if not self._unsaved.saved():  # it goes on from the text shown
            return False
        self._state.start_reply(continuing=message.id)
        return True

    def reply_done(self, outcome: ReplyOutcome) -> None:
        """Take in what a finished reply changed besides its own row; condense and go on
        once when it filled the context window."""
        state, count = self._state, self._state.shared.counter.count
        for changed in outcome.changed:
            if state.tail.replace(TailEntry.of(changed, count)):
                state.tell(_updated(changed))
        if outcome.discarded is not None:
            discarded = outcome.discarded
            state.tail.remove({discarded})
            state.tell(lambda events: events.message_removed(discarded))
        self._versions.reply_done(outcome)  # a regeneration that received nothing
        message = outcome.message
        if message is None or not fills_the_window(outcome.stop_reason):
            self._window_retried = None
            return
        if self._window_retried == message.id:  # once only: then Continue is the user's
            self._window_retried = None
            return
        self._window_retried = message.id
        # Room for a continuation as long again as what was written: the request that
        # filled the window was sent on estimates that proved short.
        condensing = self._condensing
        if condensing.running or not condensing.start_emergency(message.content):
            state.start_reply(continuing=message.id)  # nothing to condense: go on
            return
        state.waiting_reply = message.id
        state.status(CONDENSING_TO_FINISH)
        state.set_activity(Activity.CONDENSING)

    def resume(self) -> None:
        """Condensing ended: go on with the reply that waited for it, if one did; else
        clear the status line."""
        state = self._state
        waiting, state.waiting_reply = state.waiting_reply, None
        if waiting is None or state.activity is not Activity.IDLE:
            state.status("")
            return
        state.start_reply(continuing=waiting)


def _updated(message: Message) -> Callable[[ChatEvents], None]:
    return lambda events: events.message_updated(message)
