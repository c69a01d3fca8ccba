"""rank_pool as it is and as it was written first, on generated pools: the same ranking,
the same scores, the same partners (issue 20: the faster loop changes nothing)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.models import Role
from app.core.recall import ArchivedMatch, RecallQuery, RecallTerm, fact_near, held_terms
from app.core.recall_dates import DayRange
from app.core.recall_rank import (
    CONTEXT_SHARE,
    CONTINUES_SHARE,
    DAY_SLACK,
    EARLIER_SHARE,
    FILLED_SCORE,
    IN_DAYS,
    KEY_SHARE,
    KIND_FACTOR,
    KIND_READ,
    NEAR_DAYS,
    ON_THE_DAY,
    OUT_OF_DAYS,
    RIGHT_SIDE,
    Ranked,
    RecallPool,
    _day,
    _lacking,
    _ranked,
    _rescored,
    _same_story,
    own_score,
    rank_pool,
    term_values,
)

START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def _asked_about(
    match: ArchivedMatch, everyone: dict[tuple[str, int], ArchivedMatch]
) -> tuple[ArchivedMatch, ...]:
    """`_asked_about` as it was: by (conversation, seq) keys."""
    asked = everyone.get((match.session_id, match.seq + 1))
    answer = everyone.get((match.session_id, match.seq + 2))
    if (
        asked is None
        or answer is None
        or asked.role is not Role.ASSISTANT
        or answer.role is not Role.USER
        or not asked.content.rstrip().endswith("?")
    ):
        return ()
    return (asked, answer)


def rank_pool_as_it_was(
    pool: RecallPool, query: RecallQuery, *, day_of: Callable[[ArchivedMatch], date] | None = None
) -> list[Ranked]:
    """`rank_pool` before issue 20's faster loop (main 575bbb5), word for word."""
    terms = query.terms
    values = term_values(terms, pool.frequency, pool.size)
    day_of = day_of or _day
    everyone = {(m.session_id, m.seq): m for m in pool.neighbours.values()}
    everyone |= {(m.session_id, m.seq): m for m in pool.matches}
    subject = any(not term.cue for term in terms)
    by_key = {seq: held for seq, held in query.keyed}
    worth: dict[tuple[str, int], tuple[frozenset[int], float]] = {}
    pool_held = pool.held
    for key, match in everyone.items():
        terms_held = match.held
        if terms_held is None:
            terms_held = pool_held.get(key[1]) if not key[0] else None
            if terms_held is None:
                terms_held = held_terms(match.content, terms)
        worth[key] = terms_held, own_score(terms_held, values)
    days = query.days
    ranked: list[Ranked] = []
    for (session_id, seq), match in everyone.items():
        mine, own = worth[session_id, seq]
        borrowed = 0.0
        if not session_id and seq in by_key:
            borrowed = KEY_SHARE * own_score(by_key[seq] - mine, values)
        before = everyone.get((session_id, seq - 1))
        context = 0.0
        answers = False
        if before is not None and before.role is not match.role:
            answers = match.role is Role.ASSISTANT or "?" in before.content[-300:]
            share, earlier_share = (
                (CONTEXT_SHARE, EARLIER_SHARE) if answers else (CONTINUES_SHARE, CONTINUES_SHARE)
            )
            context = share * _lacking(worth[session_id, seq - 1], mine, values)
            if (session_id, seq - 2) in worth:
                context += earlier_share * _lacking(worth[session_id, seq - 2], mine, values)
        score = own + max(context, borrowed)
        filled = not session_id and score <= 0 and seq in pool.filled
        if filled:
            score = FILLED_SCORE * pool.filled[seq]
        if score <= 0:
            if days is None or not days.exact or not days.holds(day_of(match)):
                continue
            score = ON_THE_DAY
        if days is not None:
            day = day_of(match)
            if days.holds(day):
                score *= IN_DAYS
            elif not days.exact and days.near(day, DAY_SLACK):
                score *= NEAR_DAYS
            else:
                score *= OUT_OF_DAYS
        if query.role is not None and match.role is query.role:
            score *= RIGHT_SIDE
        partner = None
        if answers and (context > own or match.role is Role.ASSISTANT or filled):
            partner = before
        elif match.content.rstrip().endswith("?"):
            partner = everyone.get((session_id, seq + 1))
        follow_up: tuple[ArchivedMatch, ...] = ()
        if partner is None and match.role is Role.USER:
            follow_up = _asked_about(match, everyone)
        ranked.append(_ranked(match, score, partner, follow_up))
    ranked.sort(key=lambda r: (-r.score, len(r.match.content), -r.match.seq))
    ranked = _same_story(ranked, terms, values, worth)
    if query.wanted:
        best = ranked[:KIND_READ]
        for n, item in enumerate(best):
            match = item.match
            topical = any(not terms[i].cue for i in worth[match.session_id, match.seq][0])
            wanted = topical or not subject
            if wanted and fact_near(match.content, terms, query.wanted):
                best[n] = _rescored(item, item.score * KIND_FACTOR)
        ranked = (
            sorted(best, key=lambda r: (-r.score, r.match.rank, -r.match.seq)) + ranked[KIND_READ:]
        )
    return ranked


