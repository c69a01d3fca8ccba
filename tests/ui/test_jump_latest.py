""" "Jump to latest" while the user reads further up, and sending scrolls to the message sent."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QScrollBar, QWidget
from pytestqt.qtbot import QtBot

from app.core.models import MessageStatus, Role
from app.ui.jump_latest import JUMP_TEXT, NEW_REPLY_TEXT
from app.ui.transcript import TranscriptView
from tests.ui.test_transcript import NOW, conversation, make_message


@pytest.fixture
def view(qtbot: QtBot) -> Iterator[TranscriptView]:
    host = QWidget()  # no layout: see tests/ui/test_transcript.py
    qtbot.addWidget(host)
    host.resize(1000, 700)
    widget = TranscriptView(host, clock=lambda: NOW)
    widget.resize(800, 600)
    host.show()
    qtbot.waitExposed(host)
    widget.set_messages(conversation(30), has_earlier=False)
    qtbot.waitUntil(lambda: not widget.building)
    bar = widget.scroll_area.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0 and bar.value() == bar.maximum())
    yield widget


def bar_of(view: TranscriptView) -> QScrollBar:
    return view.scroll_area.verticalScrollBar()


def scroll_up(qtbot: QtBot, view: TranscriptView) -> None:
    bar = bar_of(view)
    bar.setValue(bar.maximum() // 2)  # as the user's wheel does
    # Looked at once the event loop turns (not after some delay).
    QApplication.processEvents()
    assert view.jump.button.isVisible()


def test_the_button_shows_only_away_from_the_bottom(view: TranscriptView, qtbot: QtBot) -> None:
    button = view.jump.button
    QApplication.processEvents()
    assert not button.isVisible()
    scroll_up(qtbot, view)
    assert button.text() == JUMP_TEXT
    assert button.accessibleName() == "Jump to latest"
    # Centred in a band below what is on screen: it never covers the transcript (a
    # card's Undo or Copy at the bottom of the view stays clickable).
    scroll_area = view.scroll_area
    viewport = scroll_area.viewport().geometry()
    assert button.parentWidget() is scroll_area
    assert scroll_area.viewportMargins().bottom() >= button.height()
    assert not viewport.intersects(button.geometry())
    assert button.geometry().top() > viewport.bottom()
    assert abs(button.geometry().center().x() - viewport.center().x()) <= 1
    bar = bar_of(view)
    bar.setValue(bar.maximum())  # the user scrolls back down by hand
    qtbot.waitUntil(lambda: not button.isVisible())
    assert scroll_area.viewportMargins().bottom() == 0, "the band goes with the button"


def test_clicking_it_goes_down_and_follows_again(view: TranscriptView, qtbot: QtBot) -> None:
    scroll_up(qtbot, view)
    qtbot.mouseClick(view.jump.button, Qt.MouseButton.LeftButton)
    bar = bar_of(view)
    qtbot.waitUntil(lambda: bar.value() == bar.maximum())
    assert not view.jump.button.isVisible()
    # Following again: new text keeps the view at the bottom.
    old_maximum = bar.maximum()
    view.append_message(make_message(31, "More\n\nand more\n\nand more"))
    qtbot.waitUntil(lambda: bar.maximum() > old_maximum and bar.value() == bar.maximum())


def test_end_goes_down_from_the_keyboard(view: TranscriptView, qtbot: QtBot) -> None:
    scroll_up(qtbot, view)
    view.scroll_area.setFocus(Qt.FocusReason.TabFocusReason)
    qtbot.keyClick(view.scroll_area, Qt.Key.Key_End)
    bar = bar_of(view)
    assert bar.value() == bar.maximum()
    qtbot.waitUntil(lambda: not view.jump.button.isVisible())


def test_a_reply_arriving_below_is_announced(view: TranscriptView, qtbot: QtBot) -> None:
    scroll_up(qtbot, view)
    held = bar_of(view).value()
    view.append_message(make_message(31, "", status=MessageStatus.STREAMING))
    qtbot.waitUntil(lambda: view.jump.button.text() == NEW_REPLY_TEXT)
    assert view.jump.new_below
    assert bar_of(view).value() == held  # the user's reading place is kept
    qtbot.mouseClick(view.jump.button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not view.jump.button.isVisible())
    assert not view.jump.new_below
    scroll_up(qtbot, view)
    assert view.jump.button.text() == JUMP_TEXT  # told once, not for ever


def test_sending_scrolls_to_the_message_even_from_far_up(
    view: TranscriptView, qtbot: QtBot
) -> None:
    scroll_up(qtbot, view)
    view.append_message(make_message(31, "My new question", role=Role.USER))
    bar = bar_of(view)
    sent = view.message_widget(31)
    assert sent is not None
    qtbot.waitUntil(lambda: bar.value() == bar.maximum() and not sent.visibleRegion().isEmpty())
    qtbot.waitUntil(lambda: not view.jump.button.isVisible())


def test_older_messages_built_above_are_no_news(view: TranscriptView, qtbot: QtBot) -> None:
    view.set_messages(conversation(60)[30:], has_earlier=True)
    qtbot.waitUntil(lambda: not view.building)
    scroll_up(qtbot, view)
    view.prepend_messages(conversation(60)[:30], has_earlier=False)
    QApplication.processEvents()
    assert view.jump.button.text() == JUMP_TEXT
    assert not view.jump.new_below
