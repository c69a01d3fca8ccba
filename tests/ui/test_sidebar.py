"""The conversation list: a model changed by row, its filter, selection, rename and delete."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PySide6.QtCore import QEvent, QModelIndex, QObject, QRect, Qt, QTimer
from PySide6.QtGui import QPaintEvent
from PySide6.QtTest import QSignalSpy, QTest
from PySide6.QtWidgets import QApplication, QLineEdit, QMenu
from pytestqt.qtbot import QtBot

from app.core.dates import friendly_date
from app.core.models import Session
from app.ui.sidebar import SESSION_ID_ROLE, SessionListModel, Sidebar, _shows_the_same

NOW = datetime(2026, 3, 5, 14, 30, tzinfo=UTC)


def make(session_id: str, title: str | None = None, minute: int = 0) -> Session:
    """A conversation last active `minute` minutes after NOW."""
    return Session(
        id=session_id,
        title=title if title is not None else f"Title {session_id}",
        created_at=NOW,
        updated_at=NOW + timedelta(minutes=minute),
        model="claude-sonnet-4-5",
    )


@pytest.fixture
def sidebar(qtbot: QtBot) -> Sidebar:
    widget = Sidebar()
    qtbot.addWidget(widget)
    widget.resize(280, 500)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


@pytest.fixture
def filled(sidebar: Sidebar) -> Sidebar:
    """Four conversations, c (newest), b, a, d (oldest); b is current."""
    sidebar.set_sessions(
        [make("a", "Alpha", 2), make("b", "Bravo", 3), make("c", "Charlie", 4), make("d", "Delta")],
        "b",
    )
    return sidebar


def view_current_id(sidebar: Sidebar) -> str | None:
    index = sidebar.list.currentIndex()
    return str(index.data(SESSION_ID_ROLE)) if index.isValid() else None


def selected_ids(sidebar: Sidebar) -> list[str]:
    return [str(i.data(SESSION_ID_ROLE)) for i in sidebar.list.selectionModel().selectedIndexes()]


def shown_index(sidebar: Sidebar, session_id: str) -> QModelIndex:
    return sidebar.model.index(sidebar.session_ids().index(session_id))


# -- filling -------------------------------------------------------------------------------


def test_fill_sorts_newest_first_and_selects_quietly(qtbot: QtBot, sidebar: Sidebar) -> None:
    with qtbot.assertNotEmitted(sidebar.session_selected):
        sidebar.set_sessions(
            [make("a", "Alpha", 2), make("b", "Bravo", 3), make("c", "Charlie", 4)], "a"
        )

    assert sidebar.titles() == ["Charlie", "Bravo", "Alpha"]
    assert sidebar.session_ids() == ["c", "b", "a"]
    assert sidebar.current_session_id() == "a"
    assert view_current_id(sidebar) == "a"
    assert selected_ids(sidebar) == ["a"]


def test_fill_keeps_the_given_order_on_equal_times(sidebar: Sidebar) -> None:
    """The store lists ties newest row first; the list keeps that order."""
    sidebar.set_sessions([make("y", minute=1), make("x", minute=1), make("z", minute=1)], None)
    assert sidebar.session_ids() == ["y", "x", "z"]
    assert sidebar.current_session_id() is None
    assert not sidebar.list.currentIndex().isValid()


def test_fill_again_replaces_everything(filled: Sidebar) -> None:
    filled.set_sessions([make("e", "Echo")], "e")
    assert filled.titles() == ["Echo"]
    assert filled.current_session_id() == "e"


def test_rows_have_tooltips_size_and_accessible_text(filled: Sidebar) -> None:
    index = shown_index(filled, "a")
    when = friendly_date(NOW + timedelta(minutes=2))
    assert index.data(Qt.ItemDataRole.ToolTipRole) == f"Alpha\nLast active: {when}"
    assert index.data(Qt.ItemDataRole.AccessibleDescriptionRole) == f"Last active: {when}"
    assert index.data(SESSION_ID_ROLE) == "a"
    assert filled.model.itemData(index)[Qt.ItemDataRole.DisplayRole] == "Alpha"
    assert index.data(Qt.ItemDataRole.DecorationRole) is None
    assert index.data(Qt.ItemDataRole.SizeHintRole).height() > filled.fontMetrics().height()
    assert filled.list.uniformItemSizes()
    assert filled.list.accessibleName() == "Conversations"
    assert filled.filter_edit.accessibleName() == "Search conversations"
    assert filled.new_button.accessibleName() == "New conversation"
    assert filled.styleSheet() == "" and filled.list.styleSheet() == ""


def test_new_button_asks_for_a_new_conversation(qtbot: QtBot, sidebar: Sidebar) -> None:
    with qtbot.waitSignal(sidebar.new_requested, timeout=1000):
        QTest.mouseClick(sidebar.new_button, Qt.MouseButton.LeftButton)


# -- changing by row ---------------------------------------------------------------------


def test_upsert_new_goes_to_the_top(qtbot: QtBot, filled: Sidebar) -> None:
    inserted = QSignalSpy(filled.model.rowsInserted)
    with (
        qtbot.assertNotEmitted(filled.model.modelReset),
        qtbot.assertNotEmitted(filled.session_selected),
    ):
        filled.upsert_session(make("e", "Echo", 10))

    assert filled.session_ids() == ["e", "c", "b", "a", "d"]
    assert inserted.count() == 1 and inserted.at(0)[1:] == [0, 0]
    assert filled.current_session_id() == "b" and view_current_id(filled) == "b"


def test_upsert_new_with_the_newest_time_goes_above_its_tie(filled: Sidebar) -> None:
    """A new conversation is the store's newest row: first among equal times."""
    filled.upsert_session(make("e", "Echo", 4))
    assert filled.session_ids() == ["e", "c", "b", "a", "d"]


