"""The first message waits for the server's model list (issue 10, item 3).

Until the server has answered `GET /v1/models` in this run, the model picked
is a guess from the bundled table or an older cached list: an
Anthropic-compatible server may never have offered it. So a message sent
before the answer waits for it, briefly and with a status, then goes with a
model the server listed. If the server does not answer in time, or the list
fails, the message goes anyway: waiting longer would not make a better choice.
"""

from __future__ import annotations

from collections.abc import Callable

from app.chat.conversation import Conversation
from app.chat.events import Activity
from app.chat.loop import EventLoop, Timer
from app.core.errors import InvalidInputError
from app.core.text import validate_message_text

# How long a message waits for the model list before it goes anyway.
MODEL_LIST_WAIT_SECONDS = 10.0
WAITING_STATUS = "Checking which models your account offers…"


class ModelListWait:
    """Holds a message sent before this run's model list arrived, and sends it after.

    Attributes:
        settled: the server answered the model list in this run (a list or an error),
            or the wait ran out: messages go straight away from now on.
    """

    def __init__(self, loop: EventLoop, current: Callable[[], Conversation]) -> None:
        self._loop = loop
        self._current = current
        self.settled = False
        self._held: tuple[Conversation, str] | None = None
        self._timer: Timer | None = None

    def hold(self, conversation: Conversation, text: str) -> bool:
        """Keep `text` until the list arrives; False when it may go now (or cannot wait).

        A held message stays in the composer (the send answers False) until it is sent.
        """
        if self.settled or conversation.state.activity is not Activity.IDLE:
            return False
        try:
            validate_message_text(text)
        except InvalidInputError:
            return False  # refused now, in words, by `ConversationTurns.send`
        self._held = (conversation, text)  # a second press replaces the first
        conversation.state.status(WAITING_STATUS)
        if self._timer is None:
            self._timer = self._loop.call_later(MODEL_LIST_WAIT_SECONDS, self.settle)
        return True

    def settle(self) -> None:
        """The list arrived or failed (or the wait ran out): send what was held."""
        self.settled = True
        self.close()
        held, self._held = self._held, None
        if held is None:
            return
        conversation, text = held
        state = conversation.state
        state.status("")
        # Only where the user still is: a message is never sent into a conversation
        # they left (the text stays in that conversation's draft).
        if state.deleted or conversation is not self._current():
            return
        if conversation.turns.send(text):
            state.tell(lambda events: events.pending_sent())

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
