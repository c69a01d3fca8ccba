"""ArchiveSearch: finding live, archived and summary text, filters, order, paging,
snippets, words never read as syntax, the index kept in step, the LIKE fallback, and
the History window's list and timeline (DESIGN §2 message_fts, §8)."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.models import MessageStatus, Role
from app.core.search import Author, SearchOrder, SearchPage, SearchQuery, SnippetPart
from app.core.summary import (
    SourcedPoint,
    Summary,
    SummaryContent,
    SummaryDraft,
    SummaryMode,
    SummaryTier,
    SummaryTrigger,
)
from app.store import SessionStore, SummaryStore, open_database
from app.store import search as search_module
from app.store.migrations import migrate
from app.store.search import ArchiveSearch, query_words, snippet
from tests.fakes.clock import FakeClock

MODEL = "claude-sonnet-4-5"
FIXTURES = [HealthCheck.function_scoped_fixture]


@dataclass
class World:
    sessions: SessionStore
    summaries: SummaryStore
    search: ArchiveSearch
    clock: FakeClock


def no_fts5(action: int, table: str | None, module: str | None, *_: object) -> int:
    """An authorizer that refuses FTS5 tables, as a SQLite built without FTS5 would."""
    if action == sqlite3.SQLITE_CREATE_VTABLE and module == "fts5":
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


def make_world(database: Path, clock: FakeClock, *, indexed: bool) -> Iterator[World]:
    if not indexed:
        connection = sqlite3.connect(database, isolation_level=None)
        connection.set_authorizer(no_fts5)
        migrate(connection)
        connection.close()
    result = open_database(database)
    sessions = SessionStore(result.connection, database=result.path, clock=clock)
    summaries = SummaryStore.open(database, clock=clock)
    search = ArchiveSearch.open(database)
    assert search.indexed is indexed
    yield World(sessions, summaries, search, clock)
    search.close()
    summaries.close()
    sessions.close()


@pytest.fixture(params=["fts5", "like"])
def world(
    request: pytest.FixtureRequest,
    database: Path,
    clock: FakeClock,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> Iterator[World]:
    monkeypatch.setattr(search_module, "_warned_no_index", False)
    yield from make_world(database, clock, indexed=request.param == "fts5")


@pytest.fixture
def indexed(database: Path, clock: FakeClock) -> Iterator[World]:
    yield from make_world(database, clock, indexed=True)


def say(world: World, session_id: str, *texts: str) -> list[int]:
    ids = []
    for number, text in enumerate(texts):
        world.clock.advance(60)
        role = (Role.USER, Role.ASSISTANT)[number % 2]
        ids.append(world.sessions.append_message(session_id, role, text, token_estimate=5).id)
    return ids


def condense(world: World, session_id: str, narrative: str, seqs: range) -> Summary:
    world.clock.advance(1)
    messages = [m for m in world.sessions.messages(session_id) if m.seq in seqs]
    return world.summaries.commit_summary(
        SummaryDraft(
            session_id=session_id,
            tier=SummaryTier.CONDENSED,
            first_seq=seqs[0],
            last_seq=seqs[-1],
            message_ids=[m.id for m in messages],
            content=SummaryContent(
                narrative=narrative, key_points=[SourcedPoint(text="Budget of 900 euros")]
            ),
            source_tokens=10,
            summary_tokens=3,
            mode=SummaryMode.RULE,
            trigger=SummaryTrigger.MANUAL,
        )
    )


def compress(world: World, children: list[Summary], narrative: str) -> Summary:
    world.clock.advance(1)
    return world.summaries.commit_summary(
        SummaryDraft(
            session_id=children[0].session_id,
            tier=SummaryTier.COMPRESSED,
            first_seq=children[0].first_seq,
            last_seq=children[-1].last_seq,
            summary_ids=[s.id for s in children],
            content=SummaryContent(narrative=narrative),
            source_tokens=6,
            summary_tokens=2,
            mode=SummaryMode.RULE,
            trigger=SummaryTrigger.MANUAL,
            depth=2,
        )
    )


def find(world: World, text: str, **filters: object) -> SearchPage:
    return world.search.search(SearchQuery(text=text, **filters))  # type: ignore[arg-type]


def assert_counts_in_step(world: World, database: Path) -> None:
    """conversations() (counts kept by triggers) agrees with counting the rows."""
    connection = sqlite3.connect(database)
    counted = {
        row[0]: tuple(row[1:])
        for row in connection.execute(
            "SELECT c.id, (SELECT count(*) FROM message WHERE session_id = c.id), "
            "(SELECT count(*) FROM message WHERE session_id = c.id AND summary_id IS NOT NULL), "
            "(SELECT count(*) FROM summary WHERE session_id = c.id AND state = 'active') "
            "FROM session AS c"
        )
    }
    connection.close()
    kept = {
        o.session_id: (o.messages, o.archived, o.summaries) for o in world.search.conversations()
    }
    assert kept == counted


def marked(parts: tuple[SnippetPart, ...]) -> str:
    return "".join(f"[{p.text}]" if p.matched else p.text for p in parts)


@pytest.fixture
def trip(world: World) -> tuple[str, list[int], Summary]:
    """A conversation whose first four messages are condensed; two live ones after."""
    session_id = world.sessions.create_session("Trip", MODEL).id
    ids = say(
        world,
        session_id,
        "Flights to Lisbon on Friday",
        "The Lisbon flight leaves at nine",
        "Hotel near the river",
        "Book the hotel by Monday",
        "What about Porto afterwards?",
        "Porto is three hours by train from Lisbon",
    )
    summary = condense(world, session_id, "They planned a trip to Lisbon", range(1, 5))
    return session_id, ids, summary


# --- finding ------------------------------------------------------------------------


def test_live_archived_and_summary_text_are_found(
    world: World, trip: tuple[str, list[int], Summary]
) -> None:
    _, ids, summary = trip
    page = find(world, "lisbon", order=SearchOrder.IN_ORDER)
    assert page.total == 4
    first, *messages = page.hits
    assert (first.author, first.message_id, first.summary_id) == (Author.SUMMARY, None, summary.id)
    assert not first.archived and first.session_title == "Trip"
    assert [(h.message_id, h.archived, h.summary_id) for h in messages] == [
        (ids[0], True, summary.id),
        (ids[1], True, summary.id),
        (ids[5], False, None),
    ]
    assert [h.author for h in messages] == [Author.YOU, Author.CLAUDE, Author.CLAUDE]
    assert [h.seq for h in messages] == [1, 2, 6]
    assert find(world, "900 euros").hits[0].author is Author.SUMMARY  # a key point


def test_every_word_must_be_there(world: World, trip: tuple[str, list[int], Summary]) -> None:
    _, ids, _ = trip
    assert [h.message_id for h in find(world, "Porto train").hits] == [ids[5]]
    assert find(world, "Porto Madrid").total == 0


def test_an_archived_message_points_at_the_active_top_of_its_chain(
    world: World, trip: tuple[str, list[int], Summary]
) -> None:
    session_id, _, first = trip
    second = condense(world, session_id, "A side trip to Porto", range(5, 7))
    top = compress(world, [first, second], "Portugal, in short")
    hits = find(world, "hotel").hits
    assert {(h.archived, h.summary_id) for h in hits} == {(True, top.id)}
    # A superseded summary is still found; it reports the card that shows it now.
    [superseded] = find(world, "side trip").hits
    assert (superseded.author, superseded.summary_id, superseded.archived) == (
        Author.SUMMARY,
        top.id,
        True,
    )


def test_filters_by_conversation_author_and_dates(
    world: World, trip: tuple[str, list[int], Summary]
) -> None:
    _, ids, _ = trip
    other = world.sessions.create_session("Other", MODEL).id
    world.clock.advance(1)
    start = world.clock.now
    [later] = say(world, other, "Lisbon again next year")
    assert find(world, "lisbon").total == 5
    assert find(world, "lisbon", session_id=other).total == 1
    you = find(world, "lisbon", authors=frozenset({Author.YOU}))
    assert [h.message_id for h in you.hits] == [later, ids[0]]  # best: equal rank, newest first
    claude = find(world, "lisbon", authors=frozenset({Author.CLAUDE}))
    assert {h.message_id for h in claude.hits} == {ids[1], ids[5]}
    assert find(world, "lisbon", authors=frozenset({Author.SUMMARY})).total == 1
    both = frozenset({Author.SUMMARY, Author.YOU})
    assert find(world, "lisbon", authors=both).total == 3
    assert [h.message_id for h in find(world, "lisbon", since=start).hits] == [later]
    assert find(world, "lisbon", until=start).total == 4
    assert find(world, "lisbon", since=start, until=start + timedelta(seconds=30)).total == 0


def test_orders_and_pages(world: World, trip: tuple[str, list[int], Summary]) -> None:
    session_id, _, _ = trip
    ids = say(world, session_id, *(f"Lisbon note {n}" for n in range(7)))
    newest = find(world, "lisbon", order=SearchOrder.NEWEST, limit=3)
    assert [h.message_id for h in newest.hits] == ids[::-1][:3]
    assert newest.total == 11 and newest.has_more
    rest = find(world, "lisbon", order=SearchOrder.NEWEST, limit=3, offset=9)
    assert len(rest.hits) == 2 and rest.total == 11 and not rest.has_more
    beyond = find(world, "lisbon", order=SearchOrder.NEWEST, limit=3, offset=50)
    assert beyond.hits == () and beyond.total == 11
    in_order = find(world, "lisbon", order=SearchOrder.IN_ORDER, limit=50)
    positions = [h.seq if h.seq is not None else 0 for h in in_order.hits]
    assert positions == sorted(positions)
    best = find(world, "lisbon", limit=50)
    assert {h.message_id for h in best.hits} == {h.message_id for h in in_order.hits}


def test_best_match_ranks_a_dense_message_first(indexed: World) -> None:
    session_id = indexed.sessions.create_session("t", MODEL).id
    ids = say(
        indexed,
        session_id,
        "budget budget budget",
        "the budget is somewhere in a long sentence about many other things entirely",
    )
    assert [h.message_id for h in find(indexed, "budget").hits] == ids


def test_snippets_mark_the_words_around_the_best_match(world: World) -> None:
    session_id = world.sessions.create_session("t", MODEL).id
    long_text = " ".join(f"word{n}" for n in range(60)) + " the Café opens\nat noon " + "x " * 40
    say(world, session_id, long_text)
    [hit] = find(world, "cafe opens").hits if world.search.indexed else find(world, "Café").hits
    text = marked(hit.snippet)
    assert text.startswith("…") and text.endswith("…")
    assert "[Café]" in text and "\n" not in text
    assert 12 <= len(query_words(text)) <= 20


def test_snippet_of_short_text_is_whole() -> None:
    assert marked(snippet("Hello, wörld!", ["WORLD"])) == "Hello, [wörld]"
    assert marked(snippet("a b", ["c"])) == "a b"
    assert snippet("", ["a"]) == ()


def test_text_without_words_finds_nothing(
    world: World, trip: tuple[str, list[int], Summary]
) -> None:
    for text in ("", "   ", "***", '"', "- ^ :", "🧭🧭"):
        page = find(world, text)
        assert page.hits == () and page.total == 0
    assert world.search.matching_sessions("…") == []


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=st.text())
def test_no_text_is_ever_an_error(world: World, text: str) -> None:
    for order in SearchOrder:
        page = find(world, text, order=order)
        assert page.total >= len(page.hits)
    world.search.matching_sessions(text)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    syntax=st.lists(
        st.sampled_from(['"', "*", "-", "NEAR", "AND", "OR", "NOT", "^", ":", "(", ")", "+", "🧭"]),
        max_size=6,
    )
)
def test_search_syntax_is_searched_as_words(world: World, syntax: list[str]) -> None:
    session_id = world.sessions.create_session("t", MODEL).id
    [message] = say(world, session_id, "NEAR the AND gate, OR NOT")
    # Every word the syntax adds (NEAR, AND, OR, NOT) is in the message: it is found.
    page = find(world, " ".join(["gate", *syntax]))
    assert message in {h.message_id for h in page.hits}
    world.sessions.delete_session(session_id)


def test_matching_sessions(world: World, trip: tuple[str, list[int], Summary]) -> None:
    session_id, _, _ = trip
    other = world.sessions.create_session("Other", MODEL).id
    say(world, other, "Porto Porto Porto")
    assert set(world.search.matching_sessions("porto")) == {session_id, other}
    assert world.search.matching_sessions("hotel") == [session_id]
    assert world.search.matching_sessions("euros") == [session_id]  # in the summary only
    assert world.search.matching_sessions("porto", limit=1) in ([session_id], [other])
    assert world.search.matching_sessions("nowhere") == []


# --- the index kept in step -----------------------------------------------------------


def test_a_streamed_reply_is_found_as_it_is_saved(world: World) -> None:
    session_id = world.sessions.create_session("t", MODEL).id
    reply = world.sessions.append_message(
        session_id, Role.ASSISTANT, "", status=MessageStatus.STREAMING
    )
    world.sessions.update_message_content(reply.id, "Lisbon is")
    assert find(world, "lisbon").total == 1
    world.sessions.finish_message(reply.id, "Madrid is", MessageStatus.COMPLETE)
    assert find(world, "lisbon").total == 0
    assert [h.message_id for h in find(world, "madrid").hits] == [reply.id]


def test_undo_and_rewrite_keep_search_in_step(
    world: World, trip: tuple[str, list[int], Summary], database: Path
) -> None:
    _, ids, summary = trip
    rewritten = world.summaries.replace_summary(
        summary.id,
        SummaryDraft(
            session_id=summary.session_id,
            tier=SummaryTier.CONDENSED,
            first_seq=1,
            last_seq=4,
            message_ids=ids[:4],
            content=SummaryContent(narrative="A weekend in Alfama"),
            source_tokens=10,
            summary_tokens=3,
            mode=SummaryMode.LLM,
            trigger=SummaryTrigger.MANUAL,
        ),
    )
    assert find(world, "planned").total == 0  # the old (undone) summary's words
    [hit] = find(world, "alfama").hits
    assert hit.summary_id == rewritten.id
    assert {h.summary_id for h in find(world, "hotel").hits} == {rewritten.id}
    assert_counts_in_step(world, database)
    world.summaries.undo_summary(rewritten.id)
    assert find(world, "alfama").total == 0
    assert_counts_in_step(world, database)
    assert {(h.summary_id, h.archived) for h in find(world, "hotel").hits} == {(None, False)}


def test_deleting_a_conversation_removes_it_from_search(
    world: World, trip: tuple[str, list[int], Summary], database: Path
) -> None:
    session_id, _, _ = trip
    other = world.sessions.create_session("Other", MODEL).id
    say(world, other, "hi")
    world.sessions.delete_session(session_id)
    assert_counts_in_step(world, database)
    for text in ("lisbon", "euros", "hotel"):
        assert find(world, text).total == 0
    assert world.search.matching_sessions("lisbon") == []


def test_the_like_fallback_is_said_once(
    database: Path,
    clock: FakeClock,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(search_module, "_warned_no_index", False)
    worlds = make_world(database, clock, indexed=False)
    world = next(worlds)
    ArchiveSearch.open(database).close()
    said = [r for r in caplog.records if "LIKE" in r.getMessage()]
    assert len(said) == 1 and said[0].levelno == logging.WARNING
    assert world.search.search(SearchQuery(text="x")).total == 0
    next(worlds, None)


# --- the history --------------------------------------------------------------------------


def test_conversations_newest_first_with_counts(
    world: World, trip: tuple[str, list[int], Summary]
) -> None:
    session_id, _, _ = trip
    empty = world.sessions.create_session("Empty", MODEL).id
    world.clock.advance(60)
    newer = world.sessions.create_session("Newer", MODEL).id
    say(world, newer, "hi")
    overviews = world.search.conversations()
    assert [o.session_id for o in overviews] == [newer, empty, session_id]
    trip_overview = overviews[2]
    assert (trip_overview.title, trip_overview.messages, trip_overview.archived) == ("Trip", 6, 4)
    assert trip_overview.summaries == 1
    assert (overviews[1].messages, overviews[1].archived, overviews[1].summaries) == (0, 0, 0)


def test_timeline_nests_compressed_summaries_and_ends_with_the_live_stretch(
    world: World, trip: tuple[str, list[int], Summary], database: Path
) -> None:
    session_id, _, first = trip
    say(world, session_id, "more", "and more")
    second = condense(world, session_id, "Porto", range(5, 7))
    top = compress(world, [first, second], "Portugal")
    [whole, live] = world.search.timeline(session_id)
    assert whole.summary is not None and whole.summary.id == top.id
    assert (whole.first_seq, whole.last_seq, whole.messages) == (1, 6, 6)
    assert [c.summary.id for c in whole.children if c.summary] == [first.id, second.id]
    assert [(c.first_seq, c.last_seq, c.messages) for c in whole.children] == [(1, 4, 4), (5, 6, 2)]
    messages = world.sessions.messages(session_id)
    assert whole.first_at == messages[0].created_at
    assert whole.last_at == messages[5].created_at
    assert (live.summary, live.first_seq, live.last_seq, live.messages) == (None, 7, 8, 2)
    assert_counts_in_step(world, database)
    world.summaries.undo_summary(top.id)
    assert_counts_in_step(world, database)


def test_timeline_of_deleted_originals_has_no_dates(
    world: World, trip: tuple[str, list[int], Summary], database: Path
) -> None:
    session_id, _, summary = trip
    connection = sqlite3.connect(database, isolation_level=None)
    connection.execute("DELETE FROM message WHERE summary_id = ?", (summary.id,))
    connection.close()
    [entry, live] = world.search.timeline(session_id)
    assert live.summary is None
    assert (entry.first_at, entry.last_at, entry.messages) == (None, None, 0)
    assert (entry.first_seq, entry.last_seq) == (1, 4)
    assert find(world, "hotel").total == 0
    assert find(world, "lisbon").total == 2  # the summary and the live reply
    assert_counts_in_step(world, database)


def test_very_common_words_come_newest_first(
    world: World, trip: tuple[str, list[int], Summary], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past RANK_AT_MOST matches, 'best' is newest first, and the sidebar's filter stops
    at its limit without reading every match."""
    session_id, ids, _ = trip
    other = world.sessions.create_session("Other", MODEL).id
    [later] = say(world, other, "Lisbon Lisbon Lisbon")
    monkeypatch.setattr(search_module, "RANK_AT_MOST", 1)
    page = find(world, "lisbon")
    assert page.total == 5
    # The summary was made after the trip's messages.
    assert [h.message_id for h in page.hits] == [later, None, ids[5], ids[1], ids[0]]
    assert [h.message_id for h in find(world, "lisbon", limit=2, offset=3).hits] == ids[1::-1]
    assert world.search.matching_sessions("lisbon") == [other, session_id]
    assert world.search.matching_sessions("lisbon", limit=1) == [other]