def test_upsert_existing_that_moved_moves_one_row(qtbot: QtBot, filled: Sidebar) -> None:
    moved = QSignalSpy(filled.model.rowsMoved)
    with (
        qtbot.assertNotEmitted(filled.model.modelReset),
        qtbot.assertNotEmitted(filled.model.layoutChanged),
        qtbot.assertNotEmitted(filled.model.rowsInserted),
        qtbot.assertNotEmitted(filled.model.rowsRemoved),
        qtbot.assertNotEmitted(filled.session_selected),
    ):
        filled.upsert_session(make("d", "Delta", 10))

    assert filled.session_ids() == ["d", "c", "b", "a"]
    assert moved.count() == 1
    _parent, start, end, _destination, row = moved.at(0)
    assert (start, end, row) == (3, 3, 0)
    assert filled.current_session_id() == "b"
    assert view_current_id(filled) == "b" and selected_ids(filled) == ["b"]


def test_upsert_existing_can_move_down(filled: Sidebar) -> None:
    moved = QSignalSpy(filled.model.rowsMoved)
    filled.upsert_session(make("c", "Charlie", 1))
    assert filled.session_ids() == ["b", "a", "c", "d"]
    assert moved.count() == 1
    _parent, start, end, _destination, row = moved.at(0)
    # Qt counts the destination before the move: below "a" (row 2) is 3.
    assert (start, end, row) == (0, 0, 3)


def test_upsert_title_change_is_in_place(qtbot: QtBot, filled: Sidebar) -> None:
    changed = QSignalSpy(filled.model.dataChanged)
    with (
        qtbot.assertNotEmitted(filled.model.rowsMoved),
        qtbot.assertNotEmitted(filled.model.modelReset),
    ):
        filled.upsert_session(make("a", "Alpha, renamed", 2))

    assert filled.titles() == ["Charlie", "Bravo", "Alpha, renamed", "Delta"]
    assert changed.count() == 1
    index = shown_index(filled, "a")
    assert index.data(Qt.ItemDataRole.ToolTipRole).startswith("Alpha, renamed\n")


def test_a_change_in_place_repaints_only_its_row(qtbot: QtBot, filled: Sidebar) -> None:
    """QListView would lay every row out again and repaint them all (SessionListView)."""
    regions: list[QRect] = []

    class PaintSpy(QObject):
        def eventFilter(self, watched: QObject, event: QEvent) -> bool:
            if isinstance(event, QPaintEvent):
                regions.append(event.region().boundingRect())
            return False

    spy = PaintSpy()
    filled.list.viewport().installEventFilter(spy)
    # Paint now whatever filling left pending, so only the change's own paint is seen.
    filled.list.viewport().repaint()
    QApplication.processEvents()
    regions.clear()
    filled.upsert_session(make("a", "Alpha, renamed", 2))
    qtbot.waitUntil(lambda: bool(regions))
    filled.list.viewport().removeEventFilter(spy)
    assert regions == [filled.list.visualRect(shown_index(filled, "a"))]


