"""Tab follows reading order: the conversations, the header left to right, the
transcript top to bottom, then the message box (issue 23)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from app.ui.app import CairnSession
from tests.fakes.anthropic_server import FakeAnthropicServer


def pane_of(cairn: CairnSession, widget: QWidget) -> str:
    window = cairn.window
    for name, pane in (
        ("sidebar", window.sidebar),
        ("header", window.header),
        ("transcript", window.transcript),
        ("composer", window.composer),
    ):
        if pane is widget or pane.isAncestorOf(widget):
            return name
    return "other"


def tab_walk(qtbot: QtBot, cairn: CairnSession, start: QWidget, steps: int) -> list[QWidget]:
    start.setFocus(Qt.FocusReason.OtherFocusReason)
    seen: list[QWidget] = []
    for _ in range(steps):
        focused = QApplication.focusWidget()
        assert focused is not None
        seen.append(focused)
        qtbot.keyClick(focused, Qt.Key.Key_Tab)
    return seen


# Tab into the gauge shows its breakdown, a tooltip the offscreen platform cannot raise.
@pytest.mark.qt_log_ignore("This plugin does not support raise")
def test_tab_goes_sidebar_header_left_to_right_transcript_composer(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    window = cairn.window
    for question in ("First question?", "Second question?"):
        fake_server.add_reply(f"An answer to “{question}”")
        window.composer.editor.setPlainText(question)
        qtbot.keyClick(window.composer.editor, Qt.Key.Key_Return)
        qtbot.waitUntil(lambda: not window.chat.current.state.activity.busy, timeout=15_000)
    stops = window.reading_order.stops()
    walk = tab_walk(qtbot, cairn, stops[0], len(stops) + 1)
    assert walk[-1] is walk[0], "round the window and back to the start"
    panes = [pane_of(cairn, widget) for widget in walk[:-1]]
    order = ["sidebar", "header", "transcript", "composer"]
    ranks = [order.index(pane) for pane in panes if pane in order]
    assert ranks == sorted(ranks), panes
    assert set(panes) >= {"sidebar", "header", "transcript", "composer"}
    header = [w.mapTo(window, QPoint(0, 0)).x() for w in walk if pane_of(cairn, w) == "header"]
    assert header == sorted(header) and len(header) >= 3, "the header left to right"
    assert window.header.model_combo in walk and window.header.settings_button in walk
    messages = [w for w in walk if w in window.transcript.message_widgets()]
    assert [m.message.seq for m in messages] == sorted(m.message.seq for m in messages)
    assert len(messages) == 4

    # Shift+Tab walks the same way back (from the second stop, where the walk ended).
    back: list[QWidget] = []
    for _ in range(len(stops)):
        focused = QApplication.focusWidget()
        assert focused is not None
        qtbot.keyClick(focused, Qt.Key.Key_Backtab, Qt.KeyboardModifier.ShiftModifier)
        back.append(QApplication.focusWidget())  # type: ignore[arg-type]
    assert back == [walk[0], *reversed(walk[1:-1])]
