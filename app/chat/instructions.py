"""A conversation's instructions for Claude ("How should Claude respond in this
conversation?"), sent as its system prompt (DESIGN §3).

They are never condensed: summaries cover messages only, and the instructions go
whole into every request, counted by the gauge ("Instructions") and in the
check that a request fits.
"""

from __future__ import annotations

from app.chat.gauge import ConversationGauge
from app.chat.state import ConversationState
from app.core.errors import StorageError
from app.core.settings import MAX_INSTRUCTIONS_CHARS
from app.store.errors import SessionNotFoundError


class ConversationInstructions:
    """Reads and sets one conversation's instructions (loop thread only).

    A new conversation, not stored yet, keeps them until its first message stores
    it with them; a stored one has them saved at once.
    """

    def __init__(self, state: ConversationState, gauge: ConversationGauge) -> None:
        self._state = state
        self._gauge = gauge

    def text(self) -> str:
        """The conversation's instructions ("" for none)."""
        return self._state.system_prompt

    def set(self, text: str) -> bool:
        """Make `text` the conversation's instructions; the next request carries them.
        False (and an error told) when they could not be saved."""
        state = self._state
        text = text.strip()[:MAX_INSTRUCTIONS_CHARS]
        session = state.session
        if session is None:
            state.new_instructions = text
        elif text != session.system_prompt:
            store = state.shared.store
            try:
                store.instructions.set(session.id, text)
                stored = store.get_session(session.id)
            except StorageError as error:
                state.error(error)
                return False
            except SessionNotFoundError:
                return False  # deleted meanwhile: nothing left to instruct
            if stored is None:
                return False
            state.session = stored
            state.tell(lambda events: events.session_changed(stored))
        self._gauge.tell()
        return True
