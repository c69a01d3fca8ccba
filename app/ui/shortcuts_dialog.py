"""Help → Keyboard shortcuts (Ctrl+/): every key the window answers to, in a list.

The menus' keys are read from the window's own actions when the list opens, so the
list never disagrees with the menus; the keys that belong to no menu (sending,
stopping, moving around the transcript) are listed here beside them.
"""

from __future__ import annotations

from typing import Final

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QMainWindow,
    QMenu,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

SHORTCUTS_TITLE: Final = "Keyboard shortcuts"
SHORTCUTS_KEYS: Final = "Ctrl+/"
# (what it does, its keys): the keys of no menu entry.
EVERYDAY_KEYS: Final[tuple[tuple[str, str], ...]] = (
    ("Send your message", "Enter"),
    ("Start a new line in your message", "Shift+Enter"),
    ("Stop Claude's reply", "Esc"),
    ("Regenerate Claude's latest reply", "Ctrl+R"),
    ("Move between the conversations, the header, the transcript and the box", "Tab"),
    ("Open a message's menu (copy, edit, pin…)", "Menu key or Shift+F10"),
    ("Scroll the transcript", "Page Up / Page Down"),
    ("Jump to the first or the latest message", "Home / End"),
    ("Next or previous match while finding", "Enter / Shift+Enter"),
    (SHORTCUTS_TITLE, SHORTCUTS_KEYS),
)


def menu_shortcuts(window: QMainWindow) -> list[tuple[str, str]]:
    """(what it does, its keys) for every menu entry of `window` that has keys."""
    rows: list[tuple[str, str]] = []
    seen: set[str] = set()
    for menu_action in window.menuBar().actions():
        menu = menu_action.menu()
        if not isinstance(menu, QMenu):
            continue
        for action in _entries(menu.actions()):
            keys = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
            name = action.text().replace("&", "").removesuffix("…").strip()
            if keys and name and name not in seen:
                seen.add(name)
                rows.append((name, keys))
    return rows


def _entries(actions: list[QAction]) -> list[QAction]:
    """The entries of a menu, those of its submenus included."""
    found: list[QAction] = []
    for action in actions:
        sub = action.menu()
        if isinstance(sub, QMenu):
            found += _entries(sub.actions())
        elif not action.isSeparator():
            found.append(action)
    return found


class ShortcutsDialog(QDialog):
    """The list of shortcuts: the everyday keys, then the menus' own.

    Attributes:
        table: two columns, what it does and its keys.
    """

    def __init__(self, window: QMainWindow, parent: QWidget | None = None) -> None:
        super().__init__(parent or window)
        self.setWindowTitle(SHORTCUTS_TITLE)
        layout = QVBoxLayout(self)
        intro = QLabel("Everything in Cairn can be done from the keyboard:", self)
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.table = QTreeWidget(self)
        self.table.setAccessibleName(SHORTCUTS_TITLE)
        self.table.setRootIsDecorated(False)
        self.table.setHeaderLabels(["What it does", "Keys"])
        everyday = list(EVERYDAY_KEYS)
        known = {name for name, _keys in everyday}
        rows = everyday + [row for row in menu_shortcuts(window) if row[0] not in known]
        for name, keys in rows:
            item = QTreeWidgetItem([name, keys])
            item.setData(1, Qt.ItemDataRole.AccessibleTextRole, keys)
            self.table.addTopLevelItem(item)
        self.table.resizeColumnToContents(0)
        layout.addWidget(self.table, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        screen = window.screen().availableGeometry()
        self.resize(min(640, screen.width() - 40), min(520, screen.height() - 40))

    def rows(self) -> list[tuple[str, str]]:
        items = (self.table.topLevelItem(i) for i in range(self.table.topLevelItemCount()))
        return [(item.text(0), item.text(1)) for item in items if item is not None]
