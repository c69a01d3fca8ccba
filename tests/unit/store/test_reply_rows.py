"""ReplyRows: a declined exchange (the reply and the question turn it answered) and
an empty failed reply deleted, never one with text."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.live_tail import LiveTail
from app.core.models import MessageStatus, Role
from app.store import SessionStore, open_database
from app.store.errors import MessageNotFoundError

MODEL = "claude-sonnet-4-5"


@pytest.fixture
def store(database: Path) -> Iterator[SessionStore]:
    opened = open_database(database)
    store = SessionStore(opened.connection, database=opened.path)
    yield store
    store.close()


def statuses(store: SessionStore, session_id: str) -> list[tuple[str, MessageStatus]]:
    return [(m.content, m.status) for m in store.messages(session_id)]


def test_decline_marks_the_reply_and_the_whole_question_turn(store: SessionStore) -> None:
    session = store.create_session("t", MODEL)
    add = store.append_message
    add(session.id, Role.USER, "Hi")
    add(session.id, Role.ASSISTANT, "Hello")
    add(session.id, Role.USER, "First part")
    add(session.id, Role.ASSISTANT, "", status=MessageStatus.ERROR)  # failed, not seen
    add(session.id, Role.USER, "Second part")
    reply = add(session.id, Role.ASSISTANT, "I ca", status=MessageStatus.STREAMING)
    version = store.get_session(session.id)
    assert version is not None

    changed = store.replies.decline(reply.id)

    declined = MessageStatus.DECLINED
    assert statuses(store, session.id) == [
        ("Hi", MessageStatus.COMPLETE),
        ("Hello", MessageStatus.COMPLETE),
        ("First part", declined),
        ("", MessageStatus.ERROR),
        ("Second part", declined),
        ("I ca", declined),
    ]
    assert len(changed) == 3 and changed[-1] == reply.id
    after = store.get_session(session.id)
    assert after is not None and after.version > version.version
    tail: LiveTail = store.live_tail(session.id)
    assert [entry.sendable for entry in tail.entries] == [True, True, False, False, False, False]


def test_decline_of_a_missing_reply_is_a_bug(store: SessionStore) -> None:
    with pytest.raises(MessageNotFoundError):
        store.replies.decline(12345)


def test_only_an_empty_unfinished_or_failed_reply_is_discarded(store: SessionStore) -> None:
    session = store.create_session("t", MODEL)
    store.append_message(session.id, Role.USER, "Hi")
    empty = store.append_message(session.id, Role.ASSISTANT, " \n", status=MessageStatus.ERROR)
    assert store.replies.discard_empty(empty.id)
    streaming = store.append_message(session.id, Role.ASSISTANT, "", status=MessageStatus.STREAMING)
    assert store.replies.discard_empty(streaming.id)
    with_text = store.append_message(session.id, Role.ASSISTANT, "Hal", status=MessageStatus.ERROR)
    complete = store.append_message(session.id, Role.ASSISTANT, "")
    assert not store.replies.discard_empty(with_text.id)
    assert not store.replies.discard_empty(complete.id)
    assert [m.id for m in store.messages(session.id)][1:] == [with_text.id, complete.id]
    assert store.count_messages(session.id) == 3
