"""Message actions as a user reaches them: the menu on a right-click (on the text too),
Copy as Markdown or plain text, Regenerate by button and Ctrl+R, Edit by button and by
Up in an empty composer (Esc cancels), the "‹ 2 / 3 ›" arrows, and versions after a
restart; the requests in the fake server's log hold only the shown version (issue 11)."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QContextMenuEvent, QEnterEvent, QGuiApplication
from PySide6.QtWidgets import QApplication, QMenu
from pytestqt.qtbot import QtBot

from app.ui.app import CairnSession
from app.ui.message_actions import COPY_MARKDOWN_ACTION, EDITING_NOTE
from app.ui.message_bar import COPY_ACTION, MessageBar
from app.ui.transcript_blocks import MarkdownView
from app.ui.transcript_message import MessageWidget
from tests.fakes.anthropic_server import FakeAnthropicServer


def send(qtbot: QtBot, cairn: CairnSession, text: str) -> None:
    cairn.window.composer.editor.setPlainText(text)
    qtbot.keyClick(cairn.window.composer.editor, Qt.Key.Key_Return)
    qtbot.waitUntil(
        lambda: not cairn.controller.service.current.state.activity.busy, timeout=15_000
    )


def wait_idle(qtbot: QtBot, cairn: CairnSession) -> None:
    qtbot.waitUntil(
        lambda: not cairn.controller.service.current.state.activity.busy, timeout=15_000
    )


def widgets(cairn: CairnSession) -> list[MessageWidget]:
    return list(cairn.window.transcript.message_widgets())


def bar(widget: MessageWidget) -> MessageBar:
    (found,) = widget.findChildren(MessageBar)
    return found


def texts(cairn: CairnSession) -> list[str]:
    return [w.text for w in widgets(cairn)]


def last_messages(fake_server: FakeAnthropicServer) -> list[object]:
    messages = fake_server.turns()[-1].body["messages"]
    assert isinstance(messages, list)
    return messages


def chat(qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer) -> None:
    fake_server.add_reply("**Lisbon** is lovely.")
    send(qtbot, cairn, "Where should I go?")


def chat_and_regenerate(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    """`chat`, then Ctrl+R: the reply written again ("Porto, then."), beside the first."""
    chat(qtbot, cairn, fake_server)
    fake_server.add_reply("Porto, then.")
    qtbot.keyClick(cairn.window, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: texts(cairn)[-1] == "Porto, then.", timeout=15_000)
    wait_idle(qtbot, cairn)


def open_menu(qtbot: QtBot, target: MessageWidget, on_text: bool = False) -> QMenu:
    """Right-click the message (or its text) and return the menu that opened."""
    where = target
    if on_text:
        (where,) = [b for b in target.body.blocks() if isinstance(b, MarkdownView)] or [target]
        where = where.viewport() if isinstance(where, MarkdownView) else where
    event = QContextMenuEvent(
        QContextMenuEvent.Reason.Mouse, QPoint(5, 5), where.mapToGlobal(QPoint(5, 5))
    )
    QApplication.sendEvent(where, event)
    qtbot.waitUntil(lambda: isinstance(QApplication.activePopupWidget(), QMenu))
    menu = QApplication.activePopupWidget()
    assert isinstance(menu, QMenu)
    return menu


def pick(menu: QMenu, text: str) -> None:
    (action,) = [a for a in menu.actions() if a.text() == text]
    assert action.isEnabled()
    action.trigger()
    menu.close()


# The offscreen platform cannot raise a popup or grab the keyboard for it; harmless here.
@pytest.mark.qt_log_ignore(
    "This plugin does not support raise", "This plugin does not support grabbing"
)
def test_right_click_on_claudes_text_offers_the_message_actions(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    chat(qtbot, cairn, fake_server)
    reply = widgets(cairn)[-1]

    menu = open_menu(qtbot, reply, on_text=True)
    names = [a.text() for a in menu.actions() if a.text()]
    assert names[:4] == [COPY_ACTION, COPY_MARKDOWN_ACTION, "Regenerate reply", "Pin message"]
    pick(menu, COPY_ACTION)
    # Rich in a mail or a document, clean in a plain editor: no "**" either way.
    mime = QGuiApplication.clipboard().mimeData()
    assert mime is not None
    assert mime.text() == "Lisbon is lovely."
    assert re.search(r"font-weight:\s*(700|bold|600)[^>]*>Lisbon<", mime.html()), mime.html()
    assert "**" not in mime.html()
    assert bar(reply).copy.text() == "Copied" and bar(reply).copy.isVisible()

    pick(open_menu(qtbot, reply), COPY_MARKDOWN_ACTION)
    assert QGuiApplication.clipboard().text() == "**Lisbon** is lovely."

    question_menu = open_menu(qtbot, widgets(cairn)[0])
    assert "Edit message" in [a.text() for a in question_menu.actions()]
    question_menu.close()


def test_regenerate_by_ctrl_r_keeps_both_versions_with_arrows(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    chat_and_regenerate(qtbot, cairn, fake_server)

    assert len(widgets(cairn)) == 2
    newest = bar(widgets(cairn)[-1])
    assert newest.isVisible() and newest.versions.text() == "2 / 2"
    assert newest.versions.accessibleName() == "Version 2 of 2"
    assert newest.previous.isEnabled() and not newest.next.isEnabled()

    qtbot.mouseClick(newest.previous, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: texts(cairn)[-1] == "**Lisbon** is lovely.")
    assert bar(widgets(cairn)[-1]).versions.text() == "1 / 2"

    fake_server.add_reply("Glad to help.")
    send(qtbot, cairn, "Thanks")
    assert last_messages(fake_server)[1:] == [
        {"role": "assistant", "content": "**Lisbon** is lovely."},
        {"role": "user", "content": "Thanks"},
    ]


def test_up_in_an_empty_composer_edits_the_last_message_and_esc_cancels(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    chat(qtbot, cairn, fake_server)
    window, editor = cairn.window, cairn.window.composer.editor
    editor.setPlainText("")
    editor.setFocus()

    qtbot.keyClick(editor, Qt.Key.Key_Up)
    assert editor.toPlainText() == "Where should I go?"
    assert window.message_actions.edit_bar.isVisible()
    assert window.message_actions.edit_bar.note.text() == EDITING_NOTE
    assert window.composer.button.text() == "Resend"
    assert bar(widgets(cairn)[0]).editing_label.isVisible()

    qtbot.keyClick(editor, Qt.Key.Key_Escape)
    assert not window.message_actions.edit_bar.isVisible()
    assert editor.toPlainText() == ""
    assert texts(cairn)[0] == "Where should I go?"
    assert not bar(widgets(cairn)[0]).editing_label.isVisible()

    qtbot.keyClick(editor, Qt.Key.Key_Up)
    editor.setPlainText("Where in Portugal should I go?")
    fake_server.add_reply("Porto.")
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    qtbot.waitUntil(
        lambda: texts(cairn) == ["Where in Portugal should I go?", "Porto."], timeout=15_000
    )
    wait_idle(qtbot, cairn)
    assert bar(widgets(cairn)[0]).versions.text() == "2 / 2"
    assert not window.message_actions.edit_bar.isVisible()
    assert editor.toPlainText() == ""
    assert len(last_messages(fake_server)) == 1  # the earlier branch is not sent


def _python_called_by(events: list[tuple[object, object]]) -> list[str]:
    """The Python functions that run while `events` (receiver, event) are sent."""
    import sys
    from types import FrameType

    called: list[str] = []

    def profile(frame: FrameType, event: str, _arg: object) -> None:
        if event == "call":
            called.append(f"{frame.f_code.co_filename}:{frame.f_code.co_name}")

    send_event = QApplication.sendEvent
    sys.setprofile(profile)
    try:
        for receiver, sent in events:
            send_event(receiver, sent)  # type: ignore[arg-type]
    finally:
        sys.setprofile(None)
    return called


def test_the_composers_routine_events_call_no_python(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    """The box's key releases, shortcut checks, moves, layout and update requests reach
    no Python, before an edit and after one (Up edits, Esc cancels): Up is the box's own
    key press, Esc's filter is there only while an edit is open (issue 20)."""
    from PySide6.QtCore import QEvent
    from PySide6.QtGui import QKeyEvent, QMoveEvent

    chat(qtbot, cairn, fake_server)
    window, editor = cairn.window, cairn.window.composer.editor
    editor.setFocus()

    def routine() -> list[tuple[object, object]]:
        return [
            (
                editor,
                QKeyEvent(
                    QEvent.Type.ShortcutOverride, Qt.Key.Key_A, Qt.KeyboardModifier.NoModifier, "a"
                ),
            ),
            (
                editor,
                QKeyEvent(
                    QEvent.Type.KeyRelease, Qt.Key.Key_Return, Qt.KeyboardModifier.NoModifier
                ),
            ),
            (
                editor,
                QKeyEvent(
                    QEvent.Type.ShortcutOverride, Qt.Key.Key_Escape, Qt.KeyboardModifier.NoModifier
                ),
            ),
            (editor, QEvent(QEvent.Type.LayoutRequest)),
            (editor, QEvent(QEvent.Type.UpdateRequest)),
            (editor, QMoveEvent(editor.pos(), editor.pos())),
        ]

    QApplication.processEvents()
    assert _python_called_by(routine()) == []

    qtbot.keyClick(editor, Qt.Key.Key_Up)
    assert window.message_actions.editing is not None
    qtbot.keyClick(editor, Qt.Key.Key_Escape)
    assert window.message_actions.editing is None
    assert editor.toPlainText() == ""
    QApplication.processEvents()
    assert _python_called_by(routine()) == []


