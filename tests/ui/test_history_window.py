"""The History window against an in-memory History: conversations, timelines, search."""

from __future__ import annotations

from datetime import date

import pytest
from PySide6.QtCore import QDate, Qt
from PySide6.QtWidgets import QLineEdit
from pytestqt.qtbot import QtBot

from app.core.search import Author, SearchHit, SearchOrder
from app.ui.history_source import Place
from app.ui.history_window import PLACE_ROLE, TITLE_MIN_CHARACTERS, HistoryWindow
from app.ui.search_results import HIT_ROLE, TITLES_SHOWN, Heading, MoreTitles, snippet_html
from tests.ui.fakes_history import FakeHistory, large_history, trip_history


@pytest.fixture
def history() -> FakeHistory:
    return trip_history()


@pytest.fixture
def window(qtbot: QtBot, history: FakeHistory) -> HistoryWindow:
    window = HistoryWindow(history)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    return window


def search(qtbot: QtBot, window: HistoryWindow, text: str) -> list[SearchHit]:
    window.search.search_edit.setText(text)
    qtbot.waitUntil(
        lambda: window.search._query is not None and not window.search._timer.isActive()
    )
    qtbot.waitUntil(
        lambda: window.search.count_label.isVisible() or window.search.empty_label.isVisible()
    )
    return window.search.results.hits()


def test_lists_every_conversation_with_its_counts(window: HistoryWindow) -> None:
    model = window.proxy
    rows = [
        [model.index(row, column).data() for column in range(4)] for row in range(model.rowCount())
    ]
    assert rows[0][0] == "Trip to Lisbon" and rows[0][2] == "16 (12 archived)" and rows[0][3] == "2"
    assert rows[1][0] == "Budget" and rows[1][2] == "6" and rows[1][3] == "0"
    boxes = [e for e in window.findChildren(QLineEdit) if e.objectName() != "qt_spinbox_lineedit"]
    assert boxes == [window.search.search_edit], "one search box (the dates' edits aside)"


def test_one_box_finds_titles_and_messages_grouped(qtbot: QtBot, window: HistoryWindow) -> None:
    """ "lisbon" is in a title and in messages: the conversation comes first under
    "Conversations", the messages under "Messages"; arrows pass over the headings."""
    hits = search(qtbot, window, "LISBON")
    results = window.search.results
    rows = [results.index(r).data(HIT_ROLE) for r in range(results.rowCount())]
    assert rows[0] == Heading("Conversations")
    assert [c.title for c in results.conversations()] == ["Trip to Lisbon"]
    assert rows[2] == Heading("Messages") and rows[3:] == hits
    texts = [results.index(r).data(Qt.ItemDataRole.AccessibleTextRole) for r in range(4)]
    assert texts[1].startswith("Trip to Lisbon. Conversation · last active ")
    count = len(hits)
    assert window.search.count_label.text() == f"1 conversation and {count} messages found"
    edit = window.search.search_edit
    assert window.search.view.currentIndex().row() == 1, "the conversation, picked first"
    qtbot.keyClick(edit, Qt.Key.Key_Down)
    assert window.search.selected_hit() == hits[0], "over the heading, to the first message"
    qtbot.keyClick(edit, Qt.Key.Key_Up)
    qtbot.keyClick(edit, Qt.Key.Key_Up)
    assert window.search.view.currentIndex().row() == 1, "never on a heading"
    assert not results.flags(results.index(0)) & Qt.ItemFlag.ItemIsSelectable
    with qtbot.waitSignal(window.place_requested) as opened:
        qtbot.keyClick(edit, Qt.Key.Key_Return)
    assert opened.args == [Place("trip", None)]
    # Words only in a title: the conversation, and no "Nothing found".
    search(qtbot, window, "trip to")
    assert [c.title for c in results.conversations()] == ["Trip to Lisbon"]
    assert window.search.view.isVisible() and not window.search.empty_label.isVisible()
    # One conversation picked in the options: its messages only.
    window.search.conversation_combo.setCurrentIndex(
        window.search.conversation_combo.findData("trip")
    )
    qtbot.waitUntil(lambda: window.search._query == window.search.query())
    assert results.conversations() == []


