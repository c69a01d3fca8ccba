"""The conversation list on the left: new, switch, rename, delete, filter.

The list is a model updated one row at a time (issue 7, item 5): a turn that touches
a conversation repaints, moves, inserts or removes that one row, so its cost does not
grow with the number of conversations, where refilling a list widget took 573 ms at
10,000. The model filters itself, with or without a filter typed, for the same reason
(see `SessionListModel`); bench/bench_sidebar.py measures it.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import (
    QItemSelectionModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QPoint,
    QSize,
    QStringListModel,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QAction, QKeySequence, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QLabel,
    QLineEdit,
    QListView,
    QMenu,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.core.dates import friendly_date

if TYPE_CHECKING:
    from app.core.models import Session

SESSION_ID_ROLE = Qt.ItemDataRole.UserRole
CONTENT_DEBOUNCE_MS = 250

# Asks which conversations mention some words: (text, done(ids)); answers later.
ContentSearch = Callable[[str, Callable[[list[str]], None]], None]

_ROOT = QModelIndex()
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)

# An order key: ascending keys are the shown order (see `order_key`).
OrderKey = tuple[int, int]

# Every row's flags, combined once: `flags` is asked for each row painted.
_ROW_FLAGS = (
    Qt.ItemFlag.ItemIsSelectable
    | Qt.ItemFlag.ItemIsEnabled
    | Qt.ItemFlag.ItemIsEditable
    | Qt.ItemFlag.ItemNeverHasChildren
)
# The roles `SessionListModel.data` answers from a conversation (besides the size hint).
_SESSION_ROLES = frozenset(
    {
        Qt.ItemDataRole.DisplayRole,
        Qt.ItemDataRole.EditRole,
        SESSION_ID_ROLE,
        Qt.ItemDataRole.ToolTipRole,
        Qt.ItemDataRole.AccessibleDescriptionRole,
    }
)


def order_key(session: Session, arrival: int) -> OrderKey:
    """The row order: newest `updated_at` first; on a tie, the later arrival first.

    This mirrors the store's `ORDER BY updated_at DESC, rowid DESC`. The list cannot
    see rowids, so it numbers conversations by arrival instead: `set_sessions` numbers
    its input so that an earlier position counts as a later arrival (a list read from
    the store keeps its order), and each id new to `upsert_session` arrives after all
    others, as a new row gets the highest rowid. An update keeps the number, as an
    UPDATE keeps the rowid. Whole microseconds, not float seconds, so that ties are
    exact; a naive time is taken as UTC.
    """
    moment = session.updated_at
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (-((moment - _EPOCH) // _MICROSECOND), -arrival)


def _shows_the_same(before: Session, after: Session) -> bool:
    """Whether a conversation's row says the same for both (its title, its last-active
    time as `SessionListModel.data` words it now)."""
    if before.title != after.title:
        return False
    then, now = before.updated_at, after.updated_at
    if (then.tzinfo is None) == (now.tzinfo is None) and then.replace(
        second=0, microsecond=0
    ) == now.replace(second=0, microsecond=0):
        return True  # the same minute says the same, whatever the zone (its offset in minutes)
    return friendly_date(then) == friendly_date(now)


class SessionListModel(QStringListModel):
    """Conversations in shown order, one row each, changed by row (never reset per turn).

    The model holds the title filter itself, so that a turn changes at most one shown row
    (a move, an insert or a removal), found in O(log n). A QSortFilterProxyModel between
    model and view re-evaluated its whole mapping whenever a row moved: 66 ms per turn at
    10,000 conversations with a filter typed.

    The rows are the shown conversations' ids, kept by the QStringListModel base, and
    `data` answers each role from the conversation of that id. So the view's calls per
    row stay in C++: in list mode QListView lays every row out again after any change,
    asking for the row count twice per row, and a `rowCount` written in Python made that
    30 ms at 10,000 rows (1.5 ms in C++).

    Every conversation is in `_keys`/`_ids`, sorted by `order_key`; `_shown_keys` holds the
    keys of the shown rows in the same order, to bisect. Rows change only through
    `reset_sessions`, `set_filter`, `upsert` and `remove`: the base's own ways of editing
    rows (`setStringList`, `insertRows`, ...) would leave `_shown_keys` behind.

    Attributes:
        row_height: the height each row asks for (0: the delegate decides).

    Signals:
        title_edited(str, str): a title was edited to a new, non-empty one (id, title).
            The model does not change itself for it: its owner decides (`Sidebar`
            shows the new title at once and asks the window to have it stored).
    """

    title_edited = Signal(str, str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.row_height = 0
        self._sessions: dict[str, Session] = {}
        self._key_of: dict[str, OrderKey] = {}
        self._keys: list[OrderKey] = []
        self._ids: list[str] = []
        self._last_arrival = 0
        self._needle = ""  # casefolded; empty shows every conversation
        self._mentions: frozenset[str] = frozenset()  # ids whose content matches the filter
        self._shown_keys: list[OrderKey] = []

    # -- reading -----------------------------------------------------------------------

    def data(
        self,
        index: QModelIndex | QPersistentModelIndex,
        role: int = Qt.ItemDataRole.DisplayRole,
    ) -> Any:
        if role == Qt.ItemDataRole.SizeHintRole:
            return QSize(0, self.row_height) if self.row_height and index.isValid() else None
        if role not in _SESSION_ROLES:
            return None  # asked for every row painted: answer before any look-up
        session = self._sessions.get(super().data(index, Qt.ItemDataRole.DisplayRole) or "")
        if session is None:
            return None
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            return session.title
        if role == SESSION_ID_ROLE:
            return session.id
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{session.title}\nLast active: {friendly_date(session.updated_at)}"
        return f"Last active: {friendly_date(session.updated_at)}"  # AccessibleDescription

    def itemData(self, index: QModelIndex | QPersistentModelIndex) -> dict[int, Any]:
        """The title and id, as `data` gives them (the base would give the stored id)."""
        roles = (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole, SESSION_ID_ROLE)
        return {int(role): self.data(index, role) for role in roles} if index.isValid() else {}

    def flags(self, index: QModelIndex | QPersistentModelIndex) -> Qt.ItemFlag:
        return _ROW_FLAGS if index.isValid() else Qt.ItemFlag.NoItemFlags

    def row_of(self, session_id: str) -> int | None:
        """The row showing `session_id`, or None (not listed, or hidden by the filter);
        O(log n)."""
        key = self._key_of.get(session_id)
        return None if key is None else self._shown_row(key)

    def session_at(self, row: int) -> Session:
        """The conversation shown at `row`."""
        return self._sessions[super().data(self.index(row), Qt.ItemDataRole.DisplayRole)]

    def session(self, session_id: str) -> Session | None:
        """The conversation `session_id`, shown or hidden by the filter; None if not listed."""
        return self._sessions.get(session_id)

    def contains(self, session_id: str) -> bool:
        """Whether `session_id` is listed, shown or hidden by the filter."""
        return session_id in self._sessions

    def shown_ids(self) -> list[str]:
        """The ids of the shown rows, in order."""
        return self.stringList()

    # -- editing -----------------------------------------------------------------------

    def setData(
        self,
        index: QModelIndex | QPersistentModelIndex,
        value: Any,
        role: int = Qt.ItemDataRole.EditRole,
    ) -> bool:
        """Turn an inline edit into `title_edited`; an empty or unchanged title is refused,
        so the view goes on showing the old one."""
        if role != Qt.ItemDataRole.EditRole or not index.isValid():
            return False
        session = self.session_at(index.row())
        title = str(value).strip()
        if not title or title == session.title:
            return False
        self.title_edited.emit(session.id, title)
        return True

    # -- changing ----------------------------------------------------------------------

    def reset_sessions(self, sessions: Sequence[Session]) -> None:
        """List exactly `sessions` (a model reset); a repeated id keeps its first entry."""
        count = len(sessions)
        keyed: dict[str, tuple[OrderKey, Session]] = {}
        for position, session in enumerate(sessions):
            if session.id not in keyed:
                arrival = self._last_arrival + count - position
                keyed[session.id] = (order_key(session, arrival), session)
        self._last_arrival += count
        rows = sorted(keyed.values(), key=lambda pair: pair[0])
        self._keys = [key for key, _ in rows]
        self._ids = [session.id for _, session in rows]
        self._key_of = {session.id: key for key, session in rows}
        self._sessions = {session.id: session for _, session in rows}
        self._show_matching()

    def set_filter(self, text: str) -> None:
        """Show only the conversations whose title contains `text`, ignoring case
        (a model reset; none if the filter stays the same)."""
        needle = text.strip().casefold()
        if needle != self._needle:
            self._needle = needle
            self._mentions = frozenset()
            self._show_matching()

    def set_mentions(self, session_ids: Sequence[str]) -> None:
        """Also show these conversations (their content matches the filter), in the
        list's order (a model reset)."""
        mentions = frozenset(session_ids)
        if mentions != self._mentions:
            self._mentions = mentions
            self._show_matching()

    def upsert(self, session: Session) -> bool:
        """List a new conversation, or update one. At most one shown row changes: in
        place, moved (its time moved it), inserted or removed (its title now matches the
        filter, or no longer does). False when no row came, went or moved."""
        old_key = self._key_of.get(session.id)
        if old_key is None:
            self._last_arrival += 1
            key = order_key(session, self._last_arrival)
            old_row = None
        else:
            before = self._sessions[session.id]
            if before == session:
                return False
            position = bisect_left(self._keys, old_key)
            del self._keys[position]
            del self._ids[position]
            key = order_key(session, -old_key[1])  # an update keeps its arrival
            old_row = self._shown_row(old_key)
        position = bisect_left(self._keys, key)
        self._keys.insert(position, key)
        self._ids.insert(position, session.id)
        self._key_of[session.id] = key
        self._sessions[session.id] = session

        shown = self._matches(session)
        if old_row is None:
            if shown:
                self._insert_row(key, session.id)
            return shown
        if shown:
            # A message sent, a reply ended: most often its row stays first and says the
            # same ("14:05"), and nothing is repainted nor told to screen readers (issue 20).
            return self._move_row(old_row, key, repaint=not _shows_the_same(before, session))
        self._remove_row(old_row)
        return True

    def remove(self, session_id: str) -> bool:
        """Unlist `session_id`, removing its row if shown; False if it was not listed."""
        key = self._key_of.pop(session_id, None)
        if key is None:
            return False
        position = bisect_left(self._keys, key)
        del self._keys[position]
        del self._ids[position]
        row = self._shown_row(key)
        if row is not None:
            self._remove_row(row)
        del self._sessions[session_id]  # after the row: its removal may still read it
        return True

    # -- inside ------------------------------------------------------------------------

    def _matches(self, session: Session) -> bool:
        return (
            not self._needle
            or self._needle in session.title.casefold()
            or session.id in self._mentions
        )

    def _show_matching(self) -> None:
        """Show the conversations the filter lets through (a model reset)."""
        if self._needle:
            sessions, needle, mentions = self._sessions, self._needle, self._mentions
            picked = [
                position
                for position, session_id in enumerate(self._ids)
                if needle in sessions[session_id].title.casefold() or session_id in mentions
            ]
            self._shown_keys = [self._keys[position] for position in picked]
            ids = [self._ids[position] for position in picked]
        else:
            self._shown_keys = list(self._keys)
            ids = self._ids
        self.setStringList(ids)

    def _shown_row(self, key: OrderKey) -> int | None:
        row = bisect_left(self._shown_keys, key)
        found = row < len(self._shown_keys) and self._shown_keys[row] == key
        return row if found else None

    def _insert_row(self, key: OrderKey, session_id: str) -> None:
        row = bisect_left(self._shown_keys, key)
        self._shown_keys.insert(row, key)
        self.insertRows(row, 1)  # an empty row, until the next line names it
        super().setData(self.index(row), session_id, Qt.ItemDataRole.EditRole)

    def _remove_row(self, row: int) -> None:
        del self._shown_keys[row]
        self.removeRows(row, 1)

    def _move_row(self, row: int, key: OrderKey, *, repaint: bool = True) -> bool:
        """Give the row at `row` its new `key`, moving it if that moved it; repaint it
        (unless it stays where it was and `repaint` is False: it shows the same). True
        when it moved."""
        target = bisect_left(self._shown_keys, key)
        if target > row:
            target -= 1  # the row leaves its old place before taking the new one
        if target != row:
            # Qt counts the destination in the rows as they are before the move.
            destination = target + 1 if target > row else target
            self.moveRows(_ROOT, row, 1, _ROOT, destination)
        elif not repaint:
            self._shown_keys[row] = key
            return False
        del self._shown_keys[row]
        self._shown_keys.insert(target, key)
        changed = self.index(target)
        self.dataChanged.emit(changed, changed)
        return target != row