def test_upsert_of_an_unchanged_session_does_nothing(qtbot: QtBot, filled: Sidebar) -> None:
    with qtbot.assertNotEmitted(filled.model.dataChanged):
        filled.upsert_session(make("a", "Alpha", 2))


def test_a_turn_of_the_top_row_in_its_minute_repaints_nothing(
    qtbot: QtBot, filled: Sidebar
) -> None:
    """A message sent and its reply ended in the same minute: the first row stays first and
    says the same (title, "Last active" time), so nothing is repainted nor re-read by
    screen readers (issue 20); its new time still orders it among later arrivals."""
    before = [row_texts(filled, row) for row in range(filled.model.rowCount())]
    later = make("c", "Charlie", 4).model_copy(
        update={"updated_at": NOW + timedelta(minutes=4, seconds=30)}
    )
    with qtbot.assertNotEmitted(filled.model.dataChanged):
        filled.upsert_session(later)
    assert [row_texts(filled, row) for row in range(filled.model.rowCount())] == before
    assert filled.model.session("c") == later
    # A row that arrives between the two keeps the order by the times as they are.
    filled.upsert_session(make("e", "Echo", 4))
    assert filled.session_ids()[:2] == ["c", "e"]
    # The next day says something else ("6 Mar"): the row is repainted.
    with qtbot.waitSignal(filled.model.dataChanged):
        filled.upsert_session(make("c", "Charlie", 24 * 60))


def row_texts(sidebar: Sidebar, row: int) -> tuple[object, ...]:
    index = sidebar.model.index(row)
    roles = (
        Qt.ItemDataRole.DisplayRole,
        Qt.ItemDataRole.ToolTipRole,
        Qt.ItemDataRole.AccessibleDescriptionRole,
    )
    return tuple(index.data(role) for role in roles)


@given(
    first=st.datetimes(timezones=st.just(UTC)),
    seconds=st.integers(-200_000, 200_000),
)
def test_a_row_shows_the_same_exactly_when_its_words_are_the_same(
    first: datetime, seconds: int
) -> None:
    """The shortcut (the same minute) never says two times read the same when
    `friendly_date` words them apart."""
    try:
        second = first + timedelta(seconds=seconds)
    except OverflowError:
        return
    before, after = make("a"), make("a")
    before = before.model_copy(update={"updated_at": first})
    after = after.model_copy(update={"updated_at": second})
    assert _shows_the_same(before, after) == (friendly_date(first) == friendly_date(second))


def test_remove_takes_one_row(qtbot: QtBot, filled: Sidebar) -> None:
    removed = QSignalSpy(filled.model.rowsRemoved)
    with qtbot.assertNotEmitted(filled.model.modelReset):
        filled.remove_session("a")
    assert filled.session_ids() == ["c", "b", "d"]
    assert removed.count() == 1 and removed.at(0)[1:] == [2, 2]
    assert filled.current_session_id() == "b"

    filled.remove_session("unknown")
    assert filled.session_ids() == ["c", "b", "d"]


def test_removing_the_current_one_selects_nothing_and_says_nothing(
    qtbot: QtBot, filled: Sidebar
) -> None:
    with qtbot.assertNotEmitted(filled.session_selected):
        filled.remove_session("b")
    assert filled.current_session_id() is None
    assert not filled.list.currentIndex().isValid()
    assert selected_ids(filled) == []


# -- selection ---------------------------------------------------------------------------


def test_set_current_emits_nothing(qtbot: QtBot, filled: Sidebar) -> None:
    with qtbot.assertNotEmitted(filled.session_selected):
        filled.set_current("d")
        assert filled.current_session_id() == "d"
        assert view_current_id(filled) == "d" and selected_ids(filled) == ["d"]
        filled.set_current(None)
    assert filled.current_session_id() is None
    assert selected_ids(filled) == []


