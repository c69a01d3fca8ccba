"""Driving a Cairn window as a person does, for the UI and journey tests."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.ui.app import CairnSession

# Generous: the suite runs on busy machines; a passing test never waits this long.
REPLY_WAIT_MS = 40_000


def send(qtbot: QtBot, cairn: CairnSession, text: str) -> None:
    """Type `text` in the composer and press Enter (and wait for nothing)."""
    editor = cairn.window.composer.editor
    editor.setPlainText(text)
    qtbot.keyClick(editor, Qt.Key.Key_Return)


def chat(qtbot: QtBot, cairn: CairnSession, text: str) -> None:
    """`send` `text`, and wait for the reply to finish.

    The message is taken (the composer empties) once it is stored: at once, or when the
    conversation is open."""
    send(qtbot, cairn, text)
    qtbot.waitUntil(lambda: cairn.window.composer.text() == "", timeout=REPLY_WAIT_MS)
    qtbot.waitUntil(
        lambda: not cairn.controller.service.current.state.activity.busy, timeout=REPLY_WAIT_MS
    )
