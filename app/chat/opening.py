"""Opening a stored conversation: its live tail and memory block, read in the background.

The window shows the newest page at once (the service reads it); the live tail —
every message no summary covers, compact — and the memory block can take a moment for
a long conversation, so `ConversationOpening` reads them in a job. Meanwhile the
conversation is LOADING: the gauge waits, and a message sent waits too (the state's
`pending`), then goes.
"""

from __future__ import annotations

from app.chat.attachments import Outgoing
from app.chat.events import Activity
from app.chat.gauge import ConversationGauge
from app.chat.jobs import LoadedConversation, load_conversation
from app.chat.runner import Job
from app.chat.state import ConversationState
from app.chat.summaries import ConversationSummaries
from app.chat.unsaved import UnsavedReply
from app.core.errors import UserFacingError


class ConversationOpening:
    """Reads one stored conversation's live tail and memory block, once."""

    def __init__(
        self,
        state: ConversationState,
        *,
        outgoing: Outgoing,
        gauge: ConversationGauge,
        unsaved: UnsavedReply,
        condensing: ConversationSummaries,
    ) -> None:
        self._state = state
        self._outgoing = outgoing
        self._gauge = gauge
        self._unsaved = unsaved
        self._condensing = condensing

    def load(self) -> None:
        """Read the live tail and memory block (in the background: a long conversation's
        tail takes a moment); a message sent meanwhile waits for it."""
        state = self._state
        if state.session is None or state.activity is Activity.LOADING:
            return
        session_id, shared = state.session.id, state.shared
        state.set_activity(Activity.LOADING)
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
        state = self._state
        state.loaded = True
        state.tail = self._unsaved.over_tail(loaded.tail)
        if state.session is not None:
            self._outgoing.load(state.session.id)  # what the gauge needs of the files
        state.summaries = list(loaded.summaries)
        self._condensing.load_trigger(loaded.trigger_state, state.tail.last_seq)
        state.set_activity(Activity.IDLE)
        self._gauge.memory_changed()
        state.go_on()

    def _load_failed(self, error: UserFacingError) -> None:
        state = self._state
        state.loaded = True  # what could be read is all there is: an empty tail
        state.set_activity(Activity.IDLE)
        state.pending = None
        state.error(error)
