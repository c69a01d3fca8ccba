"""RecallIndex: a conversation's archived messages that hold a message's terms, from the
full-text index or with LIKE where there is none (issue 12 item 1)."""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.conversation import local_day
from app.core.models import MessageStatus, Role
from app.core.recall import fit_recall, fold, rank_matches, recall_query, salient_terms
from app.core.recall_dates import DayRange
from app.core.recall_kinds import wanted_kinds
from app.core.recall_quotes import whole_quote_tokens
from app.core.recall_rank import keyed
from app.core.summary import (
    SearchKey,
    SummaryContent,
    SummaryDraft,
    SummaryMode,
    SummaryTier,
    SummaryTrigger,
)
from app.core.tokens import default_counter
from app.store import SessionStore, SummaryStore, open_database
from app.store import recall as recall_module
from app.store.migrations import migrate
from app.store.recall import RecallIndex
from tests.fakes.clock import FakeClock
from tests.unit.store.test_search import no_fts5

MODEL = "claude-sonnet-4-5"


@dataclass
class Archive:
    sessions: SessionStore
    summaries: SummaryStore
    index: RecallIndex
    clock: FakeClock


@pytest.fixture(params=["fts5", "like"])
def archive(request: pytest.FixtureRequest, database: Path, clock: FakeClock) -> Iterator[Archive]:
    indexed = request.param == "fts5"
    if not indexed:
        connection = sqlite3.connect(database, isolation_level=None)
        connection.set_authorizer(no_fts5)
        migrate(connection)
        connection.close()
    result = open_database(database)
    sessions = SessionStore(result.connection, database=result.path, clock=clock)
    summaries = SummaryStore.open(database, clock=clock)
    index = sessions.recall_index()
    assert index.indexed is indexed
    yield Archive(sessions, summaries, index, clock)
    summaries.close()
    sessions.close()


def say(archive: Archive, session_id: str, texts: list[str]) -> None:
    for number, text in enumerate(texts):
        archive.clock.advance(60)
        role = (Role.USER, Role.ASSISTANT)[number % 2]
        archive.sessions.append_message(session_id, role, text, token_estimate=5)


def condense(archive: Archive, session_id: str, last_seq: int) -> None:
    messages = [m for m in archive.sessions.messages(session_id) if m.seq <= last_seq]
    archive.summaries.commit_summary(
        SummaryDraft(
            session_id=session_id,
            tier=SummaryTier.CONDENSED,
            first_seq=1,
            last_seq=last_seq,
            message_ids=[m.id for m in messages],
            content=SummaryContent(narrative="They talked about the house."),
            source_tokens=10,
            summary_tokens=3,
            mode=SummaryMode.RULE,
            trigger=SummaryTrigger.MANUAL,
        )
    )


def chatter(count: int) -> list[str]:
    return [f"Message {n} about the garden, the weather and lunch plans." for n in range(count)]


def test_the_gate_code_is_found_three_hundred_messages_later(archive: Archive) -> None:
    session_id = archive.sessions.create_session("House", MODEL).id
    texts = chatter(300)
    texts[10] = "Let's settle it: the new gate code is AX-7731, starting Monday."
    texts[11] = "Agreed, AX-7731 for the gate from Monday."
    say(archive, session_id, texts)
    condense(archive, session_id, 290)
    terms = salient_terms("What was the gate code we agreed on?")
    matches = archive.index.archived_matches(session_id, terms)
    assert {m.seq for m in matches[:2]} == {11, 12}
    block = fit_recall(matches, terms, 400, default_counter().count)
    assert block is not None and "AX-7731" in block.text and block.tokens <= 400


def test_only_archived_messages_of_this_conversation(archive: Archive) -> None:
    house = archive.sessions.create_session("House", MODEL).id
    other = archive.sessions.create_session("Other", MODEL).id
    say(archive, house, ["gate code is 1234", "noted the gate", "gate again", "live gate talk"])
    say(archive, other, ["the other gate code", "ok"])
    condense(archive, house, 2)
    matches = archive.index.archived_matches(house, salient_terms("gate"))
    assert sorted(m.seq for m in matches) == [1, 2]  # seq 3 and 4 are live
    assert all(m.content.startswith(("gate code is", "noted")) for m in matches)