def test_a_new_search_lists_no_hit_of_the_words_before(qtbot: QtBot, window: HistoryWindow) -> None:
    assert search(qtbot, window, "flights")
    window.search.search_edit.setText("alfama")
    window.search.search()  # the debounce's end: the new search starts, its page to come
    assert window.search.results.hits() == []
    qtbot.waitUntil(lambda: window.search.results.hits() != [])
    assert all("flights" not in h.session_title for h in window.search.results.hits())


def test_titles_found_follow_a_rename(
    qtbot: QtBot, window: HistoryWindow, history: FakeHistory
) -> None:
    search(qtbot, window, "budget")
    assert [c.title for c in window.search.results.conversations()] == ["Budget"]
    budget = history._conversations["budget"]
    history.add("budget", "Money for the trip", budget.messages, budget.summaries)
    window.refresh()
    qtbot.waitUntil(lambda: window.search.results.conversations() == [])
    search(qtbot, window, "money")
    assert [c.title for c in window.search.results.conversations()] == ["Money for the trip"]


def test_many_matching_titles_show_five_then_all(qtbot: QtBot) -> None:
    window = HistoryWindow(large_history(60))
    qtbot.addWidget(window)
    window.show()
    search(qtbot, window, "taxes")
    results = window.search.results
    assert len(results.conversations()) == TITLES_SHOWN
    more = next(
        r
        for r in range(results.rowCount())
        if isinstance(results.index(r).data(HIT_ROLE), MoreTitles)
    )
    assert results.index(more).data() == "Show all 10 conversations"
    window.search.view.setCurrentIndex(results.index(more))
    qtbot.keyClick(window.search.search_edit, Qt.Key.Key_Return)
    assert len(results.conversations()) == 10
    assert window.search.view.currentIndex().data(HIT_ROLE) == results.conversations()[TITLES_SHOWN]


def test_timeline_shows_summaries_by_tier_and_the_live_stretch_last(
    window: HistoryWindow,
) -> None:
    assert window.selected_session_id() == "trip"
    timeline = window.timeline
    labels = [timeline.item(row, 0).text() for row in range(timeline.rowCount())]
    assert labels == [
        "Summary of 4 messages",
        "Summary of 2 summaries",
        "Recent messages, as Claude reads them",
    ]
    compressed = timeline.item(1, 0)
    assert [compressed.child(r, 0).text() for r in range(compressed.rowCount())] == [
        "Summary of 4 messages",
        "Summary of 4 messages",
    ]
    assert timeline.item(0, 2).text() == "4 messages kept"
    assert timeline.item(0, 1).text()  # a date range
    assert timeline.item(2, 2).text() == "4 messages"


def test_activating_a_stretch_asks_to_open_it_there(qtbot: QtBot, window: HistoryWindow) -> None:
    index = window.timeline.index(2, 0)
    with qtbot.waitSignal(window.place_requested) as opened:
        window.timeline_view.activated.emit(index)
    assert opened.args == [Place("trip", 13)]
    window.select_session("budget")
    assert window.timeline.rowCount() == 1


def test_search_shows_highlighted_escaped_snippets(qtbot: QtBot, window: HistoryWindow) -> None:
    hits = search(qtbot, window, "alfama TERRACE")
    assert len(hits) == 1
    (hit,) = hits
    assert hit.archived and hit.author is Author.CLAUDE and hit.session_title == "Trip to Lisbon"
    html = snippet_html(hit.snippet, window.palette())
    assert "&lt;view&gt; &amp; a" in html and "<b " in html and ">Alfama</b>" in html
    assert window.search.count_label.text() == "1 found"
    assert not window.browser.isVisible(), "the hits take the place of the browser"
    window.search.search_edit.clear()
    assert window.browser.isVisible()


def test_search_is_debounced_and_only_the_newest_answers(
    qtbot: QtBot, window: HistoryWindow, history: FakeHistory
) -> None:
    for text in ("l", "li", "lis", "lisbon"):
        window.search.search_edit.setText(text)
    hits = search(qtbot, window, "lisbon")
    assert [q.text for q in history.searches] == ["lisbon"]
    assert hits and all("lisbon" in "".join(p.text for p in h.snippet).lower() for h in hits)


