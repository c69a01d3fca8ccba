"""Deleting archived originals (app/store/originals.py) and what reads them afterwards."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.summary import EventKind, EventOutcome, SummaryState
from app.store import SessionStore, SummaryStore
from app.store.errors import SummaryNotFoundError
from app.store.originals import OriginalsDeletedError, OriginalsStore
from tests.fakes.clock import FakeClock
from tests.unit.store.test_summaries import compressed, condensed, conversation
from tests.unit.store.test_summaries import sessions as sessions  # a fixture
from tests.unit.store.test_summaries import store as store  # a fixture


@pytest.fixture
def originals(store: SummaryStore, database: Path, clock: FakeClock) -> Iterator[OriginalsStore]:
    opened = OriginalsStore.open(database, clock=clock)
    yield opened
    opened.close()


def test_deleting_a_summarys_originals_keeps_the_summary_and_records_the_event(
    sessions: SessionStore, store: SummaryStore, originals: OriginalsStore
) -> None:
    session_id, messages = conversation(sessions, 6)
    summary = store.commit_summary(condensed(messages[:4]))
    assert originals.count_of_summary(summary.id) == 4

    assert originals.delete_of_summary(summary.id) == 4

    assert [m.seq for m in sessions.messages(session_id)] == [5, 6]
    assert store.active_summaries(session_id) == [summary]
    assert store.covered_messages(summary.id) == []
    assert store.check_coverage(session_id) == []
    (event,) = [e for e in store.events(session_id) if e.kind is EventKind.DELETE_ORIGINALS]
    assert (event.outcome, event.summary_id, event.detail) == (
        EventOutcome.OK,
        summary.id,
        "4 messages",
    )
    assert originals.deleted_on(summary.id) == event.created_at


def test_undo_after_deletion_is_refused_in_plain_words(
    sessions: SessionStore, store: SummaryStore, originals: OriginalsStore
) -> None:
    session_id, messages = conversation(sessions, 6)
    summary = store.commit_summary(condensed(messages[:4]))
    originals.delete_of_summary(summary.id)

    with pytest.raises(OriginalsDeletedError, match="nothing to put back"):
        store.undo_summary(summary.id)

    still = store.summary(summary.id)
    assert still is not None and still.state is SummaryState.ACTIVE
    assert store.check_coverage(session_id) == []


def test_deleting_through_a_chain_and_compressing_afterwards(
    sessions: SessionStore, store: SummaryStore, originals: OriginalsStore
) -> None:
    session_id, messages = conversation(sessions, 10)
    first = store.commit_summary(condensed(messages[:3]))
    second = store.commit_summary(condensed(messages[3:6]))
    top = store.commit_summary(compressed([first, second]))

    assert originals.count_of_summary(top.id) == 6
    assert originals.delete_of_summary(top.id) == 6

    assert [m.seq for m in sessions.messages(session_id)] == [7, 8, 9, 10]
    assert store.check_coverage(session_id) == []
    assert originals.deleted_on(first.id) is not None
    with pytest.raises(OriginalsDeletedError):
        store.undo_summary(top.id)
    # Summaries made later are checked as before.
    third = store.commit_summary(condensed(messages[6:8]))
    assert originals.deleted_on(third.id) is None
    assert store.check_coverage(session_id) == []


def test_deleting_a_whole_conversations_archive_keeps_live_messages(
    sessions: SessionStore, store: SummaryStore, originals: OriginalsStore, clock: FakeClock
) -> None:
    session_id, messages = conversation(sessions, 9)
    first = store.commit_summary(condensed(messages[:3]))
    second = store.commit_summary(condensed(messages[3:6]))
    other_id, other_messages = conversation(sessions, 4)
    other = store.commit_summary(condensed(other_messages[:2]))
    assert originals.count_archived(session_id) == 6

    clock.advance(60)
    assert originals.delete_archived(session_id) == 6

    assert [m.seq for m in sessions.messages(session_id)] == [7, 8, 9]
    assert store.active_summaries(session_id) == [first, second]
    assert store.check_coverage(session_id) == []
    assert originals.deleted_on(second.id) is not None
    assert originals.count_archived(other_id) == 2 and originals.deleted_on(other.id) is None
    # A summary made after the deletion must still cover its messages.
    clock.advance(60)
    later = store.commit_summary(condensed(messages[6:8]))
    assert originals.deleted_on(later.id) is None
    assert store.check_coverage(session_id) == []


def test_an_unexplained_gap_is_still_reported(
    sessions: SessionStore, store: SummaryStore, originals: OriginalsStore
) -> None:
    session_id, messages = conversation(sessions, 6)
    summary = store.commit_summary(condensed(messages[:3]))
    sessions._connection.execute("DELETE FROM message WHERE summary_id = ?", (summary.id,))

    assert store.check_coverage(session_id) == [f"active summary {summary.id} covers no message"]
    assert originals.deleted_on(summary.id) is None


def test_an_unknown_summary(originals: OriginalsStore) -> None:
    with pytest.raises(SummaryNotFoundError):
        originals.delete_of_summary("nope")
    assert originals.deleted_on("nope") is None
