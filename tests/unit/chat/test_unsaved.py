"""The disk fills while a reply streams (issue 10 item 8), on a real small tmpfs.

The reply's text stays on screen and in memory, its row is never left "streaming"
on screen and is marked "not saved yet" (also when the conversation is opened
again), and once space returns (Retry, Continue, the next send, or the periodic
attempt) the text is saved before anything else; after a restart the start-up
repair leaves a reply to continue, or the question to ask again. Needs root to
mount a tmpfs: skipped with the reason otherwise.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from app.chat import unsaved
from app.core.errors import StorageError
from app.core.models import Message, MessageStatus, Role
from tests.fakes.anthropic_server import FakeAnthropicServer, text_of_content
from tests.unit.chat.conftest import Chat

REPLY_CHUNKS = tuple(f"Piece {n} of a reply that arrives slowly. " for n in range(12))
REPLY = "".join(REPLY_CHUNKS)


class SmallDisk:
    """A tmpfs of a few megabytes that a test fills and frees."""

    def __init__(self, mount: Path) -> None:
        self.mount = mount
        self._filler = mount / "filler.bin"

    def fill(self) -> None:
        """Write zeros until the disk refuses another byte."""
        block = b"\0" * 65536
        with self._filler.open("ab", buffering=0) as filler:
            try:
                while filler.write(block):
                    pass
            except OSError as error:
                assert error.errno == errno.ENOSPC, error

    def free(self) -> None:
        self._filler.unlink()


@pytest.fixture
def small_disk(
    tmp_path: Path, cairn_home: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[SmallDisk]:
    """CAIRN_HOME on a fresh 64 MB tmpfs (requested before `start_chat`, so the
    service is shut down before it is unmounted)."""
    if not sys.platform.startswith("linux") or os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs to fill needs Linux and root")
    mount = tmp_path / "small-disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
        check=False,
        encoding="utf-8",
    )
    if done.returncode != 0:
        pytest.skip(f"could not mount a tmpfs: {done.stderr.strip()}")
    monkeypatch.setenv("CAIRN_HOME", str(mount / "cairn-home"))
    try:
        yield SmallDisk(mount)
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _stream_into_full_disk(
    chat: Chat,
    disk: SmallDisk,
    question: str = "Tell me a story",
    *,
    after_a_save: bool = False,
    stop_reason: str = "end_turn",
) -> None:
    """Send `question`; fill the disk once the reply's row is on screen, before a save
    while streaming (or, with `after_a_save`, once some of its text is on disk); wait
    until the reply ends."""
    chat.server.add_reply(REPLY, chunks=REPLY_CHUNKS, chunk_delay=0.15, stop_reason=stop_reason)
    assert chat.service.send(question)
    if after_a_save:
        chat.run_until(lambda: any(row.content for row in _reply_rows(chat)))
    else:
        # Not its first text: while Claude thinks, nothing is told, and the thinking can
        # outlast the first save while streaming.
        chat.run_until(
            lambda: any(
                message.role is Role.ASSISTANT for (message,) in chat.events.named("message_added")
            )
        )
    disk.fill()
    chat.idle()


def _shown_reply(chat: Chat) -> Message:
    updated = [message for (message,) in chat.events.named("message_updated")]
    assert updated, "the reply's end was never shown"
    return updated[-1]


def _errors(chat: Chat) -> list[StorageError]:
    return [
        error for (error,) in chat.events.named("error_raised") if isinstance(error, StorageError)
    ]


def _reply_rows(chat: Chat) -> list[Message]:
    return [message for message in chat.stored() if message.role is Role.ASSISTANT]


def test_disk_full_mid_stream_keeps_the_reply_and_retry_saves_it(
    small_disk: SmallDisk, start_chat: Callable[..., Chat], fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    _stream_into_full_disk(chat, small_disk)

    shown = _shown_reply(chat)
    assert shown.content == REPLY
    assert shown.status is MessageStatus.COMPLETE  # on screen the row is not left streaming
    (error,) = _errors(chat)
    assert error.title == unsaved.NOT_SAVED_TITLE
    assert "disk is full" in error.message and "as soon as it can" in error.message
    assert error.retryable
    conversation = chat.service.current
    assert conversation.unsaved.kept is not None
    (row,) = _reply_rows(chat)
    assert REPLY.startswith(row.content) and row.content != REPLY  # the disk has less

    # Retry while the disk is still full: still kept, said again, nothing asked.
    asked = len(fake_server.requests_to("/v1/messages"))
    chat.events.clear()
    chat.service.current.turns.retry()
    assert [e.title for e in _errors(chat)] == [unsaved.NOT_SAVED_TITLE]
    assert conversation.unsaved.kept is not None

    small_disk.free()
    chat.events.clear()
    chat.service.current.turns.retry()
    chat.idle()
    (row,) = _reply_rows(chat)
    assert (row.content, row.status) == (REPLY, MessageStatus.COMPLETE)
    assert conversation.unsaved.kept is None
    assert _shown_reply(chat).status is MessageStatus.COMPLETE
    assert not _errors(chat)
    # The reply had ended: Retry only saved it, it did not ask Claude again.
    assert len(fake_server.requests_to("/v1/messages")) == asked


def test_next_send_saves_the_kept_reply_first_and_sends_it(
    small_disk: SmallDisk, start_chat: Callable[..., Chat], fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    _stream_into_full_disk(chat, small_disk)

    # While the disk is full the next message stays in the composer.
    chat.events.clear()
    assert not chat.service.send("And then?")
    assert [e.title for e in _errors(chat)] == [unsaved.NOT_SAVED_TITLE]

    small_disk.free()
    fake_server.add_reply("The end.")
    chat.send("And then?")
    stored = chat.stored()
    assert [(m.role, m.content, m.status) for m in stored] == [
        (Role.USER, "Tell me a story", MessageStatus.COMPLETE),
        (Role.ASSISTANT, REPLY, MessageStatus.COMPLETE),
        (Role.USER, "And then?", MessageStatus.COMPLETE),
        (Role.ASSISTANT, "The end.", MessageStatus.COMPLETE),
    ]
    sent = fake_server.turns()[-1].body["messages"]
    assert REPLY.strip() in text_of_content(sent[1]["content"])


def test_the_kept_reply_is_saved_on_its_own_when_space_returns(
    small_disk: SmallDisk,
    start_chat: Callable[..., Chat],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(unsaved, "SAVE_AGAIN_SECONDS", 0.2)
    chat = start_chat()
    _stream_into_full_disk(chat, small_disk)
    conversation = chat.service.current
    assert conversation.unsaved.kept is not None

    small_disk.free()
    chat.run_until(lambda: conversation.unsaved.kept is None)
    (row,) = _reply_rows(chat)
    assert (row.content, row.status) == (REPLY, MessageStatus.COMPLETE)
    # The "not saved yet" banner is replaced: the screen does not go on saying so.
    assert chat.events.named("notice_raised")[-1] == (unsaved.SAVED_TITLE, unsaved.SAVED_TEXT)


def test_a_reply_never_saved_is_stopped_at_the_next_start(
    small_disk: SmallDisk, start_chat: Callable[..., Chat]
) -> None:
    chat = start_chat()
    _stream_into_full_disk(chat, small_disk, after_a_save=True)
    assert chat.service.current.unsaved.kept is not None
    chat.service.shutdown()  # Cairn quits with the disk still full

    small_disk.free()
    restarted = start_chat()
    restarted.run_until(lambda: restarted.service.current.state.loaded)
    (row,) = _reply_rows(restarted)
    assert row.status is MessageStatus.STOPPED  # not "streaming" for ever
    assert row.content and REPLY.startswith(row.content)  # what a save while streaming wrote
    assert restarted.events.named("notice_raised")[0][0] == "Recovered"
    # An interrupted reply: Continue goes on from it.
    assert restarted.service.current.endings.can_continue(row)


def test_a_reply_with_nothing_saved_leaves_its_question_to_retry_after_a_restart(
    small_disk: SmallDisk, start_chat: Callable[..., Chat], fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    _stream_into_full_disk(chat, small_disk)  # full before the first save while streaming
    assert [row.content for row in _reply_rows(chat)] == [""]
    chat.service.shutdown()

    small_disk.free()
    restarted = start_chat()
    restarted.run_until(lambda: restarted.service.current.state.loaded)
    # No empty "stopped" reply: the question is the last message, and Retry asks again.
    assert [(m.role, m.content) for m in restarted.stored()] == [(Role.USER, "Tell me a story")]
    assert restarted.events.named("notice_raised") == []
    fake_server.add_reply("Once upon a time.")
    restarted.service.current.turns.retry()
    restarted.idle()
    assert [(m.role, m.content, m.status) for m in restarted.stored()] == [
        (Role.USER, "Tell me a story", MessageStatus.COMPLETE),
        (Role.ASSISTANT, "Once upon a time.", MessageStatus.COMPLETE),
    ]


def test_the_kept_reply_is_marked_not_saved_until_it_is(
    small_disk: SmallDisk, start_chat: Callable[..., Chat]
) -> None:
    chat = start_chat()
    _stream_into_full_disk(chat, small_disk)
    reply_id = _shown_reply(chat).id
    # Told once the reply's end is shown, and not before.
    names = [name for name, _ in chat.events.seen]
    assert names.index("unsaved_changed") > names.index("message_updated")
    assert chat.events.named("unsaved_changed") == [(reply_id,)]

    small_disk.free()
    chat.events.clear()
    chat.service.current.turns.retry()
    assert chat.events.named("unsaved_changed") == [(None,)]
    assert _shown_reply(chat).content == REPLY


def test_opening_the_conversation_again_shows_the_kept_reply_not_its_row(
    small_disk: SmallDisk, start_chat: Callable[..., Chat]
) -> None:
    chat = start_chat()
    _stream_into_full_disk(chat, small_disk)
    conversation = chat.service.current
    session_id, reply_id = conversation.state.session_id, _shown_reply(chat).id
    assert session_id is not None

    chat.service.new_conversation()  # away (a new conversation), and back
    chat.events.clear()
    chat.service.open_session(session_id)

    assert chat.service.current is conversation, "it stayed open with its kept reply"
    ((_session, page, _earlier),) = chat.events.named("conversation_opened")
    shown = page[-1]
    assert (shown.id, shown.content, shown.status) == (reply_id, REPLY, MessageStatus.COMPLETE)
    assert chat.events.named("unsaved_changed") == [(reply_id,)]
    (row,) = _reply_rows(chat)
    assert row.status is MessageStatus.STREAMING and row.content != REPLY  # the disk has less
    # The gauge counts the text shown, also once the tail is read again from disk (as
    # the warm-up does when it has counted older messages).
    shown_tokens = chat.service.counter.count(REPLY)
    entry = conversation.state.tail.find(reply_id)
    assert entry is not None and entry.tokens == shown_tokens
    conversation.opening.load()
    chat.idle()
    entry = conversation.state.tail.find(reply_id)
    assert entry is not None and entry.tokens == shown_tokens and entry.sendable

    small_disk.free()
    chat.events.clear()
    chat.service.current.turns.retry()
    (row,) = _reply_rows(chat)
    assert (row.content, row.status) == (REPLY, MessageStatus.COMPLETE)
    assert chat.events.named("unsaved_changed") == [(None,)]


def test_a_kept_reply_saved_off_screen_opens_saved(
    small_disk: SmallDisk,
    start_chat: Callable[..., Chat],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(unsaved, "SAVE_AGAIN_SECONDS", 0.2)
    chat = start_chat()
    _stream_into_full_disk(chat, small_disk)
    conversation = chat.service.current
    assert conversation.state.session_id is not None
    chat.service.new_conversation()
    chat.events.clear()

    small_disk.free()
    chat.run_until(lambda: conversation.unsaved.kept is None)
    assert chat.events.named("unsaved_changed") == []  # off screen: nobody is told
    chat.service.open_session(conversation.state.session_id)
    ((_session, page, _earlier),) = chat.events.named("conversation_opened")
    assert (page[-1].content, page[-1].status) == (REPLY, MessageStatus.COMPLETE)
    assert chat.events.named("unsaved_changed") == []


def test_continue_saves_the_kept_reply_first_and_goes_on_from_it(
    small_disk: SmallDisk, start_chat: Callable[..., Chat], fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    _stream_into_full_disk(chat, small_disk, stop_reason="max_tokens")
    cut = _shown_reply(chat)
    assert (cut.content, cut.status) == (REPLY, MessageStatus.CUT_OFF)
    asked = len(fake_server.requests_to("/v1/messages"))

    # Still full: Continue says why and asks nothing (it would go on from the row on disk).
    chat.events.clear()
    assert not chat.service.current.endings.continue_reply(cut)
    assert [e.title for e in _errors(chat)] == [unsaved.NOT_SAVED_TITLE]
    assert len(fake_server.requests_to("/v1/messages")) == asked

    small_disk.free()
    fake_server.add_reply("The end.")
    assert chat.service.current.endings.continue_reply(cut)
    chat.idle()
    (row,) = _reply_rows(chat)
    assert (row.content, row.status) == (REPLY + "The end.", MessageStatus.COMPLETE)
    sent = fake_server.turns()[-1].body["messages"]
    assert text_of_content(sent[1]["content"]).strip() == REPLY.strip()
