"""Restore from backup…: the list of backups, then a confirmation that says the current
data is backed up first. The service restores in the background and says how it went.

`restore_action(window, controller)` is the menu entry: the File menu has it, and any
other menu (the History window's) can add the same with `menu.addAction(...)`.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.core.dates import clock, local, weekday_date
from app.store.backup import BackupInfo
from app.ui.confirm import ask_to_confirm
from app.ui.controller import ChatController

ACTION_TEXT = "Restore from backup…"
RESTORE_BUTTON = "Restore…"


def human_size(size: int) -> str:
    """ "2.1 MB", "640 KB", "12 bytes"."""
    if size < 1024:
        return f"{size} bytes"
    if size < 1024 * 1024:
        return f"{size / 1024:.0f} KB"
    if size < 1024**3:
        return f"{size / 1024 / 1024:.1f} MB"
    return f"{size / 1024**3:.1f} GB"


def backup_text(info: BackupInfo) -> str:
    """One line of the list: when, and how big."""
    when = weekday_date(local(info.taken_at).date())
    if info.before_restore:
        when = f"Before a restore, {when} at {clock(info.taken_at)}"
    return f"{when} · {human_size(info.size)}"


class RestoreDialog(QDialog):
    """Pick a backup to restore; Restore asks once more, then hands it to the service.

    Attributes:
        backups: the list shown (newest first).
        confirm_box: the last question on screen, if any (for tests).
    """

    def __init__(
        self, controller: ChatController, parent: QWidget, backups: Sequence[BackupInfo]
    ) -> None:
        super().__init__(parent)
        self._controller = controller
        self._chat = controller.service
        self.backups = list(backups)
        self.confirm_box: QMessageBox | None = None
        self.setWindowTitle("Restore from backup")
        self.setMinimumWidth(440)
        layout = QVBoxLayout(self)
        intro = QLabel(
            "Cairn keeps a copy of your conversations each day, for the last 7 days. "
            "Restoring one puts your conversations back as they were then."
            if self.backups
            else "There are no backups yet. Cairn makes one each day, a moment after it starts."
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.list = QListWidget(self)
        self.list.setAccessibleName("Backups")
        for info in self.backups:
            item = QListWidgetItem(backup_text(info))
            item.setData(Qt.ItemDataRole.UserRole, str(info.path))
            self.list.addItem(item)
        self.list.setVisible(bool(self.backups))
        layout.addWidget(self.list)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel, parent=self)
        self.restore_button = QPushButton(RESTORE_BUTTON, self)
        self.restore_button.setAutoDefault(False)
        buttons.addButton(self.restore_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        self.restore_button.clicked.connect(self._confirm)
        self.list.itemDoubleClicked.connect(lambda _item: self._confirm())
        self.list.currentRowChanged.connect(lambda row: self.restore_button.setEnabled(row >= 0))
        layout.addWidget(buttons)
        if self.backups:
            self.list.setCurrentRow(0)
        self.restore_button.setEnabled(bool(self.backups))

    @property
    def chosen(self) -> BackupInfo | None:
        row = self.list.currentRow()
        return self.backups[row] if 0 <= row < len(self.backups) else None

    def _confirm(self) -> None:
        info = self.chosen
        if info is None:
            return

        def restore() -> None:
            self._chat.backups.restore(info.path)
            self.accept()

        self.confirm_box = ask_to_confirm(
            self,
            title="Restore this backup?",
            text=f"Restore the backup of {weekday_date(local(info.taken_at).date())}?",
            detail="Your conversations will be as they were then. What you have now is "
            "backed up first, so nothing is lost: you can restore it the same way.",
            action="Restore",
            on_confirm=restore,
            closed=lambda: setattr(self, "confirm_box", None),
        )


def restore_action(window: QWidget, controller: ChatController) -> QAction:
    """The "Restore from backup…" menu entry, opening `RestoreDialog` over `window`."""
    action = QAction(ACTION_TEXT, window)

    def open_dialog() -> None:
        dialog = RestoreDialog(controller, window, controller.service.backups.list())
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()

    action.triggered.connect(open_dialog)
    return action
