"""What a conversation does when a reply ends other than complete (app.chat.stop_reasons).

`ReplyEndings` belongs to one `Conversation` and runs on the loop's thread. It lets the
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
from app.chat.reply import ReplyOutcome
from app.chat.stop_reasons import CONTINUABLE_STATUSES, fills_the_window
from app.core.errors import InvalidInputError
from app.core.live_tail import TailEntry
from app.core.models import Message, Role

if TYPE_CHECKING:
    from app.chat.conversation import Conversation, Shared

CONDENSING_TO_FINISH = "Condensing earlier messages so Claude can finish its reply…"


class ReplyEndings:
    """Continue, and the aftermath of a reply that did not simply complete.

    Attributes:
        waiting: the reply to go on writing once earlier messages are condensed.
    """

    def __init__(self, conversation: Conversation, shared: Shared) -> None:
        self._conversation = conversation
        self._shared = shared
        self.waiting: int | None = None
        self._window_retried: int | None = None  # the reply condensed for once already

    def can_continue(self, message: Message) -> bool:
        """Whether Continue applies to `message`: Claude's newest live message, cut off,
        paused or stopped, while nothing else runs."""
        conversation = self._conversation
        entry = conversation.tail.find(message.id)
        return (
            conversation.activity is Activity.IDLE
            and message.role is Role.ASSISTANT
            and message.status in CONTINUABLE_STATUSES
            and entry is not None
            and entry.seq == conversation.tail.last_seq
        )

    def continue_reply(self, message: Message) -> bool:
        """Go on writing `message` into the same row; False (said in words) when it cannot."""
        if not self.can_continue(message):
            self._conversation.error(
                InvalidInputError(
                    "Only Claude's latest reply can be continued, once it has stopped."
                )
            )
            return False
        if not self._conversation.unsaved.saved():  # it goes on from the text shown
            return False
        self._conversation._start_reply(continuing=message.id)
        return True

    def started(self, placeholder: Message) -> None:
        """A reply's row is streaming: a new one, or the reply it goes on writing."""
        entry = TailEntry.of(placeholder, self._shared.counter.count)
        if not self._conversation.tail.replace(entry):
            self._conversation.tail.append(entry)
        self._conversation.tell(lambda events: events.message_added(placeholder))

    def reply_done(self, outcome: ReplyOutcome) -> None:
        """Take in what a finished reply changed besides its own row; condense and go on
        once when it filled the context window."""
        conversation, count = self._conversation, self._shared.counter.count
        for changed in outcome.changed:
            if conversation.tail.replace(TailEntry.of(changed, count)):
                conversation.tell(_updated(changed))
        if outcome.discarded is not None:
            discarded = outcome.discarded
            conversation.tail.remove({discarded})
            conversation.tell(lambda events: events.message_removed(discarded))
        conversation.versions.reply_done(outcome)  # a regeneration that received nothing
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
        if conversation.condensing.running or not conversation.condensing.start_emergency(
            message.content
        ):
            conversation._start_reply(continuing=message.id)  # nothing to condense: go on
            return
        self.waiting = message.id
        conversation.tell(lambda events: events.status_changed(CONDENSING_TO_FINISH))
        conversation._set_activity(Activity.CONDENSING)

    def resume(self) -> None:
        """Condensing ended: go on with the reply that waited for it, if one did; else
        clear the status line."""
        waiting, self.waiting = self.waiting, None
        if waiting is None or self._conversation.activity is not Activity.IDLE:
            self._conversation.tell(lambda events: events.status_changed(""))
            return
        self._conversation._start_reply(continuing=waiting)


def _updated(message: Message) -> Callable[[ChatEvents], None]:
    return lambda events: events.message_updated(message)
