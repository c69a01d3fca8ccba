"""The "not saved yet" mark on a reply the disk did not take (issue 10 item 8): on the
reply itself, in words, while it is kept in memory; there again when the conversation
is opened again; gone once the reply is saved."""

from __future__ import annotations

from collections.abc import Callable

from pytestqt.qtbot import QtBot

from app.chat import unsaved
from app.core.models import MessageStatus, Role
from app.core.paths import AppPaths
from app.store.database import open_database
from app.store.sessions import SessionStore
from app.ui.app import CairnSession
from app.ui.quit_guard import QUIT_ANYWAY, QuitGuard, question_text
from app.ui.transcript_message import MessageWidget
from app.ui.unsaved_mark import UNSAVED_TEXT, UnsavedMark
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.unit.chat.test_unsaved import REPLY, REPLY_CHUNKS, SmallDisk
from tests.unit.chat.test_unsaved import small_disk as small_disk  # a fixture


def marks(cairn: CairnSession) -> list[tuple[int, str]]:
    """(message id, words) of every "not saved yet" mark shown in the transcript."""
    found = []
    for widget in cairn.window.transcript.message_widgets():
        for mark in widget.findChildren(UnsavedMark):
            if mark.isVisibleTo(widget):
                found.append((widget.message.id, mark.accessibleName()))
    return found


def last_reply(cairn: CairnSession) -> MessageWidget:
    widget = cairn.window.transcript.message_widgets()[-1]
    assert widget.message.role is Role.ASSISTANT
    return widget


def test_the_kept_reply_says_not_saved_yet_until_it_is(
    qtbot: QtBot,
    small_disk: SmallDisk,
    cairn: CairnSession,
    fake_server: FakeAnthropicServer,
) -> None:
    window, controller = cairn.window, cairn.controller
    fake_server.add_reply(REPLY, chunks=REPLY_CHUNKS, chunk_delay=0.15)
    window.composer.editor.setPlainText("Tell me a story")
    controller.service.send(window.composer.text())
    qtbot.waitUntil(
        lambda: bool(window.transcript.message_widgets()) and bool(last_reply(cairn).text),
        timeout=15_000,
    )
    small_disk.fill()
    qtbot.waitUntil(lambda: not controller.service.current.state.activity.busy, timeout=15_000)

    reply = last_reply(cairn)
    assert reply.text == REPLY
    assert marks(cairn) == [(reply.message.id, UNSAVED_TEXT)]
    assert window.banner.title_label.text() == unsaved.NOT_SAVED_TITLE

    # Away and back: the text shown is what arrived, with its mark, not the row on disk.
    session = controller.service.current.state.session
    assert session is not None
    controller.service.new_conversation()
    assert marks(cairn) == []
    controller.service.open_session(session.id)
    qtbot.waitUntil(lambda: bool(window.transcript.message_widgets()), timeout=15_000)
    reply = last_reply(cairn)
    assert (reply.text, reply.message.status) == (REPLY, MessageStatus.COMPLETE)
    assert not reply.body.is_typing()
    assert marks(cairn) == [(reply.message.id, UNSAVED_TEXT)]

    small_disk.free()
    controller.service.current.turns.retry()
    assert marks(cairn) == []
    assert last_reply(cairn).text == REPLY


def test_the_mark_goes_on_the_named_reply_only(
    qtbot: QtBot, open_window: Callable[[], CairnSession], with_key: str
) -> None:
    paths = AppPaths.from_environment()
    paths.ensure()
    store = SessionStore(open_database(paths.database).connection)
    session = store.create_session("Stories", "claude-sonnet-4-6")
    rows = [
        store.append_message(session.id, role, text)
        for role, text in [
            (Role.USER, "One?"),
            (Role.ASSISTANT, "One."),
            (Role.USER, "Two?"),
            (Role.ASSISTANT, "Two."),
        ]
    ]
    store.close()
    cairn = open_window()
    qtbot.waitUntil(lambda: len(cairn.window.transcript.message_widgets()) == 4, timeout=15_000)

    cairn.controller.unsaved_changed.emit(rows[3].id)
    assert marks(cairn) == [(rows[3].id, UNSAVED_TEXT)]
    marked = cairn.window.transcript.message_widget(rows[3].id)
    assert marked is not None
    shown = marked.findChild(UnsavedMark)
    assert shown is not None and "every few seconds" in shown.toolTip()
    cairn.controller.unsaved_changed.emit(rows[1].id)
    assert marks(cairn) == [(rows[1].id, UNSAVED_TEXT)]
    cairn.controller.unsaved_changed.emit(None)
    qtbot.waitUntil(
        lambda: (
            not any(w.findChildren(UnsavedMark) for w in cairn.window.transcript.message_widgets())
        )
    )
    assert marks(cairn) == []


def reply_only_in_memory(
    qtbot: QtBot, small_disk: SmallDisk, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> tuple[CairnSession, QuitGuard]:
    """A reply that arrived while the disk filled up, kept in memory only; the window's guard."""
    window, controller = cairn.window, cairn.controller
    fake_server.add_reply(REPLY, chunks=REPLY_CHUNKS, chunk_delay=0.15)
    controller.service.send("Tell me a story")
    qtbot.waitUntil(
        lambda: bool(window.transcript.message_widgets()) and bool(last_reply(cairn).text),
        timeout=15_000,
    )
    small_disk.fill()
    qtbot.waitUntil(lambda: not controller.service.current.state.activity.busy, timeout=15_000)
    guard = window.findChild(QuitGuard)
    assert guard is not None
    return cairn, guard


def test_closing_with_a_reply_only_in_memory_asks_first(
    qtbot: QtBot,
    small_disk: SmallDisk,
    open_window: Callable[[], CairnSession],
    with_key: str,
    fake_server: FakeAnthropicServer,
) -> None:
    cairn, guard = reply_only_in_memory(qtbot, small_disk, open_window(), fake_server)
    window, controller = cairn.window, cairn.controller

    # The disk is still full: closing asks, and "keep open" keeps everything.
    window.close()
    question = guard.question
    assert question is not None and question.isVisible()
    assert window.isVisible()
    assert question.text() == question_text(1)
    question.escapeButton().click()  # type: ignore[union-attr]
    assert guard.question is None and window.isVisible()
    assert marks(cairn) == [(last_reply(cairn).message.id, UNSAVED_TEXT)]

    # With room again, the last try saves it, and the window closes without a question.
    small_disk.free()
    window.close()
    assert guard.question is None
    assert not window.isVisible()
    session = controller.service.current.state.session
    assert session is not None
    store = SessionStore(open_database(AppPaths.from_environment().database).connection)
    assert store.messages(session.id)[-1].content == REPLY
    store.close()


def test_quit_anyway_closes(
    qtbot: QtBot,
    small_disk: SmallDisk,
    open_window: Callable[[], CairnSession],
    with_key: str,
    fake_server: FakeAnthropicServer,
) -> None:
    cairn, guard = reply_only_in_memory(qtbot, small_disk, open_window(), fake_server)
    window = cairn.window
    window.close()
    question = guard.question
    assert question is not None
    lose = next(b for b in question.buttons() if b.text() == QUIT_ANYWAY)
    lose.click()
    assert not window.isVisible()
