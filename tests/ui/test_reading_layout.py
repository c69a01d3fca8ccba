"""The window as a reader meets it: the composer under the message column, the text
size on Ctrl+plus / Ctrl+minus / Ctrl+0 (kept across restarts), and tooltips on screen."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtWidgets import QApplication, QSplitter, QToolTip, QWidget
from pytestqt.qtbot import QtBot

from app.core.paths import AppPaths
from app.ui.app import CairnSession
from app.ui.text_size import DEFAULT_SIZE, LARGEST, SMALLEST
from app.ui.tooltip_place import show_tooltip_on_screen, shown_tooltip, within
from app.ui.transcript_blocks import CodeBlock
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.helpers.window import chat

CTRL = Qt.KeyboardModifier.ControlModifier


def left_right(widget: QWidget, window: QWidget) -> tuple[int, int]:
    left = widget.mapTo(window, QPoint(0, 0)).x()
    return left, left + widget.width()


def message_area(cairn: CairnSession) -> tuple[int, int]:
    """Where a message's text may go, as the laid-out column says."""
    column = cairn.window.transcript.message_column
    margins = column.layout().contentsMargins()  # type: ignore[union-attr]
    left, right = left_right(column, cairn.window)
    return left + margins.left(), right - margins.right()


def saved_settings() -> dict[str, object]:
    path = AppPaths.from_environment().settings_file
    if not path.exists():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


@pytest.mark.parametrize("size", [(2560, 1440), (800, 600)], ids=["wide", "small"])
def test_the_composer_spans_the_message_column(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer, size: tuple[int, int]
) -> None:
    window = cairn.window
    fake_server.add_reply("A reply long enough to fill a line of the column, and more besides.")
    chat(qtbot, cairn, "A first question")
    before = window.transcript.width()
    window.resize(*size)

    def aligned() -> bool:
        start, end = message_area(cairn)
        # The row starts with the paperclip, then the box, then the button.
        box_left, _ = left_right(window.composer.paperclip, window)
        _, button_right = left_right(window.composer.button, window)
        return abs(box_left - start) <= 1 and abs(button_right - end) <= 1

    qtbot.waitUntil(lambda: window.transcript.width() != before)  # laid out at the new size
    qtbot.waitUntil(aligned)
    if size[0] == 2560:
        # The column is centred and narrower than the window: so is the composer.
        assert window.composer.editor.width() < window.transcript.width() // 2


@pytest.mark.parametrize("sidebar", [180, 420, 700])
def test_the_composer_follows_the_column_as_the_sidebar_is_dragged(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer, sidebar: int
) -> None:
    """The splitter moves the conversation's pane and changes its width, not the
    window's: the composer is aligned again all the same."""
    window = cairn.window
    window.resize(1600, 900)
    fake_server.add_reply("A reply long enough to fill a line of the column, and more besides.")
    chat(qtbot, cairn, "A first question")
    splitter = window.centralWidget()
    assert isinstance(splitter, QSplitter)
    before = window.transcript.width()
    splitter.setSizes([sidebar, splitter.width() - sidebar])

    def aligned() -> bool:
        start, end = message_area(cairn)
        box_left, _ = left_right(window.composer.paperclip, window)
        _, button_right = left_right(window.composer.button, window)
        return abs(box_left - start) <= 1 and abs(button_right - end) <= 1

    qtbot.waitUntil(lambda: window.transcript.width() != before)
    qtbot.waitUntil(aligned)