class SessionListView(QListView):
    """A QListView that repaints a changed row without laying every row out again.

    In list mode QListView answers any `dataChanged` by laying out all rows again
    (QListModeViewBase::dataChanged), O(n): 1.5 ms at 10,000 rows. With uniform item
    sizes a row's data cannot move any row, so repainting the row is enough.
    """

    def dataChanged(
        self,
        topLeft: QModelIndex | QPersistentModelIndex,
        bottomRight: QModelIndex | QPersistentModelIndex,
        roles: Sequence[int] = (),
    ) -> None:
        if self.uniformItemSizes() and self.viewMode() == QListView.ViewMode.ListMode:
            QAbstractItemView.dataChanged(self, topLeft, bottomRight, roles)
        else:
            super().dataChanged(topLeft, bottomRight, roles)


class Sidebar(QWidget):
    """Lists conversations, newest first, with a search box over their titles and,
    given a content search (`set_content_search`), over what was said in them.

    The sidebar keeps which conversation is current itself (`_current_id`), apart from
    the view's current row: filtering, removing and moving rows make the view move its
    current row on its own, and none of that is the user picking a conversation.
    Only a pick by mouse or keyboard (or `select_session`) emits `session_selected`.

    Attributes:
        model: the conversations and the title filter; its rows are the ones shown.
        list: the view.
        empty_label: the sentence shown when the filter hides every conversation.

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

        self.model = SessionListModel(self)
        # Row height from the font, not a style sheet: a style sheet pins the palette
        # at polish time, and the list would stay light after switching to dark.
        self.model.row_height = self.fontMetrics().height() + 14

        self.list = SessionListView(self)
        self.list.setModel(self.model)
        self.list.setAccessibleName("Conversations")
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list.setEditTriggers(
            QAbstractItemView.EditTrigger.EditKeyPressed
            | QAbstractItemView.EditTrigger.SelectedClicked
        )
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        # With uniform sizes the view measures one row, not 10,000, and `SessionListView`
        # repaints a changed row without laying them all out again.
        self.list.setUniformItemSizes(True)
        # Shortened in the middle: the end that tells copies apart ("… (copy)") shows.
        self.list.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)

        self.empty_label = QLabel(self)
        self.empty_label.setTextFormat(Qt.TextFormat.PlainText)
        self.empty_label.setWordWrap(True)
        self.empty_label.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.empty_label.hide()
        self._empty_text, self._empty_shown = "", False  # what `empty_label` shows

        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 10, 6, 10)
        layout.setSpacing(8)
        layout.addWidget(self.new_button)
        layout.addWidget(self.filter_edit)
        layout.addWidget(self.empty_label)
        layout.addWidget(self.list, 1)

        self.rename_action = QAction("Rename", self)
        self.rename_action.setShortcut(QKeySequence(Qt.Key.Key_F2))
        self.rename_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.delete_action = QAction("Delete…", self)
        self.delete_action.setShortcut(QKeySequence(QKeySequence.StandardKey.Delete))
        self.delete_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.list.addAction(self.rename_action)
        self.list.addAction(self.delete_action)

        self._current_id: str | None = None
        self._quiet = 0
        # The view shows `_current_id` as `_show_current` left it: nothing moved the
        # selection or the rows since (a message sent and its reply's end both tell the
        # current conversation again: issue 20).
        self._in_step = False
        self._content_search: ContentSearch | None = None
        self._mentions_for: str | None = None  # the filter the content matches answered
        self._content_timer = QTimer(self)
        self._content_timer.setSingleShot(True)
        self._content_timer.setInterval(CONTENT_DEBOUNCE_MS)
        self._content_timer.timeout.connect(self._ask_mentions)
        self.new_button.clicked.connect(self.new_requested)
        self.filter_edit.textChanged.connect(self._apply_filter)
        selection = self.list.selectionModel()
        selection.currentChanged.connect(self._view_current_changed)
        selection.selectionChanged.connect(self._out_of_step)
        for moved in (
            self.model.rowsInserted,
            self.model.rowsRemoved,
            self.model.rowsMoved,
            self.model.modelReset,
            self.model.layoutChanged,
        ):
            moved.connect(self._out_of_step)
        self.model.title_edited.connect(self._title_edited)
        self.list.customContextMenuRequested.connect(self._show_menu)
        self.rename_action.triggered.connect(self.start_rename)
        self.delete_action.triggered.connect(self._delete_current)

    # -- what the window calls ---------------------------------------------------------

    def set_sessions(self, sessions: Sequence[Session], current_id: str | None) -> None:
        """Show exactly `sessions` (a model reset), with `current_id` selected quietly."""
        with self._quietly():
            self.model.reset_sessions(sessions)
        self._current_id = current_id
        self._show_current()
        self._update_empty_label()

    def upsert_session(self, session: Session) -> None:
        """Add a conversation, or update its row in place (moving only that row)."""
        with self._quietly():
            rows_changed = self.model.upsert(session)
        if not rows_changed:
            return  # the same rows in the same places: the current one and the label stay
        # It may be the current one, named by `set_current` before it arrived.
        self._show_current()
        self._update_empty_label()

    def remove_session(self, session_id: str) -> None:
        """Remove one conversation's row. If it was current, nothing is current after it:
        which conversation opens next is the chat service's call (`set_current`)."""
        with self._quietly():
            self.model.remove(session_id)
        if session_id == self._current_id:
            self._current_id = None
        self._show_current()
        self._update_empty_label()

    def set_current(self, session_id: str | None) -> None:
        """Select `session_id` without emitting `session_selected` (None: select nothing).

        An id not listed yet becomes selected when `upsert_session` brings it.
        """
        if session_id == self._current_id and self._in_step:
            return  # shown so already
        self._current_id = session_id
        self._show_current()

    def current_session_id(self) -> str | None:
        """The selected conversation, even while the filter hides it; None if none."""
        current = self._current_id
        return current if current is not None and self.model.contains(current) else None

    def select_session(self, session_id: str) -> None:
        """Pick a conversation as the user would: select it and emit `session_selected`
        (nothing is emitted if it is already the current one, as with a click)."""
        if not self.model.contains(session_id):
            return
        shown = self._shown_index(session_id)
        if shown.isValid():
            self.list.setCurrentIndex(shown)  # emits through `_view_current_changed`
        elif session_id != self._current_id:  # hidden by the filter
            self._current_id = session_id
            self.session_selected.emit(session_id)

    def set_content_search(self, search: ContentSearch) -> None:
        """Match the filter against what was said too: `search(text, done)` gives `done`
        the ids of the conversations that mention `text`."""
        self._content_search = search

    def start_rename(self) -> None:
        """Edit the current conversation's title inline (F2)."""
        index = self.list.currentIndex()
        if index.isValid():
            self.list.edit(index)

    # -- for tests -----------------------------------------------------------------------

    def session_ids(self) -> list[str]:
        """The ids in shown order, after the filter."""
        return self.model.shown_ids()

    def titles(self) -> list[str]:
        """The titles in shown order, after the filter."""
        return [self.model.session_at(row).title for row in range(self.model.rowCount())]

    # -- inside ------------------------------------------------------------------------

    def _quietly(self) -> _Quietly:
        """Changes to the view's current row in here are ours, not the user's pick."""
        return _Quietly(self)

    def _shown_index(self, session_id: str | None) -> QModelIndex:
        """The view's index of `session_id`: invalid if unknown or hidden by the filter."""
        row = None if session_id is None else self.model.row_of(session_id)
        return QModelIndex() if row is None else self.model.index(row)

    def _show_current(self) -> None:
        """Point the view's current row at `_current_id` (or at nothing), quietly."""
        target = self._shown_index(self._current_id)
        selection = self.list.selectionModel()
        with self._quietly():
            if not target.isValid():
                if selection.currentIndex().isValid() or selection.hasSelection():
                    selection.clear()
            elif selection.currentIndex() != target or not selection.isSelected(target):
                selection.setCurrentIndex(target, QItemSelectionModel.SelectionFlag.ClearAndSelect)
        # Unless the current one is not listed yet: `upsert_session` brings it.
        self._in_step = self._current_id is None or target.isValid()

    def _out_of_step(self, *_changed: object) -> None:
        """The rows or the selection changed (the user's click, a row moved, the filter,
        or `_show_current` itself, which then says where it left the view): the next
        `set_current` points the view again."""
        self._in_step = False

    def _view_current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if self._quiet or not current.isValid():
            return
        session_id = str(current.data(SESSION_ID_ROLE))
        if session_id != self._current_id:
            self._current_id = session_id
            self.session_selected.emit(session_id)

    def _apply_filter(self, text: str) -> None:
        with self._quietly():
            self.model.set_filter(text)
        self._mentions_for = None
        if self._content_search is not None and text.strip():
            self._content_timer.start()
        else:
            self._content_timer.stop()
        self._show_current()
        self._update_empty_label()

    def _ask_mentions(self) -> None:
        text = self.filter_edit.text().strip()
        if self._content_search is not None and text:
            self._content_search(text, lambda ids: self._mentions_arrived(text, ids))

    def _mentions_arrived(self, text: str, session_ids: list[str]) -> None:
        if text != self.filter_edit.text().strip():
            return  # the filter changed since
        self._mentions_for = text
        with self._quietly():
            self.model.set_mentions(session_ids)
        self._show_current()
        self._update_empty_label()

    def _update_empty_label(self) -> None:
        needle = self.filter_edit.text().strip()
        hides_all = bool(needle) and self.model.rowCount() == 0
        text: str | None = None  # None: as it is
        if self._content_search is None:
            text = f"No conversation title contains “{needle}”"
        elif self._mentions_for == needle:
            text = f"No conversation mentions “{needle}”"
        else:
            hides_all = False  # what was said is still being searched
        # Asked at every message sent (its conversation moved): no call into Qt unless
        # the label changes (issue 20).
        if text is not None and text != self._empty_text:
            self._empty_text = text
            self.empty_label.setText(text)
        if hides_all != self._empty_shown:
            self._empty_shown = hides_all
            self.empty_label.setVisible(hides_all)

    def _title_edited(self, session_id: str, title: str) -> None:
        """Show the new title at once; the chat service confirms it (`upsert_session`)."""
        session = self.model.session(session_id)
        if session is None:
            return
        renamed = session.model_copy(update={"title": title})
        with self._quietly():
            self.model.upsert(renamed)  # the filter may hide it now
        self._show_current()
        self._update_empty_label()
        self.rename_requested.emit(session_id, title)

    def _delete_current(self) -> None:
        session_id = self.current_session_id()
        if session_id is not None:
            self.delete_requested.emit(session_id)

    def _show_menu(self, position: QPoint) -> None:
        index = self.list.indexAt(position)
        if not index.isValid():
            return
        self.list.setCurrentIndex(index)  # a pick: the menu acts on this conversation
        menu = QMenu(self)
        menu.addAction(self.rename_action)
        menu.addAction(self.delete_action)
        menu.exec(self.list.viewport().mapToGlobal(position))
        menu.deleteLater()


class _Quietly:
    """`Sidebar._quietly`: a plain class, not a generator's context (asked at every
    message sent, issue 20)."""

    def __init__(self, sidebar: Sidebar) -> None:
        self._sidebar = sidebar

    def __enter__(self) -> None:
        self._sidebar._quiet += 1

    def __exit__(self, *_raised: object) -> None:
        self._sidebar._quiet -= 1