def test_set_current_before_the_row_arrives(qtbot: QtBot, filled: Sidebar) -> None:
    """The controller may name a new conversation current before it lists it."""
    with qtbot.assertNotEmitted(filled.session_selected):
        filled.set_current("e")
        assert filled.current_session_id() is None
        filled.upsert_session(make("e", "Echo", 10))
    assert filled.current_session_id() == "e"
    assert view_current_id(filled) == "e"


def test_arrow_keys_select_and_emit_once(qtbot: QtBot, filled: Sidebar) -> None:
    spy = QSignalSpy(filled.session_selected)
    filled.list.setFocus()
    QTest.keyClick(filled.list, Qt.Key.Key_Down)
    assert spy.count() == 1 and spy.at(0) == ["a"]
    assert filled.current_session_id() == "a" and selected_ids(filled) == ["a"]
    QTest.keyClick(filled.list, Qt.Key.Key_Up)
    assert spy.count() == 2 and spy.at(1) == ["b"]


def test_a_click_selects_and_emits_once(qtbot: QtBot, filled: Sidebar) -> None:
    spy = QSignalSpy(filled.session_selected)
    centre = filled.list.visualRect(shown_index(filled, "d")).center()
    QTest.mouseClick(
        filled.list.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, centre
    )
    assert spy.count() == 1 and spy.at(0) == ["d"]
    assert filled.current_session_id() == "d"


def test_select_session_emits_like_a_pick(qtbot: QtBot, filled: Sidebar) -> None:
    with qtbot.waitSignal(filled.session_selected, timeout=1000) as blocker:
        filled.select_session("c")
    assert blocker.args == ["c"]
    assert view_current_id(filled) == "c"
    with qtbot.assertNotEmitted(filled.session_selected):
        filled.select_session("c")  # already current: a click would not switch either
        filled.select_session("unknown")


def test_the_current_row_follows_updates_of_other_rows(qtbot: QtBot, filled: Sidebar) -> None:
    with qtbot.assertNotEmitted(filled.session_selected):
        for minute in range(10, 15):
            filled.upsert_session(make("a", "Alpha", minute))
            filled.upsert_session(make("f", "Foxtrot", minute))
    assert filled.session_ids()[:2] == ["f", "a"]
    assert view_current_id(filled) == "b" and selected_ids(filled) == ["b"]


# -- rename --------------------------------------------------------------------------------


def test_rename_inline_through_the_editor(qtbot: QtBot, filled: Sidebar) -> None:
    filled.start_rename()
    editor = filled.list.viewport().findChild(QLineEdit)
    assert editor is not None and editor.text() == "Bravo"
    editor.setText("  Bravo, renamed ")
    with (
        qtbot.waitSignal(filled.rename_requested, timeout=1000) as blocker,
        qtbot.assertNotEmitted(filled.session_selected),
    ):
        QTest.keyClick(editor, Qt.Key.Key_Return)
    assert blocker.args == ["b", "Bravo, renamed"]
    assert filled.titles() == ["Charlie", "Bravo, renamed", "Alpha", "Delta"]

    # The controller confirms; the row stays where it is.
    with qtbot.assertNotEmitted(filled.rename_requested):
        filled.upsert_session(make("b", "Bravo, renamed", 3))
    assert filled.titles() == ["Charlie", "Bravo, renamed", "Alpha", "Delta"]


@pytest.mark.parametrize("title", ["", "   ", "Alpha", " Alpha "])
def test_empty_or_unchanged_rename_is_reverted(qtbot: QtBot, filled: Sidebar, title: str) -> None:
    index = shown_index(filled, "a")
    with qtbot.assertNotEmitted(filled.rename_requested):
        accepted = filled.model.setData(index, title, Qt.ItemDataRole.EditRole)
    assert not accepted
    assert filled.titles() == ["Charlie", "Bravo", "Alpha", "Delta"]