def test_the_composer_is_aligned_before_any_message_too(qtbot: QtBot, cairn: CairnSession) -> None:
    window = cairn.window
    transcript = window.transcript
    before = transcript.width()
    window.resize(2000, 1000)
    qtbot.waitUntil(lambda: transcript.width() != before)
    assert not transcript.scroll_area.isVisible()  # the empty state shows
    left, right = left_right(transcript, window)
    column = transcript.message_column.maximumWidth()
    qtbot.waitUntil(
        lambda: (
            abs(
                left_right(window.composer.paperclip, window)[0]
                - ((left + right - column) // 2 + 28)
            )
            <= 1
        )
    )


def test_text_size_keys_change_transcript_and_composer_and_are_kept(
    qtbot: QtBot,
    open_window: Callable[[], CairnSession],
    with_key: str,
    fake_server: FakeAnthropicServer,
) -> None:
    cairn = open_window()
    window = cairn.window
    fake_server.add_reply("Try:\n\n```python\nprint('hi')\n```")
    chat(qtbot, cairn, "How do I print?")
    assert window.transcript.font().pointSize() == DEFAULT_SIZE
    assert window.composer.editor.font().pointSize() == DEFAULT_SIZE
    block = next(b for w in window.transcript.message_widgets() for b in w.findChildren(CodeBlock))
    label = block._language
    share = label.font().pointSizeF() / block.font().pointSizeF()

    editor = window.composer.editor
    qtbot.keyClick(editor, Qt.Key.Key_Plus, CTRL)
    qtbot.keyClick(editor, Qt.Key.Key_Equal, CTRL)  # where plus needs Shift, Ctrl+= does too
    assert window.transcript.font().pointSize() == DEFAULT_SIZE + 2
    assert editor.font().pointSize() == DEFAULT_SIZE + 2
    assert block.font().pointSize() == DEFAULT_SIZE + 2
    assert label.font().pointSizeF() / block.font().pointSizeF() == pytest.approx(share, abs=0.01)
    assert window.header.font().pointSize() != DEFAULT_SIZE + 2  # only the conversation
    qtbot.keyClick(editor, Qt.Key.Key_Minus, CTRL)
    assert window.transcript.font().pointSize() == DEFAULT_SIZE + 1
    qtbot.waitUntil(lambda: saved_settings().get("font_size") == DEFAULT_SIZE + 1)

    window.close()
    cairn.close()
    again = open_window()
    assert again.window.transcript.font().pointSize() == DEFAULT_SIZE + 1
    assert again.window.composer.editor.font().pointSize() == DEFAULT_SIZE + 1
    qtbot.keyClick(again.window.composer.editor, Qt.Key.Key_0, CTRL)
    assert again.window.transcript.font().pointSize() == DEFAULT_SIZE
    again.window.close()  # saved on closing, without waiting
    assert saved_settings().get("font_size") == DEFAULT_SIZE


def test_text_size_stays_within_the_settings_limits(qtbot: QtBot, cairn: CairnSession) -> None:
    size = cairn.window.reading.text_size
    for _ in range(40):
        size.larger()
    assert size.size == LARGEST
    assert not size.larger_action.isEnabled()
    editor = cairn.window.composer.editor
    # The empty box grew with the size: its placeholder's line is not cut off.
    QApplication.processEvents()
    assert editor.viewport().height() >= editor.fontMetrics().lineSpacing()
    for _ in range(40):
        size.smaller()
    assert size.size == SMALLEST
    assert cairn.window.transcript.font().pointSize() == SMALLEST
    view_menu = next(a.menu() for a in cairn.window.menuBar().actions() if a.text() == "&View")
    assert size.reset_action in view_menu.actions()  # type: ignore[union-attr]


def test_within_moves_a_rectangle_the_least_into_an_area() -> None:
    area = QRect(0, 0, 800, 600)
    assert within(QRect(700, 550, 200, 100), area) == QRect(600, 500, 200, 100)
    assert within(QRect(-30, 10, 200, 100), area) == QRect(0, 10, 200, 100)
    assert within(QRect(100, 100, 50, 50), area) == QRect(100, 100, 50, 50)
    assert within(QRect(300, 300, 900, 100), area).left() == 0  # too wide: starts at the edge


# Offscreen windows cannot be raised; Qt says so when a tooltip shows in a corner.
@pytest.mark.qt_log_ignore("This plugin does not support raise")
def test_the_gauge_breakdown_stays_on_screen_in_a_corner(qtbot: QtBot, cairn: CairnSession) -> None:
    gauge = cairn.window.header.gauge
    available = gauge.screen().availableGeometry()
    corner = available.bottomRight() - QPoint(2, 2)
    try:
        show_tooltip_on_screen(corner, gauge.toolTip(), gauge)
        tip = shown_tooltip()
        assert tip is not None
        assert available.contains(tip.frameGeometry())
        QToolTip.hideText()
        qtbot.waitUntil(lambda: shown_tooltip() is None)
        # The gauge's own hover path goes the same way.
        gauge._show_breakdown(corner)
        tip = shown_tooltip()
        assert tip is not None and available.contains(tip.frameGeometry())
    finally:
        QToolTip.hideText()
