"""Gathering the recall block for one reply, on the reply's worker thread (issue 12).

`AutomaticRecall.gather` takes the newest user message of the live tail, looks its
salient terms up in the conversation's archive and fits the best quotes into the
recall budget: `budget_ratio` of the model's window (at least `RECALL_FLOOR_TOKENS`), and
never more than the room the request leaves (below the margin where an exact count
would be asked), so the recall block never makes a request fail that would have fitted
without it. The kinds of fact the message asks for (`wanted_kinds`) rank the quotes.
A failure to read the archive is logged and the reply goes without recall.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import replace
from datetime import date, datetime
from operator import attrgetter
from pathlib import Path
from typing import Protocol

from app.core.context import ContextBuilder, RequestInputs
from app.core.conversation import local_day
from app.core.errors import BugError, StorageError
from app.core.lookup import Lookup, LookupHit, recalled_lookup
from app.core.models import Role
from app.core.recall import RecallBlock, RecallQuery, fit_recall, recall_query
from app.core.recall_quotes import exact_counter
from app.core.recall_rank import RecallPool, keyed, rank_pool
from app.core.search_keys import KeyIndex
from app.core.settings import RecallSettings
from app.store.lookups import LookupStore

log = logging.getLogger(__name__)

_SEQ = attrgetter("seq")
# What a message of another conversation scores beside one of this conversation.
ELSEWHERE_SHARE = 0.8
# The summaries' search keys by the words they hold, each summary's read once, shared by
# every reply's worker (summaries do not change once made).
SUMMARY_KEYS = KeyIndex()


class ArchiveLookup(Protocol):
    """Where archived messages are found: `app.store.recall.RecallIndex`, or a fake."""

    def pool(self, session_id: str, query: RecallQuery, depth: int = ...) -> RecallPool: ...

    def participants(self, session_id: str) -> frozenset[str]: ...

    def pool_elsewhere(
        self, session_id: str, query: RecallQuery, depth: int = ...
    ) -> RecallPool: ...


class AutomaticRecall:
    """Builds the recall block for a reply.

    Attributes:
        builder: measures the request without recall, to know the room left.
        budget_ratio: the share of the window recall may use (0: recall is off).
        across: the user lets Cairn look in their other conversations too (Settings →
            Memory); never without it.
    """

    def __init__(self, builder: ContextBuilder, budget_ratio: float, across: bool = False) -> None:
        self.builder = builder
        self.budget_ratio = budget_ratio
        self.across = across

    def gather(
        self, index: ArchiveLookup, *, session_id: str, inputs: RequestInputs
    ) -> RecallBlock | None:
        """The recall block for the newest user message of `inputs.tail`, or None; it
        leaves the room `inputs.tools` take when offered."""
        summaries, tail = inputs.summaries, inputs.tail
        if self.budget_ratio <= 0 or not (summaries or self.across):
            return None  # nothing archived without a summary, and no other conversation
        newest = next((m for m in reversed(tail) if m.role is Role.USER and m.content), None)
        if newest is None:
            return None
        budget = self.raw_budget(inputs)
        if budget <= 0:
            return None
        today = date.fromordinal(local_day(newest.created_at))
        try:
            participants = index.participants(session_id)
            query = recall_query(newest.content, today, participants)
            # Only the keys that may hold a term are read (issue 22: thousands at 100k).
            keys = SUMMARY_KEYS.keys_for(summaries, query.terms)
            query = replace(query, keyed=keyed(keys, query.terms))
            if not query.terms and query.days is None:
                return None
            pool = index.pool(session_id, query) if summaries else RecallPool()
            elsewhere = index.pool_elsewhere(session_id, query) if self.across else RecallPool()
        except StorageError as error:
            log.warning("Could not look in the archive; the reply goes without recall: %s", error)
            return None
        ranked = rank_pool(pool, query)
        if elsewhere.matches:
            # This conversation first at equal scores: the user is talking about it.
            theirs = [
                replace(r, score=r.score * ELSEWHERE_SHARE) for r in rank_pool(elsewhere, query)
            ]
            ranked = sorted([*ranked, *theirs], key=lambda r: -r.score)
        counter = self.builder.counter
        stored = exact_counter(counter)
        return fit_recall(
            pool.matches,
            query.terms,
            budget,
            # cl100k's counts made of the quotes' words, each counted once (the same figures).
            _remembered(counter.count_by_words if stored else counter.count),
            exclude_seqs=set(map(_SEQ, tail)),  # in C: a tail of ~1,000 each turn
            wanted=query.wanted,
            ordered=((r.match, *r.quoted_with) for r in ranked),
            stored=stored,
        )

    def raw_budget(self, inputs: RequestInputs) -> int:
        """Raw (uncalibrated) tokens recall may use for this request."""
        state = self.builder.estimate_state(
            inputs, recall_budget_ratio=self.budget_ratio, recall_elsewhere=self.across
        )
        calibrations = self.builder.calibrations
        ratio = calibrations.for_model(inputs.model.id).ratio if calibrations is not None else 1.0
        return math.floor(state.recall_allowed / max(ratio, 1e-6))


# Quotes counted by a turn, with the counter that counted them: the next turns quote
# many of the same messages, cut the same way (~50 µs a quote of 600 characters).
QUOTE_COUNTS_KEPT = 2_048
_quote_counts: dict[str, tuple[Callable[[str], int], int]] = {}


def _remembered(count: Callable[[str], int]) -> Callable[[str], int]:
    """`count`, remembering what it counted for the turns after (`_quote_counts`)."""

    def counted(text: str) -> int:
        known = _quote_counts.get(text)
        if known is not None and known[0] == count:
            return known[1]
        tokens = count(text)
        if len(_quote_counts) >= QUOTE_COUNTS_KEPT:
            _quote_counts.clear()
        _quote_counts[text] = (count, tokens)
        return tokens

    return counted


def quoted_elsewhere(message_id: int, block: RecallBlock | None, at: datetime) -> Lookup | None:
    """The quotes `block` took from the user's other conversations, as reply `message_id`
    keeps them (`RECALLED`): its line names them and opens each; None when it took none."""
    hits = [
        LookupHit(
            seq=quote.seq,
            author=quote.role.value,
            created_at=quote.created_at,
            text=" ".join(quote.excerpt.split()),
            conversation=quote.conversation,
            session_id=quote.session_id,
        )
        for quote in (block.quotes if block is not None else ())
        if quote.conversation
    ]
    return recalled_lookup(message_id, hits, at) if hits else None


def keep_quoted_elsewhere(database: Path | None, lookup: Lookup) -> None:
    """Save recall's quotes from other conversations with their reply (table `lookup`, on
    a connection of the calling thread's own); one that cannot be saved is still shown."""
    if database is None:
        return
    try:
        lookups = LookupStore.open(database)
        try:
            lookups.add(lookup)
        finally:
            lookups.close()
    except (StorageError, BugError) as error:  # disk full; the reply was deleted meanwhile
        log.warning("Could not save the quotes from other conversations: %s", error)


def recall_budget(settings: RecallSettings) -> float:
    """The share of the window automatic recall may use under `settings` (0: off)."""
    return settings.budget_ratio if settings.automatic else 0.0
