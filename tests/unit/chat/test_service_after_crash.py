"""The service while the database's check after a crash runs (issue 20 item 4): it shows
the conversations, refuses to write in plain words (the message stays in the composer),
and mends what the crash left once the check passed (`ChatService.writes_resumed`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from app.core.models import MessageStatus, Role
from app.store.sessions import SessionStore
from app.store.transactions import WRITES_HELD_TITLE, hold_writes, release_writes
from tests.unit.chat.conftest import Chat


@pytest.fixture
def after_a_crash(start_chat: Callable[..., Chat]) -> Iterator[Chat]:
    """A service started read-only on a conversation whose reply a crash cut off."""
    first = start_chat()
    first.send("What is the capital of France?")
    session_id = first.service.current.state.session_id
    assert session_id is not None
    first.service.shutdown()
    # The crash: a reply left "streaming" with the text that had been saved.
    store = SessionStore.open(first.paths.database)
    store.append_message(
        session_id, Role.ASSISTANT, "Paris is", status=MessageStatus.STREAMING, model="m"
    )
    store.close()
    hold_writes(first.paths.database)
    try:
        chat = start_chat(writable=False)
        chat.run_until(lambda: chat.service.current.state.loaded)
        yield chat
    finally:
        release_writes(first.paths.database)


def _rows(chat: Chat) -> list[tuple[str, MessageStatus]]:
    session_id = chat.service.current.state.session_id
    assert session_id is not None
    store = SessionStore.open(chat.paths.database)
    try:
        return [(m.content, m.status) for m in store.live_messages(session_id)]
    finally:
        store.close()


def test_while_checking_it_reads_and_refuses_to_write_in_plain_words(after_a_crash: Chat) -> None:
    chat = after_a_crash
    before = _rows(chat)
    assert before[-1] == ("Paris is", MessageStatus.STREAMING)  # not mended yet
    assert not chat.events.named("notice_raised")

    assert chat.service.send("And of Italy?")  # shown as sending…
    chat.idle()
    # …and refused: it goes back to the composer, in plain words, nothing written.
    ((_sending_id, text),) = chat.events.named("message_not_sent")
    assert text == "And of Italy?"
    (error,) = chat.events.named("error_raised")[-1]
    assert error.title == WRITES_HELD_TITLE
    assert _rows(chat) == before


def test_once_checked_the_crash_is_mended_and_writing_comes_back(after_a_crash: Chat) -> None:
    chat = after_a_crash
    release_writes(chat.paths.database)
    chat.service.writes_resumed()

    chat.run_until(lambda: bool(chat.events.named("notice_raised")))
    assert chat.events.named("notice_raised")[0][0] == "Recovered"
    assert _rows(chat)[-1] == ("Paris is", MessageStatus.STOPPED)
    # The window is shown the conversation again: the reply no longer looks written.
    (_session, page, _earlier) = chat.events.named("conversation_opened")[-1]
    assert (page[-1].content, page[-1].status) == ("Paris is", MessageStatus.STOPPED)
    chat.idle()
    chat.send("And of Italy?")
    assert _rows(chat)[-2][0] == "And of Italy?"
