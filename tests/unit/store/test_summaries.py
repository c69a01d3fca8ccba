"""SummaryStore: committing and undoing summaries, pins, the audit trail, and the
coverage invariant (DESIGN §2, §3 invariant 1, §6 steps 5–6)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from datetime import date, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.errors import BugError, SummaryConflictError, UserFacingError
from app.core.models import Message, Role
from app.core.summary import (
    ActionItem,
    EventKind,
    EventOutcome,
    SourcedPoint,
    Summary,
    SummaryContent,
    SummaryDraft,
    SummaryEvent,
    SummaryMode,
    SummaryRepository,
    SummaryState,
    SummaryTier,
    SummaryTrigger,
)
from app.store import (
    MessageArchivedError,
    MessageNotFoundError,
    SessionStore,
    SummaryNotActiveError,
    SummaryNotFoundError,
    SummaryStore,
    connect,
    open_database,
)
from tests.fakes.clock import FakeClock

MODEL = "claude-sonnet-4-5"


@pytest.fixture
def sessions(database: Path, clock: FakeClock) -> Iterator[SessionStore]:
    result = open_database(database)
    store = SessionStore(result.connection, database=result.path, clock=clock)
    yield store
    store.close()


@pytest.fixture
def store(sessions: SessionStore, database: Path, clock: FakeClock) -> Iterator[SummaryStore]:
    summaries = SummaryStore.open(database, clock=clock)
    yield summaries
    summaries.close()


@pytest.fixture
def raw(store: SummaryStore, database: Path) -> Iterator[sqlite3.Connection]:
    """A connection without foreign keys or CHECKs, for breaking things on purpose."""
    connection = sqlite3.connect(database, isolation_level=None)
    connection.execute("PRAGMA ignore_check_constraints = ON")
    yield connection
    connection.close()


def conversation(sessions: SessionStore, count: int, tokens: int = 10) -> tuple[str, list[Message]]:
    session = sessions.create_session("t", MODEL)
    messages = [
        sessions.append_message(
            session.id, (Role.USER, Role.ASSISTANT)[n % 2], f"m{n + 1}", token_estimate=tokens
        )
        for n in range(count)
    ]
    return session.id, messages


CONTENT = SummaryContent(
    narrative="They planned a trip to Lisbon 🧭.",
    key_points=[SourcedPoint(text="Flights on 3 March", sources=[1, 2])],
    decisions=[SourcedPoint(text="We'll use TAP", sources=[2])],
    action_items=[ActionItem(task="Book hotel", owner="Ana", due="2025-03-01", sources=[3])],
    open_questions=[SourcedPoint(text="Which district?")],
    entities=["https://example.org/x?y=1", "€240", "plan.md"],
    notes=["The transcript was trimmed."],
)


def condensed(messages: list[Message], **changes: object) -> SummaryDraft:
    fields: dict[str, object] = {
        "session_id": messages[0].session_id,
        "tier": SummaryTier.CONDENSED,
        "first_seq": messages[0].seq,
        "last_seq": messages[-1].seq,
        "message_ids": [m.id for m in messages if not m.pinned],
        "content": CONTENT,
        "source_tokens": sum(m.token_estimate or 0 for m in messages),
        "summary_tokens": 5,
        "mode": SummaryMode.HYBRID,
        "model": "claude-haiku-4-5",
        "trigger": SummaryTrigger.AUTO,
        "instructions": "focus on dates",
    }
    fields.update(changes)
    return SummaryDraft.model_validate(fields)


def compressed(children: list[Summary], **changes: object) -> SummaryDraft:
    fields: dict[str, object] = {
        "session_id": children[0].session_id,
        "tier": SummaryTier.COMPRESSED,
        "first_seq": min(s.first_seq for s in children),
        "last_seq": max(s.last_seq for s in children),
        "summary_ids": [s.id for s in children],
        "content": SummaryContent(narrative="older things"),
        "source_tokens": sum(s.summary_tokens for s in children),
        "summary_tokens": 4,
        "mode": SummaryMode.RULE,
        "trigger": SummaryTrigger.MANUAL,
        "depth": max(s.depth for s in children) + 1,
    }
    fields.update(changes)
    return SummaryDraft.model_validate(fields)


def version(sessions: SessionStore, session_id: str) -> int:
    session = sessions.get_session(session_id)
    assert session is not None
    return session.version


def test_it_is_a_summary_repository(store: SummaryStore) -> None:
    repository: SummaryRepository = store
    assert repository is store


# --- committing --------------------------------------------------------------------


def test_commit_covers_the_messages_and_bumps_the_version(
    sessions: SessionStore, store: SummaryStore, clock: FakeClock
) -> None:
    session_id, messages = conversation(sessions, 6)
    before = version(sessions, session_id)

    summary = store.commit_summary(condensed(messages[:4]))

    assert summary.state is SummaryState.ACTIVE
    assert summary.parent_id is None
    assert (summary.first_seq, summary.last_seq) == (1, 4)
    assert summary.created_at == clock.now
    assert version(sessions, session_id) == before + 1
    assert [m.seq for m in store.live_messages(session_id)] == [5, 6]
    assert store.active_summaries(session_id) == [summary]
    assert store.summary(summary.id) == summary
    assert store.covered_messages(summary.id) == [
        m.model_copy(update={"summary_id": summary.id}) for m in messages[:4]
    ]
    assert sessions.messages(session_id)[0].summary_id == summary.id  # originals kept
    assert sessions.count_messages(session_id) == 6
    assert store.check_coverage(session_id) == []


def test_summary_content_round_trips(store: SummaryStore, sessions: SessionStore) -> None:
    _, messages = conversation(sessions, 2)
    summary = store.commit_summary(condensed(messages))
    loaded = store.summary(summary.id)
    assert loaded == summary
    assert loaded is not None and loaded.content == CONTENT
    assert loaded.instructions == "focus on dates"
    assert loaded.model == "claude-haiku-4-5"


def test_the_days_a_summary_covers_round_trip(store: SummaryStore, sessions: SessionStore) -> None:
    _, messages = conversation(sessions, 2)
    content = CONTENT.model_copy(
        update={"first_day": date(2026, 2, 28), "last_day": date(2026, 3, 3)}
    )
    summary = store.commit_summary(condensed(messages, content=content))
    loaded = store.summary(summary.id)
    assert loaded is not None and loaded.content == content
    assert loaded.text().startswith("When: 28 February – 3 March 2026\n")


def test_a_message_appended_meanwhile_stays_live(
    sessions: SessionStore, store: SummaryStore
) -> None:
    session_id, messages = conversation(sessions, 4)
    draft = condensed(messages)  # planned …
    late = sessions.append_message(session_id, Role.USER, "sent while summarizing")
    store.commit_summary(draft)  # … committed after the conversation moved on
    assert store.live_messages(session_id) == [late]
    assert store.check_coverage(session_id) == []


def assert_nothing_written(
    sessions: SessionStore, store: SummaryStore, session_id: str, before: int
) -> None:
    assert version(sessions, session_id) == before
    assert store.summaries(session_id) == []


def test_conflict_when_a_message_was_summarized_meanwhile(
    sessions: SessionStore, store: SummaryStore
) -> None:
    session_id, messages = conversation(sessions, 6)
    late_draft = condensed(messages[:4])
    first = store.commit_summary(condensed(messages[2:5]))
    before = version(sessions, session_id)
    with pytest.raises(SummaryConflictError):
        store.commit_summary(late_draft)
    assert version(sessions, session_id) == before
    assert store.summaries(session_id) == [first]


def test_conflict_when_a_message_was_pinned_meanwhile(
    sessions: SessionStore, store: SummaryStore
) -> None:
    session_id, messages = conversation(sessions, 4)
    draft = condensed(messages)
    sessions.set_pinned(messages[1].id, True)
    before = version(sessions, session_id)
    with pytest.raises(SummaryConflictError, match="pinned"):
        store.commit_summary(draft)
    assert_nothing_written(sessions, store, session_id, before)


def test_conflict_when_a_message_inside_the_range_was_unpinned(
    sessions: SessionStore, store: SummaryStore
) -> None:
    session_id, messages = conversation(sessions, 4)
    pinned = sessions.set_pinned(messages[1].id, True)
    draft = condensed([messages[0], pinned, *messages[2:]])
    assert messages[1].id not in draft.message_ids
    sessions.set_pinned(messages[1].id, False)
    before = version(sessions, session_id)
    with pytest.raises(SummaryConflictError, match="not covered"):
        store.commit_summary(draft)
    assert_nothing_written(sessions, store, session_id, before)


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda d, other: {"first_seq": 2}, id="seq-outside-range"),
        pytest.param(lambda d, other: {"message_ids": [*d.message_ids, 999]}, id="missing"),
        pytest.param(
            lambda d, other: {"message_ids": [*d.message_ids, other]}, id="other-conversation"
        ),
        pytest.param(lambda d, other: {"session_id": "gone"}, id="conversation-gone"),
    ],
)
def test_conflict_when_the_draft_does_not_match_the_conversation(
    sessions: SessionStore,
    store: SummaryStore,
    change: Callable[[SummaryDraft, int], dict[str, object]],
) -> None:
    session_id, messages = conversation(sessions, 4)
    _, elsewhere = conversation(sessions, 1)
    draft = condensed(messages)
    before = version(sessions, session_id)
    with pytest.raises(SummaryConflictError):
        store.commit_summary(draft.model_copy(update=change(draft, elsewhere[0].id)))
    assert_nothing_written(sessions, store, session_id, before)


def test_conflict_when_the_range_overlaps_an_active_summary(
    sessions: SessionStore, store: SummaryStore
) -> None:
    session_id, messages = conversation(sessions, 6)
    store.commit_summary(condensed(messages[1:3]))
    overlapping = condensed([messages[0], messages[3]], first_seq=1, last_seq=4)
    with pytest.raises(SummaryConflictError, match="overlaps"):
        store.commit_summary(overlapping)
    assert len(store.summaries(session_id)) == 1


@pytest.mark.parametrize(
    "changes",
    [
        {"message_ids": []},
        {"summary_ids": ["x"]},
        {"last_seq": 0},
        {"depth": 0},
        {"tier": SummaryTier.COMPRESSED},
    ],
    ids=str,
)
def test_a_malformed_draft_is_a_value_error(
    sessions: SessionStore, store: SummaryStore, changes: dict[str, object]
) -> None:
    _, messages = conversation(sessions, 2)
    with pytest.raises(ValueError):
        store.commit_summary(condensed(messages).model_copy(update=changes))


def test_a_failure_half_way_writes_nothing(
    sessions: SessionStore, store: SummaryStore, raw: sqlite3.Connection
) -> None:
    session_id, messages = conversation(sessions, 4)
    raw.execute(
        "CREATE TRIGGER refuse BEFORE UPDATE OF summary_id ON message "
        f"WHEN NEW.id = {messages[3].id} BEGIN SELECT RAISE(ABORT, 'refused'); END"
    )
    before = version(sessions, session_id)
    with pytest.raises(BugError):
        store.commit_summary(condensed(messages))
    assert_nothing_written(sessions, store, session_id, before)
    assert all(m.summary_id is None for m in sessions.messages(session_id))


# --- compressed summaries ------------------------------------------------------------


def test_compressing_supersedes_the_summaries_it_covers(
    sessions: SessionStore, store: SummaryStore
) -> None:
    session_id, messages = conversation(sessions, 8)
    first = store.commit_summary(condensed(messages[:3]))
    second = store.commit_summary(condensed(messages[3:6]))
    top = store.commit_summary(compressed([first, second]))

    assert (top.first_seq, top.last_seq, top.depth) == (1, 6, 2)
    assert store.active_summaries(session_id) == [top]
    children = {s.id: s for s in store.summaries(session_id) if s.id != top.id}
    assert {s.state for s in children.values()} == {SummaryState.SUPERSEDED}
    assert {s.parent_id for s in children.values()} == {top.id}
    # The messages keep pointing at their condensed summary; coverage goes up the chain.
    assert {m.summary_id for m in sessions.messages(session_id)[:6]} == {first.id, second.id}
    assert [m.seq for m in store.covered_messages(top.id)] == [1, 2, 3, 4, 5, 6]
    assert [m.seq for m in store.covered_messages(first.id)] == [1, 2, 3]
    assert [m.seq for m in store.live_messages(session_id)] == [7, 8]
    assert store.summaries(session_id, include_inactive=False) == [top]
    assert store.check_coverage(session_id) == []


def test_conflict_when_a_summary_is_no_longer_active(
    sessions: SessionStore, store: SummaryStore
) -> None:
    session_id, messages = conversation(sessions, 6)
    first = store.commit_summary(condensed(messages[:3]))
    second = store.commit_summary(condensed(messages[3:]))
    draft = compressed([first, second])
    store.undo_summary(first.id)
    before = version(sessions, session_id)
    with pytest.raises(SummaryConflictError, match="no longer active"):
        store.commit_summary(draft)
    assert version(sessions, session_id) == before
    assert store.summary(second.id) == second


def test_conflict_when_a_compressed_range_would_hide_a_live_message(
    sessions: SessionStore, store: SummaryStore
) -> None:
    session_id, messages = conversation(sessions, 6)
    first = store.commit_summary(condensed(messages[:2]))
    middle = store.commit_summary(condensed(messages[2:4]))
    last = store.commit_summary(condensed(messages[4:]))
    store.undo_summary(middle.id)
    with pytest.raises(SummaryConflictError):
        store.commit_summary(compressed([first, last]))
    assert store.check_coverage(session_id) == []


# --- undo --------------------------------------------------------------------------


def test_undo_gives_every_original_back(sessions: SessionStore, store: SummaryStore) -> None:
    session_id, messages = conversation(sessions, 5)
    summary = store.commit_summary(condensed(messages[:3]))
    before = version(sessions, session_id)

    result = store.undo_summary(summary.id)

    assert result.complete
    assert result.restored_message_ids == [m.id for m in messages[:3]]
    assert store.live_messages(session_id) == messages
    undone = store.summary(summary.id)
    assert undone is not None and undone.state is SummaryState.UNDONE
    assert store.active_summaries(session_id) == []
    assert version(sessions, session_id) == before + 1
    assert store.check_coverage(session_id) == []


def test_partial_undo_restores_the_newest_that_fit(
    sessions: SessionStore, store: SummaryStore
) -> None:
    session_id, messages = conversation(sessions, 6, tokens=10)
    summary = store.commit_summary(condensed(messages[:5]))

    result = store.undo_summary(summary.id, budget_tokens=25)

    assert not result.complete
    assert result.restored_message_ids == [messages[3].id, messages[4].id]
    assert [m.seq for m in store.live_messages(session_id)] == [4, 5, 6]
    shrunk = store.summary(summary.id)
    assert shrunk is not None
    assert shrunk.state is SummaryState.ACTIVE
    assert (shrunk.first_seq, shrunk.last_seq) == (1, 3)
    assert [m.seq for m in store.covered_messages(summary.id)] == [1, 2, 3]
    assert store.check_coverage(session_id) == []

    rest = store.undo_summary(summary.id, budget_tokens=30)
    assert rest.complete
    assert store.live_messages(session_id) == messages


def test_undo_with_no_room_changes_nothing(sessions: SessionStore, store: SummaryStore) -> None:
    session_id, messages = conversation(sessions, 3, tokens=10)
    summary = store.commit_summary(condensed(messages))
    before = version(sessions, session_id)
    result = store.undo_summary(summary.id, budget_tokens=9)
    assert (result.complete, result.restored_message_ids) == (False, [])
    assert store.summary(summary.id) == summary
    assert version(sessions, session_id) == before


def test_undo_of_a_compressed_summary_reactivates_what_it_covered(
    sessions: SessionStore, store: SummaryStore
) -> None:
    session_id, messages = conversation(sessions, 6)
    children = [store.commit_summary(condensed(messages[n : n + 2])) for n in (0, 2, 4)]
    top = store.commit_summary(compressed(children))

    result = store.undo_summary(top.id)

    assert result.complete
    assert result.restored_message_ids == []
    assert result.restored_summary_ids == [c.id for c in children]
    assert store.active_summaries(session_id) == children
    assert store.live_messages(session_id) == []
    assert store.check_coverage(session_id) == []


def test_partial_undo_of_a_compressed_summary(sessions: SessionStore, store: SummaryStore) -> None:
    session_id, messages = conversation(sessions, 6)
    children = [
        store.commit_summary(condensed(messages[n : n + 2], summary_tokens=5)) for n in (0, 2, 4)
    ]
    top = store.commit_summary(compressed(children))

    result = store.undo_summary(top.id, budget_tokens=12)

    assert not result.complete
    assert result.restored_summary_ids == [c.id for c in children[1:]]
    shrunk = store.summary(top.id)
    assert shrunk is not None and (shrunk.first_seq, shrunk.last_seq) == (1, 2)
    assert [s.id for s in store.active_summaries(session_id)] == [top.id] + [
        c.id for c in children[1:]
    ]
    assert [m.seq for m in store.covered_messages(top.id)] == [1, 2]
    assert store.check_coverage(session_id) == []


def test_undo_refuses_what_is_not_active(sessions: SessionStore, store: SummaryStore) -> None:
    _, messages = conversation(sessions, 4)
    first = store.commit_summary(condensed(messages[:2]))
    second = store.commit_summary(condensed(messages[2:]))
    store.commit_summary(compressed([first, second]))
    with pytest.raises(SummaryNotActiveError, match="merged into a newer one") as caught:
        store.undo_summary(first.id)
    assert isinstance(caught.value, ValueError)
    assert isinstance(caught.value, UserFacingError)

    _, others = conversation(sessions, 2)
    lone = store.commit_summary(condensed(others))
    store.undo_summary(lone.id)
    with pytest.raises(SummaryNotActiveError, match="already undone"):
        store.undo_summary(lone.id)
    with pytest.raises(SummaryNotFoundError):
        store.undo_summary("no-such-summary")
    with pytest.raises(ValueError):
        store.undo_summary(second.id, budget_tokens=-1)


# --- rewriting a summary ("Try again with Claude") -------------------------------------


def test_replace_puts_the_new_summary_over_the_same_messages(
    sessions: SessionStore, store: SummaryStore
) -> None:
    session_id, messages = conversation(sessions, 8)
    basic = store.commit_summary(condensed(messages[:5], mode=SummaryMode.RULE, model=None))
    before = version(sessions, session_id)
    rewritten = CONTENT.model_copy(update={"narrative": "Claude's own summary."})
    new = store.replace_summary(
        basic.id, condensed(messages[:5], mode=SummaryMode.LLM, content=rewritten)
    )

    assert new.id != basic.id
    assert (new.first_seq, new.last_seq, new.mode) == (1, 5, SummaryMode.LLM)
    assert store.active_summaries(session_id) == [new]
    old = store.summary(basic.id)
    assert old is not None and old.state is SummaryState.UNDONE
    assert [m.id for m in store.covered_messages(new.id)] == [m.id for m in messages[:5]]
    assert store.covered_messages(basic.id) == []
    assert [m.seq for m in store.live_messages(session_id)] == [6, 7, 8]
    stored = store.summary(new.id)
    assert stored is not None and stored.content.narrative == "Claude's own summary."
    assert version(sessions, session_id) == before + 1
    assert store.check_coverage(session_id) == []


@pytest.mark.parametrize(
    "what",
    ["fewer messages", "more messages", "another range", "undone", "compressed", "unknown"],
)
def test_replace_refuses_and_writes_nothing_when_it_would_not_fit(
    sessions: SessionStore, store: SummaryStore, what: str
) -> None:
    session_id, messages = conversation(sessions, 8)
    basic = store.commit_summary(condensed(messages[:4], mode=SummaryMode.RULE))
    other = store.commit_summary(condensed(messages[4:6], mode=SummaryMode.RULE))
    target = basic.id
    draft = condensed(messages[:4], mode=SummaryMode.LLM)
    if what == "fewer messages":
        draft = condensed(messages[:3], last_seq=4, mode=SummaryMode.LLM)
    elif what == "more messages":
        draft = condensed(messages[:4] + messages[6:7], mode=SummaryMode.LLM)
    elif what == "another range":
        draft = condensed(messages[:4], last_seq=5, mode=SummaryMode.LLM)
    elif what == "undone":
        store.undo_summary(basic.id)
    elif what == "compressed":
        target = store.commit_summary(compressed([basic, other])).id
    else:
        target = "no-such-summary"
    before = version(sessions, session_id)
    summaries = store.summaries(session_id)
    with pytest.raises(SummaryConflictError):
        store.replace_summary(target, draft)
    assert version(sessions, session_id) == before
    assert store.summaries(session_id) == summaries
    assert store.check_coverage(session_id) == []


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(cuts=st.lists(st.integers(min_value=1, max_value=11), min_size=1, max_size=4, unique=True))
def test_replacing_any_summary_keeps_every_message_covered_exactly_once(
    sessions: SessionStore, store: SummaryStore, cuts: list[int]
) -> None:
    session_id, messages = conversation(sessions, 12)
    made: list[tuple[Summary, list[Message]]] = []
    start = 0
    for cut in sorted(cuts):
        run = messages[start:cut]
        made.append((store.commit_summary(condensed(run, mode=SummaryMode.RULE)), run))
        start = cut
    for summary, run in made:
        store.replace_summary(summary.id, condensed(run, mode=SummaryMode.LLM))
        assert store.check_coverage(session_id) == []
    active = store.active_summaries(session_id)
    assert [s.mode for s in active] == [SummaryMode.LLM] * len(made)
    covered = [m.id for s in active for m in store.covered_messages(s.id)]
    live = [m.id for m in store.live_messages(session_id)]
    assert sorted(covered + live) == [m.id for m in messages]


# --- pins ----------------------------------------------------------------------------


def test_pinned_messages_stay_live_and_are_never_covered(
    sessions: SessionStore, store: SummaryStore
) -> None:
    session_id, messages = conversation(sessions, 6)
    before = version(sessions, session_id)
    pinned = sessions.set_pinned(messages[2].id, True)
    assert pinned.pinned
    assert version(sessions, session_id) == before + 1

    summary = store.commit_summary(condensed([*messages[:2], pinned, *messages[3:5]]))

    live = store.live_messages(session_id)
    assert [m.seq for m in live] == [3, 6]
    assert live[0].pinned and live[0].summary_id is None
    assert (summary.first_seq, summary.last_seq) == (1, 5)
    assert 3 not in [m.seq for m in store.covered_messages(summary.id)]
    assert store.check_coverage(session_id) == []
    with pytest.raises(SummaryConflictError):
        store.commit_summary(condensed([pinned], message_ids=[pinned.id]))


def test_a_covered_message_cannot_be_pinned(sessions: SessionStore, store: SummaryStore) -> None:
    session_id, messages = conversation(sessions, 3)
    store.commit_summary(condensed(messages[:2]))
    before = version(sessions, session_id)
    with pytest.raises(MessageArchivedError) as caught:
        sessions.set_pinned(messages[0].id, True)
    assert isinstance(caught.value, UserFacingError)
    assert version(sessions, session_id) == before
    assert sessions.set_pinned(messages[0].id, False).pinned is False  # unpinning is harmless
    with pytest.raises(MessageNotFoundError):
        sessions.set_pinned(12345, True)


def test_a_message_unpinned_inside_a_summary_stays_live(
    sessions: SessionStore, store: SummaryStore
) -> None:
    session_id, messages = conversation(sessions, 6)
    pinned = sessions.set_pinned(messages[1].id, True)
    first = store.commit_summary(condensed([messages[0], pinned, messages[2]]))
    second = store.commit_summary(condensed(messages[3:5]))
    sessions.set_pinned(messages[1].id, False)

    assert [m.seq for m in store.live_messages(session_id)] == [2, 6]
    assert store.check_coverage(session_id) == []
    with pytest.raises(SummaryConflictError, match="overlaps"):
        store.commit_summary(condensed([messages[1]]))
    top = store.commit_summary(compressed([first, second]))  # it stays live inside
    assert [m.seq for m in store.live_messages(session_id)] == [2, 6]
    assert store.undo_summary(top.id).complete
    assert store.check_coverage(session_id) == []


def test_pins_are_read_back(sessions: SessionStore) -> None:
    session_id, messages = conversation(sessions, 2)
    sessions.set_pinned(messages[1].id, True)
    assert [m.pinned for m in sessions.messages(session_id)] == [False, True]
    assert [m.pinned for m in sessions.live_messages(session_id)] == [False, True]
    assert sessions.set_pinned(messages[1].id, False).pinned is False


# --- the audit trail ---------------------------------------------------------------


def test_events_round_trip_oldest_first(
    sessions: SessionStore, store: SummaryStore, clock: FakeClock
) -> None:
    session_id, _ = conversation(sessions, 1)
    attempt = SummaryEvent(
        session_id=session_id,
        kind=EventKind.SUMMARIZE,
        outcome=EventOutcome.FALLBACK,
        summary_id="s-1",
        reason="trigger_ratio 0.80 reached",
        ratio_before=0.83,
        ratio_after=0.41,
        tokens_before=166_000,
        tokens_after=82_000,
        duration_ms=1234.5,
        error_class="StreamInterruptedError",
        detail="fell back to rules",
    )
    store.record_event(attempt)
    clock.advance()
    undo = SummaryEvent(session_id=session_id, kind=EventKind.UNDO, outcome=EventOutcome.PARTIAL)
    store.record_event(undo)
    earlier = SummaryEvent(
        session_id=session_id,
        kind=EventKind.SUMMARIZE,
        outcome=EventOutcome.CONFLICT,
        created_at=clock.now - timedelta(hours=1),
    )
    store.record_event(earlier)

    events = store.events(session_id)

    assert events == [
        earlier,
        attempt.model_copy(update={"created_at": clock.now - timedelta(seconds=1)}),
        undo.model_copy(update={"created_at": clock.now}),
    ]
    assert store.events("other") == []


def test_deleting_a_conversation_cascades_but_the_audit_trail_stays(
    sessions: SessionStore, store: SummaryStore, database: Path
) -> None:
    session_id, messages = conversation(sessions, 4)
    first = store.commit_summary(condensed(messages[:2]))
    second = store.commit_summary(condensed(messages[2:]))
    store.commit_summary(compressed([first, second]))
    store.record_event(
        SummaryEvent(session_id=session_id, kind=EventKind.SUMMARIZE, outcome=EventOutcome.OK)
    )

    sessions.delete_session(session_id)

    assert store.summaries(session_id) == []
    assert store.summary(first.id) is None
    kinds = [(e.kind, e.reason) for e in store.events(session_id)]
    assert kinds == [
        (EventKind.SUMMARIZE, ""),
        (EventKind.DELETE_ORIGINALS, "conversation deleted"),
    ]
    connection = connect(database)
    try:
        assert connection.execute("PRAGMA foreign_key_check").fetchall() == []
    finally:
        connection.close()


def test_summaries_survive_reopening(
    sessions: SessionStore, store: SummaryStore, database: Path
) -> None:
    session_id, messages = conversation(sessions, 4)
    first = store.commit_summary(condensed(messages[:2]))
    second = store.commit_summary(condensed(messages[2:]))
    top = store.commit_summary(compressed([first, second]))
    everything = store.summaries(session_id)
    store.close()

    again = SummaryStore.open(database)
    try:
        assert again.summaries(session_id) == everything
        assert again.active_summaries(session_id) == [top]
        assert again.check_coverage(session_id) == []
    finally:
        again.close()


# --- the coverage invariant ------------------------------------------------------------


def chain(sessions: SessionStore, store: SummaryStore) -> tuple[str, list[Summary]]:
    """A conversation with a compressed chain, an active condensed one and a live tail."""
    session_id, messages = conversation(sessions, 8)
    first = store.commit_summary(condensed(messages[:2]))
    second = store.commit_summary(condensed(messages[2:4]))
    top = store.commit_summary(compressed([first, second]))
    third = store.commit_summary(condensed(messages[4:6]))
    return session_id, [first, second, top, third]


CORRUPTIONS = {
    "covered-by-undone": (
        "UPDATE summary SET state = 'undone' WHERE id = :third",
        "undone summary",
    ),
    "missing-summary": (
        "UPDATE message SET summary_id = 'nowhere' WHERE seq = 7 AND session_id = :session",
        "missing summary",
    ),
    "pinned-and-covered": (
        "UPDATE message SET pinned = 1 WHERE seq = 5 AND session_id = :session",
        "pinned",
    ),
    "overlap": (
        "UPDATE summary SET first_seq = 4 WHERE id = :third",
        "overlap",
    ),
    "parent-undone": (
        "UPDATE summary SET state = 'undone' WHERE id = :top",
        "undone summary",
    ),
    "other-conversation": (
        "UPDATE summary SET session_id = :other WHERE id = :third",
        "another conversation",
    ),
    "outside-range": (
        "UPDATE summary SET last_seq = 5 WHERE id = :third",
        "outside its summary's range",
    ),
    "superseded-without-parent": (
        "UPDATE summary SET parent_id = NULL WHERE id = :first",
        "without a parent",
    ),
    "message-on-compressed": (
        "UPDATE message SET summary_id = :top WHERE seq = 1 AND session_id = :session",
        "compressed summary",
    ),
    "empty-active-summary": (
        "UPDATE message SET summary_id = :first WHERE summary_id = :third",
        "covers no message",
    ),
}


def test_coverage_is_fine_on_good_data(sessions: SessionStore, store: SummaryStore) -> None:
    session_id, _ = chain(sessions, store)
    assert store.check_coverage(session_id) == []
    assert store.check_coverage("no-such-conversation") == []


@pytest.mark.parametrize("corruption", list(CORRUPTIONS))
def test_coverage_finds_injected_corruption(
    sessions: SessionStore, store: SummaryStore, raw: sqlite3.Connection, corruption: str
) -> None:
    session_id, (first, _, top, third) = chain(sessions, store)
    other, _ = conversation(sessions, 1)
    statement, expected = CORRUPTIONS[corruption]
    names = {"session": session_id, "other": other, "first": first.id, "top": top.id}
    raw.execute(statement, {**names, "third": third.id})
    problems = store.check_coverage(session_id)
    assert any(expected in problem for problem in problems), problems


def test_the_schema_refuses_a_pinned_covered_message(
    sessions: SessionStore, store: SummaryStore, database: Path
) -> None:
    _, messages = conversation(sessions, 2)
    summary = store.commit_summary(condensed(messages))
    connection = connect(database)
    try:
        with pytest.raises(sqlite3.IntegrityError):
            connection.execute("UPDATE message SET pinned = 1 WHERE id = ?", (messages[0].id,))
        with pytest.raises(sqlite3.IntegrityError):
            connection.execute("UPDATE message SET summary_id = 'nowhere'")
        with pytest.raises(sqlite3.IntegrityError):
            connection.execute(
                "UPDATE summary SET state = 'superseded' WHERE id = ?", (summary.id,)
            )
    finally:
        connection.close()


# --- random sequences ------------------------------------------------------------------

OPERATIONS = st.lists(
    st.tuples(
        st.sampled_from(["append", "pin", "unpin", "condense", "compress", "undo"]),
        st.integers(min_value=0, max_value=20),
        st.one_of(st.none(), st.integers(min_value=0, max_value=60)),
    ),
    max_size=40,
)


def plan_condensed(
    store: SummaryStore, sessions: SessionStore, session_id: str, size: int
) -> SummaryDraft | None:
    """The oldest run of live messages outside active ranges, up to `size` unpinned."""
    ranges = [(s.first_seq, s.last_seq) for s in store.active_summaries(session_id)]
    run: list[Message] = []
    for message in sessions.messages(session_id):
        inside = any(first <= message.seq <= last for first, last in ranges)
        if message.summary_id is not None or inside:
            if run:
                break
            continue
        if message.pinned and not run:
            continue
        run.append(message)
    while run and run[-1].pinned:
        run.pop()
    unpinned = [m for m in run if not m.pinned][: max(size, 1)]
    if not unpinned:
        return None
    covered = [m for m in run if m.seq <= unpinned[-1].seq]
    return condensed(covered)


def plan_compressed(store: SummaryStore, session_id: str, size: int) -> SummaryDraft | None:
    """The oldest run of active summaries with only pinned messages between them."""
    active = store.active_summaries(session_id)
    live = [m for m in store.live_messages(session_id) if not m.pinned]
    run = active[:1]
    for summary in active[1:]:
        if len(run) > max(size, 2) - 1:
            break
        if any(run[-1].last_seq < m.seq < summary.first_seq for m in live):
            break
        run.append(summary)
    return compressed(run) if len(run) >= 2 else None


@settings(
    max_examples=75, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(operations=OPERATIONS)
def test_random_commits_and_undos_keep_the_invariant(
    sessions: SessionStore,
    store: SummaryStore,
    operations: list[tuple[str, int, int | None]],
) -> None:
    session_id, _ = conversation(sessions, 6)
    appended = 6
    for operation, number, budget in operations:
        if operation == "append":
            sessions.append_message(session_id, Role.USER, f"m{appended + 1}", token_estimate=10)
            appended += 1
        elif operation in ("pin", "unpin"):
            live = store.live_messages(session_id)
            if live:
                sessions.set_pinned(live[number % len(live)].id, operation == "pin")
        elif operation == "condense":
            draft = plan_condensed(store, sessions, session_id, number)
            if draft is not None:
                store.commit_summary(draft)
        elif operation == "compress":
            draft = plan_compressed(store, session_id, number)
            if draft is not None:
                store.commit_summary(draft)
        else:
            active = store.active_summaries(session_id)
            if active:
                store.undo_summary(active[number % len(active)].id, budget_tokens=budget)
        assert store.check_coverage(session_id) == [], operation
        assert sessions.count_messages(session_id) == appended  # nothing is ever lost
