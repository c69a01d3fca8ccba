"""The user's message is committed off the loop's thread (issue 20 item 2): shown as
sending until it is on disk, never shown as sent when it is not, and its words go back
to the composer when the disk does not take it."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from typing import Any

import pytest

from app.chat import turns
from app.chat.events import Activity
from app.chat.reply import ReplyJob
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
    # The loop's thread wrote nothing; the turn shows once its request left (or 50 ms
    # passed), with a stand-in id until the message is on disk.
    assert chat.store.appends == appends
    assert chat.service.current.state.activity is Activity.REPLYING  # a second Enter waits
    assert not chat.events.named("message_sending")
    chat.run_until(lambda: bool(chat.events.named("message_sending")))
    ((sending,),) = chat.events.named("message_sending")
    assert sending.id < 0 and sending.content == "And who brings the projector?"

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


# A turn as the front end is told it: busy, the message sending, then stored, the reply,
# idle again — once each, in this order.
A_TURN_SHOWN = [
    "activity_changed",
    "message_sending",
    "message_stored",
    "message_added",
    "activity_changed",
]


def shown(chat: Chat) -> list[str]:
    """The turn's events in the order told (its activity, its rows, its text)."""
    turn = ("activity_changed", "message_sending", "message_stored", "message_added")
    return [name for name, _ in chat.events.seen if name in turn]


def test_the_turn_shows_once_its_request_has_left_and_what_came_before_waits(
    start_chat: Callable[..., Chat], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 20: the window does nothing until the request has left. The job tells the
    question stored and the reply's row before its POST: they wait, and come after the
    row sending, in order, once each."""
    monkeypatch.setattr(turns, "SHOW_SENDING_WITHIN_SECONDS", 60.0)  # no frame: the POST
    chat = start_chat()
    chat.send("Where is the meeting on Tuesday?")
    chat.events.clear()
    chat.server.clear_requests()
    pieces = [f"part{i} " for i in range(12)]
    chat.server.add_reply("".join(pieces), chunks=pieces, chunk_delay=0.05)

    assert chat.service.send("And who brings the projector?")
    chat.run_until(lambda: bool(chat.events.named("message_sending")))
    assert chat.server.wait_for_requests(1)  # it left before anything was shown
    assert chat.service.current.state.activity is Activity.REPLYING  # still streaming

    chat.idle()
    assert shown(chat) == A_TURN_SHOWN
    assert [activity for (activity,) in chat.events.named("activity_changed")] == [
        Activity.REPLYING,
        Activity.IDLE,
    ]
    ((sending,),) = chat.events.named("message_sending")
    ((sending_id, stored),) = chat.events.named("message_stored")
    assert sending_id == sending.id and stored.content == sending.content


def test_a_slow_request_shows_the_turn_after_50_ms(
    start_chat: Callable[..., Chat], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A request slow to build (big files, a cold archive) never leaves the user looking at
    nothing: the message shows as sending after 50 ms, the rest when it comes."""
    chat = start_chat()
    chat.send("Where is the meeting on Tuesday?")
    chat.events.clear()
    chat.server.clear_requests()
    building = threading.Event()
    go_on = threading.Event()
    build = ReplyJob._build

    def slow_build(job: ReplyJob, *args: Any, **kwargs: Any) -> Any:
        building.set()
        go_on.wait(10)
        return build(job, *args, **kwargs)

    monkeypatch.setattr(ReplyJob, "_build", slow_build)
    assert chat.service.send("And who brings the projector?")
    try:
        chat.run_until(lambda: bool(chat.events.named("message_sending")))
        assert building.is_set() and not chat.server.requests  # shown before it left
        assert shown(chat) == ["activity_changed", "message_sending"]
    finally:
        go_on.set()
    chat.idle()
    assert shown(chat) == A_TURN_SHOWN
    assert [m.content for m in chat.stored()][-2] == "And who brings the projector?"


def test_stop_before_the_request_left_says_so_after_the_row(
    start_chat: Callable[..., Chat],
) -> None:
    """Esc pressed within the frame: the row shows, then "Stopping…", and the turn ends;
    the message is kept, shown once."""
    chat = start_chat()
    chat.send("Where is the meeting on Tuesday?")
    chat.events.clear()
    assert chat.service.send("And who brings the projector?")
    chat.service.current.turns.stop()
    assert not chat.events.named("status_changed")  # not before its row
    chat.idle()
    names = [name for name, _ in chat.events.seen]
    assert names.count("message_sending") == 1
    stopping = [i for i, (name, args) in enumerate(chat.events.seen) if args == ("Stopping…",)]
    assert stopping and stopping[0] > names.index("message_sending")
    assert [m.content for m in chat.stored() if m.role is Role.USER][-1] == (
        "And who brings the projector?"
    )
