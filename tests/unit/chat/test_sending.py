"""The user's message is committed off the loop's thread (issue 20 item 2): shown as
sending until it is on disk, never shown as sent when it is not, and its words go back
to the composer when the disk does not take it."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from typing import Any

import pytest

from app.core.models import Role
from app.store import SessionStore
from app.store.transactions import WRITES_HELD_TITLE, hold_writes, release_writes
from tests.unit.chat.conftest import Chat


def test_a_message_is_stored_by_the_replys_job_and_shown_as_sending_until_then(
    start_chat: Callable[..., Chat],
) -> None:
    chat = start_chat()
    chat.send("Where is the meeting on Tuesday?")  # the first: stored at once, with its title
    appends = chat.store.appends
    chat.events.clear()

    assert chat.service.send("And who brings the projector?")
    # Told at once, with a stand-in id; the loop's thread wrote nothing.
    ((sending,),) = chat.events.named("message_sending")
    assert sending.id < 0 and sending.content == "And who brings the projector?"
    assert chat.store.appends == appends
    assert not chat.events.named("message_stored")

    chat.idle()
    ((sending_id, stored),) = chat.events.named("message_stored")
    assert sending_id == sending.id
    assert stored.id > 0 and (stored.role, stored.content) == (Role.USER, sending.content)
    names = [name for name, _ in chat.events.seen]
    # On disk before its reply starts: the reply never answers a message not saved.
    assert names.index("message_stored") < names.index("message_added")
    assert chat.service.current.state.tail.find(stored.id) is not None
    assert [m.content for m in chat.stored()][-2] == sending.content


def test_a_message_the_disk_does_not_take_goes_back_to_the_composer(
    start_chat: Callable[..., Chat],
) -> None:
    chat = start_chat()
    chat.send("Where is the meeting on Tuesday?")
    before = chat.stored()
    chat.events.clear()
    hold_writes(chat.paths.database)  # the disk refuses, as a full one would
    try:
        assert chat.service.send("And who brings the projector?")
        chat.idle()
    finally:
        release_writes(chat.paths.database)

    ((sending,),) = chat.events.named("message_sending")
    assert chat.events.named("message_not_sent") == [(sending.id, sending.content)]
    assert not chat.events.named("message_stored")
    assert not chat.events.named("message_added")  # no reply to a message not saved
    (error,) = chat.events.named("error_raised")[-1]
    assert error.title == WRITES_HELD_TITLE
    assert chat.stored() == before
    assert chat.service.current.state.tail.find(sending.id) is None


def test_the_replys_row_is_told_once_before_its_text_and_after_the_question(
    start_chat: Callable[..., Chat],
) -> None:
    # The row is told when its request is built (the loop's thread builds it while the
    # request travels), never after its text.
    chat = start_chat()
    chat.send("Where is the meeting on Tuesday?")
    chat.events.clear()

    assert chat.service.send("And who brings the projector?")
    chat.idle()

    names = [name for name, _ in chat.events.seen]
    ((placeholder,),) = chat.events.named("message_added")
    assert placeholder.role is Role.ASSISTANT
    assert names.index("message_sending") < names.index("message_stored")
    assert names.index("message_stored") < names.index("message_added")
    # Its text, when shown before it ends (at most ~30 times a second), comes after it.
    added = names.index("message_added")
    assert all(i > added for i, name in enumerate(names) if name == "message_text_changed")


def test_replies_one_after_another_use_the_store_the_first_opened(
    start_chat: Callable[..., Chat], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reply's thread is kept for the next reply, with its store (issue 20): one
    connection opened for three replies, closed when the service shuts down."""
    chat = start_chat()
    opened: list[SessionStore] = []
    open_store = SessionStore.open.__func__  # type: ignore[attr-defined]

    def counting(cls: type[SessionStore], *args: Any, **kwargs: Any) -> SessionStore:
        store: SessionStore = open_store(cls, *args, **kwargs)
        if threading.current_thread().name == "cairn-reply":
            opened.append(store)
        return store

    monkeypatch.setattr(SessionStore, "open", classmethod(counting))
    for question in ("Where is the meeting?", "Who brings the projector?", "And the cake?"):
        chat.send(question)
    assert len(opened) == 1
    assert [m.content for m in chat.stored() if m.role is Role.USER][-3:] == [
        "Where is the meeting?",
        "Who brings the projector?",
        "And the cake?",
    ]
    chat.service.shutdown()
    with pytest.raises(sqlite3.ProgrammingError, match="closed"):  # closed with its thread
        assert opened[0].idle
