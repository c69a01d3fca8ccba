"""The conversation list on the left: new, switch, rename, delete, filter."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from PySide6.QtCore import QPoint, QSize, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.core.models import Session

SESSION_ID_ROLE = Qt.ItemDataRole.UserRole


def friendly_date(moment: datetime, now: datetime | None = None) -> str:
    """'14:05' today, 'Yesterday', '3 Mar' this year, '3 Mar 2025' before."""
    now = now or datetime.now(UTC)
    local = moment.astimezone()
    today = now.astimezone().date()
    if local.date() == today:
        return local.strftime("%H:%M")
    if (today - local.date()).days == 1:
        return "Yesterday"
    if local.year == today.year:
        return f"{local.day} {local.strftime('%b')}"
    return f"{local.day} {local.strftime('%b %Y')}"


class Sidebar(QWidget):
    """Lists conversations, newest first.

    Signals:
        session_selected(str): the user picked a conversation.
        new_requested: "New conversation" was pressed.
        rename_requested(str, str): a conversation was renamed inline (id, new title).
        delete_requested(str): the user asked to delete a conversation.
    """

    session_selected = Signal(str)
    new_requested = Signal()
    rename_requested = Signal(str, str)
    delete_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.new_button = QPushButton("+  New conversation", self)
        self.new_button.setAccessibleName("New conversation")
        self.new_button.setToolTip("Start a new conversation (Ctrl+N)")
        self.filter_edit = QLineEdit(self)
        self.filter_edit.setPlaceholderText("Search conversations")
        self.filter_edit.setAccessibleName("Search conversations")
        self.filter_edit.setClearButtonEnabled(True)
        self.list = QListWidget(self)
        self.list.setAccessibleName("Conversations")
        self.list.setEditTriggers(
            QAbstractItemView.EditTrigger.EditKeyPressed
            | QAbstractItemView.EditTrigger.SelectedClicked
        )
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.setUniformItemSizes(True)
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # Row height by size hint, not a style sheet: a style sheet pins the palette
        # at polish time, and the list would stay light after switching to dark.
        self._row_height = self.fontMetrics().height() + 14
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 10, 6, 10)
        layout.setSpacing(8)
        layout.addWidget(self.new_button)
        layout.addWidget(self.filter_edit)
        layout.addWidget(self.list, 1)

        self.rename_action = QAction("Rename", self)
        self.rename_action.setShortcut(QKeySequence(Qt.Key.Key_F2))
        self.rename_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.delete_action = QAction("Delete…", self)
        self.delete_action.setShortcut(QKeySequence(QKeySequence.StandardKey.Delete))
        self.delete_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.list.addAction(self.rename_action)
        self.list.addAction(self.delete_action)

        self._titles: dict[str, str] = {}
        self._populating = False
        self.new_button.clicked.connect(self.new_requested)
        self.filter_edit.textChanged.connect(self._apply_filter)
        self.list.currentItemChanged.connect(self._current_changed)
        self.list.itemChanged.connect(self._item_changed)
        self.list.customContextMenuRequested.connect(self._show_menu)
        self.rename_action.triggered.connect(self.start_rename)
        self.delete_action.triggered.connect(self._delete_current)

    def set_sessions(self, sessions: Sequence[Session], current_id: str | None) -> None:
        """Refill the list, keeping `current_id` selected without emitting a switch."""
        self._populating = True
        try:
            self.list.clear()
            self._titles = {}
            for session in sessions:
                item = QListWidgetItem(session.title)
                item.setData(SESSION_ID_ROLE, session.id)
                item.setToolTip(
                    f"{session.title}\nLast active: {friendly_date(session.updated_at)}"
                )
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
                item.setSizeHint(QSize(0, self._row_height))
                self._titles[session.id] = session.title
                self.list.addItem(item)
                if session.id == current_id:
                    self.list.setCurrentItem(item)
            self._apply_filter(self.filter_edit.text())
        finally:
            self._populating = False

    def current_session_id(self) -> str | None:
        item = self.list.currentItem()
        return None if item is None else str(item.data(SESSION_ID_ROLE))

    def select_session(self, session_id: str) -> None:
        item = self._item_for(session_id)
        if item is not None:
            self.list.setCurrentItem(item)

    def start_rename(self) -> None:
        item = self.list.currentItem()
        if item is not None:
            self.list.editItem(item)

    def _item_for(self, session_id: str) -> QListWidgetItem | None:
        for row in range(self.list.count()):
            item = self.list.item(row)
            if item.data(SESSION_ID_ROLE) == session_id:
                return item
        return None

    def _apply_filter(self, text: str) -> None:
        needle = text.strip().casefold()
        for row in range(self.list.count()):
            item = self.list.item(row)
            item.setHidden(bool(needle) and needle not in item.text().casefold())

    def _current_changed(self, current: QListWidgetItem | None, _previous: object) -> None:
        if current is not None and not self._populating:
            self.session_selected.emit(str(current.data(SESSION_ID_ROLE)))

    def _item_changed(self, item: QListWidgetItem) -> None:
        if self._populating:
            return
        session_id = str(item.data(SESSION_ID_ROLE))
        old = self._titles.get(session_id, "")
        new = item.text().strip()
        if not new or new == old:
            # An empty title is not a title: put the old one back.
            self._populating = True
            item.setText(old)
            self._populating = False
            return
        self._titles[session_id] = new
        self.rename_requested.emit(session_id, new)

    def _delete_current(self) -> None:
        session_id = self.current_session_id()
        if session_id is not None:
            self.delete_requested.emit(session_id)

    def _show_menu(self, position: QPoint) -> None:
        item = self.list.itemAt(position)
        if item is None:
            return
        self.list.setCurrentItem(item)
        menu = QMenu(self)
        menu.addAction(self.rename_action)
        menu.addAction(self.delete_action)
        menu.exec(self.list.viewport().mapToGlobal(position))
