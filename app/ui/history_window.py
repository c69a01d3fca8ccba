"""The History window (Ctrl+Shift+H): every conversation, each one's timeline of
summaries and live messages, and one search box over everything (DESIGN §8)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
    Signal,
)
from PySide6.QtGui import (
    QAction,
    QKeySequence,
    QShortcut,
    QStandardItem,
    QStandardItemModel,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QMainWindow,
    QMenu,
    QSplitter,
    QTableView,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from app import APP_NAME
from app.core.dates import friendly_date, moment_range
from app.core.search import ConversationOverview, SearchHit, TimelineEntry
from app.core.summary import SummaryTier
from app.ui.history_source import HistorySource, Place
from app.ui.search_panel import SearchPanel

PLACE_ROLE = Qt.ItemDataRole.UserRole
SESSION_ID_ROLE = Qt.ItemDataRole.UserRole
_COLUMNS = ("Conversation", "Last active", "Messages", "Summaries")
TITLE_MIN_CHARACTERS = 14  # the conversations list never squeezes a title below this
TIMELINE_MIN_CHARACTERS = 36  # a part of the conversation, its date and what it keeps


def _plural(count: int, word: str, words: str | None = None) -> str:
    return f"{count} {word if count == 1 else words or word + 's'}"


_ROOT = QModelIndex()


class ConversationsModel(QAbstractTableModel):
    """Every conversation: title, last active, messages (archived ones), summaries."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._rows: list[ConversationOverview] = []

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = _ROOT) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = _ROOT) -> int:
        return 0 if parent.isValid() else len(_COLUMNS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return _COLUMNS[section]
        return None

    def data(
        self,
        index: QModelIndex | QPersistentModelIndex,
        role: int = Qt.ItemDataRole.DisplayRole,
    ) -> Any:
        if not index.isValid():
            return None
        row = self._rows[index.row()]
        column = index.column()
        if role == SESSION_ID_ROLE:
            return row.session_id
        if role == Qt.ItemDataRole.DisplayRole:
            if column == 0:
                return row.title
            if column == 1:
                return friendly_date(row.updated_at)
            if column == 2:
                return (
                    f"{row.messages} ({row.archived} archived)"
                    if row.archived
                    else str(row.messages)
                )
            return str(row.summaries)
        if role == Qt.ItemDataRole.ToolTipRole:
            return (
                f"{row.title}\nStarted {friendly_date(row.created_at)}, last active "
                f"{friendly_date(row.updated_at)}\n{_plural(row.messages, 'message')}, "
                f"{row.archived} summarized in {_plural(row.summaries, 'summary', 'summaries')}"
            )
        if role == Qt.ItemDataRole.TextAlignmentRole and column >= 2:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def reset(self, rows: list[ConversationOverview]) -> None:
        self.beginResetModel()
        self._rows = list(rows)
        self.endResetModel()

    def overview(self, row: int) -> ConversationOverview:
        return self._rows[row]


def _entry_items(
    session_id: str, entry: TimelineEntry, top_id: str | None = None
) -> list[QStandardItem]:
    """A timeline row; `top_id` is the active summary a part of a compressed one is in
    (the transcript shows the part inside that summary's card, at its first message)."""
    summary = entry.summary
    if summary is None:
        what = "Recent messages, as Claude reads them"
        place = Place(session_id, entry.first_seq)
    else:
        if summary.tier is SummaryTier.COMPRESSED:
            what = f"Summary of {_plural(len(entry.children), 'summary', 'summaries')}"
        else:
            what = f"Summary of {_plural(entry.last_seq - entry.first_seq + 1, 'message')}"
        if top_id is None:
            place = Place(session_id, None, summary.id)
        else:
            place = Place(session_id, entry.first_seq, top_id)
    when = moment_range(entry.first_at, entry.last_at) if entry.first_at else ""
    kept = _plural(entry.messages, "message") + (" kept" if summary is not None else "")
    items = [QStandardItem(what), QStandardItem(when), QStandardItem(kept)]
    for item in items:
        item.setToolTip(f"{what}\n{when}\n{kept}".strip())
        item.setEditable(False)
        item.setData(place, PLACE_ROLE)
    for child in entry.children:
        top = top_id if top_id is not None else summary.id if summary is not None else None
        items[0].appendRow(_entry_items(session_id, child, top))
    return items


class HistoryWindow(QMainWindow):
    """Browse and search every conversation; open one at a place in the main window.

    Attributes:
        file_menu: the window's File menu (Restore from backup…, Export… join it).
        conversations, proxy, conversation_view: the conversation list.
        timeline, timeline_view: the selected conversation's timeline.
        search: the one search box, and what it finds (conversations by title, then
            messages by their words).

    Signals:
        place_requested(Place): open this conversation there, in the main window.
    """

    place_requested = Signal(object)

    def __init__(self, source: HistorySource, parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Window)
        self._source = source
        self.setObjectName("historyWindow")
        self.setWindowTitle(f"History — {APP_NAME}")
        self.resize(1000, 680)
        self.setMinimumSize(640, 420)

        self.file_menu: QMenu = self.menuBar().addMenu("&File")
        close_action = QAction("&Close", self)
        close_action.setShortcut(QKeySequence(QKeySequence.StandardKey.Close))
        close_action.triggered.connect(self.close)
        self.file_menu.addAction(close_action)

        # One box finds conversations by title and messages by their words (issue 23).
        self.search = SearchPanel(source, self)
        self.conversations = ConversationsModel(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.conversations)
        self.conversation_view = QTableView(self)
        self.conversation_view.setModel(self.proxy)
        self.conversation_view.setAccessibleName("Conversations")
        self.conversation_view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.conversation_view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.conversation_view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.conversation_view.verticalHeader().hide()
        self.conversation_view.setShowGrid(False)
        self.conversation_view.setWordWrap(False)
        self.conversation_view.setAlternatingRowColors(True)
        self.conversation_view.verticalHeader().setDefaultSectionSize(
            self.fontMetrics().height() + 10
        )
        self.conversation_view.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        header = self.conversation_view.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        # Widths from the font, not ResizeToContents: that reads every row (1 s at 1,000).
        digit = self.fontMetrics().horizontalAdvance("0")
        for column, characters in ((1, 11), (2, 14), (3, 10)):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
            header.resizeSection(column, digit * characters)

        self.timeline = QStandardItemModel(0, 3, self)
        self.timeline.setHorizontalHeaderLabels(["Part of the conversation", "When", "Kept"])
        self.timeline_view = QTreeView(self)
        self.timeline_view.setModel(self.timeline)
        self.timeline_view.setAccessibleName("Timeline")
        self.timeline_view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.timeline_view.setAlternatingRowColors(True)
        self.timeline_view.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.timeline_view.header().setStretchLastSection(False)
        for column in (1, 2):
            self.timeline_view.header().setSectionResizeMode(
                column, QHeaderView.ResizeMode.ResizeToContents
            )
        self.timeline_title = QLabel(self)
        self.timeline_title.setTextFormat(Qt.TextFormat.PlainText)
        self.timeline_title.setWordWrap(True)
        font = self.timeline_title.font()
        font.setBold(True)
        self.timeline_title.setFont(font)
        self.timeline_hint = QLabel("Double-click or press Enter to open it there.", self)
        self.timeline_hint.setWordWrap(True)

        left = QWidget(self)
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.conversation_view, 1)
        # A narrow window squeezed the titles to "…" while the counts kept their width:
        # the list keeps room for a title's first words (the splitter gives way elsewhere).
        view = self.conversation_view
        left.setMinimumWidth(
            digit * TITLE_MIN_CHARACTERS
            + sum(header.sectionSize(column) for column in (1, 2, 3))
            + 2 * view.frameWidth()
            + view.verticalScrollBar().sizeHint().width()
        )
        right = QWidget(self)
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(self.timeline_title)
        right_layout.addWidget(self.timeline_view, 1)
        right_layout.addWidget(self.timeline_hint)
        self.browser = QSplitter(self)
        self.browser.addWidget(left)
        self.browser.addWidget(right)
        self.browser.setStretchFactor(0, 1)
        self.browser.setStretchFactor(1, 1)
        self.browser.setChildrenCollapsible(False)
        # The timeline too keeps room for a part's first words beside its date and size,
        # and the window is never narrower than both lists need.
        right.setMinimumWidth(digit * TIMELINE_MIN_CHARACTERS)
        self.setMinimumWidth(
            max(self.minimumWidth(), left.minimumWidth() + right.minimumWidth() + 24 + 8)
        )

        central = QWidget(self)
        layout = QVBoxLayout(central)
        layout.setContentsMargins(12, 12, 12, 12)
        layout.setSpacing(10)
        layout.addWidget(self.search)
        layout.addWidget(self.browser, 1)
        self.setCentralWidget(central)
        self.search.setSizePolicy(
            self.search.sizePolicy().horizontalPolicy(), self.search.sizePolicy().verticalPolicy()
        )

        self.conversation_view.selectionModel().currentRowChanged.connect(self._picked)
        self.conversation_view.activated.connect(self._open_conversation)
        self.timeline_view.activated.connect(self._open_stretch)
        self.search.open_requested.connect(self._open_hit)
        self.search.conversation_requested.connect(
            lambda session_id: self.place_requested.emit(Place(session_id, None))
        )
        self.search.searching_changed.connect(self._searching_changed)
        self.search.close_requested.connect(self.close)
        escape = QShortcut(QKeySequence(Qt.Key.Key_Escape), self)
        escape.activated.connect(self._escape)
        self.refresh()

    # -- public ---------------------------------------------------------------------------

    def refresh(self) -> None:
        """Read the conversations again (keeping the one selected)."""
        selected = self.selected_session_id()
        rows = self._source.conversations()
        self.conversations.reset(rows)
        self.search.set_conversations(rows)
        if selected is not None:
            self.select_session(selected)
        elif self.proxy.rowCount():
            self.conversation_view.setCurrentIndex(self.proxy.index(0, 0))

    def select_session(self, session_id: str) -> None:
        for row in range(self.proxy.rowCount()):
            index = self.proxy.index(row, 0)
            if index.data(SESSION_ID_ROLE) == session_id:
                self.conversation_view.setCurrentIndex(index)
                return

    def selected_session_id(self) -> str | None:
        index = self.conversation_view.currentIndex()
        value = index.data(SESSION_ID_ROLE) if index.isValid() else None
        return str(value) if value is not None else None

    def focus_search(self) -> None:
        self.search.search_edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.search.search_edit.selectAll()

    # -- inside -------------------------------------------------------------------------

    def _picked(self, current: QModelIndex, _previous: QModelIndex) -> None:
        self.timeline.removeRows(0, self.timeline.rowCount())
        if not current.isValid():
            self.timeline_title.setText("")
            return
        session_id = str(current.data(SESSION_ID_ROLE))
        overview = self.conversations.overview(self.proxy.mapToSource(current).row())
        self.timeline_title.setText(overview.title)
        for entry in self._source.timeline(session_id):
            self.timeline.appendRow(_entry_items(session_id, entry))

    def _open_conversation(self, index: QModelIndex) -> None:
        if index.isValid():
            self.place_requested.emit(Place(str(index.data(SESSION_ID_ROLE)), None))

    def _open_stretch(self, index: QModelIndex) -> None:
        place = index.data(PLACE_ROLE)
        if isinstance(place, Place):
            self.place_requested.emit(place)

    def _open_hit(self, hit: SearchHit) -> None:
        self.place_requested.emit(Place.of_hit(hit))

    def _searching_changed(self, searching: bool) -> None:
        self.browser.setVisible(not searching)

    def _escape(self) -> None:
        if self.search.search_edit.text():
            self.search.search_edit.clear()
            self.search.search_edit.setFocus()
        else:
            self.close()
