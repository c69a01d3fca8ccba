"""The tool loop of one reply: Claude searches the archive, Cairn answers, the reply goes on.

`ArchiveLookups` offers `search_conversation_archive` (DESIGN §3 `tools`) and streams
the reply round after round: when a round ends with `stop_reason` "tool_use", it runs
each search locally against the full-text index, saves it (table `lookup`), tells the
conversation, and sends the assistant's content blocks and the user's tool_result
blocks back with the same request, so Claude continues where it stopped. The tool
turns live only in this reply's requests; the saved reply is Claude's text.

The request never overflows (DESIGN §3, invariant 3): `tool_offer` says what offering
the tool costs and needs, and the `ContextBuilder` counts it in the request (and the
gauge) only when the request has room for its definition, the API's tool-use prompt and
one answer; each tool_result is cut to the room left (excerpts dropped from the end);
once the room is spent, Claude must answer. The loop is bounded: after `max_lookups`
searches the next request says `tool_choice: {"type": "none"}`, so Claude must answer; a
call beyond the bound gets a tool_result saying so. Stop ends it between or within
rounds, keeping the text so far; a failure carries the text of every round in
`partial_text`.

Tool use, tool_result ordering and tool_choice:
https://platform.claude.com/docs/en/agents-and-tools/tool-use/implement-tool-use
Streaming tool_use (`input_json_delta`):
https://platform.claude.com/docs/en/build-with-claude/streaming
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.chat.events import ChatEvents
from app.core.context import BuiltRequest
from app.core.conversation import local_day
from app.core.dates import utc_now
from app.core.errors import ApiError, BugError, StorageError
from app.core.lookup import (
    MAX_RESULTS,
    RESULT_WORDS,
    TOOL_NAME,
    Lookup,
    LookupHit,
    ToolOffer,
    refused_text,
    tool_definition,
    tool_result_text,
)
from app.core.models import Role, Usage
from app.core.settings import RecallSettings
from app.llm.provider import (
    CancelToken,
    ChatProvider,
    ChatRequest,
    ReplyResult,
    StreamCallbacks,
    ToolCall,
)
from app.store.sessions import SessionStore

if TYPE_CHECKING:
    from app.core.recall_dates import DayRange
    from app.core.search import SearchHit
    from app.store.lookups import LookupStore
    from app.store.search import ArchiveSearch

log = logging.getLogger(__name__)

# What joins the text of two rounds of one reply (Claude's "Let me check." and its answer).
ROUND_SEPARATOR = "\n\n"
# Hits asked of the index per search: some are dropped (what Claude already sees).
_CANDIDATES = MAX_RESULTS * 4
# An excerpt's length, and of the turn it answers beside it (characters).
RESULT_CHARS = 500
CONTEXT_CHARS = 240


def _cut(text: str) -> str:
    return " ".join(text.split())


def _filters(given: Mapping[str, object]) -> tuple[Role | None, DayRange | None]:
    """The tool call's filters: who said it, and between which days (each optional; a
    malformed one is ignored, as the search still answers)."""
    from app.core.recall_dates import DayRange

    who = given.get("who")
    role = {"user": Role.USER, "assistant": Role.ASSISTANT}.get(str(who)) if who else None
    first = _day(given.get("after")) or date.min
    last = _day(given.get("before")) or date.max
    days = DayRange(first, last) if (first, last) != (date.min, date.max) else None
    return role, days


def _day(value: object) -> date | None:
    try:
        return date.fromisoformat(str(value)) if value else None
    except ValueError:
        return None


# A margin for the framing of the tool turns' content blocks (the definition and the
# API's tool-use system prompt are counted in the request itself).
TOOL_FRAMING_TOKENS = 150
# The least room worth a search: an answer with at least one excerpt.
MIN_ANSWER_TOKENS = 250

StreamFunction = Callable[[ChatRequest, StreamCallbacks, CancelToken], ReplyResult]
# Tell the front end, if the conversation is on screen (`ConversationState.tell`).
Tell = Callable[[Callable[[ChatEvents], None]], None]
# The loop for a reply of conversation `session_id`, told through `tell`; None: tool off.
LookupsFactory = Callable[[str, Tell], "ArchiveLookups | None"]


def tool_offer(settings: RecallSettings, *, archived: bool) -> ToolOffer | None:
    """The archive tool a request offers under `settings`, or None: the tool is off, or
    nothing of this conversation is archived yet (no summary) and the search stays in it —
    then it would cost its ~450 tokens a request for nothing."""
    if not settings.tool or not (archived or settings.across_conversations):
        return None
    definition = tool_definition(across_conversations=settings.across_conversations)
    return ToolOffer((definition,), room_needed=TOOL_FRAMING_TOKENS + MIN_ANSWER_TOKENS)


def no_lookups(_session_id: str, _tell: Tell) -> ArchiveLookups | None:
    """No archive tool (a service built without one)."""
    return None


class ArchiveLookups:
    """Runs the tool loop of the replies of one conversation (one reply at a time).

    Attributes:
        settings: the recall settings in force when the reply started.
        database: the cairn.db file the searches read and the lookups are saved in.
    """

    def __init__(
        self,
        *,
        database: Path,
        session_id: str,
        settings: RecallSettings,
        on_lookup: Callable[[Lookup], None],
        count: Callable[[str], int],
    ) -> None:
        """`on_lookup` is called from the reply's thread after each search is saved;
        `count` estimates a text's tokens (the room left is kept with it)."""
        self.settings = settings
        self.database = database
        self._session_id = session_id
        self._on_lookup = on_lookup
        self.count = count

    @classmethod
    def for_reply(
        cls,
        settings: RecallSettings,
        database: Path,
        session_id: str,
        on_lookup: Callable[[Lookup], None],
        count: Callable[[str], int],
    ) -> ArchiveLookups | None:
        """The loop for a reply, or None when the tool is turned off."""
        if not settings.tool:
            return None
        return cls(
            database=database,
            session_id=session_id,
            settings=settings,
            on_lookup=on_lookup,
            count=count,
        )

    def offer(self, *, archived: bool) -> ToolOffer | None:
        """The tool to offer with a reply's request (`tool_offer`)."""
        return tool_offer(self.settings, archived=archived)

    def bind(
        self, provider: ChatProvider, store: SessionStore, message_id: int, built: BuiltRequest
    ) -> StreamFunction:
        """A `stream_reply` for reply `message_id` that runs the tool loop around `provider`
        when `built` offers the tool (its state counts it, with the room it needs)."""
        if not built.tools:
            return provider.stream_reply  # not asked for, or no room for an answer
        tools = built.tools
        room = built.state.usable - built.state.used - TOOL_FRAMING_TOKENS

        def stream(
            request: ChatRequest, callbacks: StreamCallbacks, cancel: CancelToken
        ) -> ReplyResult:
            run = _Run(self, provider, store, message_id, room)
            return run.stream(replace(request, tools=tools), callbacks, cancel)

        return stream

    # --- inside, on the reply's thread

    def search(
        self,
        search: ArchiveSearch,
        store: SessionStore,
        query: str,
        filters: Mapping[str, object] | None = None,
    ) -> list[LookupHit]:
        """The best excerpts for `query`, best first (any of its words; archived words
        only, since Claude sees the rest), each with the turn it answers; `filters` (the
        tool's `who`, `after`, `before`) narrow them.

        This conversation is searched as recall searches it (`RecallIndex.pool`, ranked
        by `rank_pool`); across conversations, the full-text index gives each word's
        matches, ranked by how many words they hold.
        """
        from app.core.recall import excerpt, held_terms, recall_query
        from app.core.recall_rank import rank_pool

        role, days = _filters(filters or {})
        today = date.fromordinal(local_day(utc_now()))
        index = store.recall_index()
        participants = index.participants(self._session_id)
        asked = recall_query(query, today, participants)
        asked = replace(asked, days=days or asked.days, role=role or asked.role)
        pool = index.pool(self._session_id, asked)
        hits: list[LookupHit] = []
        for ranked in rank_pool(pool, asked):
            match = ranked.match
            if (role is not None and match.role is not role) or (
                days is not None and not days.holds(date.fromordinal(local_day(match.created_at)))
            ):
                continue
            partner = ranked.partner
            if not held_terms(match.content, asked.terms) and not (
                partner is not None and held_terms(partner.content, asked.terms)
            ):
                continue  # found only through turns further away: not a result of its own
            hits.append(
                LookupHit(
                    seq=match.seq,
                    author=match.role.value,
                    created_at=match.created_at,
                    text=_cut(excerpt(match.content, asked.terms, RESULT_CHARS)),
                    session_id=self._session_id,
                    context=_cut(partner.content[:CONTEXT_CHARS]) if partner else "",
                )
            )
            if len(hits) >= MAX_RESULTS:
                break
        if self.settings.across_conversations and len(hits) < MAX_RESULTS:
            hits += self._elsewhere(search, store, query, MAX_RESULTS - len(hits))
        return hits

    def _elsewhere(
        self, search: ArchiveSearch, store: SessionStore, query: str, wanted: int
    ) -> list[LookupHit]:
        """The best excerpts of the user's other conversations: each word's matches,
        ranked by how many of the words they hold (any word may match)."""
        from app.core.search import SearchQuery
        from app.store.search import query_words

        words = query_words(query)
        scores: dict[tuple[str, int | None, str | None], tuple[int, SearchHit]] = {}
        for word in words:
            page = search.search(SearchQuery(word, None, limit=_CANDIDATES))
            for hit in page.hits:
                if hit.session_id == self._session_id:
                    continue
                key = (hit.session_id, hit.message_id, hit.summary_id)
                score, _ = scores.get(key, (0, hit))
                scores[key] = (score + 1, hit)
        ranked = sorted(
            scores.values(), key=lambda item: (-item[0], -item[1].created_at.timestamp())
        )
        hits = [hit for _, hit in ranked][:wanted]
        full = {
            m.id: m.content
            for m in store.messages_by_id([h.message_id for h in hits if h.message_id])
        }
        return [self._excerpt(hit, full, words) for hit in hits]

    def _excerpt(self, hit: SearchHit, full: dict[int, str], words: list[str]) -> LookupHit:
        from app.core.search import Author
        from app.store.search import snippet

        text = full.get(hit.message_id) if hit.message_id is not None else None
        parts = snippet(text, words, RESULT_WORDS) if text else hit.snippet
        return LookupHit(
            seq=hit.seq or 0,
            author=hit.author.value if hit.author is not Author.SUMMARY else "summary",
            created_at=hit.created_at,
            text="".join(part.text for part in parts),
            conversation=hit.session_title,
            session_id=hit.session_id,
        )

    def record(self, lookups: LookupStore | None, lookup: Lookup) -> None:
        """Save a lookup and say so; a lookup that cannot be saved is still shown."""
        if lookups is not None:
            try:
                lookups.add(lookup)
            except (StorageError, BugError) as error:  # disk full; the reply was deleted
                log.warning("Could not save an archive search: %s", error)
        self._on_lookup(lookup)


