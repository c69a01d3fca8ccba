"""The main window's menu bar: File, Conversation, View and Help. Each entry is an action
of the part that owns it; this module only puts them in order, and holds the About box."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMessageBox

from app import APP_NAME, __version__
from app.core.paths import AppPaths
from app.ui.export_actions import ExportActions
from app.ui.shortcuts_dialog import SHORTCUTS_KEYS, SHORTCUTS_TITLE, ShortcutsDialog
from app.ui.text_size import TextSize


def build_menus(
    window: QMainWindow,
    *,
    new_conversation: QAction,
    settings: QAction,
    exports: ExportActions,
    restore: QAction,
    conversation: Sequence[Sequence[QAction]],
    text_size: TextSize,
    paths: AppPaths,
) -> None:
    """File (new, settings, export and import, restore, quit), Conversation (each group of
    `conversation` between separators), View (the text size) and Help (keyboard
    shortcuts, About)."""
    bar = window.menuBar()
    file_menu = bar.addMenu("&File")
    new_conversation.setShortcut(QKeySequence(QKeySequence.StandardKey.New))
    quit_action = QAction("&Quit", window)
    quit_action.setShortcut(QKeySequence(QKeySequence.StandardKey.Quit))
    quit_action.triggered.connect(window.close)
    file_menu.addActions([new_conversation, settings])
    file_menu.addSeparator()
    exports.add_to(file_menu)
    file_menu.addAction(restore)
    file_menu.addSeparator()
    file_menu.addAction(quit_action)
    conversation_menu = bar.addMenu("&Conversation")
    for index, group in enumerate(conversation):
        if index:
            conversation_menu.addSeparator()
        conversation_menu.addActions(list(group))
    text_size.add_menu_to(bar)
    help_menu = bar.addMenu("&Help")
    shortcuts = help_menu.addAction(f"&{SHORTCUTS_TITLE}…", lambda: shortcuts_list(window))
    shortcuts.setShortcut(QKeySequence(SHORTCUTS_KEYS))
    help_menu.addSeparator()
    help_menu.addAction(f"&About {APP_NAME}", lambda: about_box(window, paths))


def shortcuts_list(window: QMainWindow) -> ShortcutsDialog:
    """Help → Keyboard shortcuts: one list open at a time, brought forward if open."""
    dialog = window.findChild(ShortcutsDialog)
    if dialog is None:
        dialog = ShortcutsDialog(window)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
    else:
        dialog.activateWindow()
    return dialog


def about_box(window: QMainWindow, paths: AppPaths) -> QMessageBox:
    """Help → About: what Cairn is, its version, and where the conversations are kept."""
    box = QMessageBox(window)
    box.setWindowTitle(f"About {APP_NAME}")
    box.setText(
        f"<b>{APP_NAME}</b> {__version__}<br><br>"
        "A chat client for Claude where a conversation never runs out of room, "
        "and nothing is ever lost.<br><br>"
        f"Your conversations are kept in:<br><tt>{paths.data_dir}</tt>"
    )
    box.setIconPixmap(window.windowIcon().pixmap(64, 64))
    box.open()
    return box