def test_rename_that_the_filter_hides_switches_nothing(qtbot: QtBot, filled: Sidebar) -> None:
    filled.filter_edit.setText("bra")
    assert filled.session_ids() == ["b"]
    with qtbot.assertNotEmitted(filled.session_selected):
        assert filled.model.setData(shown_index(filled, "b"), "Zulu", Qt.ItemDataRole.EditRole)
    assert filled.session_ids() == []
    assert filled.current_session_id() == "b"
    assert not filled.empty_label.isHidden()


def test_f2_renames_and_delete_asks(qtbot: QtBot, filled: Sidebar) -> None:
    assert filled.rename_action.shortcut().matches(Qt.Key.Key_F2)
    filled.activateWindow()
    qtbot.waitActive(filled)
    filled.list.setFocus()
    qtbot.waitUntil(filled.list.hasFocus)

    QTest.keyClick(filled.list, Qt.Key.Key_F2)
    editor = filled.list.viewport().findChild(QLineEdit)
    assert editor is not None and editor.text() == "Bravo"
    QTest.keyClick(editor, Qt.Key.Key_Escape)
    filled.list.setFocus()

    with qtbot.waitSignal(filled.delete_requested, timeout=1000) as blocker:
        QTest.keyClick(filled.list, Qt.Key.Key_Delete)
    assert blocker.args == ["b"]


# The offscreen platform cannot raise a popup or grab the keyboard for it; harmless here.
@pytest.mark.qt_log_ignore(
    "This plugin does not support raise", "This plugin does not support grabbing"
)
def test_context_menu_offers_rename_and_delete(qtbot: QtBot, filled: Sidebar) -> None:
    shown: list[str] = []

    def read_and_close() -> None:
        menu = QApplication.activePopupWidget()
        assert isinstance(menu, QMenu)
        shown.extend(action.text() for action in menu.actions())
        menu.close()

    QTimer.singleShot(0, read_and_close)
    with qtbot.waitSignal(filled.session_selected, timeout=1000) as blocker:
        centre = filled.list.visualRect(shown_index(filled, "a")).center()
        filled.list.customContextMenuRequested.emit(centre)
    assert shown == ["Rename", "Delete…"]
    assert blocker.args == ["a"], "the menu acts on the row it was opened on"


# -- filter ----------------------------------------------------------------------------------


def test_filter_hides_by_title_case_insensitively(qtbot: QtBot, filled: Sidebar) -> None:
    with qtbot.assertNotEmitted(filled.session_selected):
        filled.filter_edit.setText("  ALP ")
        assert filled.titles() == ["Alpha"]
        assert filled.empty_label.isHidden()
        assert filled.current_session_id() == "b", "hidden, but still the open one"
        assert not filled.list.currentIndex().isValid()

        filled.filter_edit.setText("")
    assert filled.titles() == ["Charlie", "Bravo", "Alpha", "Delta"]
    assert view_current_id(filled) == "b" and selected_ids(filled) == ["b"]


def test_filter_that_hides_everything_says_so(filled: Sidebar) -> None:
    filled.filter_edit.setText("<b>zebra</b>")
    assert filled.titles() == []
    assert not filled.empty_label.isHidden()
    assert filled.empty_label.text() == "No conversation title contains “<b>zebra</b>”"
    assert filled.empty_label.textFormat() == Qt.TextFormat.PlainText

    filled.upsert_session(make("z", "My <b>zebra</b> notes", 9))
    assert filled.titles() == ["My <b>zebra</b> notes"]
    assert filled.empty_label.isHidden()

    filled.remove_session("z")
    assert not filled.empty_label.isHidden()
    filled.filter_edit.clear()
    assert filled.empty_label.isHidden()


def test_filter_applies_to_rows_that_arrive_or_change(filled: Sidebar) -> None:
    filled.filter_edit.setText("echo")
    filled.upsert_session(make("e", "Echo", 10))
    filled.upsert_session(make("a", "Echo chamber", 11))
    assert filled.titles() == ["Echo chamber", "Echo"]
    filled.upsert_session(make("e", "Elsewhere", 12))
    assert filled.titles() == ["Echo chamber"]


