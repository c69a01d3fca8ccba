"""Keeping Claude's archive searches (app/store/lookups.py, migration `lookup`)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from app.core.errors import BugError
from app.core.lookup import Lookup, LookupHit, recalled_lookup
from app.store import SessionStore
from app.store.lookups import LookupStore
from tests.fakes.clock import FakeClock
from tests.unit.store.test_summaries import conversation
from tests.unit.store.test_summaries import sessions as sessions  # a fixture

WHEN = datetime(2026, 3, 5, 14, 30, tzinfo=UTC)


@pytest.fixture
def lookups(sessions: SessionStore, database: Path, clock: FakeClock) -> Iterator[LookupStore]:
    opened = LookupStore.open(database, clock=clock)
    yield opened
    opened.close()


def lookup(message_id: int, ordinal: int, query: str = "gate code") -> Lookup:
    hits = (
        LookupHit(3, "user", WHEN, "The gate code is AX-7731 — «porte» ✓"),
        LookupHit(9, "summary", WHEN, "Decided: code changes in April", conversation="Moving"),
    )
    return Lookup(message_id, ordinal, query, hits, WHEN)


def test_lookups_come_back_in_order_with_their_hits(
    sessions: SessionStore, lookups: LookupStore
) -> None:
    _session_id, messages = conversation(sessions, 4)
    reply, other = messages[1].id, messages[3].id
    lookups.add(lookup(reply, 2, "april"))
    lookups.add(lookup(reply, 1))
    lookups.add(Lookup(other, 1, "nothing here", (), WHEN))

    found = lookups.for_messages([reply, other, messages[0].id])

    assert found[reply] == (lookup(reply, 1), lookup(reply, 2, "april"))
    assert found[other] == (Lookup(other, 1, "nothing here", (), WHEN),)
    assert messages[0].id not in found
    assert lookups.for_messages([]) == {}


def test_deleting_the_conversation_deletes_its_lookups(
    sessions: SessionStore, lookups: LookupStore
) -> None:
    session_id, messages = conversation(sessions, 2)
    lookups.add(lookup(messages[1].id, 1))
    sessions.delete_session(session_id)
    assert lookups.for_messages([messages[1].id]) == {}


def test_a_lookup_needs_its_reply_and_a_unique_ordinal(
    sessions: SessionStore, lookups: LookupStore
) -> None:
    _session_id, messages = conversation(sessions, 2)
    with pytest.raises(BugError):
        lookups.add(lookup(messages[1].id + 100, 1))
    lookups.add(lookup(messages[1].id, 1))
    with pytest.raises(BugError):
        lookups.add(lookup(messages[1].id, 1))
    assert len(lookups.for_messages([messages[1].id])[messages[1].id]) == 1


def test_recall_quotes_from_other_conversations_are_kept_before_the_searches(
    sessions: SessionStore, lookups: LookupStore
) -> None:
    _session_id, messages = conversation(sessions, 2)
    reply = messages[1].id
    lookups.add(lookup(reply, 1))
    recalled = recalled_lookup(reply, lookup(reply, 1).hits[1:], WHEN)
    lookups.add(recalled)

    found = lookups.for_messages([reply])[reply]

    assert found == (recalled, lookup(reply, 1))
    assert found[0].automatic and not found[1].automatic
