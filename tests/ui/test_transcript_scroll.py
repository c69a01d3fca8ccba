"""Where the transcript is scrolled to, kept across a resize of the view: the reader's
place is noted before the scroll area lays out its content for the new size."""

from __future__ import annotations

from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from app.ui.transcript import TranscriptView
from app.ui.transcript_message import MessageWidget
from tests.ui.test_jump_latest import bar_of, view  # noqa: F401  (the fixture)
from tests.ui.test_transcript import wait_for_layout


def top_message(transcript: TranscriptView) -> tuple[MessageWidget, int]:
    """The first message reaching into the view, and its top's offset from the view's top."""
    content = transcript.scroll_area.widget()
    top = bar_of(transcript).value()
    for widget in transcript.message_widgets():
        y = widget.mapTo(content, QPoint(0, 0)).y()
        if y + widget.height() > top:
            return widget, y - top
    raise AssertionError("no message in view")


def resize_to(qtbot: QtBot, transcript: TranscriptView, width: int, height: int) -> None:
    transcript.resize(width, height)
    qtbot.waitUntil(lambda: transcript.width() == width and transcript.height() == height)
    wait_for_layout(qtbot, transcript)


def test_reading_further_up_the_same_message_stays_in_place_through_resizes(
    view: TranscriptView,  # noqa: F811
    qtbot: QtBot,
) -> None:
    bar = bar_of(view)
    bar.setValue(bar.maximum() // 3)  # as the user's wheel does
    QApplication.processEvents()
    widget, offset = top_message(view)
    assert 0 < bar.value() < bar.maximum()
    for width, height in ((520, 600), (520, 420), (900, 650)):
        resize_to(qtbot, view, width, height)
        assert top_message(view) == (widget, offset), (width, height)
        assert 0 < bar.value() < bar.maximum()


def test_at_the_bottom_a_resize_stays_at_the_bottom(
    view: TranscriptView,  # noqa: F811
    qtbot: QtBot,
) -> None:
    bar = bar_of(view)
    assert bar.value() == bar.maximum() > 0
    for width, height in ((520, 600), (520, 420), (900, 650)):
        resize_to(qtbot, view, width, height)
        assert bar.value() == bar.maximum(), (width, height)


def test_the_place_is_noted_for_the_areas_own_resize_not_the_viewports(
    view: TranscriptView,  # noqa: F811
    qtbot: QtBot,
) -> None:
    """The jump band (the viewport's margin) or a scroll bar showing changes the viewport
    only: a message held in place (a card unfolding) stays the one held."""
    area = view.scroll_area
    noted: list[str] = []
    area.resizing.connect(lambda: noted.append("resizing"))
    area.viewport_resized.connect(lambda: noted.append("viewport"))
    area.setViewportMargins(0, 0, 0, 30)
    assert noted == ["viewport"]
    noted.clear()
    resize_to(qtbot, view, 700, 500)
    assert noted[:2] == ["resizing", "viewport"] and "resizing" not in noted[2:]


def test_the_views_routine_events_call_no_python(
    view: TranscriptView,  # noqa: F811
    qtbot: QtBot,
) -> None:
    """A layout request or a move (sent, not made) of the viewport, the scroll area or
    the view reaches no Python event filter (issue 20: each was a call into Python,
    waiting for the GIL)."""
    import sys
    from types import FrameType

    from PySide6.QtCore import QEvent
    from PySide6.QtGui import QMoveEvent

    called: list[str] = []

    def profile(frame: FrameType, event: str, _arg: object) -> None:
        if event == "call" and frame.f_code.co_name == "eventFilter":
            called.append(frame.f_code.co_filename)

    watched: list[QWidget] = [view, view.scroll_area, view.scroll_area.viewport()]
    sys.setprofile(profile)
    try:
        for widget in watched:
            QApplication.sendEvent(widget, QEvent(QEvent.Type.LayoutRequest))
            QApplication.sendEvent(widget, QMoveEvent(widget.pos(), widget.pos()))
    finally:
        sys.setprofile(None)
    assert called == []
