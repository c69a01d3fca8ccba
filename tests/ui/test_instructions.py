"""Conversation instructions, the default in Settings and the notification when a reply
is ready in the background, driven like a user against the fake server (real SDK)."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QDialogButtonBox, QWidget
from pytestqt.qtbot import QtBot

from app.core.paths import AppPaths
from app.core.settings import MAX_INSTRUCTIONS_CHARS
from app.ui.app import CairnSession
from app.ui.instructions_actions import BUTTON_NONE, BUTTON_SET, SYMBOL_NONE, SYMBOL_SET
from app.ui.instructions_dialog import QUESTION, InstructionsDialog
from tests.fakes.anthropic_server import FakeAnthropicServer, text_of_content

FRENCH = "Answer in French, in at most three sentences."


def send_and_wait(qtbot: QtBot, cairn: CairnSession, text: str) -> None:
    editor = cairn.window.composer.editor
    editor.setPlainText(text)
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    qtbot.waitUntil(
        lambda: not cairn.controller.service.current.state.activity.busy, timeout=15_000
    )


def open_dialog(cairn: CairnSession) -> InstructionsDialog:
    cairn.window.instructions.button.click()
    dialog = cairn.window.instructions.dialog
    assert dialog is not None and dialog.isVisible()
    return dialog


def last_system(server: FakeAnthropicServer) -> str:
    return text_of_content(server.requests_to("/v1/messages", "POST")[-1].body.get("system", ""))


def test_instructions_set_beside_the_title_go_with_the_next_message(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    window = cairn.window
    fake_server.add_reply("Hello.")
    send_and_wait(qtbot, cairn, "Hi.")
    assert last_system(fake_server) == ""
    assert window.instructions.button.text() == BUTTON_NONE
    state = window.header.gauge.state
    assert state is not None
    before = state.breakdown.system

    dialog = open_dialog(cairn)
    assert QUESTION in dialog.question.text()
    dialog.editor.setPlainText(FRENCH)
    dialog.buttons.button(QDialogButtonBox.StandardButton.Save).click()

    assert window.instructions.button.text() == BUTTON_SET
    assert FRENCH in window.instructions.button.toolTip()
    qtbot.waitUntil(
        lambda: (
            window.header.gauge.state is not None
            and window.header.gauge.state.breakdown.system > before
        )
    )
    fake_server.add_reply("Bonjour.")
    send_and_wait(qtbot, cairn, "How are you?")
    assert last_system(fake_server) == FRENCH
    current = cairn.controller.service.current.state.session
    assert current is not None and current.system_prompt == FRENCH

    # The menu reaches the same dialog, with the instructions in it.
    window.instructions.action.trigger()
    dialog = window.instructions.dialog
    assert dialog is not None and dialog.editor.toPlainText() == FRENCH
    dialog.reject()


def test_instructions_too_long_cannot_be_saved_and_say_why(
    qtbot: QtBot, cairn: CairnSession
) -> None:
    dialog = open_dialog(cairn)
    save = dialog.buttons.button(QDialogButtonBox.StandardButton.Save)
    dialog.editor.setPlainText("x" * (MAX_INSTRUCTIONS_CHARS + 5))
    assert not save.isEnabled()
    assert "5 characters too long" in dialog.limit.text()
    dialog.editor.setPlainText("Be brief.")
    assert save.isEnabled() and dialog.limit.isHidden()
    dialog.reject()
    assert cairn.window.instructions.button.text() == BUTTON_NONE


def test_the_default_from_settings_starts_each_new_conversation(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    settings = cairn.window.settings.open_settings()
    page = settings.replies_page
    page.default_instructions.setPlainText(f"  {FRENCH}\n")
    settings.buttons.accepted.emit()
    saved = json.loads(AppPaths.from_environment().settings_file.read_text(encoding="utf-8"))
    assert saved["default_instructions"] == FRENCH

    cairn.window.sidebar.new_requested.emit()
    assert cairn.window.instructions.button.text() == BUTTON_SET
    dialog = open_dialog(cairn)
    assert dialog.editor.toPlainText() == FRENCH
    dialog.reject()
    fake_server.add_reply("Bonjour.")
    send_and_wait(qtbot, cairn, "Hello.")
    assert last_system(fake_server) == FRENCH


def test_a_reply_ready_in_the_background_is_announced_unless_turned_off(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    other = QWidget()
    qtbot.addWidget(other)
    other.show()
    other.activateWindow()
    qtbot.waitUntil(lambda: not cairn.window.isActiveWindow())
    told: list[tuple[str, str]] = []
    cairn.window.notifier.notified.connect(lambda title, text: told.append((title, text)))

    fake_server.add_reply("Ready.")
    send_and_wait(qtbot, cairn, "Plan a walk.")
    qtbot.waitUntil(lambda: len(told) == 1)
    assert told == [("Claude has replied", "The reply in “Plan a walk.” is ready.")]

    fake_server.add_error(400, "This request is not valid.")
    send_and_wait(qtbot, cairn, "And the way back?")
    qtbot.waitUntil(lambda: len(told) == 2)
    assert told[1][0] == "Claude could not reply"
    assert "stopped with a problem" in told[1][1]

    settings = cairn.window.settings.open_settings()
    assert settings.replies_page.notify.isChecked(), "on by default"
    settings.replies_page.notify.setChecked(False)
    settings.buttons.accepted.emit()
    fake_server.add_reply("Again.")
    send_and_wait(qtbot, cairn, "And another.")
    QApplication.processEvents()  # the notice goes on the next turn of the event loop
    assert len(told) == 2


def test_no_announcement_while_the_user_watches(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    cairn.window.activateWindow()
    qtbot.waitUntil(cairn.window.isActiveWindow)
    told: list[str] = []
    cairn.window.notifier.notified.connect(lambda _title, text: told.append(text))
    fake_server.add_reply("Here.")
    send_and_wait(qtbot, cairn, "Hello.")
    QApplication.processEvents()  # the notice goes on the next turn of the event loop
    assert told == []


def test_in_a_narrow_window_the_button_is_a_symbol_that_still_says_whether_set(
    qtbot: QtBot, cairn: CairnSession
) -> None:
    window = cairn.window
    window.resize(800, 600)
    qtbot.waitUntil(lambda: window.instructions.button.text() == SYMBOL_NONE)
    assert "No instructions" in window.instructions.button.toolTip()
    dialog = open_dialog(cairn)
    dialog.editor.setPlainText("Be brief.")
    dialog.buttons.button(QDialogButtonBox.StandardButton.Save).click()
    assert window.instructions.button.text() == SYMBOL_SET
    window.resize(1400, 800)
    qtbot.waitUntil(lambda: window.instructions.button.text() == BUTTON_SET)
