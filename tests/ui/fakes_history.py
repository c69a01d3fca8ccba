"""An in-memory `HistorySource`, behaving as the chat service's History does.

Words are AND-ed and matched case-insensitively (a word matches the start of a word
of the text, as the store's prefix search does); snippets mark the matched words;
hits are ordered, filtered and paged as `SearchQuery` says; `search` and
`matching_sessions` answer on a later turn of the Qt event loop, and only the newest
search is answered.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from PySide6.QtCore import QTimer

from app.core.models import Message, Role
from app.core.search import (
    Author,
    ConversationOverview,
    SearchHit,
    SearchOrder,
    SearchPage,
    SearchQuery,
    SnippetPart,
    TimelineEntry,
)
from app.core.summary import Summary, SummaryState, SummaryTier
from tests.fakes.summaries import make_summary

_WORD = re.compile(r"\w+", re.UNICODE)
SNIPPET_AROUND = 40


@dataclass
class _Conversation:
    session_id: str
    title: str
    created_at: datetime
    updated_at: datetime
    messages: list[Message] = field(default_factory=list)
    summaries: list[Summary] = field(default_factory=list)


def words_of(text: str) -> list[str]:
    return [word.casefold() for word in _WORD.findall(text)]


def snippet(text: str, needles: Sequence[str]) -> tuple[SnippetPart, ...] | None:
    """`text` around its first match, matched words marked; None unless every needle matches."""
    spans = [
        (match.start(), match.end())
        for match in _WORD.finditer(text)
        if any(match.group().casefold().startswith(needle) for needle in needles)
    ]
    found = {n for n in needles for w in words_of(text) if w.startswith(n)}
    if not spans or found != set(needles):
        return None
    start = max(0, spans[0][0] - SNIPPET_AROUND)
    end = min(len(text), spans[0][1] + SNIPPET_AROUND * 2)
    parts: list[SnippetPart] = []
    if start > 0:
        parts.append(SnippetPart("…"))
    position = start
    for first, last in spans:
        if first < start or last > end:
            continue
        if first > position:
            parts.append(SnippetPart(text[position:first]))
        parts.append(SnippetPart(text[first:last], matched=True))
        position = last
    if position < end:
        parts.append(SnippetPart(text[position:end]))
    if end < len(text):
        parts.append(SnippetPart("…"))
    return tuple(parts)


class FakeHistory:
    """Conversations kept in memory, searched as the real History searches them.

    Attributes:
        searches: every query `search` was asked, in order.
        matches_asked: every text `matching_sessions` was asked, in order.
    """

    def __init__(self) -> None:
        self._conversations: dict[str, _Conversation] = {}
        self.searches: list[SearchQuery] = []
        self.matches_asked: list[str] = []
        self._generation = 0
        self._match_generation = 0

    # -- filling ------------------------------------------------------------------------

    def add(
        self,
        session_id: str,
        title: str,
        messages: Sequence[Message],
        summaries: Sequence[Summary] = (),
    ) -> None:
        """A conversation: its messages (an archived one names its summary in
        `summary_id`) and its summaries (parts of a compressed one name it as parent)."""
        times = [m.created_at for m in messages] or [s.created_at for s in summaries]
        self._conversations[session_id] = _Conversation(
            session_id, title, min(times), max(times), list(messages), list(summaries)
        )

    # -- HistorySource ----------------------------------------------------------------

    def search(self, query: SearchQuery, done: Callable[[SearchPage], None]) -> None:
        self.searches.append(query)
        self._generation += 1
        generation = self._generation

        def answer() -> None:
            if generation == self._generation:
                done(self.found(query))

        QTimer.singleShot(0, answer)

    def matching_sessions(self, text: str, done: Callable[[list[str]], None]) -> None:
        self.matches_asked.append(text)
        self._match_generation += 1
        generation = self._match_generation

        def answer() -> None:
            if generation != self._match_generation:
                return
            hits = self.found(SearchQuery(text, limit=10_000)).hits
            ids: list[str] = []
            for hit in hits:
                if hit.session_id not in ids:
                    ids.append(hit.session_id)
            done(ids)

        QTimer.singleShot(0, answer)

    def conversations(self) -> list[ConversationOverview]:
        rows = sorted(self._conversations.values(), key=lambda c: c.updated_at, reverse=True)
        return [
            ConversationOverview(
                session_id=c.session_id,
                title=c.title,
                created_at=c.created_at,
                updated_at=c.updated_at,
                messages=len(c.messages),
                archived=sum(1 for m in c.messages if m.summary_id is not None),
                summaries=len(self._active(c)),
            )
            for c in rows
        ]

    def timeline(self, session_id: str) -> list[TimelineEntry]:
        conversation = self._conversations.get(session_id)
        if conversation is None:
            return []
        entries = [self._entry(conversation, s) for s in self._active(conversation)]
        live = [m for m in conversation.messages if m.summary_id is None]
        if live:
            entries.append(
                TimelineEntry(
                    None,
                    live[0].seq,
                    live[-1].seq,
                    live[0].created_at,
                    live[-1].created_at,
                    len(live),
                )
            )
        return entries

    def found(self, query: SearchQuery) -> SearchPage:
        needles = words_of(query.text)
        hits: list[tuple[int, int, SearchHit]] = []
        if needles:
            for conversation in self._conversations.values():
                if query.session_id is not None and conversation.session_id != query.session_id:
                    continue
                hits.extend(self._hits_in(conversation, needles))
        hits = [
            (score, position, hit)
            for score, position, hit in hits
            if (not query.authors or hit.author in query.authors)
            and (query.since is None or hit.created_at >= query.since)
            and (query.until is None or hit.created_at < query.until)
        ]
        if query.order is SearchOrder.BEST:
            hits.sort(key=lambda found: (-found[0], -found[2].created_at.timestamp()))
        elif query.order is SearchOrder.NEWEST:
            hits.sort(key=lambda found: -found[2].created_at.timestamp())
        else:
            hits.sort(key=lambda found: (found[1], found[2].created_at))  # a summary: its first seq
        page = tuple(hit for _, _, hit in hits[query.offset : query.offset + query.limit])
        return SearchPage(query, page, len(hits))

    # -- inside -------------------------------------------------------------------------

    def _active(self, conversation: _Conversation) -> list[Summary]:
        return sorted(
            (
                s
                for s in conversation.summaries
                if s.parent_id is None and s.state is SummaryState.ACTIVE
            ),
            key=lambda s: s.first_seq,
        )

    def _covering(self, conversation: _Conversation, summary_id: str) -> str:
        """The active summary that covers `summary_id` now (itself, or its top parent)."""
        by_id = {s.id: s for s in conversation.summaries}
        summary = by_id[summary_id]
        while summary.parent_id is not None:
            summary = by_id[summary.parent_id]
        return summary.id

    def _entry(self, conversation: _Conversation, summary: Summary) -> TimelineEntry:
        covered = [
            m for m in conversation.messages if summary.first_seq <= m.seq <= summary.last_seq
        ]
        children: tuple[TimelineEntry, ...] = ()
        if summary.tier is SummaryTier.COMPRESSED:
            parts = sorted(
                (s for s in conversation.summaries if s.parent_id == summary.id),
                key=lambda s: s.first_seq,
            )
            children = tuple(self._entry(conversation, part) for part in parts)
        return TimelineEntry(
            summary,
            summary.first_seq,
            summary.last_seq,
            covered[0].created_at if covered else None,
            covered[-1].created_at if covered else None,
            len(covered),
            children,
        )

    def _hits_in(
        self, conversation: _Conversation, needles: Sequence[str]
    ) -> list[tuple[int, int, SearchHit]]:
        """(score, position in the conversation, hit) for each message and summary."""
        found: list[tuple[int, int, SearchHit]] = []
        for message in conversation.messages:
            parts = snippet(message.content, needles)
            if parts is None:
                continue
            covering = (
                None
                if message.summary_id is None
                else self._covering(conversation, message.summary_id)
            )
            score = sum(1 for w in words_of(message.content) for n in needles if w.startswith(n))
            author = Author.YOU if message.role is Role.USER else Author.CLAUDE
            found.append(
                (
                    score,
                    message.seq,
                    SearchHit(
                        conversation.session_id,
                        conversation.title,
                        author,
                        message.id,
                        message.seq,
                        covering,
                        message.summary_id is not None,
                        message.created_at,
                        parts,
                    ),
                )
            )
        for summary in conversation.summaries:
            text = summary.text()
            parts = snippet(text, needles)
            if parts is None:
                continue
            score = sum(1 for w in words_of(text) for n in needles if w.startswith(n))
            found.append(
                (
                    score,
                    summary.first_seq,
                    SearchHit(
                        conversation.session_id,
                        conversation.title,
                        Author.SUMMARY,
                        None,
                        None,
                        self._covering(conversation, summary.id),
                        False,
                        summary.created_at,
                        parts,
                    ),
                )
            )
        return found


# -- histories for tests and screenshots ---------------------------------------------------

START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def message(session_id: str, seq: int, text: str, *, summary_id: str | None = None) -> Message:
    return Message(
        id=hash((session_id, seq)) & 0x7FFFFFFF,
        session_id=session_id,
        seq=seq,
        role=Role.USER if seq % 2 else Role.ASSISTANT,
        content=text,
        created_at=START + timedelta(days=seq // 4, minutes=seq),
        summary_id=summary_id,
    )


def trip_history() -> FakeHistory:
    """Two conversations: "Trip to Lisbon" (messages 1–4 condensed, 5–8 and 9–12 folded into
    a compressed summary, 13–16 live) and "Budget" (all live)."""
    history = FakeHistory()
    first = make_summary("condensed", 1, 4, "Planning flights to Lisbon in May.", session_id="trip")
    compressed = make_summary("compressed", 5, 12, "Hotels and museums picked.", session_id="trip")
    part_a = make_summary("condensed", 5, 8, "Hotel near Alfama.", session_id="trip")
    part_b = make_summary("condensed", 9, 12, "Museum tickets.", session_id="trip")
    part_a = part_a.model_copy(
        update={"parent_id": compressed.id, "state": SummaryState.SUPERSEDED}
    )
    part_b = part_b.model_copy(
        update={"parent_id": compressed.id, "state": SummaryState.SUPERSEDED}
    )
    texts = {
        1: "Can you find flights to Lisbon in May?",
        2: "Flights to Lisbon leave every morning.",
        6: "The hotel in Alfama has a <view> & a terrace.",
        10: "Tickets for the tile museum in Lisbon.",
        14: "Remind me to pack the Lisbon guidebook.",
        15: "Sure: the Lisbon guidebook is on the list.",
    }
    covering = {seq: first.id for seq in range(1, 5)}
    covering |= {seq: part_a.id for seq in range(5, 9)} | {seq: part_b.id for seq in range(9, 13)}
    messages = [
        message(
            "trip",
            seq,
            texts.get(seq, f"Message {seq} about the trip."),
            summary_id=covering.get(seq),
        )
        for seq in range(1, 17)
    ]
    history.add("trip", "Trip to Lisbon", messages, [first, compressed, part_a, part_b])
    budget = [message("budget", seq, f"Budget line {seq}: rent and food.") for seq in range(1, 7)]
    budget[2] = budget[2].model_copy(update={"content": "Flights cost too much this month."})
    history.add("budget", "Budget", budget)
    return history


def large_history(count: int) -> FakeHistory:
    """`count` conversations of a dozen messages each, for looking at a large history."""
    history = FakeHistory()
    topics = ["garden", "taxes", "recipes", "Lisbon trip", "novel draft", "job search"]
    for number in range(count):
        topic = topics[number % len(topics)]
        session_id = f"c{number}"
        messages = [
            message(session_id, seq, f"About the {topic}, part {seq}: notes on {topic} and more.")
            for seq in range(1, 13)
        ]
        messages = [
            m.model_copy(update={"created_at": m.created_at + timedelta(days=number)})
            for m in messages
        ]
        history.add(session_id, f"{topic.capitalize()} {number}", messages)
    return history
