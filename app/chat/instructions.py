"""The instructions for Claude of the conversation on screen ("How should Claude
respond in this conversation?"), sent as its system prompt (DESIGN §3).

They are never condensed: summaries cover messages only, and the instructions go
whole into every request, counted by the gauge ("Instructions") and in the
check that a request fits.
"""

from __future__ import annotations

from collections.abc import Callable

from app.chat.conversation import Conversation
from app.chat.events import ChatEvents
from app.core.errors import StorageError
from app.core.settings import MAX_INSTRUCTIONS_CHARS
from app.store.errors import SessionNotFoundError
from app.store.sessions import SessionStore


class ConversationInstructions:
    """Reads and sets the instructions of the conversation on screen (loop thread only).

    A new conversation, not stored yet, keeps them until its first message stores
    it with them; a stored one has them saved at once.
    """

    def __init__(
        self, store: SessionStore, events: ChatEvents, current: Callable[[], Conversation]
    ) -> None:
        self._store = store
        self._events = events
        self._current = current

    def text(self) -> str:
        """The instructions of the conversation on screen ("" for none)."""
        return self._current().system_prompt

    def set(self, text: str) -> bool:
        """Make `text` the instructions of the conversation on screen; the next request
        carries them. False (and an error told) when they could not be saved."""
        conversation = self._current()
        text = text.strip()[:MAX_INSTRUCTIONS_CHARS]
        session = conversation.session
        if session is None:
            conversation.new_instructions = text
        elif text != session.system_prompt:
            try:
                self._store.instructions.set(session.id, text)
                stored = self._store.get_session(session.id)
            except StorageError as error:
                self._events.error_raised(error)
                return False
            except SessionNotFoundError:
                return False  # deleted meanwhile: nothing left to instruct
            if stored is None:
                return False
            conversation.session = stored
            self._events.session_changed(stored)
        self._events.context_changed(conversation.context_state())
        return True
