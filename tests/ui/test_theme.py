"""app/ui/theme.py: helpers that keep a widget's colours in step with its palette."""

from __future__ import annotations

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from app.ui.lookup_line import LookupLine
from app.ui.theme import muted_text_colour
from app.ui.thinking_block import ThinkingBlock


def _palette(base: QColor, text: QColor) -> QPalette:
    palette = QPalette()
    palette.setColor(QPalette.ColorRole.Base, base)
    palette.setColor(QPalette.ColorRole.Window, base)
    palette.setColor(QPalette.ColorRole.Text, text)
    palette.setColor(QPalette.ColorRole.WindowText, text)
    return palette


def _text(widget: QWidget) -> QColor:
    return widget.palette().color(QPalette.ColorRole.Text)


def test_folded_lines_stay_muted_when_the_theme_changes(qtbot: QtBot) -> None:
    light = _palette(QColor(255, 255, 255), QColor(20, 20, 20))
    dark = _palette(QColor(30, 30, 30), QColor(230, 230, 230))
    for widget in (ThinkingBlock(), LookupLine()):
        qtbot.addWidget(widget)
        widget.setPalette(light)
        assert _text(widget.toggle) == muted_text_colour(light)
        assert _text(widget.details) == muted_text_colour(light)

        widget.setPalette(dark)
        assert muted_text_colour(dark) != muted_text_colour(light)
        assert _text(widget.toggle) == muted_text_colour(dark)
        assert _text(widget.details).name() == muted_text_colour(dark).name()


def test_the_muted_colour_follows_a_palette_changed_in_place() -> None:
    """Remembered per palette (its cache key): a palette changed after it was asked
    answers with its new colours, as a palette made afresh with them does."""
    palette = _palette(QColor(255, 255, 255), QColor(20, 20, 20))
    light = muted_text_colour(palette)
    assert muted_text_colour(palette) == light
    palette.setColor(QPalette.ColorRole.Base, QColor(30, 30, 30))
    palette.setColor(QPalette.ColorRole.Window, QColor(30, 30, 30))
    palette.setColor(QPalette.ColorRole.Text, QColor(230, 230, 230))
    fresh = _palette(QColor(30, 30, 30), QColor(230, 230, 230))
    assert muted_text_colour(palette) == muted_text_colour(fresh) != light
    shown = muted_text_colour(palette)
    shown.setRed(0)  # the caller's own copy
    assert muted_text_colour(palette) == muted_text_colour(fresh)


def test_a_folded_lines_routine_events_call_no_python(qtbot: QtBot) -> None:
    """Its moves, resizes, layout and update requests reach no Python (no event filter
    follows its palette: its own `changeEvent` does, tested above; issue 20)."""
    import sys
    from types import FrameType

    from PySide6.QtCore import QEvent, QSize
    from PySide6.QtGui import QMoveEvent, QResizeEvent
    from PySide6.QtWidgets import QApplication

    called: list[str] = []

    def profile(frame: FrameType, event: str, _arg: object) -> None:
        if event == "call":
            called.append(f"{frame.f_code.co_filename}:{frame.f_code.co_name}")

    for widget in (ThinkingBlock(), LookupLine()):
        qtbot.addWidget(widget)
        widget.show()
        qtbot.waitExposed(widget)
        events = [
            QEvent(QEvent.Type.LayoutRequest),
            QEvent(QEvent.Type.UpdateRequest),
            QMoveEvent(widget.pos(), widget.pos()),
            QResizeEvent(widget.size(), QSize(widget.width(), widget.height() + 1)),
        ]
        sys.setprofile(profile)
        try:
            for sent in events:
                QApplication.sendEvent(widget, sent)
        finally:
            sys.setprofile(None)
        assert called == []
