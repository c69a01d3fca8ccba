"""Pins: the pin on a message's header (on hover, focus, or when pinned), its menu by
mouse and keyboard, and in the running app a pinned message is never condensed."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication, QMenu, QWidget
from pytestqt.qtbot import QtBot

from app.core.models import Message, MessageStatus, Role
from app.ui.app import CairnSession
from app.ui.message_header import PINNED_TIP
from app.ui.transcript_message import PIN_ACTION, UNPIN_ACTION, MessageWidget
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.helpers.window import chat
from tests.ui.test_summarize_now import fill, summary_done

NOW = datetime(2026, 3, 5, 14, 0, tzinfo=UTC)


def make_message(pinned: bool = False, status: MessageStatus = MessageStatus.COMPLETE) -> Message:
    return Message(
        id=7,
        session_id="session",
        seq=7,
        role=Role.USER,
        content="The budget is 4,200 EUR.",
        created_at=NOW,
        status=status,
        pinned=pinned,
    )


@pytest.fixture
def host(qtbot: QtBot) -> Iterator[QWidget]:
    host = QWidget()
    qtbot.addWidget(host)
    host.resize(700, 200)
    host.show()
    qtbot.waitExposed(host)
    yield host


def shown(qtbot: QtBot, host: QWidget, message: Message) -> MessageWidget:
    widget = MessageWidget(message, NOW, host, width=600)
    widget.move(10, 10)
    widget.show()
    qtbot.waitUntil(widget.isVisible)
    return widget


def close_popups() -> None:
    while (popup := QApplication.activePopupWidget()) is not None:
        popup.close()


def test_the_pin_shows_on_hover_and_pins(qtbot: QtBot, host: QWidget) -> None:
    widget = shown(qtbot, host, make_message())
    assert widget.header.pin is None, "no pin widget until it is wanted"
    qtbot.mouseMove(widget, QPoint(20, 10))
    qtbot.waitUntil(lambda: widget.header.pin is not None)
    pin = widget.header.pin
    assert pin is not None and pin.isVisible() and not pin.isChecked()
    assert pin.accessibleName() == "Pin: never summarize this message"
    with qtbot.waitSignal(widget.pin_requested) as requested:
        qtbot.mouseClick(pin, Qt.MouseButton.LeftButton)
    assert requested.args == [7, True]
    assert not pin.isChecked(), "it shows pinned only once the service says so"
    widget.set_message(make_message(pinned=True))
    assert pin.isChecked() and pin.toolTip() == PINNED_TIP
    assert widget.accessibleName().endswith(", pinned")
    qtbot.mouseMove(host, QPoint(690, 190))
    qtbot.waitUntil(lambda: not widget.underMouse())
    assert pin.isVisible(), "a pinned message stays marked"


def test_a_pinned_message_is_marked_without_hover(qtbot: QtBot, host: QWidget) -> None:
    widget = shown(qtbot, host, make_message(pinned=True))
    pin = widget.header.pin
    assert pin is not None and pin.isVisible() and pin.isChecked()
    assert pin.toolTip() == "Pinned — never summarized"
    widget.set_message(make_message(pinned=False))
    assert not pin.isVisible()


def test_a_reply_being_written_offers_no_pin(qtbot: QtBot, host: QWidget) -> None:
    widget = shown(qtbot, host, make_message(status=MessageStatus.STREAMING))
    widget.setFocus(Qt.FocusReason.TabFocusReason)
    assert widget.header.pin is None
    assert not widget.context_menu().actions()[0].isEnabled()


def test_the_menu_pins_and_unpins(qtbot: QtBot, host: QWidget) -> None:
    widget = shown(qtbot, host, make_message())
    (action,) = widget.context_menu().actions()
    assert action.text() == PIN_ACTION
    with qtbot.waitSignal(widget.pin_requested) as requested:
        action.trigger()
    assert requested.args == [7, True]
    widget.set_message(make_message(pinned=True))
    (action,) = widget.context_menu().actions()
    assert action.text() == UNPIN_ACTION
    with qtbot.waitSignal(widget.pin_requested) as requested:
        action.trigger()
    assert requested.args == [7, False]


# The offscreen platform cannot raise a popup or grab the keyboard for it; harmless here.
@pytest.mark.qt_log_ignore(
    "This plugin does not support raise", "This plugin does not support grabbing"
)
@pytest.mark.parametrize(
    ("key", "modifier"),
    [
        (Qt.Key.Key_Menu, Qt.KeyboardModifier.NoModifier),
        (Qt.Key.Key_F10, Qt.KeyboardModifier.ShiftModifier),
    ],
)
def test_the_menu_opens_from_the_keyboard(
    qtbot: QtBot, host: QWidget, key: Qt.Key, modifier: Qt.KeyboardModifier
) -> None:
    widget = shown(qtbot, host, make_message())
    assert widget.focusPolicy() & Qt.FocusPolicy.TabFocus
    widget.setFocus(Qt.FocusReason.TabFocusReason)
    qtbot.waitUntil(widget.hasFocus)
    pin = widget.header.pin
    assert pin is not None and pin.isVisible(), "focus offers the pin as hover does"
    qtbot.keyClick(widget, key, modifier)
    qtbot.waitUntil(lambda: isinstance(QApplication.activePopupWidget(), QMenu))
    menu = QApplication.activePopupWidget()
    assert isinstance(menu, QMenu)
    assert [a.text() for a in menu.actions()] == [PIN_ACTION]
    close_popups()


def test_a_pinned_message_is_never_condensed_in_the_app(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    window = cairn.window
    fill(qtbot, cairn)
    target = window.transcript.message_widgets()[2]
    (action,) = target.context_menu().actions()
    action.trigger()
    qtbot.waitUntil(lambda: target.message.pinned)
    pin = target.header.pin
    assert pin is not None and pin.isChecked() and pin.isVisible()
    window.summaries.summarize_action.trigger()
    qtbot.waitUntil(lambda: summary_done(cairn), timeout=15_000)
    (stored,) = cairn.store.messages_by_id({target.message.id})
    assert stored.pinned and stored.summary_id is None
    assert cairn.controller.service.current.state.tail.find(target.message.id) is not None
    assert cairn.controller.service.current.state.summaries, "the others were condensed"
    chat(qtbot, cairn, "Still there?")
