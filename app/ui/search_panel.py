"""The History window's search: one box over conversations' titles and everything ever
said, live as you type, the two grouped in one list, with order, filters, "Load more"
and a plain empty state."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, time, timedelta

from PySide6.QtCore import QDate, QEvent, QModelIndex, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDateEdit,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from app.core.search import (
    Author,
    ConversationOverview,
    SearchHit,
    SearchOrder,
    SearchPage,
    SearchQuery,
)
from app.ui.history_source import HistorySource
from app.ui.search_results import (
    HIT_ROLE,
    HitDelegate,
    MoreTitles,
    SearchResultsModel,
    title_matches,
    title_words,
)

SEARCH_DEBOUNCE_MS = 200
_ANY_DATE = QDate(2000, 1, 1)  # a date edit at its minimum shows "Any date"
_ORDERS = (("Best match", SearchOrder.BEST), ("Newest first", SearchOrder.NEWEST))


def _date_edit(parent: QWidget, name: str) -> QDateEdit:
    edit = QDateEdit(parent)
    edit.setCalendarPopup(True)
    edit.setMinimumDate(_ANY_DATE)
    edit.setSpecialValueText("Any date")
    edit.setDate(_ANY_DATE)
    edit.setDisplayFormat("d MMM yyyy")
    edit.setAccessibleName(name)
    return edit


def _moment(date: QDate) -> datetime | None:
    """The start of `date`, local time (None for "Any date")."""
    if date == _ANY_DATE:
        return None
    return datetime.combine(date.toPython(), time()).astimezone()  # type: ignore[arg-type]


# Said while an upgrade fills the search index (the text itself is searched meanwhile).
PARTIAL = " · Cairn is still updating your conversations, so a few may be missing"
PARTIAL_EMPTY = (
    "Cairn is still updating your conversations for this version, so search may miss a few "
    "matches until it is done."
)


def _count_text(titles: int, page: SearchPage) -> str:
    """ "12 found"; with titles found too, "2 conversations and 12 messages found"."""
    if not titles:
        return page.found_text()
    conversations = f"{titles:,} conversation{'' if titles == 1 else 's'}"
    if page.total == 0:
        return f"{conversations} found"
    messages = f"{page.total:,}{'+' if page.at_least else ''} message"
    return f"{conversations} and {messages}{'' if page.total == 1 else 's'} found"


class SearchPanel(QWidget):
    """The search box, its options and the hits.

    Attributes:
        search_edit, order_combo, conversation_combo, since_edit, until_edit,
        author_boxes: the box and its options.
        results: the conversations and hits shown; view: their list; load_more_button;
        empty_label; count_label: "12 found", "2 conversations and 12 messages found".

    Signals:
        open_requested(SearchHit): Enter or a double-click on a hit.
        conversation_requested(str): Enter or a double-click on a conversation (its id).
        searching_changed(bool): the box now has words (True) or is empty.
        close_requested(): Esc in an empty box.
    """

    open_requested = Signal(object)
    conversation_requested = Signal(str)
    searching_changed = Signal(bool)
    close_requested = Signal()

    def __init__(self, source: HistorySource, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._source = source
        self._query: SearchQuery | None = None  # the search whose pages are shown
        # The debounce waits for words typed (Enter then searches at once), not for the
        # titles read again (Enter then opens what is picked).
        self._typed = False
        self._picked: object = None  # what a search for the same words keeps picked
        self._was_searching = False
        self._conversations: list[ConversationOverview] = []

        self.search_edit = QLineEdit(self)
        self.search_edit.setPlaceholderText("Search conversation titles and everything said")
        self.search_edit.setAccessibleName("Search conversations and messages")
        self.search_edit.setClearButtonEnabled(True)
        self.search_edit.installEventFilter(self)

        self.options = QWidget(self)
        self.order_combo = QComboBox(self.options)
        self.order_combo.setAccessibleName("Order")
        for label, order in _ORDERS:
            self.order_combo.addItem(label, order)
        self.conversation_combo = QComboBox(self.options)
        self.conversation_combo.setAccessibleName("Conversation")
        self.conversation_combo.setMaximumWidth(260)
        self.since_edit = _date_edit(self.options, "From")
        self.until_edit = _date_edit(self.options, "To")
        self.author_boxes = {
            Author.YOU: QCheckBox("You", self.options),
            Author.CLAUDE: QCheckBox("Claude", self.options),
            Author.SUMMARY: QCheckBox("Summaries", self.options),
        }
        options = QHBoxLayout(self.options)
        options.setContentsMargins(0, 0, 0, 0)
        options.setSpacing(8)
        options.addWidget(self.order_combo)
        options.addWidget(self.conversation_combo)
        options.addWidget(QLabel("From", self.options))
        options.addWidget(self.since_edit)
        options.addWidget(QLabel("to", self.options))
        options.addWidget(self.until_edit)
        for box in self.author_boxes.values():
            box.setChecked(True)
            options.addWidget(box)
        options.addStretch(1)
        self.options.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)

        self.results = SearchResultsModel(self)
        self.view = QListView(self)
        self.view.setModel(self.results)
        self.view.setItemDelegate(HitDelegate(self.view))
        self.view.setAccessibleName("Search results")
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.view.setWordWrap(True)
        # Hits are measured at the list's width: measure again when it changes.
        self.view.setResizeMode(QListView.ResizeMode.Adjust)
        # No alternating rows: a hit is two lines, and bands read as separate items.
        self.view.setSpacing(1)
        self.count_label = QLabel(self)
        self.count_label.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.empty_label = QLabel(self)
        self.empty_label.setTextFormat(Qt.TextFormat.PlainText)
        self.empty_label.setWordWrap(True)
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
        self.empty_label.setContentsMargins(0, 40, 0, 0)
        self.empty_label.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.load_more_button = QPushButton("Load more", self)
        self.load_more_button.setAccessibleName("Load more results")

        self.results_box = QWidget(self)
        column = QVBoxLayout(self.results_box)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(6)
        column.addWidget(self.options)
        column.addWidget(self.count_label)
        column.addWidget(self.empty_label, 1)  # one of the two is shown
        column.addWidget(self.view, 1)
        column.addWidget(self.load_more_button, 0, Qt.AlignmentFlag.AlignHCenter)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(8)
        layout.addWidget(self.search_edit)
        layout.addWidget(self.results_box, 1)
        self.results_box.hide()
        self.empty_label.hide()
        self.count_label.hide()
        self.load_more_button.hide()

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(SEARCH_DEBOUNCE_MS)
        self._timer.timeout.connect(self.search)
        self.search_edit.textChanged.connect(self._text_changed)
        self.order_combo.currentIndexChanged.connect(self.search)
        self.conversation_combo.currentIndexChanged.connect(self.search)
        self.since_edit.dateChanged.connect(self.search)
        self.until_edit.dateChanged.connect(self.search)
        for check in self.author_boxes.values():
            check.toggled.connect(self.search)
        self.load_more_button.clicked.connect(self.load_more)
        self.view.activated.connect(self._activated)
        self.view.doubleClicked.connect(self._activated)

    # -- what the window calls -----------------------------------------------------------

    def set_conversations(self, conversations: list[ConversationOverview]) -> None:
        """The conversations the filter offers (keeps the one picked, if still there)
        and whose titles the box finds."""
        self._conversations = list(conversations)
        picked = self.conversation_combo.currentData()
        self.conversation_combo.blockSignals(True)
        self.conversation_combo.clear()
        self.conversation_combo.addItem("All conversations", None)
        for conversation in conversations:
            self.conversation_combo.addItem(conversation.title, conversation.session_id)
        index = self.conversation_combo.findData(picked) if picked is not None else 0
        self.conversation_combo.setCurrentIndex(max(0, index))
        self.conversation_combo.blockSignals(False)
        if self.search_edit.text().strip():
            self._timer.start()  # a title added, renamed or gone: found again

    def query(self, offset: int = 0) -> SearchQuery:
        """The search the box and the options describe."""
        authors = frozenset(a for a, box in self.author_boxes.items() if box.isChecked())
        until = _moment(self.until_edit.date())
        return SearchQuery(
            text=self.search_edit.text().strip(),
            session_id=self.conversation_combo.currentData(),
            authors=frozenset() if len(authors) == len(self.author_boxes) else authors,
            since=_moment(self.since_edit.date()),
            until=until + timedelta(days=1) if until is not None else None,  # "to" includes it
            order=SearchOrder(self.order_combo.currentData()),
            offset=offset,
        )

    def search(self) -> None:
        """Search now for what the box says (the first page)."""
        self._timer.stop()
        query = self.query()
        # The same words searched again (the titles changed, an option): what is listed
        # and picked stays until the new page comes, as the user may be about to open it.
        same = self._query is not None and replace(self._query, offset=0) == query
        self._typed = False
        self._picked = self.view.currentIndex().data(HIT_ROLE) if same else None
        words = title_words(query.text)
        titles = (
            [c for c in self._conversations if title_matches(c.title, words)]
            if query.session_id is None  # one conversation picked: its messages only
            else []
        )
        phrase = " ".join(words)
        titles.sort(key=lambda c: phrase not in c.title.casefold())  # the words as typed first
        self.results.set_titles(titles, words, keep_hits=same)
        kept = self._row_of(self._picked)
        self.view.setCurrentIndex(kept if kept is not None else self.results.first_choice())
        if not query.text:
            self._query = None
            return
        if not any(box.isChecked() for box in self.author_boxes.values()):
            self._query = None
            self.results.reset([])
            self._show_empty("Tick You, Claude or Summaries to search their words.")
            return
        self._query = query
        self._source.search(query, self._page_arrived)

    def load_more(self) -> None:
        if self._query is None:
            return
        query = self.query(offset=len(self.results.hits()))
        self._query = query
        self.load_more_button.setEnabled(False)
        self._source.search(query, self._page_arrived)

    def selected_hit(self) -> SearchHit | None:
        index = self.view.currentIndex()
        hit = index.data(HIT_ROLE) if index.isValid() else None
        return hit if isinstance(hit, SearchHit) else None

    # -- inside ------------------------------------------------------------------------

    def _text_changed(self, text: str) -> None:
        searching = bool(text.strip())
        self.results_box.setVisible(searching)
        if searching != self._was_searching:
            self._was_searching = searching
            self.searching_changed.emit(searching)
        if searching:
            self._typed = True
            self._timer.start()
        else:
            self._timer.stop()
            self._query = None
            self.results.set_titles([], [])
            self.count_label.hide()
            self.empty_label.hide()

    def _page_arrived(self, page: SearchPage) -> None:
        if page.query != self._query:
            return  # an older search, or one the box no longer shows
        if page.query.offset == 0:
            # A conversation picked while the words were searched stays picked; so does
            # a hit picked before the same words were searched again.
            picked = self.view.currentIndex().data(HIT_ROLE)
            self.results.reset(page.hits)
            kept = self._row_of(picked)
            if kept is None:
                kept = self._row_of(self._picked)
            self._picked = None
            self.view.setCurrentIndex(kept if kept is not None else self.results.first_choice())
        else:
            self.results.extend(page.hits)
        self.load_more_button.setEnabled(True)
        self.load_more_button.setVisible(page.has_more)
        found = page.total
        titles = len(self.results.conversations())
        self.count_label.setText(_count_text(titles, page) + (PARTIAL if page.partial else ""))
        self.count_label.setVisible(bool(found or titles))
        if found == 0 and titles == 0:
            nothing = f"Nothing found for “{page.query.text}”"
            self._show_empty(f"{nothing}.\n{PARTIAL_EMPTY}" if page.partial else nothing)
        else:
            self.empty_label.hide()
            self.view.show()

    def _row_of(self, row: object) -> QModelIndex | None:
        """Where `row` (a hit or a conversation) is listed now, if it is."""
        if row is None:
            return None
        for index in range(self.results.rowCount()):
            if self.results.index(index).data(HIT_ROLE) == row:
                return self.results.index(index)
        return None

    def _show_empty(self, text: str) -> None:
        self.empty_label.setText(text)
        self.empty_label.show()
        self.view.hide()
        self.count_label.hide()
        self.load_more_button.hide()

    def _activated(self, index: QModelIndex) -> None:
        row = index.data(HIT_ROLE)
        if isinstance(row, SearchHit):
            self.open_requested.emit(row)
        elif isinstance(row, ConversationOverview):
            self.conversation_requested.emit(row.session_id)
        elif isinstance(row, MoreTitles):
            at = index.row()
            self.results.show_all_titles()
            self.view.setCurrentIndex(self.results.step(at - 1, 1))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            watched is self.search_edit
            and isinstance(event, QKeyEvent)
            and event.type() == QEvent.Type.KeyPress
            and self._key(event)
        ):
            return True
        return super().eventFilter(watched, event)

    def _key(self, event: QKeyEvent) -> bool:
        """Arrows move in the hits, Enter opens one, Esc clears the box, then closes."""
        key = event.key()
        if key in (Qt.Key.Key_Up, Qt.Key.Key_Down, Qt.Key.Key_PageUp, Qt.Key.Key_PageDown):
            if self.results.rowCount():
                row = self.view.currentIndex().row()
                step = {Qt.Key.Key_Up: -1, Qt.Key.Key_Down: 1}.get(Qt.Key(key), 0)
                if step == 0:
                    step = -10 if key == Qt.Key.Key_PageUp else 10
                self.view.setCurrentIndex(self.results.step(row, step))
            return True
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            if self._timer.isActive() and self._typed:
                self.search()  # typed and pressed Enter at once: search now
                return True
            current = self.view.currentIndex()
            if current.isValid():
                self._activated(current)
            return True
        if key == Qt.Key.Key_Escape:
            if self.search_edit.text():
                self.search_edit.clear()
            else:
                self.close_requested.emit()
            return True
        return False
