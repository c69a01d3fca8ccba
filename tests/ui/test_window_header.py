"""The window's header on its own: the title elides as its room changes, and asking for
the same title again (every message sent, every reply done) changes nothing (issue 20)."""

from __future__ import annotations

from PySide6.QtGui import QFont
from PySide6.QtWidgets import QApplication, QToolButton
from pytestqt.qtbot import QtBot

from app.core.catalog import FALLBACK_MODELS
from app.core.context import ContextBreakdown, ContextState
from app.ui.window_header import WindowHeader

TITLE = "Help me plan a two week trip to Lisbon and Porto in March"


def settle(header: WindowHeader) -> None:
    QApplication.processEvents()
    header.layout().activate()  # type: ignore[union-attr]
    QApplication.processEvents()


def make_header(qtbot: QtBot, width: int) -> WindowHeader:
    header = WindowHeader()
    qtbot.addWidget(header)
    header.show_models(FALLBACK_MODELS[:3], FALLBACK_MODELS[0].id)
    header.gauge.set_state(
        ContextState(
            breakdown=ContextBreakdown(system=1_200, history=20_000, reserved_output=8_192),
            context_window=200_000,
        )
    )
    header.resize(width, 48)
    header.show()
    qtbot.waitExposed(header)
    header.title_label.setText(TITLE)
    settle(header)
    return header


def test_the_same_title_again_keeps_its_eliding_as_the_header_narrows_and_widens(
    qtbot: QtBot,
) -> None:
    header = make_header(qtbot, 1600)
    label = header.title_label
    assert label.text() == TITLE
    header.resize(520, 48)
    settle(header)
    assert label.text().endswith("…"), "narrow: shortened"
    shortened = label.text()
    label.setText(TITLE)  # asked again, as at every message sent
    settle(header)
    assert label.text() == shortened
    assert label.toolTip() == TITLE
    header.resize(1600, 48)
    settle(header)
    assert label.text() == TITLE, "wide again: whole"
    label.setText(TITLE)
    settle(header)
    assert label.text() == TITLE


def test_the_title_refits_when_the_gauge_needs_more_room_without_a_new_title(
    qtbot: QtBot,
) -> None:
    """The gauge's reserved width grows (a larger font here): the header gives it room at
    once, as it did when the next message set the title again."""
    header = make_header(qtbot, 1600)
    gauge = header.gauge
    before = gauge.sizeHint().width()
    font = QFont(gauge.font())
    font.setPointSizeF(font.pointSizeF() * 1.6)
    gauge.setFont(font)
    settle(header)
    assert gauge.sizeHint().width() > before
    assert gauge.maximumWidth() >= gauge.sizeHint().width()
    assert gauge.width() == gauge.sizeHint().width()
    assert header.title_label.text() == TITLE


def test_the_title_takes_back_a_hidden_buttons_room(qtbot: QtBot) -> None:
    header = make_header(qtbot, 760)
    button = QToolButton(header)
    button.setText("A rather wide button beside the title")
    header.add_after_title(button)
    settle(header)
    squeezed = header.title_label.text()
    assert squeezed.endswith("…")
    button.hide()
    settle(header)
    assert len(header.title_label.text()) > len(squeezed)