def test_nothing_archived_or_no_terms_finds_nothing(archive: Archive) -> None:
    session_id = archive.sessions.create_session("House", MODEL).id
    assert archive.index.archived_matches(session_id, salient_terms("gate")) == []
    say(archive, session_id, ["gate code", "ok"])
    assert archive.index.archived_matches(session_id, salient_terms("gate")) == []
    condense(archive, session_id, 2)
    assert archive.index.archived_matches(session_id, []) == []
    assert archive.index.archived_matches("no such conversation", salient_terms("gate")) == []


def test_a_code_is_found_as_a_phrase_not_as_syntax(archive: Archive) -> None:
    session_id = archive.sessions.create_session("House", MODEL).id
    say(archive, session_id, ['code AX-7731 NEAR "x" OR y*', "AX then 7731 apart", "ok", "ok"])
    condense(archive, session_id, 3)
    terms = salient_terms('AX-7731 NEAR "x" OR y*')
    ranked = rank_matches(archive.index.archived_matches(session_id, terms), terms)
    assert [m.seq for m in ranked][:1] == [1]


def test_a_word_in_most_messages_still_counts_with_another(
    database: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recall_module, "RARE_AT_MOST", 5)
    result = open_database(database)
    sessions = SessionStore(result.connection, database=result.path, clock=clock)
    summaries = SummaryStore.open(database, clock=clock)
    archive = Archive(sessions, summaries, sessions.recall_index(), clock)
    session_id = sessions.create_session("House", MODEL).id
    say(archive, session_id, [*chatter(20), "the garden gate is green", "ok"])
    condense(archive, session_id, 22)
    terms = salient_terms("garden gate")
    matches = archive.index.archived_matches(session_id, terms)
    # "garden" is everywhere: read only where another term is too, yet it still counts.
    assert [m.seq for m in matches] == [21]
    assert matches[0].held == frozenset({0, 1})
    alone = archive.index.archived_matches(session_id, salient_terms("garden"))
    assert 21 in [m.seq for m in alone]  # a common word alone: its newest messages
    summaries.close()
    sessions.close()


_WORDS = ["zorb", "quix", "flumm", "brax", "grelt", "vonk", "plim", "trask"]


