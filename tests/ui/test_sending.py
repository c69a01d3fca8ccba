"""In the window: the user's message shows "Sending…" until it is on disk, and comes
back to the composer when the disk does not take it, or when its reply cannot start
(issue 20 item 2)."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.chat.runner import Job
from app.core.models import Message
from app.store.transactions import hold_writes, release_writes
from app.ui.app import CairnSession
from app.ui.message_header import SENDING
from tests.helpers.window import send
from tests.ui.test_main_window import wait_idle


def header_state(cairn: CairnSession, message_id: int) -> str | None:
    widget = cairn.window.transcript.message_widget(message_id)
    assert widget is not None
    label = widget.header._state
    return label.text() if label is not None and label.isVisibleTo(widget) else None


def test_a_message_shows_sending_until_it_is_on_disk(qtbot: QtBot, cairn: CairnSession) -> None:
    send(qtbot, cairn, "Where is the meeting on Tuesday?")
    wait_idle(qtbot, cairn)
    seen: list[tuple[int, str | None, bool]] = []

    def shown(message: Message) -> None:  # after the transcript took it (connected later)
        widget = cairn.window.transcript.message_widget(message.id)
        assert widget is not None
        seen.append((message.id, header_state(cairn, message.id), widget.pinnable))

    cairn.controller.message_sending.connect(shown)
    send(qtbot, cairn, "And who brings the projector?")
    assert cairn.window.composer.text() == ""  # taken at once; shown once its request left
    qtbot.waitUntil(lambda: bool(seen))
    ((sending_id, state, pinnable),) = seen
    assert (state, pinnable) == (SENDING, False)  # no pin for a row not stored yet

    wait_idle(qtbot, cairn)
    widgets = cairn.window.transcript.message_widgets()
    question = widgets[-2]
    assert question.message.id > 0 and question.message.content == "And who brings the projector?"
    assert header_state(cairn, question.message.id) is None  # sent: nothing beside the time
    assert cairn.window.transcript.message_widget(sending_id) is None
    assert len(widgets) == 4


def test_a_message_the_disk_refuses_goes_back_to_the_composer(
    qtbot: QtBot, cairn: CairnSession
) -> None:
    send(qtbot, cairn, "Where is the meeting on Tuesday?")
    wait_idle(qtbot, cairn)
    hold_writes(cairn.database)
    try:
        send(qtbot, cairn, "And who brings the projector?")
        cairn.window.composer.editor.insertPlainText("typed meanwhile")
        wait_idle(qtbot, cairn)
    finally:
        release_writes(cairn.database)
    window = cairn.window
    assert window.composer.text() == "And who brings the projector?\n\ntyped meanwhile"
    assert len(window.transcript.message_widgets()) == 2  # never shown as sent
    assert window.banner.isVisible()


def test_a_message_whose_reply_cannot_start_stays_in_the_composer(
    qtbot: QtBot, cairn: CairnSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    send(qtbot, cairn, "Where is the meeting on Tuesday?")
    wait_idle(qtbot, cairn)
    runner = cairn.controller.service.runner
    start = runner.start

    def no_thread_for_replies(job: Job[Any]) -> Job[Any]:
        if job.name == "reply":
            raise RuntimeError("can't start new thread")
        return start(job)

    monkeypatch.setattr(runner, "start", no_thread_for_replies)
    sending: list[Message] = []
    cairn.controller.message_sending.connect(sending.append)
    send(qtbot, cairn, "And who brings the projector?")

    window = cairn.window
    assert window.composer.text() == "And who brings the projector?"  # nothing lost
    assert not sending  # never shown, so never shown twice when sent again
    assert len(window.transcript.message_widgets()) == 2
    assert window.banner.isVisible()
    assert window.banner.title_label.text() == "Couldn't send your message"
    assert "still in the box below" in window.banner.text_label.text()
    assert not cairn.controller.service.current.state.activity.busy

    monkeypatch.setattr(runner, "start", start)
    send(qtbot, cairn, window.composer.text())  # sent again: once, in its place
    wait_idle(qtbot, cairn)
    contents = [w.message.content for w in window.transcript.message_widgets()]
    assert contents[:3] == [
        "Where is the meeting on Tuesday?",
        contents[1],
        "And who brings the projector?",
    ]
    assert len(contents) == 4 and window.composer.text() == ""


def test_the_turn_shows_in_order_once_each_after_enter(qtbot: QtBot, cairn: CairnSession) -> None:
    """Issue 20: Enter only takes the text and starts the job; the rows, the Stop button and
    the sidebar follow once the request has left (or 50 ms passed), in order, once."""
    send(qtbot, cairn, "Where is the meeting on Tuesday?")
    wait_idle(qtbot, cairn)
    window, controller = cairn.window, cairn.controller
    told: list[str] = []
    controller.activity_changed.connect(lambda activity: told.append(activity.name))
    stop_shown: list[bool] = []  # whether Stop shows as the row does (not polled after)
    controller.message_sending.connect(
        lambda _message: (told.append("sending"), stop_shown.append(window.composer.streaming))
    )
    controller.message_stored.connect(lambda _id, _message: told.append("stored"))
    controller.message_added.connect(lambda _message: told.append("reply's row"))
    controller.session_changed.connect(lambda _session: told.append("sidebar"))

    send(qtbot, cairn, "And who brings the projector?")
    assert window.composer.text() == ""
    assert told == []  # the key press did nothing else
    qtbot.waitUntil(lambda: "sending" in told)
    assert stop_shown == [True]  # Stop, with the row
    wait_idle(qtbot, cairn)
    assert told[:5] == ["REPLYING", "sending", "sidebar", "stored", "reply's row"]
    assert told.count("sending") == told.count("stored") == told.count("reply's row") == 1
    # The conversation moves with the message, and is told again at the reply's end.
    assert told.count("sidebar") == 2 and told[-2:] == ["sidebar", "IDLE"]
    contents = [w.message.content for w in window.transcript.message_widgets()]
    assert len(contents) == 4 and contents[2] == "And who brings the projector?"
    assert all(w.message.id > 0 for w in window.transcript.message_widgets())


def test_the_composer_shrinks_with_the_turns_row(qtbot: QtBot, cairn: CairnSession) -> None:
    """Enter empties the box at once; it keeps its height until the turn's row shows,
    then fits one line again, with the row (one layout of the page, after the request
    left; issue 20). A first message (no row held) shrinks it at once."""
    editor = cairn.window.composer.editor
    one_line = editor.height()
    long_question = "Where is the meeting on Tuesday?\n" * 5
    editor.setPlainText(long_question)
    QApplication.processEvents()
    tall = editor.height()
    assert tall > one_line
    send_first = cairn.window.composer.send_requested
    send_first.emit(cairn.window.composer.text())  # a new conversation: shown at once
    assert editor.toPlainText() == "" and editor.height() == one_line
    wait_idle(qtbot, cairn)

    heights: list[tuple[int, bool]] = []

    def shown(message: Message) -> None:  # the row is in (connected after the window)
        heights.append(
            (editor.height(), cairn.window.transcript.message_widget(message.id) is not None)
        )

    cairn.controller.message_sending.connect(shown)
    editor.setPlainText(long_question)
    QApplication.processEvents()
    assert editor.height() == tall
    cairn.window.composer.send_requested.emit(cairn.window.composer.text())
    assert editor.toPlainText() == ""  # emptied at once
    assert editor.height() == tall  # kept until the row shows
    qtbot.waitUntil(lambda: bool(heights))
    assert heights == [(one_line, True)]
    wait_idle(qtbot, cairn)
    assert editor.height() == one_line


def test_typing_while_the_composer_keeps_its_height_fits_it(
    qtbot: QtBot, cairn: CairnSession
) -> None:
    editor = cairn.window.composer.editor
    one_line = editor.height()
    send(qtbot, cairn, "Where is the meeting on Tuesday?")
    wait_idle(qtbot, cairn)
    editor.setPlainText("Line\n" * 5)
    QApplication.processEvents()
    cairn.window.composer.send_requested.emit(cairn.window.composer.text())
    editor.insertPlainText("a")  # typed before the row showed
    assert editor.height() == one_line
    wait_idle(qtbot, cairn)
    assert editor.height() == one_line