def test_esc_while_editing_cancels_the_edit_not_the_reply(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    """While an edit is open, Esc in the composer is the edit's (its shortcut check is
    taken there); once it is closed, Esc is the window's Stop again."""
    from PySide6.QtCore import QEvent
    from PySide6.QtGui import QKeyEvent

    chat(qtbot, cairn, fake_server)
    window, editor = cairn.window, cairn.window.composer.editor
    editor.setFocus()
    qtbot.keyClick(editor, Qt.Key.Key_Up)
    override = QKeyEvent(
        QEvent.Type.ShortcutOverride, Qt.Key.Key_Escape, Qt.KeyboardModifier.NoModifier
    )
    override.ignore()
    QApplication.sendEvent(editor, override)
    assert override.isAccepted()
    assert window.message_actions.editing is not None  # a shortcut check changes nothing
    qtbot.keyClick(editor, Qt.Key.Key_Escape)
    assert window.message_actions.editing is None
    after = QKeyEvent(
        QEvent.Type.ShortcutOverride, Qt.Key.Key_Escape, Qt.KeyboardModifier.NoModifier
    )
    after.ignore()
    QApplication.sendEvent(editor, after)
    assert not after.isAccepted()  # the window's Esc (Stop) has it again


def test_up_with_text_in_the_composer_moves_the_cursor(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    """Up edits the last message only from an empty box; with text it is the box's."""
    chat(qtbot, cairn, fake_server)
    window, editor = cairn.window, cairn.window.composer.editor
    editor.setFocus()
    editor.setPlainText("first line\nsecond")
    cursor = editor.textCursor()
    cursor.movePosition(cursor.MoveOperation.End)
    editor.setTextCursor(cursor)
    qtbot.keyClick(editor, Qt.Key.Key_Up)
    assert window.message_actions.editing is None
    assert editor.toPlainText() == "first line\nsecond"
    assert editor.textCursor().blockNumber() == 0


def test_versions_survive_a_restart(
    qtbot: QtBot,
    cairn: CairnSession,
    fake_server: FakeAnthropicServer,
    open_window: Callable[[], CairnSession],
) -> None:
    chat(qtbot, cairn, fake_server)
    fake_server.add_reply("Porto, then.")
    cairn.controller.service.current.versions.regenerate(widgets(cairn)[-1].message)
    qtbot.waitUntil(lambda: texts(cairn)[-1] == "Porto, then.", timeout=15_000)
    wait_idle(qtbot, cairn)
    cairn.window.close()
    cairn.close()

    again = open_window()
    qtbot.waitUntil(lambda: len(widgets(again)) == 2)
    newest = bar(widgets(again)[-1])
    assert newest.versions.text() == "2 / 2"
    qtbot.mouseClick(newest.previous, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: texts(again)[-1] == "**Lisbon** is lovely.")


def test_regenerate_while_a_reply_streams_says_why(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    chat(qtbot, cairn, fake_server)
    earlier = widgets(cairn)[-1].message
    fake_server.add_reply("One two three four five six seven", chunk_delay=0.2)
    cairn.window.composer.editor.setPlainText("More?")
    qtbot.keyClick(cairn.window.composer.editor, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: cairn.controller.service.current.state.activity.busy)

    assert not cairn.controller.service.current.versions.regenerate(earlier)
    qtbot.waitUntil(lambda: cairn.window.banner.isVisible())
    assert "still writing" in cairn.window.banner.text_label.text()
    cairn.controller.service.current.turns.stop()
    wait_idle(qtbot, cairn)
    assert texts(cairn)[1] == "**Lisbon** is lovely."  # the earlier reply is untouched


def test_editing_an_earlier_question_replaces_what_followed_on_screen(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    chat(qtbot, cairn, fake_server)
    fake_server.add_reply("Pack light.")
    send(qtbot, cairn, "What should I pack?")
    actions = cairn.window.message_actions

    pick(actions.menu_for(widgets(cairn)[0]), "Edit message")
    assert cairn.window.composer.text() == "Where should I go?"
    cairn.window.composer.set_text("Where in Spain should I go?")
    fake_server.add_reply("Seville.")
    qtbot.keyClick(cairn.window.composer.editor, Qt.Key.Key_Return)
    qtbot.waitUntil(
        lambda: texts(cairn) == ["Where in Spain should I go?", "Seville."], timeout=15_000
    )
    wait_idle(qtbot, cairn)
    assert len(last_messages(fake_server)) == 1

    pick(actions.menu_for(widgets(cairn)[0]), "Previous version (2 / 2)")
    qtbot.waitUntil(lambda: len(widgets(cairn)) == 4)
    assert texts(cairn) == [
        "Where should I go?",
        "**Lisbon** is lovely.",
        "What should I pack?",
        "Pack light.",
    ]


def test_a_cut_off_reply_offers_continue_in_its_menu(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    fake_server.add_reply("Once upon a time", stop_reason="max_tokens")
    send(qtbot, cairn, "Tell me a story")
    fake_server.add_reply(", there was a cairn.")

    pick(cairn.window.message_actions.menu_for(widgets(cairn)[-1]), "Continue reply")
    qtbot.waitUntil(
        lambda: texts(cairn)[-1] == "Once upon a time, there was a cairn.", timeout=15_000
    )
    wait_idle(qtbot, cairn)
    assert len(widgets(cairn)) == 2


def test_hover_controls_keep_their_place_so_nothing_shifts_under_the_pointer(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    chat_and_regenerate(qtbot, cairn, fake_server)
    reply, question = widgets(cairn)[-1], widgets(cairn)[0]

    def places() -> list[int]:
        QApplication.processEvents()
        return [
            bar(reply).previous.mapTo(reply, QPoint(0, 0)).x(),
            question.header.name.mapTo(question, QPoint(0, 0)).x(),
        ]

    before = places()
    for widget in (reply, question):
        widget.header.show_pin(pinned=False, offered=True)  # as on hover
    cairn.window.message_actions.refresh()
    for widget in (reply, question):
        mine = widget is question
        bar(widget).refresh(hovered=True, can_edit=mine, can_regenerate=not mine)
    assert places() == before, "the pin and Copy appeared without moving ‹ or the name"


def test_a_bar_made_on_first_hover_moves_nothing_and_offers_its_actions(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    """The bars of later messages are made when first pointed at; their place was kept."""
    chat(qtbot, cairn, fake_server)
    fake_server.add_reply("Then Porto.")
    send(qtbot, cairn, "And after that?")
    question, reply = widgets(cairn)[-2:]
    assert not question.findChildren(MessageBar) and not reply.findChildren(MessageBar)

    def places() -> list[int]:
        QApplication.processEvents()
        return [
            question.header.name.mapTo(question, QPoint(0, 0)).x(),
            question.header.time.mapTo(question, QPoint(0, 0)).x(),
            reply.header.time.mapTo(reply, QPoint(0, 0)).x(),
        ]

    before = places()
    for widget in (question, reply):
        QApplication.sendEvent(widget, QEnterEvent(QPointF(5, 5), QPointF(5, 5), QPointF(5, 5)))
    assert bar(question).edit.isVisible() and bar(question).copy.isVisible()
    assert bar(reply).regenerate.isVisible() and bar(reply).copy.isVisible()
    assert places() == before, "the bar appeared on hover and moved the name or the time"
