"""Finding what was said: the shapes of a search and of a conversation's timeline
(DESIGN §2 `message_fts`, §8 history browser).

Pure data, shared by the store (which answers), the chat service (which runs a
search as a job) and the window (which shows it). The user's words are always
words: a query never carries search-engine syntax (quotes, `*`, `-`, `NEAR`,
`AND`, `^` are searched as text, or ignored when they are not letters or digits).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from app.core.summary import Summary

# A page of results, unless the caller asks for another size.
DEFAULT_PAGE_SIZE = 50


class Author(StrEnum):
    """Who wrote what a hit was found in."""

    YOU = "user"
    CLAUDE = "assistant"
    SUMMARY = "summary"


class SearchOrder(StrEnum):
    BEST = "best"  # best match first (bm25), then newest
    NEWEST = "newest"  # newest first
    IN_ORDER = "in_order"  # conversation order (oldest first): finding within one conversation


@dataclass(frozen=True)
class SearchQuery:
    """What to look for, and where.

    Attributes:
        text: the user's words, as typed (never search syntax).
        session_id: one conversation, or None for all of them.
        authors: whose words to search (empty means all).
        since: only what was said at or after this moment (aware), if set.
        until: only what was said before this moment (aware), if set.
        order: how the hits are ranked.
        limit: hits per page.
        offset: hits to skip (the pages before).
    """

    text: str
    session_id: str | None = None
    authors: frozenset[Author] = frozenset()
    since: datetime | None = None
    until: datetime | None = None
    order: SearchOrder = SearchOrder.BEST
    limit: int = DEFAULT_PAGE_SIZE
    offset: int = 0


@dataclass(frozen=True)
class SnippetPart:
    """A piece of a snippet; `matched` pieces are the words that were found."""

    text: str
    matched: bool = False


@dataclass(frozen=True)
class SearchHit:
    """One message or summary where the words were found.

    Attributes:
        session_id, session_title: the conversation.
        author: who wrote it (a summary's author is `Author.SUMMARY`).
        message_id, seq: the message (None for a summary hit).
        summary_id: for a summary hit, that summary; for an archived message, the
            active summary that covers it now (directly or through the chain), so the
            window can unfold it; None for a live message.
        archived: a message condensed into a summary (not sent to Claude any more).
        created_at: when it was said (a summary: when it was made).
        snippet: the text around the match, matched words marked.
    """

    session_id: str
    session_title: str
    author: Author
    message_id: int | None
    seq: int | None
    summary_id: str | None
    archived: bool
    created_at: datetime
    snippet: tuple[SnippetPart, ...]


@dataclass(frozen=True)
class SearchPage:
    """One page of hits for `query`; `total` counts every hit (all pages), or, with
    `at_least`, is a lower bound: words found so often that counting every match would
    make the search slow ("10,000+ found")."""

    query: SearchQuery
    hits: tuple[SearchHit, ...]
    total: int
    at_least: bool = False
    # Cairn is still updating the conversations for this version (the full-text index is
    # being filled): the words were looked for in the text itself, which may miss a few
    # matches the index finds (accents, letter case beyond A-Z).
    partial: bool = False

    @property
    def has_more(self) -> bool:
        shown = self.query.offset + len(self.hits)
        return shown < self.total or (self.at_least and len(self.hits) == self.query.limit)

    def found_text(self) -> str:
        """ "1 found", "42 found", "10,000+ found"."""
        return f"{self.total:,}{'+' if self.at_least else ''} found"


@dataclass(frozen=True)
class ConversationOverview:
    """A conversation as the History window lists it."""

    session_id: str
    title: str
    created_at: datetime
    updated_at: datetime
    messages: int  # every message kept, archived ones included
    archived: int  # of which condensed into summaries
    summaries: int  # active summaries


@dataclass(frozen=True)
class TimelineEntry:
    """A stretch of a conversation: a summary and what it covers, or the live messages.

    Attributes:
        summary: the summary (None for the live stretch at the end).
        first_seq, last_seq: the message numbers covered.
        first_at, last_at: when the first and last of them were said (None when the
            originals were deleted).
        messages: how many original messages are kept for it.
        children: for a compressed summary, the summaries it folded in, oldest first.
    """

    summary: Summary | None
    first_seq: int
    last_seq: int
    first_at: datetime | None
    last_at: datetime | None
    messages: int
    children: tuple[TimelineEntry, ...] = field(default=())