def test_the_messages_holding_every_term_are_those_the_index_finds(
    database: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The pool's "holding every term" is worked out from the terms' own reads when they
    # say enough (issue 20): for any question, the same messages as the index finds when
    # asked over the whole archive, as it was before.
    monkeypatch.setattr(recall_module, "RARE_AT_MOST", 12)
    monkeypatch.setattr(recall_module, "COMMON_ROWS", 3)
    result = open_database(database)
    sessions = SessionStore(result.connection, database=result.path, clock=clock)
    summaries = SummaryStore.open(database, clock=clock)
    archive = Archive(sessions, summaries, sessions.recall_index(), clock)
    session_id = sessions.create_session("House", MODEL).id
    chance = dict(zip(_WORDS, (0.02, 0.04, 0.06, 0.1, 0.2, 0.35, 0.5, 0.7), strict=True))
    pick = random.Random(7)
    texts = [  # the rarer words said more in the newer messages
        " ".join(["note", *(w for w in _WORDS if pick.random() < chance[w] * (1 + n // 80))])
        for n in range(160)
    ]
    say(archive, session_id, [*texts, "live", "live"])
    condense(archive, session_id, 160)
    worked_out = RecallIndex._holding_all
    compared: list[int] = []

    def both(index: RecallIndex, *args: Any) -> frozenset[int]:
        expressions, present, bounds = args[1], args[4], args[5]
        every = " AND ".join(expressions[i] for i in present)
        asked = frozenset(index._rowids(every, *bounds, newest=recall_module.COMMON_ROWS))
        found = worked_out(index, *args)
        assert found == asked
        compared.append(len(found))
        return found

    monkeypatch.setattr(RecallIndex, "_holding_all", both)

    @settings(max_examples=200, deadline=None)
    @given(st.lists(st.sampled_from(_WORDS), min_size=2, max_size=6, unique=True))
    def same_messages(words: list[str]) -> None:
        recall_module._archives.clear()
        archive.index.pool(session_id, recall_query(" and ".join(words) + "?", date(2026, 1, 1)))

    same_messages()
    assert 0 in compared and any(compared)  # none, and some, hold every term
    summaries.close()
    sessions.close()


def test_on_a_small_window_the_answer_is_quoted_not_talk_of_its_subject(archive: Archive) -> None:
    session_id = archive.sessions.create_session("House", MODEL).id
    texts = chatter(300)
    for n in range(80, 280, 10):
        texts[n] = f"Message {n}: the vet was busy again, the waiting room full, the dog was fine."
    texts[10] = "Can you help me compare the boxes? The vet is called Tobias Ashcombe."
    texts[40] = "It turns out the vet opens at 17:25."
    texts[60] = "The vet bill came to £240, more than I hoped."
    say(archive, session_id, texts)
    condense(archive, session_id, 290)
    question = "What is the vet's name?"
    terms = salient_terms(question)
    wanted = wanted_kinds(question, fold)
    matches = archive.index.archived_matches(session_id, terms)
    assert [m.seq for m in rank_matches(matches, terms, wanted)][:1] == [11]
    block = fit_recall(matches, terms, 150, default_counter().count, wanted=wanted)
    assert block is not None and block.tokens <= 150
    assert "Tobias Ashcombe" in block.text


@pytest.mark.parametrize(
    ("said", "asked", "found_without_index"),
    [
        # A word never said as written is looked up in its rarer forms too.
        (
            "We talked it over and chose Clearwater Cover for the insurance.",
            "Which insurer did we go with?",
            [],
        ),
        # "kids": the plural of a synonym of "child".
        ("Eleven kids turned up to the reading hour.", "How many children came?", [7]),
    ],
)
def test_a_question_finds_what_was_said_in_another_word(
    archive: Archive, said: str, asked: str, found_without_index: list[int]
) -> None:
    session_id = archive.sessions.create_session("House", MODEL).id
    texts = chatter(40)
    texts[6] = said
    say(archive, session_id, texts)
    condense(archive, session_id, 30)
    query = recall_query(asked, date(2026, 6, 30))
    found = archive.index.pool(session_id, query).matches
    assert [m.seq for m in found] == ([7] if archive.index.indexed else found_without_index)


def test_other_conversations_are_searched_only_when_asked_and_name_themselves(
    archive: Archive,
) -> None:
    here = archive.sessions.create_session("House", MODEL).id
    there = archive.sessions.create_session("Holiday in Porto", MODEL).id
    say(archive, here, chatter(4))
    say(archive, there, ["We booked the guesthouse by the river in Porto.", "Lovely."])
    query = recall_query("Which guesthouse did we book?", date(2026, 6, 30))
    assert archive.index.pool(here, query).matches == ()  # this conversation only
    found = archive.index.pool_elsewhere(here, query).matches
    if not archive.index.indexed:
        assert found == ()  # without the index, never across
        return
    assert [(m.conversation, m.seq) for m in found] == [("Holiday in Porto", 1)]
    block = fit_recall(found, query.terms, 400, default_counter().count, ordered=[(found[0], None)])
    assert block is not None and "in “Holiday in Porto”" in block.text


def test_the_messages_a_search_key_names_are_candidates(archive: Archive) -> None:
    session_id = archive.sessions.create_session("House", MODEL).id
    texts = chatter(30)
    texts[6] = "I walked up Pen-y-ghent on Sunday with the camera."
    say(archive, session_id, texts)
    condense(archive, session_id, 28)
    query = recall_query("What new hobbies have I taken up?", date(2026, 6, 30))
    assert archive.index.pool(session_id, query).matches == ()  # no message says "hobbies"
    keys = [SearchKey(words="hobbies: hiking", sources=[7, 29])]  # 29 is live: not quoted
    pool = archive.index.pool(session_id, replace(query, keyed=keyed(keys, query.terms)))
    assert [m.seq for m in pool.matches] == [7]
    assert pool.matches[0].content.startswith("I walked up Pen-y-ghent")


def condense_more(archive: Archive, session_id: str, first_seq: int, last_seq: int) -> None:
    messages = [m for m in archive.sessions.messages(session_id) if first_seq <= m.seq <= last_seq]
    archive.summaries.commit_summary(
        SummaryDraft(
            session_id=session_id,
            tier=SummaryTier.CONDENSED,
            first_seq=first_seq,
            last_seq=last_seq,
            message_ids=[m.id for m in messages],
            content=SummaryContent(narrative="They talked about the gate."),
            source_tokens=10,
            summary_tokens=3,
            mode=SummaryMode.RULE,
            trigger=SummaryTrigger.MANUAL,
        )
    )


def test_a_turn_from_the_kept_archive_finds_what_a_fresh_read_finds(archive: Archive) -> None:
    session_id = archive.sessions.create_session("House", MODEL).id
    texts = chatter(120)
    texts[10] = "Let's settle it: the new gate code is AX-7731, starting Monday."
    texts[11] = "Which gate? The garden gate or the one by the garage?"
    texts[40] = "The garden gate sticks in the rain; the weather makes the wood swell."
    say(archive, session_id, texts)
    condense(archive, session_id, 100)
    query = recall_query("What was the garden gate code?", date(2026, 3, 3))
    first = archive.index.pool(session_id, query)
    kept = archive.index.pool(session_id, query)  # read from what the first turn kept
    recall_module._archives.clear()
    fresh = archive.index.pool(session_id, query)
    assert first.matches and 11 in {m.seq for m in first.matches}
    for pool in (kept, fresh):
        assert pool.matches == first.matches
        assert dict(pool.neighbours) == dict(first.neighbours)
        assert pool.frequency == first.frequency


def test_the_turns_around_are_the_same_read_by_their_likely_ids(
    archive: Archive, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two conversations written by turns (the first's ids run together, then alternate
    # with the other's), so that an id guessed from a candidate's is sometimes the other
    # conversation's message, or one a summary does not cover: read again by seq.
    session_id = archive.sessions.create_session("House", MODEL).id
    other_id = archive.sessions.create_session("Other", MODEL).id
    texts = chatter(80)
    for n in (5, 21, 40, 41, 62):
        texts[n] = f"The garden gate code is AX-77{n}, settled."
    say(archive, session_id, texts[:30])
    for text in texts[30:]:
        say(archive, session_id, [text])
        say(archive, other_id, ["The garden gate, the weather and lunch plans."])
    condense(archive, session_id, 70)
    query = recall_query("What was the garden gate code?", date(2026, 3, 3))
    read: list[str] = []
    by_id, by_seq = RecallIndex._rows_by_id, RecallIndex._rows_by_seq

    def rows_by_id(index: RecallIndex, *args: Any) -> list[tuple[Any, ...]]:
        read.append("id")
        return by_id(index, *args)

    def rows_by_seq(index: RecallIndex, *args: Any) -> list[tuple[Any, ...]]:
        read.append("seq")
        return by_seq(index, *args)

    monkeypatch.setattr(RecallIndex, "_rows_by_id", rows_by_id)
    monkeypatch.setattr(RecallIndex, "_rows_by_seq", rows_by_seq)
    guessed = archive.index.pool(session_id, query)
    if archive.index.indexed:  # the scan without the index (LIKE) reads by seq alone
        assert read.count("id") >= 2 and "seq" in read  # the guesses, and the seqs they missed
    recall_module._archives.clear()
    monkeypatch.setattr(
        RecallIndex,
        "_rows_guessed",
        lambda index, session, seqs, _guessed: index._rows_by_seq(session, seqs),
    )
    plain = archive.index.pool(session_id, query)
    assert guessed.matches == plain.matches
    assert dict(guessed.neighbours) == dict(plain.neighbours)
    assert guessed.held == plain.held
    assert {m.seq for m in guessed.neighbours.values()} >= {40, 43}


@pytest.mark.parametrize("archive", ["fts5"], indirect=True)  # the full-text index's reads
def test_a_terms_rowids_are_those_the_index_gives_row_by_row(archive: Archive) -> None:
    session_id = archive.sessions.create_session("House", MODEL).id
    say(archive, session_id, chatter(40) + ["The garden gate code is AX-7731."] * 3)
    connection = archive.sessions._connection
    for expression, newest in (('("garden")', 5), ('("garden")', None), ('("nowhere")', 5)):
        limit = f" ORDER BY rowid DESC LIMIT {newest}" if newest is not None else ""
        rows = connection.execute(
            "SELECT rowid FROM message_fts WHERE message_fts MATCH ? AND rowid BETWEEN ? AND ?"
            + limit,
            (expression, 3, 41),
        ).fetchall()
        found = archive.index._rowids(expression, 3, 41, newest=newest)
        assert found == frozenset(rowid for (rowid,) in rows)
        assert len(found) == (min(newest, 39) if newest and "garden" in expression else len(rows))


def test_a_new_summary_brings_its_messages_into_the_next_turn(archive: Archive) -> None:
    session_id = archive.sessions.create_session("House", MODEL).id
    texts = chatter(200)
    texts[150] = "Let's settle it: the new gate code is AX-7731, starting Monday."
    say(archive, session_id, texts)
    condense(archive, session_id, 100)
    query = recall_query("What was the gate code?", date(2026, 3, 3))
    assert 151 not in {m.seq for m in archive.index.pool(session_id, query).matches}
    condense_more(archive, session_id, 101, 190)
    assert 151 in {m.seq for m in archive.index.pool(session_id, query).matches}


def test_the_live_messages_are_never_candidates_nor_read(archive: Archive) -> None:
    session_id = archive.sessions.create_session("House", MODEL).id
    texts = chatter(60)
    texts[55] = "The new gate code is AX-7731."  # live: the request carries it already
    say(archive, session_id, texts)
    condense(archive, session_id, 40)
    query = recall_query("What was the gate code?", date(2026, 3, 3))
    pool = archive.index.pool(session_id, query)
    assert all(m.seq <= 40 for m in (*pool.matches, *pool.neighbours.values()))


def test_a_full_archive_keeps_its_newer_half_and_finds_the_same(
    archive: Archive, monkeypatch: pytest.MonkeyPatch
) -> None:
    session_id = archive.sessions.create_session("House", MODEL).id
    texts = chatter(120)
    texts[10] = "Let's settle it: the new gate code is AX-7731, starting Monday."
    say(archive, session_id, texts)
    condense(archive, session_id, 100)
    query = recall_query("What was the garden gate code?", date(2026, 3, 3))
    fresh = archive.index.pool(session_id, query)
    monkeypatch.setattr(recall_module, "ROWS_KEPT", 8)
    for other in ("What about lunch plans?", "And the weather?", "What was the gate code?"):
        archive.index.pool(session_id, recall_query(other, date(2026, 3, 3)))
        kept = archive.index.pool(session_id, query)
        assert kept.matches == fresh.matches
        assert dict(kept.neighbours) == dict(fresh.neighbours)
    assert all(len(held.rows) <= 8 + 60 for held in recall_module._archives.values())


def test_only_the_best_candidates_bring_the_turns_two_away(
    archive: Archive, monkeypatch: pytest.MonkeyPatch
) -> None:
    session_id = archive.sessions.create_session("House", MODEL).id
    texts = chatter(100)
    texts[20] = "The new gate code is AX-7731."  # seq 21: both terms, the best
    texts[60] = "The gate sticks in the rain."  # seq 61: one term
    say(archive, session_id, texts)
    condense(archive, session_id, 90)
    monkeypatch.setattr(recall_module, "TWO_AWAY", 1)
    pool = archive.index.pool(session_id, recall_query("What was the gate code?", date(2026, 3, 3)))
    assert sorted(m.seq for m in pool.matches) == [21, 61]
    assert {19, 20, 22, 23, 60, 62} <= set(pool.neighbours)
    if archive.index.indexed:
        assert [m.seq for m in pool.matches] == [21, 61]  # best first
        assert not {59, 63} & set(pool.neighbours)
    else:  # the scan without the index (LIKE) reads every candidate's turns two away
        assert {59, 63} <= set(pool.neighbours)


_ROWID_SETS = st.dictionaries(
    st.integers(0, 7), st.frozensets(st.integers(1, 60), max_size=25), min_size=1, max_size=8
)


@given(found=_ROWID_SETS, extra=st.frozensets(st.integers(1, 60), max_size=5), data=st.data())
def test_a_pools_scores_are_the_sums_made_one_rowid_at_a_time(
    found: dict[int, frozenset[int]], extra: frozenset[int], data: st.DataObject
) -> None:
    """`_summed` (set operations) gives each rowid the very float the one-by-one loop it
    replaced gave, and `_scored` the best in the order a (score, id) key gives (issue 20)."""
    values = data.draw(
        st.lists(st.floats(0.01, 50.0), min_size=max(found) + 1, max_size=max(found) + 1)
    )
    expected: dict[int, float] = dict.fromkeys(extra, 0.0)
    for i, ids in found.items():
        for doc_id in ids:
            expected[doc_id] = expected.get(doc_id, 0.0) + values[i]
    scores = recall_module._summed(found, values, extra)
    assert scores == expected
    best = [doc_id for _score, doc_id in sorted(recall_module._scored(scores), reverse=True)]
    assert best == sorted(expected, key=lambda doc_id: (expected[doc_id], doc_id), reverse=True)


@given(
    found=st.dictionaries(
        st.integers(0, 40), st.frozensets(st.integers(1, 60), max_size=25), max_size=12
    ),
    doc_ids=st.lists(st.integers(1, 70), max_size=40),
)
def test_the_terms_each_message_holds_are_those_listed_term_by_term(
    found: dict[int, frozenset[int]], doc_ids: list[int]
) -> None:
    """`_terms_held` (bit masks, one set a mask) gives each message the terms the lists it
    replaced gave, in the same order when iterated (a score sums their worth in it)."""
    expected: dict[int, list[int]] = {doc_id: [] for doc_id in doc_ids}
    for i, ids in found.items():
        for doc_id in ids:
            if doc_id in expected:
                expected[doc_id].append(i)
    held = recall_module._terms_held(found, doc_ids)
    assert held.keys() == expected.keys()
    for doc_id, terms in expected.items():
        assert held[doc_id] == frozenset(terms)
        assert list(held[doc_id]) == list(frozenset(terms))


@given(found=_ROWID_SETS)
def test_the_rowids_terms_share_are_those_another_term_holds_too(
    found: dict[int, frozenset[int]],
) -> None:
    """`_shared`, once for all terms, narrows each term as the union of every other
    term's rowids did, term by term (issue 20)."""
    present = [i for i, ids in found.items() if ids]
    shared = recall_module._shared(found, present)
    for i in present:
        others: set[int] = set().union(*(found[j] for j in present if j != i))
        assert found[i] & shared == found[i] & others


def test_a_span_whose_words_find_nothing_brings_its_most_telling_messages(
    archive: Archive,
) -> None:
    session_id = archive.sessions.create_session("Diary", MODEL).id
    archive.clock.now = datetime(2026, 3, 10, 9, 0, tzinfo=UTC)
    say(archive, session_id, chatter(40))  # March
    archive.clock.now = datetime(2026, 4, 10, 9, 0, tzinfo=UTC)
    april = chatter(40)
    april[20] = "How did the Riverside 10k go yesterday?"  # Claude's (seq 61)
    april[21] = "I did it! 57:42 on the clock, and Tom was waiting at the finish."
    say(archive, session_id, april)
    archive.clock.now = datetime(2026, 5, 10, 9, 0, tzinfo=UTC)
    say(archive, session_id, chatter(40))  # May
    condense(archive, session_id, 110)
    index = archive.index
    query = recall_query("How did my race go in April?", date(2026, 5, 20))
    pool = index.pool(session_id, query)
    assert pool.matches and all(41 <= m.seq <= 80 for m in pool.matches)
    assert set(pool.filled) == {m.seq for m in pool.matches}
    assert max(pool.filled, key=pool.filled.__getitem__) == 62
    assert pool.neighbours[61].content.startswith("How did the Riverside")
    # Words found in the span: no filling; no span: none either.
    assert not index.pool(
        session_id, recall_query("What about the garden in April?", date(2026, 5, 20))
    ).filled
    assert not index.pool(
        session_id, recall_query("How did my race go?", date(2026, 5, 20))
    ).matches


def test_a_long_span_is_read_a_bounded_number_of_rows(
    archive: Archive, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recall_module, "SPAN_ROWS", 10)
    monkeypatch.setattr(recall_module, "FILL_ROWS", 50)
    session_id = archive.sessions.create_session("Diary", MODEL).id
    archive.clock.now = datetime(2026, 4, 2, 9, 0, tzinfo=UTC)
    say(archive, session_id, [f"Note {n}: the {n}th thing on the list." for n in range(40)])
    condense(archive, session_id, 40)
    pool = archive.index.pool(
        session_id, recall_query("What went wrong in April?", date(2026, 5, 20))
    )
    assert 0 < len(pool.filled) <= 10
    seqs = sorted(pool.filled)
    # Every so many pairs of turns, each pair whole (seq 1-2, 9-10, …).
    assert all(seq % 2 == 0 or seq + 1 in pool.filled or seq == 40 for seq in seqs)


def _dated_messages() -> sqlite3.Connection:
    """A message table with only what the day search reads, in memory."""
    connection = sqlite3.connect(":memory:")
    connection.execute(
        "CREATE TABLE message (id INTEGER PRIMARY KEY, session_id TEXT, seq INTEGER, "
        "created_at TEXT)"
    )
    connection.execute("CREATE INDEX by_seq ON message (session_id, seq)")
    return connection


def _add_dated(connection: sqlite3.Connection, seq: int, moment: float) -> None:
    """Message `seq` of conversation 'a', written at `moment` (a POSIX time)."""
    stamp = datetime.fromtimestamp(moment, UTC).isoformat()
    connection.execute(
        "INSERT INTO message (session_id, seq, created_at) VALUES ('a', ?, ?)", (seq, stamp)
    )


def _bisected(connection: sqlite3.Connection, session_id: str, day: int) -> tuple[int, int] | None:
    """`RecallIndex._first_seq_on_or_after` as it was: a bisection of the seqs."""
    ends = connection.execute(
        "SELECT min(seq), max(seq) FROM message WHERE session_id = ?", (session_id,)
    ).fetchone()
    if ends[0] is None:
        return None
    low, high = int(ends[0]), int(ends[1]) + 1
    while low < high:
        middle = (low + high) // 2
        row = connection.execute(
            "SELECT seq, created_at FROM message WHERE session_id = ? AND seq >= ? "
            "ORDER BY seq LIMIT 1",
            (session_id, middle),
        ).fetchone()
        if row is None or local_day(datetime.fromisoformat(row[1])) >= day:
            high = middle
        else:
            low = int(row[0]) + 1
    row = connection.execute(
        "SELECT seq, id, created_at FROM message WHERE session_id = ? AND seq >= ? "
        "ORDER BY seq LIMIT 1",
        (session_id, low),
    ).fetchone()
    if row is None or local_day(datetime.fromisoformat(row[2])) < day:
        return None
    return int(row[0]), int(row[1])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(min_value=0, max_value=200_000), max_size=300),
    st.lists(st.integers(min_value=1, max_value=3), max_size=300),
    st.integers(min_value=-2, max_value=60),
)
def test_the_first_message_of_a_day_is_the_one_a_bisection_finds(
    gaps: list[int], steps: list[int], offset: int
) -> None:
    # Seqs with holes (deleted messages), times at uneven paces, with long silences; the
    # days asked about before, in and after them.
    connection = _dated_messages()
    moment, seq = datetime(2026, 3, 1, 8, tzinfo=UTC).timestamp(), 0
    for n, gap in enumerate(gaps):
        moment += gap * (50 if n % 7 == 0 else 1)
        seq += steps[n] if n < len(steps) else 1
        _add_dated(connection, seq, moment)
    index = RecallIndex(connection)
    first_day = date(2026, 3, 1).toordinal()
    ends = index._ends("a")
    for day in {first_day + offset, first_day + offset // 3, first_day + offset * 5}:
        found = None if ends is None else index._first_seq_on_or_after("a", day, ends)
        assert found == _bisected(connection, "a", day)
    connection.close()


def _days_span_bisected(
    connection: sqlite3.Connection, session_id: str, days: DayRange
) -> tuple[int, int, int, int] | None:
    """`RecallIndex._days_span` as it was: both ends bisected, whatever the days."""
    first = _bisected(connection, session_id, days.first.toordinal())
    after = _bisected(connection, session_id, days.last.toordinal() + 1)
    if first is None or (after is not None and after[0] <= first[0]):
        return None
    last = connection.execute(
        "SELECT id, seq FROM message WHERE session_id = ? AND seq < ? ORDER BY seq DESC LIMIT 1",
        (session_id, after[0] if after is not None else 2**62),
    ).fetchone()
    return None if last is None else (first[1], int(last[0]), first[0], int(last[1]))


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.integers(min_value=0, max_value=200_000), max_size=120),
    st.integers(min_value=-40, max_value=120),
    st.integers(min_value=0, max_value=40),
)
def test_a_span_of_days_is_found_as_both_ends_bisected(
    gaps: list[int], offset: int, length: int
) -> None:
    # Days before, across, inside and after the conversation: those it cannot hold are
    # answered without a read, with what the bisection found.
    connection = _dated_messages()
    moment = datetime(2026, 3, 1, 8, tzinfo=UTC).timestamp()
    for seq, gap in enumerate(gaps, start=1):
        moment += gap * (20 if seq % 5 == 0 else 1)
        _add_dated(connection, seq, moment)
    first = date(2026, 3, 1) + timedelta(days=offset)
    days = DayRange(first, first + timedelta(days=length))
    assert RecallIndex(connection)._days_span("a", days) == _days_span_bisected(
        connection, "a", days
    )
    connection.close()


def quote_tokens(archive: Archive, session_id: str) -> dict[int, int | None]:
    rows = archive.sessions._connection.execute(
        "SELECT seq, quote_tokens FROM message WHERE session_id = ? ORDER BY seq", (session_id,)
    ).fetchall()
    return {int(seq): tokens for seq, tokens in rows}


def test_a_message_is_saved_with_its_quote_count_and_read_with_it(archive: Archive) -> None:
    """Migration 17: each message saved carries what its quote body counts when quoted
    whole; a text rewritten without its count loses it; the archive reads it."""
    counter = default_counter()
    counter.load()
    session_id = archive.sessions.create_session("House", MODEL).id
    texts = ["  The gate code is AX-7731.\n\n> quoted\n", "Noted: AX-7731 for the gate.", "x" * 700]
    say(archive, session_id, texts)
    question, reply = archive.sessions.append_question(
        session_id, "And the gate code?", token_estimate=4, model=MODEL
    )
    archive.sessions.update_message_content(reply.id, "It is AX-7")
    assert quote_tokens(archive, session_id)[reply.seq] is None  # streaming: not final
    archive.sessions.finish_message(reply.id, "It is AX-7731.", MessageStatus.COMPLETE)
    expected = [whole_quote_tokens(text) for text in (*texts, question.content, "It is AX-7731.")]
    assert expected[2] is None and None not in expected[:2] + expected[3:]
    assert list(quote_tokens(archive, session_id).values()) == expected
    condense(archive, session_id, 5)
    matches = archive.index.archived_matches(session_id, salient_terms("gate code AX-7731"))
    assert {m.seq: m.body_tokens for m in matches} == {
        m.seq: expected[m.seq - 1] for m in matches
    } and {1, 2, 4, 5} <= {m.seq for m in matches}
    # A text put back from a backup (app.store.checksums) loses a count it no longer has.
    connection = archive.sessions._connection
    connection.execute("UPDATE message SET content = 'gate code?' WHERE seq = 4")
    assert quote_tokens(archive, session_id)[4] is None
    connection.execute("UPDATE message SET quote_tokens = 3 WHERE seq = 4")
    connection.execute("UPDATE message SET content = 'gate code?', quote_tokens = 3 WHERE seq = 4")
    assert quote_tokens(archive, session_id)[4] == 3  # the same text: kept


def test_a_row_read_is_the_match_the_dataclass_makes() -> None:
    from app.core.recall import ArchivedMatch
    from app.store.recall import _match

    row = (7, 12, "assistant", "2026-03-01T09:30:00+00:00", "What does it look like?", 0.0, 9)
    expected = ArchivedMatch(
        7,
        12,
        Role.ASSISTANT,
        datetime(2026, 3, 1, 9, 30, tzinfo=UTC),
        "What does it look like?",
        0.0,
        frozenset({1}),
        body_tokens=9,
    )
    made = _match(row, frozenset({1}))
    assert made == expected and vars(made) == vars(expected)
    assert type(made.rank) is float and type(made.role) is Role
    plain = _match((*row[:5], 0, None))
    assert vars(plain) == vars(replace(expected, held=None, body_tokens=None))
    assert type(plain.rank) is float  # an INTEGER 0 read where the rank is: 0.0
