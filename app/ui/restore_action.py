"""File → "Restore from backup…": the menu entry, without the dialog it opens (imported
when first opened, so the window paints sooner)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QWidget

from app.ui.controller import ChatController

ACTION_TEXT = "Restore from backup…"


def restore_action(window: QWidget, controller: ChatController) -> QAction:
    """The "Restore from backup…" menu entry, opening `RestoreDialog` over `window`."""
    action = QAction(ACTION_TEXT, window)

    def open_dialog() -> None:
        from app.ui.restore_dialog import RestoreDialog

        dialog = RestoreDialog(controller, window, controller.service.backups.list())
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()

    action.triggered.connect(open_dialog)
    return action
