"""Help → Keyboard shortcuts (Ctrl+/) lists the everyday keys and every menu's keys."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.ui.app import CairnSession
from app.ui.shortcuts_dialog import ShortcutsDialog


def test_ctrl_slash_lists_the_shortcuts_the_menus_really_have(
    qtbot: QtBot, cairn: CairnSession
) -> None:
    qtbot.keyClick(cairn.window, Qt.Key.Key_Slash, Qt.KeyboardModifier.ControlModifier)
    dialog = cairn.window.findChild(ShortcutsDialog)
    assert dialog is not None
    qtbot.waitUntil(dialog.isVisible)
    rows = dict(dialog.rows())
    assert rows["Send your message"] == "Enter"
    assert rows["Stop Claude's reply"] == "Esc"
    # Read from the menus themselves: the list cannot disagree with them.
    assert rows["Summarize now"] == "Ctrl+Shift+S"
    assert rows["Find in conversation"] == "Ctrl+F"
    assert rows["New conversation"] == "Ctrl+N"
    assert rows["Keyboard shortcuts"] == "Ctrl+/"
    names = [name for name, _keys in dialog.rows()]
    assert len(names) == len(set(names)), "each once"
    assert dialog.table.accessibleName() == "Keyboard shortcuts"
    qtbot.keyClick(cairn.window, Qt.Key.Key_Slash, Qt.KeyboardModifier.ControlModifier)
    assert cairn.window.findChildren(ShortcutsDialog) == [dialog], "one list at a time"
    dialog.reject()
