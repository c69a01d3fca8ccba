"""The disk fills while a reply streams (issue 10 item 8), on a real small tmpfs.

The reply's text stays on screen and in memory, its row is never left "streaming"
on screen, and once space returns (Retry, the next send, or the periodic attempt)
the text is saved before anything else; after a restart the start-up repair
clears the row. Needs root to mount a tmpfs: skipped with the reason otherwise.
"""

from __future__ import annotations

import errno
import os
import subprocess
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
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs to fill needs root")
    mount = tmp_path / "small-disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"could not mount a tmpfs: {done.stderr.strip()}")
    monkeypatch.setenv("CAIRN_HOME", str(mount / "cairn-home"))
    try:
        yield SmallDisk(mount)
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _stream_into_full_disk(chat: Chat, disk: SmallDisk, question: str = "Tell me a story") -> None:
    """Send `question`; fill the disk once the reply's first text is on screen; wait
    until the reply ends."""
    chat.server.add_reply(REPLY, chunks=REPLY_CHUNKS, chunk_delay=0.15)
    assert chat.service.send(question)
    chat.run_until(lambda: bool(chat.events.named("message_text_changed")))
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
    chat.service.retry()
    assert [e.title for e in _errors(chat)] == [unsaved.NOT_SAVED_TITLE]
    assert conversation.unsaved.kept is not None

    small_disk.free()
    chat.events.clear()
    chat.service.retry()
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
    sent = fake_server.requests_to("/v1/messages")[-1].body["messages"]
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
    _stream_into_full_disk(chat, small_disk)
    assert chat.service.current.unsaved.kept is not None
    chat.service.shutdown()  # Cairn quits with the disk still full

    small_disk.free()
    restarted = start_chat()
    restarted.run_until(lambda: restarted.service.current.loaded)
    (row,) = _reply_rows(restarted)
    assert row.status is MessageStatus.STOPPED
    assert REPLY.startswith(row.content)  # what the last save while streaming wrote