_WORDS = ["guitar", "octopus", "Maya", "commute", "Leeds", "called", "cost", "garden", "blue"]
_TERMS = (
    RecallTerm("guitar", ("guitar",), 1.0, ("guitar", "guitars")),
    RecallTerm("octopus", ("octopus",), 1.5),
    RecallTerm("Maya", ("maya",), 1.2),
    RecallTerm("commute", ("commute",), 1.0, ("commute", "commutes", "commuting")),
    RecallTerm("Leeds", ("leeds",), 0.8),
    RecallTerm("called", ("called",), 0.3, cue=True),
    RecallTerm("cost", ("cost",), 0.3, ("cost", "costs"), cue=True),
    RecallTerm("garden", ("garden",), 0.9),
    RecallTerm("blue", ("blue",), 0.7),
    RecallTerm("zebra", ("zebra",), 0.6),
)
_FILLER = ["the", "a", "was", "Tom", "£356", "at 9:30", "on 3 May", "Dr. Okafor", "we decided"]
_TEXT = st.lists(st.sampled_from(_WORDS + _FILLER), min_size=1, max_size=14).map(" ".join)
_CONTENT = st.tuples(
    _TEXT,
    # "?" at the end, with a space after it, 330 and 280 characters before the end, none.
    st.sampled_from(["", "?", "? ", ".", " what about it?", "?" + " after" * 55, "?" + " x" * 140]),
    st.booleans(),
).map(lambda t: (t[0] + t[1]) * (30 if t[2] and len(t[0]) < 60 else 1))


@st.composite
def _pools(draw: st.DrawFn) -> tuple[RecallPool, RecallQuery]:
    terms = tuple(draw(st.lists(st.sampled_from(_TERMS), min_size=1, max_size=6, unique=True)))
    # Runs of turns, mostly the user's and Claude's in turn, with gaps between them.
    first = draw(st.integers(1, 5))
    seqs = [
        seq for seq in range(first, first + draw(st.integers(1, 24))) if draw(st.integers(0, 5))
    ] or [first]
    shared = [frozenset(draw(st.sets(st.integers(0, len(terms) - 1), max_size=3))) for _ in "ab"]
    elsewhere = draw(st.sampled_from(["", "", "other"]))
    messages: list[ArchivedMatch] = []
    held_by_seq: dict[int, frozenset[int]] = {}
    for seq in seqs:
        content = draw(_CONTENT)
        role = (Role.USER if seq % 2 else Role.ASSISTANT) if draw(st.integers(0, 4)) else Role.USER
        moment = START + timedelta(days=seq * draw(st.sampled_from([1, 2, 3])))
        how = draw(st.sampled_from(["none", "own", "shared", "pool"]))
        held = None
        if how == "own":
            held = frozenset(draw(st.sets(st.integers(0, len(terms) - 1), max_size=4)))
        elif how == "shared":
            held = draw(st.sampled_from(shared))
        elif how == "pool" and not elsewhere:
            held_by_seq[seq] = draw(st.sampled_from(shared))
        match = ArchivedMatch(
            seq * 10 + 3, seq, role, moment, content, draw(st.sampled_from([0.0, -1.5])), held
        )
        if elsewhere:
            match = ArchivedMatch(
                match.message_id, seq, role, moment, content, match.rank, held, elsewhere, "Chat"
            )
        messages.append(match)
    chosen = draw(st.lists(st.sampled_from(messages), max_size=len(messages), unique_by=id))
    neighbours = {} if elsewhere else {m.seq: m for m in messages}
    matches = tuple(messages) if elsewhere else tuple(chosen)
    filled = {} if elsewhere else draw(st.dictionaries(st.sampled_from(seqs), st.floats(0.1, 1.0)))
    frequency = tuple(draw(st.integers(0, 500)) for _ in terms) if draw(st.booleans()) else ()
    pool = RecallPool(
        matches, neighbours, frequency, draw(st.integers(0, 2_000)), filled, held_by_seq
    )
    days = draw(
        st.sampled_from(
            [
                None,
                DayRange(date(2026, 3, 20), date(2026, 4, 10)),
                DayRange(date(2026, 3, 25), date(2026, 3, 25), exact=True),
                DayRange(date(2026, 4, 1), date(2026, 4, 7), exact=True),
            ]
        )
    )
    keyed = tuple(
        (seq, frozenset(draw(st.sets(st.integers(0, len(terms) - 1), max_size=2))))
        for seq in draw(st.sets(st.sampled_from(seqs), max_size=4))
    )
    query = RecallQuery(
        terms,
        frozenset(
            draw(st.sets(st.sampled_from(["name", "money", "time", "decision"]), max_size=2))
        ),
        days,
        draw(st.sampled_from([None, Role.USER, Role.ASSISTANT])),
        tuple(sorted(keyed)),
    )
    return pool, query


def _shown(ranked: list[Ranked]) -> list[tuple[object, ...]]:
    return [
        (r.match.session_id, r.match.seq, r.score, r.partner, r.follow_up, r.match.held)
        for r in ranked
    ]


@settings(max_examples=400, deadline=None)
@given(_pools())
def test_rank_pool_ranks_as_it_did(drawn: tuple[RecallPool, RecallQuery]) -> None:
    pool, query = drawn
    assert _shown(rank_pool(pool, query)) == _shown(rank_pool_as_it_was(pool, query))
