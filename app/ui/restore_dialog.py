"""Restore from backup…: the list of backups, then a confirmation that says the current
data is backed up first. The service restores in the background and says how it went.

`restore_action(window, controller)` is the menu entry: the File menu has it, and any
other menu (the History window's) can add the same with `menu.addAction(...)`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QProgressBar,
    QProgressDialog,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.core.dates import clock, local, weekday_date
from app.ui.confirm import ask_to_confirm

if TYPE_CHECKING:
    from app.chat.service import ChatService
    from app.store.backup import BackupInfo
    from app.ui.controller import ChatController

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
        self.backups = list(backups)
        self.confirm_box: QMessageBox | None = None
        self.setWindowTitle("Restore from backup")
        self.setMinimumWidth(440)
        layout = QVBoxLayout(self)
        intro = QLabel(
            "Cairn keeps a copy of your conversations each day, for the last 7 days, with "
            "the files attached to them. Restoring one puts your conversations back as "
            "they were then."
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
    def _chat(self) -> ChatService:
        """The chat service, looked up when used: built after the first paint (issue 20)."""
        return self._controller.service

    @property
    def chosen(self) -> BackupInfo | None:
        row = self.list.currentRow()
        return self.backups[row] if 0 <= row < len(self.backups) else None

    def _confirm(self) -> None:
        info = self.chosen
        if info is None:
            return

        def restore() -> None:
            parent = self.parentWidget()
            if self._chat.backups.restore(info.path) and parent is not None:
                RestoreProgress(self._controller, parent).show()
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


class RestoreProgress(QProgressDialog):
    """ "Restoring… 40 %", with Cancel, while a restore runs; it closes itself when the
    restore ends (its outcome is said by a notice). Cancel stops it unharmed, unless
    its last step (the swap, a moment) has begun.

    Attributes:
        shown: the labels it showed, in order.
    """

    def __init__(self, controller: ChatController, parent: QWidget) -> None:
        super().__init__("Restoring…", "Cancel", 0, 100, parent)
        bar = QProgressBar(self)
        bar.setTextVisible(False)  # the label says "Restoring… 40 %" already
        bar.setAccessibleName("Restore progress")
        self.setBar(bar)
        self.setWindowTitle("Restoring from a backup")
        self.setWindowModality(Qt.WindowModality.WindowModal)
        self.setMinimumDuration(0)
        self.setAutoClose(False)
        self.setAutoReset(False)
        self.setAccessibleName("Restoring from a backup")
        self.shown: list[str] = []
        self._done = False
        self._controller = controller
        self.canceled.connect(self._cancel)
        controller.restore_progressed.connect(self._progressed)
        self._progressed(0.0)

    def _progressed(self, share: float | None) -> None:
        if self._done:
            return  # a later restore shows a dialog of its own
        if share is None:
            self._done = True  # before hiding: hiding says "canceled" too
            self.hide()
            return
        percent = round(share * 100)
        self.setLabelText(f"Restoring… {percent} %")
        self.shown.append(self.labelText())
        # Last: a modal progress dialog runs the event loop in setValue, and a later
        # progress (or the end) may be shown from inside it.
        self.setValue(percent)

    def _cancel(self) -> None:
        if self._done:
            return
        self.setLabelText("Stopping the restore…")
        self._controller.service.backups.cancel_restore()