def test_past_count_at_most_the_total_is_a_lower_bound(
    indexed: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over every conversation, counting stops at COUNT_AT_MOST messages: the page says
    "at least", and Load more still goes on; one conversation is counted exactly."""
    session_id = indexed.sessions.create_session("Garden", MODEL).id
    ids = say(indexed, session_id, *(f"Tomato number {n}" for n in range(7)))
    monkeypatch.setattr(search_module, "COUNT_AT_MOST", 3)
    page = find(indexed, "tomato", order=SearchOrder.NEWEST, limit=2)
    assert (page.total, page.at_least, page.has_more) == (3, True, True)
    assert page.found_text() == "3+ found"
    assert [h.message_id for h in page.hits] == ids[:-3:-1]
    deeper = find(indexed, "tomato", order=SearchOrder.NEWEST, limit=2, offset=4)
    assert [h.message_id for h in deeper.hits] == [ids[2], ids[1]] and deeper.has_more
    last = find(indexed, "tomato", order=SearchOrder.NEWEST, limit=2, offset=6)
    assert [h.message_id for h in last.hits] == [ids[0]] and not last.has_more
    exact = find(indexed, "tomato", session_id=session_id, limit=2)
    assert (exact.total, exact.at_least, exact.found_text()) == (7, False, "7 found")
    assert find(indexed, "number 4").found_text() == "1 found"
