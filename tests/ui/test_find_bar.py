"""The find bar on its own, against the in-memory History."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.core.search import SearchOrder
from app.ui.find_bar import FindBar
from app.ui.history_source import Place
from tests.ui.fakes_history import trip_history


def test_counts_steps_and_follows_the_conversation(qtbot: QtBot) -> None:
    history = trip_history()
    current = ["trip"]
    bar = FindBar(lambda: current[0], source=history)
    qtbot.addWidget(bar)
    bar.open_bar()
    qtbot.waitExposed(bar)
    places: list[Place] = []
    bar.place_requested.connect(places.append)
    bar.edit.setText("LISBON")
    # As the user types, the view goes to the first match.
    qtbot.waitUntil(lambda: bar.count_label.text() == "1 of 6")
    assert len(places) == 1 and places[0].seq is None, "the summary of 1–4 comes first"
    assert history.searches[-1].order is SearchOrder.IN_ORDER
    # The summary of 1–4 (written before message 1) stands at its place.
    assert [hit.seq for hit in bar.hits] == [None, 1, 2, 10, 14, 15]

    qtbot.keyClick(bar.edit, Qt.Key.Key_Return)
    assert bar.count_label.text() == "2 of 6" and places[-1] == Place(
        "trip", 1, places[-1].summary_id
    )
    assert places[-1].summary_id is not None, "message 1 is archived"
    qtbot.keyClick(bar.edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClick(bar.edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert bar.count_label.text() == "6 of 6" and places[-1] == Place("trip", 15)

    # Another conversation on screen: searched again there.
    current[0] = "budget"
    bar.run_search()
    qtbot.waitUntil(lambda: bar.count_label.text() == "Not found")
    assert not bar.next_button.isEnabled()
    bar.edit.setText("rent")
    qtbot.waitUntil(lambda: bar.count_label.text() == "1 of 5")


def test_enter_before_the_hits_came_goes_to_the_first(qtbot: QtBot) -> None:
    bar = FindBar(lambda: "trip", source=trip_history())
    qtbot.addWidget(bar)
    bar.open_bar()
    places: list[Place] = []
    bar.place_requested.connect(places.append)
    bar.edit.setText("guidebook")
    qtbot.keyClick(bar.edit, Qt.Key.Key_Return)  # at once, before the 200 ms
    qtbot.waitUntil(lambda: bar.count_label.text() == "1 of 2")
    assert places == [Place("trip", 14)]
    qtbot.keyClick(bar.edit, Qt.Key.Key_Escape)
    assert bar.isHidden()


def test_without_a_conversation_nothing_is_searched(qtbot: QtBot) -> None:
    history = trip_history()
    bar = FindBar(lambda: None, source=history)
    qtbot.addWidget(bar)
    bar.open_bar()
    bar.edit.setText("lisbon")
    bar.run_search()
    assert history.searches == [] and bar.count_label.text() == ""