def test_order_and_filters(qtbot: QtBot, window: HistoryWindow) -> None:
    best = search(qtbot, window, "flights")
    assert {h.session_id for h in best} == {"trip", "budget"}
    window.search.order_combo.setCurrentIndex(1)
    qtbot.waitUntil(
        lambda: (
            window.search._query is not None and window.search._query.order is SearchOrder.NEWEST
        )
    )
    qtbot.waitUntil(
        lambda: window.search.results.hits() != [] and window.search._query == window.search.query()
    )
    newest = window.search.results.hits()
    assert [h.created_at for h in newest] == sorted((h.created_at for h in newest), reverse=True)

    window.search.conversation_combo.setCurrentIndex(
        window.search.conversation_combo.findData("budget")
    )
    qtbot.waitUntil(lambda: {h.session_id for h in window.search.results.hits()} == {"budget"})

    window.search.conversation_combo.setCurrentIndex(0)
    window.search.author_boxes[Author.CLAUDE].setChecked(False)
    window.search.author_boxes[Author.SUMMARY].setChecked(False)
    qtbot.waitUntil(
        lambda: (
            window.search.results.hits() != []
            and all(h.author is Author.YOU for h in window.search.results.hits())
        )
    )
    for box in window.search.author_boxes.values():
        box.setChecked(True)
    # From a day after everything: nothing.
    window.search.since_edit.setDate(QDate(2026, 6, 1))
    qtbot.waitUntil(lambda: window.search.empty_label.isVisible())
    assert window.search.empty_label.text() == "Nothing found for “flights”"
    window.search.since_edit.setDate(QDate(2000, 1, 1))  # Any date again
    window.search.until_edit.setDate(
        QDate.fromString(date(2026, 3, 1).isoformat(), Qt.DateFormat.ISODate)
    )
    qtbot.waitUntil(
        lambda: window.search.results.hits() != [] and window.search._query == window.search.query()
    )
    assert all(h.created_at.date() <= date(2026, 3, 2) for h in window.search.results.hits())


def test_empty_state_says_what_was_not_found(qtbot: QtBot, window: HistoryWindow) -> None:
    assert search(qtbot, window, "zebra <b>") == []
    assert window.search.empty_label.text() == "Nothing found for “zebra <b>”"
    assert window.search.empty_label.textFormat() == Qt.TextFormat.PlainText
    assert not window.search.view.isVisible()


def test_load_more_pages(qtbot: QtBot) -> None:
    window = HistoryWindow(large_history(30))
    qtbot.addWidget(window)
    window.show()
    hits = search(qtbot, window, "garden")
    assert len(hits) == 50
    assert window.search.load_more_button.isVisible()
    window.search.load_more_button.click()
    qtbot.waitUntil(lambda: len(window.search.results.hits()) == 60)
    assert not window.search.load_more_button.isVisible()
    assert len({(h.session_id, h.seq) for h in window.search.results.hits()}) == 60


def test_keyboard_arrows_enter_and_escape(qtbot: QtBot, window: HistoryWindow) -> None:
    hits = search(qtbot, window, "flights")
    edit = window.search.search_edit
    assert window.search.selected_hit() == hits[0]
    qtbot.keyClick(edit, Qt.Key.Key_Down)
    qtbot.keyClick(edit, Qt.Key.Key_Down)
    qtbot.keyClick(edit, Qt.Key.Key_Up)
    assert window.search.selected_hit() == hits[1]
    with qtbot.waitSignal(window.place_requested) as opened:
        qtbot.keyClick(edit, Qt.Key.Key_Return)
    assert opened.args == [Place.of_hit(hits[1])]
    qtbot.keyClick(edit, Qt.Key.Key_Escape)
    assert edit.text() == "" and window.isVisible()
    qtbot.keyClick(edit, Qt.Key.Key_Escape)
    assert not window.isVisible()


