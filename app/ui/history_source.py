"""What the History window, the find bar and the sidebar ask to find what was said.

The chat service's `History` (app/chat/history.py) answers it; the window is written
against this protocol so that it can be built and tested with an in-memory fake
(tests/ui/fakes_history.py). The asynchronous calls answer on a later turn of the
event loop, on the GUI thread; a newer `search` makes an older one's answer moot.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from app.core.search import (
        ConversationOverview,
        SearchHit,
        SearchPage,
        SearchQuery,
        TimelineEntry,
    )


class HistorySource(Protocol):
    def search(self, query: SearchQuery, done: Callable[[SearchPage], None]) -> None:
        """Run `query` in the background; `done` gets its page (the newest search wins)."""
        ...

    def matching_sessions(self, text: str, done: Callable[[list[str]], None]) -> None:
        """The ids of the conversations that mention `text`, best first (in the background)."""
        ...

    def conversations(self) -> list[ConversationOverview]:
        """Every conversation, newest first."""
        ...

    def timeline(self, session_id: str) -> list[TimelineEntry]:
        """A conversation's summaries by tier, oldest first, then its live stretch."""
        ...


@dataclass(frozen=True)
class Place:
    """Where in a conversation to go: a message (`seq`), a summary's card, or both.

    Attributes:
        session_id: the conversation.
        seq: the message, or None for a summary itself.
        summary_id: the active summary that covers the message now (its card unfolds
            to show it), or the summary to show; None for a live message.
    """

    session_id: str
    seq: int | None
    summary_id: str | None = None

    @classmethod
    def of_hit(cls, hit: SearchHit) -> Place:
        return cls(
            hit.session_id, hit.seq, hit.summary_id if hit.archived or hit.seq is None else None
        )
