"""Pins: a live message the user pinned is never condensed (DESIGN §5); summaries
leave it in the live tail, and the gauge counts it there."""

from __future__ import annotations

from app.chat.state import ConversationState
from app.core.errors import UserFacingError


class Pins:
    """Pins and unpins one conversation's messages (loop thread only)."""

    def __init__(self, state: ConversationState) -> None:
        self._state = state

    def pin(self, message_id: int, pinned: bool = True) -> None:
        """Pin a live message (never condensed) or unpin it."""
        state = self._state
        try:
            message = state.shared.store.set_pinned(message_id, pinned)
        except UserFacingError as error:
            state.error(error)
            return
        state.tail.set_pinned(message_id, pinned)
        state.tell(lambda events: events.message_updated(message))