def test_enter_opens_the_hit_picked_while_the_titles_are_read_again(
    qtbot: QtBot, window: HistoryWindow
) -> None:
    """A conversation added or renamed while hits are listed reads the titles again
    (debounced, as typing is): Enter still opens the hit picked, and once the same words
    have been searched again it is still the one picked. (Enter was taken as "search
    now" and opened nothing: test_open_at_message timed out so when Claude's title for
    the conversation came late on a busy machine.)"""
    hits = search(qtbot, window, "flights")
    edit = window.search.search_edit
    qtbot.keyClick(edit, Qt.Key.Key_Down)
    assert window.search.selected_hit() == hits[1]
    window.refresh()  # the conversations read again: a title written meanwhile
    assert window.search._timer.isActive(), "the titles are searched again soon"
    with qtbot.waitSignal(window.place_requested, timeout=5_000) as opened:
        qtbot.keyClick(edit, Qt.Key.Key_Return)
    assert opened.args == [Place.of_hit(hits[1])]
    qtbot.waitUntil(
        lambda: window.search._query is not None and not window.search._timer.isActive()
    )
    assert window.search.results.hits() == hits, "the hits stay listed meanwhile"
    assert window.search.selected_hit() == hits[1]
    qtbot.waitUntil(lambda: window.search._picked is None)  # the page came
    assert window.search.selected_hit() == hits[1]
    # Words typed and Enter at once still search first.
    edit.setText("alfama")
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    assert not window.search._timer.isActive() and window.search._query is not None
    assert window.search._query.text == "alfama"


def test_a_large_history_lists_every_conversation(qtbot: QtBot) -> None:
    window = HistoryWindow(large_history(1000))
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    assert window.proxy.rowCount() == 1000
    assert window.search.conversation_combo.count() == 1001
    search(qtbot, window, "GARDEN 12")
    shown = [c.title for c in window.search.results.conversations()]
    expected = [f"Garden {n}" for n in range(999, -1, -1) if n % 6 == 0 and str(n).startswith("12")]
    assert shown[:3] == expected  # 126, 120, 12: the words as typed, newest first
    assert all("garden" in t.casefold() and "12" in t for t in shown)  # then "Garden 912"…


def test_a_part_of_a_compressed_summary_opens_inside_its_card(
    qtbot: QtBot, window: HistoryWindow, history: FakeHistory
) -> None:
    compressed = window.timeline.item(1, 0)
    top = compressed.data(PLACE_ROLE)
    part = compressed.child(1, 0).data(PLACE_ROLE)
    assert top == Place("trip", None, top.summary_id) and top.summary_id is not None
    assert part == Place("trip", 9, top.summary_id), "its first message, in the top card"


def test_no_author_ticked_says_so(qtbot: QtBot, window: HistoryWindow) -> None:
    search(qtbot, window, "lisbon")
    for box in window.search.author_boxes.values():
        box.setChecked(False)
    assert window.search.results.hits() == []
    assert window.search.empty_label.text() == (
        "Tick You, Claude or Summaries to search their words."
    )
    window.search.author_boxes[Author.YOU].setChecked(True)
    qtbot.waitUntil(lambda: window.search.results.hits() != [])
    assert all(h.author is Author.YOU for h in window.search.results.hits())
    assert window.search.empty_label.isHidden()


def test_a_narrow_window_keeps_room_for_the_titles(qtbot: QtBot, window: HistoryWindow) -> None:
    """At its smallest the list gave the title column ~25 px ("…") and the counts their
    full widths: the list keeps room for a title's first words."""
    window.resize(window.minimumSize())
    qtbot.waitUntil(lambda: window.width() == window.minimumWidth())
    digit = window.fontMetrics().horizontalAdvance("0")
    header = window.conversation_view.horizontalHeader()
    assert header.sectionSize(0) >= digit * TITLE_MIN_CHARACTERS
    timeline = window.timeline_view.header()
    assert timeline.sectionSize(0) >= digit * 10, "nor the timeline's parts"
    assert window.minimumWidth() <= 800 - 40, "it still fits an 800 px screen"
