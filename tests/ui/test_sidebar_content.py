"""The sidebar's filter matches what was said too, not only titles."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.core.models import Session
from app.ui.sidebar import Sidebar
from tests.ui.fakes_history import trip_history

NOW = datetime(2026, 3, 9, 12, 0, tzinfo=UTC)


def make(session_id: str, title: str, minute: int) -> Session:
    return Session(
        id=session_id,
        title=title,
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
    widget.set_content_search(trip_history().matching_sessions)
    widget.set_sessions(
        [make("trip", "Trip to Lisbon", 1), make("budget", "Budget", 2), make("x", "Flights", 0)],
        None,
    )
    return widget


def test_titles_match_at_once_and_content_matches_join_later(
    qtbot: QtBot, sidebar: Sidebar
) -> None:
    sidebar.filter_edit.setText("flights")
    assert sidebar.titles() == ["Flights"], "the title matches at once"
    # "flights" is said in both other conversations; they join in the list's order.
    qtbot.waitUntil(lambda: sidebar.titles() == ["Budget", "Trip to Lisbon", "Flights"])
    assert sidebar.empty_label.isHidden()

    sidebar.filter_edit.setText("guidebook")
    assert sidebar.titles() == []
    assert sidebar.empty_label.isHidden(), "nothing said until what was said is searched"
    qtbot.waitUntil(lambda: sidebar.titles() == ["Trip to Lisbon"])


def test_when_nothing_matches_it_says_so_plainly(qtbot: QtBot, sidebar: Sidebar) -> None:
    sidebar.filter_edit.setText("<zebra>")
    qtbot.waitUntil(lambda: not sidebar.empty_label.isHidden())
    assert sidebar.empty_label.text() == "No conversation mentions “<zebra>”"
    assert sidebar.empty_label.textFormat() == Qt.TextFormat.PlainText
    sidebar.filter_edit.setText("")
    assert sidebar.empty_label.isHidden()
    assert sidebar.titles() == ["Budget", "Trip to Lisbon", "Flights"]


def test_a_stale_answer_is_dropped(qtbot: QtBot, sidebar: Sidebar) -> None:
    sidebar.filter_edit.setText("guidebook")
    qtbot.waitUntil(lambda: sidebar.titles() == ["Trip to Lisbon"])
    sidebar.filter_edit.setText("budg")
    sidebar._mentions_arrived("guidebook", ["trip"])  # an answer for the old words
    assert sidebar.titles() == ["Budget"]
    qtbot.waitUntil(lambda: sidebar._mentions_for == "budg")
    assert sidebar.titles() == ["Budget"]
