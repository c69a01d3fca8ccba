"""The token gauge: text, colours in both themes, size, painting and keyboard access."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QColor, QFontMetricsF, QHelpEvent, QImage, QKeyEvent, QPalette, QPixmap
from PySide6.QtWidgets import QApplication, QLineEdit, QToolTip, QVBoxLayout, QWidget
from pytestqt.qtbot import QtBot

from app.core.caching import CacheUse
from app.core.context import ContextBreakdown, ContextState
from app.ui import theme
from app.ui.gauge_text import (
    FIRST_EXPLANATION,
    GAUGE_NAME,
    Band,
    gauge_text,
    tooltip_html,
    widest_texts,
)
from app.ui.token_gauge import COMPACT_BAR_WIDTH, TokenGauge

WINDOW = 200_000
RESERVED = 8_000

# One state in each band, 192k usable: 12 %, 72 %, 85 %, over the limit.
BAND_STATES = {
    Band.OK: 23_040,
    Band.APPROACHING: 138_240,
    Band.SUMMARY_DUE: 163_200,
    Band.FULL: 205_000,
}


def make_state(used: int, *, window: int = WINDOW, reserved: int = RESERVED) -> ContextState:
    breakdown = ContextBreakdown(system=min(used, 1_200), history=max(0, used - 1_200))
    return ContextState(
        breakdown=ContextBreakdown(
            system=breakdown.system, history=breakdown.history, reserved_output=reserved
        ),
        context_window=window,
    )


def palette_of(colours: dict[QPalette.ColorRole, str]) -> QPalette:
    palette = QPalette()
    for role, value in colours.items():
        palette.setColor(role, QColor(value))
    return palette


PALETTES = {"light": palette_of(theme.LIGHT), "dark": palette_of(theme.DARK)}


def relative_luminance(colour: QColor) -> float:
    """WCAG 2 relative luminance of an sRGB colour."""

    def linear(channel: float) -> float:
        return channel / 12.92 if channel <= 0.04045 else ((channel + 0.055) / 1.055) ** 2.4

    return (
        0.2126 * linear(colour.redF())
        + 0.7152 * linear(colour.greenF())
        + 0.0722 * linear(colour.blueF())
    )


def contrast(first: QColor, second: QColor) -> float:
    lighter, darker = sorted((relative_luminance(first), relative_luminance(second)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


@pytest.fixture
def gauge(qtbot: QtBot) -> TokenGauge:
    widget = TokenGauge()
    qtbot.addWidget(widget)
    return widget


@pytest.fixture
def no_tooltip(qtbot: QtBot) -> Iterator[None]:
    """Leave no tooltip up for the next test."""
    yield
    QToolTip.hideText()
    qtbot.waitUntil(lambda: not QToolTip.isVisible())


def test_nothing_to_show_yet(gauge: TokenGauge) -> None:
    assert gauge.state is None
    assert gauge.text() == ""
    assert gauge.band() is None
    assert gauge.accessibleName() == GAUGE_NAME
    assert gauge.accessibleDescription().startswith("Nothing yet")
    assert gauge.toolTip() == tooltip_html(None, first_time=True)


def test_set_state_shows_the_figures(gauge: TokenGauge) -> None:
    state = make_state(65_280)
    gauge.set_state(state)
    assert gauge.state is state
    assert gauge.text() == "Plenty of room"
    assert gauge.band() is Band.OK
    assert gauge.toolTip() == tooltip_html(state, first_time=True)
    assert gauge.accessibleName() == GAUGE_NAME
    assert gauge.accessibleDescription().startswith("Plenty of room: 34 % used.")


def test_full_says_so_in_the_text(gauge: TokenGauge) -> None:
    gauge.set_state(make_state(205_000))
    assert gauge.text() == "Full"
    assert gauge.accessibleDescription().startswith("Full: the next message would not fit")
    assert "<b>Full</b>" in gauge.toolTip()
    assert "<b>205k of 192k</b>" in gauge.toolTip()


def test_back_to_nothing(gauge: TokenGauge) -> None:
    gauge.set_state(make_state(65_280))
    gauge.set_state(None)
    assert gauge.state is None
    assert gauge.text() == ""
    assert gauge.accessibleDescription().startswith("Nothing yet")


@pytest.mark.parametrize("expected", list(Band))
def test_each_band_is_named_in_words(gauge: TokenGauge, expected: Band) -> None:
    gauge.set_state(make_state(BAND_STATES[expected]))
    assert gauge.band() is expected
    assert gauge.accessibleDescription().startswith(f"{expected.word}:")
    assert f"<b>{expected.word}</b>" in gauge.toolTip()
    assert gauge.text() == expected.word


@pytest.mark.parametrize("name", ["light", "dark"])
@pytest.mark.parametrize("current", list(Band))
def test_readable_in_both_themes(gauge: TokenGauge, name: str, current: Band) -> None:
    palette = PALETTES[name]
    gauge.setPalette(palette)
    gauge.set_state(make_state(BAND_STATES[current]))
    colours = gauge.colours()
    window = palette.color(QPalette.ColorRole.Window)
    assert contrast(colours.text, window) >= 4.5  # WCAG AA for text
    # WCAG 1.4.11 for the parts of a graphic: 3:1 against what they sit on.
    assert contrast(colours.fill, colours.track) >= 3.0
    assert contrast(colours.fill, window) >= 3.0
    assert contrast(colours.tick, colours.track) >= 3.0
    assert contrast(colours.tick, colours.fill) >= 3.0 or contrast(colours.tick, window) >= 3.0


def test_every_band_has_its_own_fill(gauge: TokenGauge) -> None:
    for palette in PALETTES.values():
        gauge.setPalette(palette)
        fills = set()
        for used in BAND_STATES.values():
            gauge.set_state(make_state(used))
            fills.add(gauge.colours().fill.name())
        assert len(fills) == len(Band)


@pytest.fixture
def themed_app(qapp: QApplication) -> Iterator[QApplication]:
    """apply_theme changes the whole application; put its palette back afterwards."""
    palette = QPalette(qapp.palette())
    dark = qapp.property("cairnDarkTheme")
    yield qapp
    qapp.setPalette(palette)
    qapp.setProperty("cairnDarkTheme", dark)


def test_follows_the_applied_theme(
    qtbot: QtBot, themed_app: QApplication, gauge: TokenGauge
) -> None:
    gauge.set_state(make_state(BAND_STATES[Band.FULL]))

    def window_colour() -> str:
        return gauge.palette().color(QPalette.ColorRole.Window).name()

    theme.apply_theme(themed_app, "light")
    qtbot.waitUntil(lambda: window_colour() == theme.LIGHT[QPalette.ColorRole.Window])
    light = gauge.colours()
    theme.apply_theme(themed_app, "dark")
    qtbot.waitUntil(lambda: window_colour() == theme.DARK[QPalette.ColorRole.Window])
    dark = gauge.colours()
    assert light.fill != dark.fill
    assert relative_luminance(dark.text) > relative_luminance(light.text)
    assert dark.text.name() != theme.DARK[QPalette.ColorRole.Window]


def _text_fits(widget: TokenGauge, text: str) -> bool:
    advance = QFontMetricsF(widget.text_font()).horizontalAdvance(text)
    return advance <= widget.text_rect().width()


@pytest.mark.parametrize("point_size", [9.0, 11.0, 16.0])
def test_size_hint_fits_the_longest_text(gauge: TokenGauge, point_size: float) -> None:
    font = gauge.font()
    font.setPointSizeF(point_size)
    gauge.setFont(font)
    for hint in (gauge.sizeHint(), gauge.minimumSizeHint()):
        gauge.resize(hint)
        for text in (*widest_texts(), *(member.word for member in Band)):
            assert _text_fits(gauge, text), (hint, text)
        metrics = QFontMetricsF(gauge.text_font())
        assert hint.height() >= metrics.height()
    assert gauge.sizeHint().width() > gauge.minimumSizeHint().width()


def test_width_stays_put_for_plausible_figures(gauge: TokenGauge) -> None:
    """The header must not jump while the user types or switches model."""
    hint = gauge.sizeHint()
    gauge.resize(hint)
    for window in (8_192, 32_000, 200_000, 1_000_000):
        for share in (0.0, 0.0049, 0.123, 0.7, 0.8, 0.999, 1.0, 1.07, 5.0):
            gauge.set_state(make_state(round(window * share), window=window, reserved=0))
            assert gauge.sizeHint() == hint, gauge.text()
            assert _text_fits(gauge, gauge.text()), gauge.text()


def test_an_extraordinary_text_grows_the_widget(gauge: TokenGauge) -> None:
    before = gauge.sizeHint().width()
    gauge.set_state(make_state(88_888_888_888, window=888_888_888))
    assert gauge.sizeHint().width() >= before
    gauge.resize(gauge.sizeHint())
    assert _text_fits(gauge, gauge.text())


class _PaintCounter(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.paints = 0

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.paints += 1
        return False


def test_keystroke_updates_are_coalesced(qtbot: QtBot, gauge: TokenGauge) -> None:
    gauge.show()
    qtbot.waitExposed(gauge)
    counter = _PaintCounter()
    gauge.installEventFilter(counter)
    for draft in range(50):
        gauge.set_state(make_state(10_000 + draft * 4))
    assert counter.paints == 0  # set_state schedules, never paints itself
    qtbot.waitUntil(lambda: counter.paints >= 1)
    assert counter.paints <= 2
    assert gauge.text() == gauge_text(make_state(10_196))
    gauge.removeEventFilter(counter)


def _grab(gauge: TokenGauge, ratio: float = 1.0) -> QImage:
    pixmap = QPixmap(gauge.size() * ratio)
    pixmap.setDevicePixelRatio(ratio)
    pixmap.fill(gauge.palette().color(QPalette.ColorRole.Window))
    gauge.render(pixmap)
    return pixmap.toImage()


@pytest.mark.parametrize("ratio", [1.0, 1.5, 2.0])
@pytest.mark.parametrize("name", ["light", "dark"])
def test_paints_fill_track_and_tick(gauge: TokenGauge, name: str, ratio: float) -> None:
    gauge.setPalette(PALETTES[name])
    gauge.resize(gauge.sizeHint())
    gauge.set_state(make_state(BAND_STATES[Band.APPROACHING]))  # 72 %, trigger at 80 %
    image = _grab(gauge, ratio)
    colours = gauge.colours()
    bar = gauge.bar_rect()
    y = round(bar.center().y() * ratio)

    def at(share: float) -> QColor:
        return image.pixelColor(round((bar.left() + bar.width() * share) * ratio), y)

    assert at(0.3).name() == colours.fill.name()
    assert at(0.76).name() == colours.track.name()
    assert at(0.95).name() == colours.track.name()
    assert at(0.8).name() == colours.tick.name()


def test_paints_every_band_and_focus_without_warnings(qtbot: QtBot, gauge: TokenGauge) -> None:
    gauge.show()
    qtbot.waitExposed(gauge)
    for palette in PALETTES.values():
        gauge.setPalette(palette)
        for state in (None, *(make_state(used) for used in BAND_STATES.values())):
            gauge.set_state(state)
            assert not gauge.grab().isNull()
        gauge.set_state(make_state(1))  # nearly empty: still a visible dot
        assert not gauge.grab().isNull()


# Showing a tooltip raises its window, which the offscreen platform cannot do.
@pytest.mark.qt_log_ignore("This plugin does not support raise")
def test_reachable_with_tab_and_shows_the_breakdown(qtbot: QtBot, no_tooltip: None) -> None:
    window = QWidget()
    qtbot.addWidget(window)
    field = QLineEdit(window)
    gauge = TokenGauge(window)
    layout = QVBoxLayout(window)
    layout.addWidget(field)
    layout.addWidget(gauge)
    gauge.set_state(make_state(BAND_STATES[Band.SUMMARY_DUE]))
    window.show()
    window.activateWindow()
    qtbot.waitActive(window)
    field.setFocus()
    qtbot.waitUntil(field.hasFocus)

    assert gauge.focusPolicy() == Qt.FocusPolicy.TabFocus
    # Keys go to the window, so each press and release reaches whichever widget has focus.
    keyboard = window.windowHandle()
    qtbot.keyClick(keyboard, Qt.Key.Key_Tab)
    qtbot.waitUntil(gauge.hasFocus)
    qtbot.waitUntil(QToolTip.isVisible)
    assert QToolTip.text() == gauge.toolTip()

    qtbot.keyClick(keyboard, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: not QToolTip.isVisible())
    assert gauge.hasFocus()
    for key in (Qt.Key.Key_Space, Qt.Key.Key_Return):
        qtbot.keyClick(keyboard, key)
        qtbot.waitUntil(QToolTip.isVisible)
        assert QToolTip.text() == gauge.toolTip()
        QToolTip.hideText()
        qtbot.waitUntil(lambda: not QToolTip.isVisible())

    qtbot.keyClick(keyboard, Qt.Key.Key_Space)
    qtbot.waitUntil(QToolTip.isVisible)
    qtbot.keyClick(keyboard, Qt.Key.Key_Tab)  # on through the gauge: the breakdown goes
    qtbot.waitUntil(field.hasFocus)
    qtbot.waitUntil(lambda: not QToolTip.isVisible())


@pytest.mark.qt_log_ignore("This plugin does not support raise")
def test_hovering_shows_the_breakdown_and_it_follows_the_figures(
    qtbot: QtBot, gauge: TokenGauge, no_tooltip: None
) -> None:
    gauge.set_state(make_state(BAND_STATES[Band.OK]))
    gauge.show()
    qtbot.waitExposed(gauge)
    centre = gauge.rect().center()
    hover = QHelpEvent(QEvent.Type.ToolTip, centre, gauge.mapToGlobal(centre))
    QApplication.sendEvent(gauge, hover)
    qtbot.waitUntil(QToolTip.isVisible)
    # The first breakdown says what the gauge measures, for as long as it stays open.
    assert QToolTip.text() == tooltip_html(make_state(BAND_STATES[Band.OK]), first_time=True)
    assert FIRST_EXPLANATION in QToolTip.text()

    typed = make_state(BAND_STATES[Band.OK] + 5_000)
    gauge.set_state(typed)
    assert QToolTip.isVisible()
    assert QToolTip.text() == tooltip_html(typed, first_time=True)

    QToolTip.hideText()
    qtbot.waitUntil(lambda: not QToolTip.isVisible())
    QApplication.sendEvent(gauge, hover)
    qtbot.waitUntil(QToolTip.isVisible)
    assert QToolTip.text() == tooltip_html(typed), "said once: the next hover is the figures"
    assert FIRST_EXPLANATION not in QToolTip.text()


class _KeyRecorder(QWidget):
    def __init__(self) -> None:
        super().__init__()
        self.keys: list[int] = []

    def keyPressEvent(self, event: QKeyEvent) -> None:
        self.keys.append(event.key())


def test_escape_goes_on_to_the_window_when_no_breakdown_is_open(qtbot: QtBot) -> None:
    """Esc stops a reply in the main window; the gauge only keeps it to close its breakdown."""
    window = _KeyRecorder()
    qtbot.addWidget(window)
    gauge = TokenGauge(window)
    qtbot.keyClick(gauge, Qt.Key.Key_Escape)
    qtbot.keyClick(gauge, Qt.Key.Key_A)
    assert window.keys == [Qt.Key.Key_Escape, Qt.Key.Key_A]


def test_the_breakdown_says_what_was_reused_from_claudes_cache(gauge: TokenGauge) -> None:
    state = make_state(65_280)
    gauge.set_state(state)
    use = CacheUse(read=9_000, written=1_000, total=10_500)

    gauge.set_cache_use(use)

    assert gauge.toolTip() == tooltip_html(state, use, first_time=True)
    assert "9,000 (85 %)" in gauge.toolTip()


def test_compact_is_the_bar_alone_with_its_words_in_the_name(gauge: TokenGauge) -> None:
    """In a narrow header the gauge gives its words' room to the title: it says them in
    its accessible name, and the tooltip still leads with them."""
    state = make_state(65_280)
    gauge.set_state(state)
    full = gauge.minimumSizeHint().width()
    gauge.set_compact(True)
    assert gauge.minimumSizeHint().width() == gauge.compact_width() < full / 2
    assert gauge.accessibleName() == f"{GAUGE_NAME}: Plenty of room"
    assert "<b>Plenty of room</b>" in gauge.toolTip()
    gauge.resize(gauge.compact_width(), gauge.sizeHint().height())
    assert gauge.bar_rect().width() == COMPACT_BAR_WIDTH
    gauge.set_state(make_state(205_000))
    assert gauge.accessibleName() == f"{GAUGE_NAME}: Full", "the name follows the band"
    gauge.set_compact(False)
    assert gauge.accessibleName() == GAUGE_NAME
    assert gauge.minimumSizeHint().width() == full


def test_the_breakdown_is_written_when_read_not_at_every_change(
    gauge: TokenGauge, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The figures change twice a turn and at every pause in typing; the breakdown (a page
    of HTML) is written only when it is read, and then says the latest (issue 20)."""
    import app.ui.token_gauge as token_gauge

    written: list[ContextState | None] = []

    def counting(state: ContextState | None, *args: object, **kwargs: bool) -> str:
        written.append(state)
        return tooltip_html(state, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(token_gauge, "tooltip_html", counting)
    use = CacheUse(read=9_000, written=1_000, total=10_500)
    for used in (60_000, 61_000, 62_000):
        gauge.set_state(make_state(used))
        gauge.set_cache_use(use)
    assert written == []
    assert gauge.accessibleDescription().startswith("Plenty of room: 32 % used.")
    latest = make_state(62_000)
    assert gauge.toolTip() == tooltip_html(latest, use, first_time=True)
    assert gauge.toolTip() == tooltip_html(latest, use, first_time=True)
    assert written == [latest], "written once, for the figures read"