class _Run:
    """One reply's rounds: the requests, the searches so far, the text so far."""

    def __init__(
        self,
        owner: ArchiveLookups,
        provider: ChatProvider,
        store: SessionStore,
        message_id: int,
        room: int,
    ) -> None:
        self._owner = owner
        self._room = room  # tokens the tool turns may still add
        self._provider = provider
        self._store = store
        self._message_id = message_id
        self._text = ""
        self._round_text = ""
        self._rounds_started = 0
        self._searched = 0
        self._search: ArchiveSearch | None = None
        self._lookups: LookupStore | None = None

    def stream(
        self, request: ChatRequest, callbacks: StreamCallbacks, cancel: CancelToken
    ) -> ReplyResult:
        try:
            return self._rounds(request, callbacks, cancel)
        finally:
            if self._search is not None:
                self._search.close()
            if self._lookups is not None:
                self._lookups.close()

    def _rounds(
        self, request: ChatRequest, callbacks: StreamCallbacks, cancel: CancelToken
    ) -> ReplyResult:
        limit = self._owner.settings.max_lookups
        turns: list[dict[str, Any]] = []
        first_usage: Usage | None = None
        total_usage: Usage | None = None
        thinking: list[str] = []
        thinking_seconds = 0.0
        round_callbacks = replace(
            callbacks,
            on_text=self._joining(callbacks.on_text),
            on_thinking=self._joining_thinking(callbacks.on_thinking),
        )
        while True:
            last_round = self._searched >= limit or self._room < MIN_ANSWER_TOKENS
            this = replace(
                request,
                tool_choice={"type": "none" if last_round else "auto"},
                tool_turns=tuple(turns),
            )
            self._round_text = ""
            self._rounds_started += 1
            try:
                result = self._provider.stream_reply(this, round_callbacks, cancel)
            except ApiError as error:
                error.partial_text = self._text
                raise
            if result.usage is not None:
                first_usage = first_usage or result.usage
                total_usage = result.usage.plus(total_usage)
            if result.thinking:
                thinking.append(result.thinking)
            thinking_seconds += result.thinking_seconds
            # The cost is every round's (issue 19: look-ups cost what each request
            # cost); calibration compares the first request (its tools counted in the
            # estimate too) with its estimate.
            done = replace(
                result,
                text=self._text,
                usage=None if result.usage is None else total_usage,
                first_input_tokens=None if first_usage is None else first_usage.total_input_tokens,
                thinking="\n\n".join(thinking),
                thinking_seconds=thinking_seconds,
                tool_calls=(),
                content=(),
            )
            if result.cancelled or result.stop_reason != "tool_use" or not result.tool_calls:
                return done
            if last_round:  # told not to use tools, it did: take what it wrote
                return replace(done, stop_reason="end_turn")
            self._room -= self._owner.count(json.dumps(result.content, ensure_ascii=False))
            results = [self._answer(call, limit, cancel) for call in result.tool_calls]
            if cancel.cancelled:
                return replace(done, cancelled=True, stop_reason=None, usage=None)
            turns.append({"role": "assistant", "content": list(result.content)})
            turns.append({"role": "user", "content": results})

    def _joining(self, on_text: Callable[[str], None]) -> Callable[[str], None]:
        """Text arrives as one reply: a later round starts on a new paragraph."""

        def joined(delta: str) -> None:
            if not self._round_text and self._text and delta:
                delta = ROUND_SEPARATOR + delta
            self._round_text += delta
            self._text += delta
            on_text(delta)

        return joined

    def _joining_thinking(self, on_thinking: Callable[[str], None]) -> Callable[[str], None]:
        """Thinking arrives as one text too: a later round's starts on a new paragraph."""
        rounds_seen: set[int] = set()

        def joined(delta: str) -> None:
            if self._rounds_started not in rounds_seen and delta:
                if rounds_seen:
                    delta = ROUND_SEPARATOR + delta.lstrip("\n")
                rounds_seen.add(self._rounds_started)
            on_thinking(delta)

        return joined

    def _answer(self, call: ToolCall, limit: int, cancel: CancelToken) -> dict[str, Any]:
        """The tool_result block for one call."""
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": call.id}
        query = call.input.get("query")
        if call.name != TOOL_NAME or not isinstance(query, str) or not query.strip():
            return {**block, "content": f"Unknown tool or no query: {call.name}", "is_error": True}
        if self._searched >= limit or cancel.cancelled or self._room < MIN_ANSWER_TOKENS:
            refused = refused_text(limit, no_room=self._searched < limit)
            self._room -= self._owner.count(refused)
            return {**block, "content": refused, "is_error": True}
        self._searched += 1
        try:
            hits = self._owner.search(self._opened_search(), self._store, query, call.input)
        except StorageError as error:
            log.warning("An archive search failed: %s", error)
            return {**block, "content": "The archive could not be read.", "is_error": True}
        while True:  # the least relevant goes first, until the request fits
            # Told in the order they were said.
            kept = tuple(sorted(hits, key=lambda hit: (hit.created_at, hit.seq)))
            text = tool_result_text(query, kept)
            if not hits or self._owner.count(text) <= self._room - MIN_ANSWER_TOKENS // 5:
                break
            hits.pop()
        self._room -= self._owner.count(text)
        lookup = Lookup(self._message_id, self._searched, query, kept, utc_now())
        self._owner.record(self._opened_lookups(), lookup)
        return {**block, "content": text}

    def _opened_search(self) -> ArchiveSearch:
        from app.store.search import ArchiveSearch

        if self._search is None:
            self._search = ArchiveSearch.open(self._owner.database)
        return self._search

    def _opened_lookups(self) -> LookupStore | None:
        from app.store.lookups import LookupStore

        if self._lookups is None:
            try:
                self._lookups = LookupStore.open(self._owner.database)
            except StorageError as error:
                log.warning("Could not open the archive searches: %s", error)
        return self._lookups
