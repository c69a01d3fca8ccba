"""Setting a conversation's instructions in the store (its system prompt)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.store.database import open_database
from app.store.errors import SessionNotFoundError
from app.store.sessions import SessionStore
from tests.fakes.clock import FakeClock


@pytest.fixture
def store(database: Path, clock: FakeClock) -> Iterator[SessionStore]:
    opened = open_database(database)
    store = SessionStore(opened.connection, database=opened.path, clock=clock)
    yield store
    store.close()


def test_instructions_are_saved_and_bump_the_version(store: SessionStore) -> None:
    session = store.create_session("Trip", "claude-sonnet-4-6")

    store.instructions.set(session.id, "Answer in French.")

    saved = store.get_session(session.id)
    assert saved is not None
    assert saved.system_prompt == "Answer in French."
    assert saved.version == session.version + 1
    assert saved.updated_at == session.updated_at, "the list keeps its order"


def test_a_deleted_conversation_has_no_instructions_to_set(store: SessionStore) -> None:
    with pytest.raises(SessionNotFoundError):
        store.instructions.set("no-such-id", "Be brief.")