def test_under_the_filter_a_turn_changes_one_row(qtbot: QtBot, filled: Sidebar) -> None:
    """The model filters itself: a turn moves, inserts or removes one shown row, or, for a
    hidden conversation that stays hidden, changes nothing shown at all."""
    model = filled.model
    filled.filter_edit.setText("HA")
    assert filled.session_ids() == ["c", "a"]
    moved, inserted = QSignalSpy(model.rowsMoved), QSignalSpy(model.rowsInserted)
    removed = QSignalSpy(model.rowsRemoved)
    with (
        qtbot.assertNotEmitted(model.modelReset),
        qtbot.assertNotEmitted(model.layoutChanged),
        qtbot.assertNotEmitted(filled.session_selected),
    ):
        filled.upsert_session(make("a", "Alpha", 10))
        assert filled.session_ids() == ["a", "c"]
        assert moved.count() == 1
        _parent, start, end, _destination, row = moved.at(0)
        assert (start, end, row) == (1, 1, 0)

        with qtbot.assertNotEmitted(model.dataChanged):
            filled.upsert_session(make("d", "Delta", 11))  # hidden, and stays hidden
        assert filled.session_ids() == ["a", "c"]

        filled.upsert_session(make("b", "Bravo hat", 3))  # its new title matches
        assert filled.session_ids() == ["a", "c", "b"]
        assert inserted.count() == 1 and inserted.at(0)[1:] == [2, 2]

        filled.upsert_session(make("c", "Cee", 4))  # its new title does not
        assert filled.session_ids() == ["a", "b"]
        assert removed.count() == 1 and removed.at(0)[1:] == [1, 1]

        filled.remove_session("d")  # hidden: no row to remove
        assert removed.count() == 1
    assert moved.count() == 1 and inserted.count() == 1

    filled.filter_edit.clear()
    assert filled.session_ids() == ["a", "c", "b"]
    assert filled.titles() == ["Alpha", "Cee", "Bravo hat"]


def test_the_filter_outlasts_a_refill_and_ignores_spaces(qtbot: QtBot, filled: Sidebar) -> None:
    filled.filter_edit.setText("ha")
    filled.set_sessions([make("x", "Hat", 1), make("y", "Cap", 2), make("z", "Chart", 3)], "y")
    assert filled.titles() == ["Chart", "Hat"]
    assert filled.current_session_id() == "y", "hidden, but still the open one"
    with qtbot.assertNotEmitted(filled.model.modelReset):
        filled.filter_edit.setText(" ha  ")  # the same filter: nothing to redo


def test_the_view_counts_rows_in_cpp(sidebar: Sidebar) -> None:
    """In list mode QListView lays every row out again after any change, asking its model
    for the row count twice per row: answered in Python, that was 30 ms per turn at 10,000
    conversations (bench/bench_sidebar.py). The model must leave both to its C++ base."""
    assert "rowCount" not in vars(SessionListModel)
    assert "index" not in vars(SessionListModel)
    assert sidebar.list.model() is sidebar.model


# -- the order, whatever happens ---------------------------------------------------------------

IDS = [f"s{n}" for n in range(6)]
MINUTES = st.integers(0, 3)  # few distinct times, so that ties are common


class ReferenceList:
    """The documented order in plain terms: newest `updated_at` first, then the later
    arrival first. `set_sessions` input arrives last-to-first (an earlier position is a
    newer row); each id new to `upsert_session` arrives after all others; an update
    keeps its arrival; a removed id that comes back arrives anew."""

    def __init__(self, initial: Sequence[Session]) -> None:
        self.sessions = {session.id: session for session in initial}
        self.arrival = {session.id: len(initial) - n for n, session in enumerate(initial)}
        self.last = len(initial)

    def upsert(self, session: Session) -> None:
        if session.id not in self.sessions:
            self.last += 1
            self.arrival[session.id] = self.last
        self.sessions[session.id] = session

    def remove(self, session_id: str) -> None:
        self.sessions.pop(session_id, None)
        self.arrival.pop(session_id, None)

    def order(self) -> list[str]:
        return sorted(
            self.sessions,
            key=lambda i: (self.sessions[i].updated_at, self.arrival[i]),
            reverse=True,
        )


OPERATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("upsert"), st.sampled_from(IDS), MINUTES, st.sampled_from("xyz")),
        st.tuples(st.just("remove"), st.sampled_from(IDS)),
    ),
    max_size=30,
)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    initial=st.lists(st.tuples(st.sampled_from(IDS), MINUTES), unique_by=lambda p: p[0]),
    current=st.sampled_from([*IDS, None]),
    operations=OPERATIONS,
    needle=st.sampled_from(["", "x", " Y", "title s1"]),
)
def test_order_after_any_upserts_and_removes(
    qtbot: QtBot,
    sidebar: Sidebar,
    initial: list[tuple[str, int]],
    current: str | None,
    operations: list[tuple[object, ...]],
    needle: str,
) -> None:
    """Under any filter, typed before the list is filled; then with the filter cleared."""
    sidebar.filter_edit.setText(needle)
    first = [make(session_id, minute=minute) for session_id, minute in initial]
    sidebar.set_sessions(first, current)
    reference = ReferenceList(first)
    # The controller's word on what is current stands, even before that row is listed,
    # until that conversation is removed.
    wanted = current
    with (
        qtbot.assertNotEmitted(sidebar.model.modelReset),
        qtbot.assertNotEmitted(sidebar.session_selected),
    ):
        for operation in operations:
            if operation[0] == "upsert":
                _, session_id, minute, title = operation
                session = make(str(session_id), str(title), int(str(minute)))
                sidebar.upsert_session(session)
                reference.upsert(session)
            else:
                sidebar.remove_session(str(operation[1]))
                reference.remove(str(operation[1]))
                if operation[1] == wanted:
                    wanted = None

    listed = reference.order()
    shown = [i for i in listed if needle.strip().lower() in reference.sessions[i].title.lower()]
    assert sidebar.session_ids() == shown
    assert sidebar.titles() == [reference.sessions[i].title for i in shown]
    rows = [shown.index(i) if i in shown else None for i in listed]
    assert [sidebar.model.row_of(i) for i in listed] == rows
    listed_current = wanted if wanted in reference.sessions else None
    assert sidebar.current_session_id() == listed_current
    assert view_current_id(sidebar) == (listed_current if listed_current in shown else None)

    sidebar.filter_edit.clear()
    assert sidebar.session_ids() == listed
    assert view_current_id(sidebar) == listed_current


SELECTION_STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("upsert"), st.sampled_from(IDS), MINUTES, st.sampled_from("xyz")),
        st.tuples(st.just("remove"), st.sampled_from(IDS)),
        st.tuples(st.just("current"), st.sampled_from([*IDS, None])),
        st.tuples(st.just("deselect")),  # Ctrl+click on the selected row
        st.tuples(st.just("pick"), st.integers(0, 5)),  # a click on a row
        st.tuples(st.just("filter"), st.sampled_from(["", "x", "title s1"])),
    ),
    max_size=25,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=SELECTION_STEPS)
def test_set_current_always_leaves_the_view_showing_it(
    sidebar: Sidebar, steps: list[tuple[object, ...]]
) -> None:
    """`set_current` of the conversation already current does nothing when the view shows
    it as `set_current` left it (a turn tells it twice, issue 20): whatever came between
    (rows moved or gone, a click, a deselection, the filter), after it the view shows the
    current conversation selected, as pointing it again would."""
    sidebar.filter_edit.clear()
    sidebar.set_sessions([make(session_id, minute=0) for session_id in IDS[:3]], "s0")
    selection = sidebar.list.selectionModel()
    for step in steps:
        if step[0] == "upsert":
            sidebar.upsert_session(make(str(step[1]), str(step[3]), int(str(step[2]))))
        elif step[0] == "remove":
            sidebar.remove_session(str(step[1]))
        elif step[0] == "current":
            sidebar.set_current(None if step[1] is None else str(step[1]))
        elif step[0] == "deselect":
            selection.clearSelection()
        elif step[0] == "pick" and sidebar.model.rowCount():
            row = int(str(step[1])) % sidebar.model.rowCount()
            sidebar.list.setCurrentIndex(sidebar.model.index(row))
        elif step[0] == "filter":
            sidebar.filter_edit.setText(str(step[1]))
        current = sidebar.current_session_id()
        sidebar.set_current(current)
        shown = current if current is not None and current in sidebar.session_ids() else None
        assert view_current_id(sidebar) == shown
        assert selected_ids(sidebar) == ([shown] if shown is not None else [])
