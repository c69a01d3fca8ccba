"""The header's gauge of how full the context window is (DESIGN §4, §8).

A short rounded bar with a tick where automatic summarizing starts, and how full in
words beside it ("Plenty of room"); the figures are in its tooltip's Details. Pure
presentation: the figures come in a `ContextState`, the words from `app.ui.gauge_text`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from PySide6.QtCore import QEvent, QPoint, QRectF, QSize, Qt
from PySide6.QtGui import (
    QColor,
    QFocusEvent,
    QFont,
    QFontMetricsF,
    QHelpEvent,
    QKeyEvent,
    QPainter,
    QPainterPath,
    QPaintEvent,
    QPalette,
    QPen,
)
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from app.ui.gauge_text import (
    GAUGE_NAME,
    Band,
    accessible_description,
    band,
    gauge_text,
    tooltip_html,
    widest_texts,
)
from app.ui.tooltip_place import show_tooltip_on_screen

if TYPE_CHECKING:
    from app.core.caching import CacheUse
    from app.core.context import ContextState

BAR_WIDTH: Final = 150
MIN_BAR_WIDTH: Final = 60
COMPACT_BAR_WIDTH: Final = 48  # the bar alone, its words in the tooltip and the name
BAR_HEIGHT: Final = 8
TICK_OVERHANG: Final = 3  # the trigger tick reaches this far above and below the bar
GAP: Final = 8  # between the bar and the text
MARGIN_X: Final = 6  # room for the focus ring, clear of the bar's rounded end
MARGIN_Y: Final = 3

# (fill of the bar, colour of the text) per band. Fills keep >= 3:1 against the
# track and the text >= 4.5:1 against the window (tests/ui/test_token_gauge.py);
# None means the palette's own text colour.
_LIGHT: Final[dict[Band, tuple[str, str | None]]] = {
    Band.OK: ("#0f766e", None),
    Band.APPROACHING: ("#a16207", None),
    Band.SUMMARY_DUE: ("#c2410c", "#9a3412"),
    Band.FULL: ("#b91c1c", "#b91c1c"),
}
_DARK: Final[dict[Band, tuple[str, str | None]]] = {
    Band.OK: ("#2fbfa0", None),
    Band.APPROACHING: ("#fbbf24", None),
    Band.SUMMARY_DUE: ("#fb923c", "#fdba74"),
    Band.FULL: ("#ff6b6b", "#ff8a8a"),
}
# On macOS Qt hides a tooltip on any key press or release, so the breakdown is
# shown when the key that asked for it (Tab into the gauge, Enter, Space) comes up.
_SHOW_KEYS: Final = (
    Qt.Key.Key_Tab,
    Qt.Key.Key_Backtab,
    Qt.Key.Key_Return,
    Qt.Key.Key_Enter,
    Qt.Key.Key_Space,
)
# How much of the text colour is mixed into the window colour for the empty track.
_TRACK_MIX: Final = 0.12


@dataclass(frozen=True)
class GaugeColours:
    """The colours the gauge paints with, for the current palette and band."""

    track: QColor
    fill: QColor
    text: QColor
    tick: QColor


def _mix(base: QColor, other: QColor, amount: float) -> QColor:
    """`amount` of `other` in `base`, as a plain 8-bit colour (what ends up on screen)."""
    return QColor(
        round(base.red() * (1 - amount) + other.red() * amount),
        round(base.green() * (1 - amount) + other.green() * amount),
        round(base.blue() * (1 - amount) + other.blue() * amount),
    )


class TokenGauge(QWidget):
    """Shows how full the next request would make the context window.

    `set_state` only stores the state and schedules a repaint, so it can follow
    every keystroke. Keyboard users reach it with Tab; focus, Enter or Space
    shows the breakdown that hovering shows.

    In a narrow header it is `compact`: the bar alone, its words ("Plenty of room") in
    its accessible name and tooltip, so the conversation's title keeps the room.

    Attributes:
        state: the figures shown, or None before there is anything to show.
        compact: the bar without its words beside it.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._state: ContextState | None = None
        self._cache_use: CacheUse | None = None
        self._text = gauge_text(None)
        # Measured in `text_font`, forgotten when the font changes: the font and its
        # metrics, the width of widest_texts(), and the shown text with its width.
        self._metrics: tuple[QFont, QFontMetricsF] | None = None
        self._widest: float | None = None
        self._shown_width: tuple[str, float] | None = None
        self._tip_anchor: QPoint | None = None  # where the open breakdown was shown
        self._paint_ratio: float | None = None  # the painted device's pixel ratio, while painting
        # The first breakdown shown leads with what the gauge measures, until it closes.
        self._explained = False
        self._explaining = False
        # The breakdown is written when it is read (`toolTip`), shown or open: the figures
        # change twice a turn and at every pause in typing, the breakdown is seldom read
        # (issue 20).
        self._tip_stale = True
        self.compact = False
        self.setObjectName("tokenGauge")
        self.setAccessibleName(GAUGE_NAME)
        self.setFocusPolicy(Qt.FocusPolicy.TabFocus)
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self._describe()

    @property
    def state(self) -> ContextState | None:
        return self._state

    def set_state(self, state: ContextState | None) -> None:
        """Show `state` (None: nothing to show yet)."""
        if state == self._state:
            return
        self._state = state
        text = gauge_text(state)
        outgrown = self._text_width(text) > self._reserved_text_width()
        self._text = text
        if outgrown:
            self.updateGeometry()
        self._name()
        self._describe()
        self.update()

    def set_cache_use(self, use: CacheUse) -> None:
        """What the conversation reused from Claude's prompt cache: said in the breakdown."""
        if use != self._cache_use:
            self._cache_use = use
            self._follow_breakdown()  # the spoken description has no cache figures

    def text(self) -> str:
        """The text shown beside the bar (said in the name instead while compact)."""
        return self._text

    def set_compact(self, compact: bool) -> None:
        """The bar alone (`compact`) or the bar and its words."""
        if compact != self.compact:
            self.compact = compact
            self._name()
            self.updateGeometry()
            self.update()

    def band(self) -> Band | None:
        return None if self._state is None else band(self._state)

    def colours(self) -> GaugeColours:
        """The colours for the current palette and band; light or dark follows the palette."""
        palette = self.palette()
        window = palette.color(QPalette.ColorRole.Window)
        window_text = palette.color(QPalette.ColorRole.WindowText)
        dark = window.lightnessF() < 0.5
        fill, ink = (_DARK if dark else _LIGHT)[self.band() or Band.OK]
        return GaugeColours(
            track=_mix(window, window_text, _TRACK_MIX),
            fill=QColor(fill),
            text=QColor(ink) if ink is not None else window_text,
            tick=window_text,
        )

    # -- size --------------------------------------------------------------

    def text_font(self) -> QFont:
        """The widget's font (so it follows the app's font size) with tabular figures."""
        return self._text_metrics()[0]

    def _text_metrics(self) -> tuple[QFont, QFontMetricsF]:
        """`text_font` and its metrics, made once per font (layouts ask the gauge's size
        at every pass, and the header at every message sent: issue 20)."""
        if self._metrics is None:
            font = QFont(self.font())
            # Tabular figures: the text does not shimmy while the user types.
            font.setFeature(QFont.Tag("tnum"), 1)
            self._metrics = (font, QFontMetricsF(font))
        return self._metrics

    def _text_width(self, text: str) -> float:
        return self._text_metrics()[1].horizontalAdvance(text)

    def _reserved_text_width(self) -> int:
        """Room for the widest plausible text, so the header does not jump as figures change."""
        if self._widest is None:
            self._widest = max(self._text_width(text) for text in widest_texts())
        if self._shown_width is None or self._shown_width[0] != self._text:
            self._shown_width = (self._text, self._text_width(self._text))
        return math.ceil(max(self._widest, self._shown_width[1])) + 1

    def _content_height(self) -> int:
        metrics = self._text_metrics()[1]
        return max(math.ceil(metrics.height()), BAR_HEIGHT + 2 * TICK_OVERHANG)

    def sizeHint(self) -> QSize:
        width = 2 * MARGIN_X + BAR_WIDTH + GAP + self._reserved_text_width()
        return QSize(width, self._content_height() + 2 * MARGIN_Y)

    def minimumSizeHint(self) -> QSize:
        width = 2 * MARGIN_X + MIN_BAR_WIDTH + GAP + self._reserved_text_width()
        if self.compact:
            width = self.compact_width()
        return QSize(width, self._content_height() + 2 * MARGIN_Y)

    def full_minimum_width(self) -> int:
        """The narrowest it shows its words beside the bar."""
        return 2 * MARGIN_X + MIN_BAR_WIDTH + GAP + self._reserved_text_width()

    def compact_width(self) -> int:
        return 2 * MARGIN_X + COMPACT_BAR_WIDTH

    # -- painting ----------------------------------------------------------

    def text_rect(self) -> QRectF:
        """Where the text is drawn: right of the bar, to the widget's edge."""
        left = self.bar_rect().right() + GAP
        return QRectF(left, 0, max(0.0, self.width() - MARGIN_X - left), self.height())

    def bar_rect(self) -> QRectF:
        """The bar: vertically centred, taking what the text's reserved room leaves
        (all of the width while compact)."""
        if self.compact:
            width = max(COMPACT_BAR_WIDTH, self.width() - 2 * MARGIN_X)
        else:
            text_area = self._reserved_text_width()
            width = max(MIN_BAR_WIDTH, self.width() - 2 * MARGIN_X - GAP - text_area)
        top = self._snap((self.height() - BAR_HEIGHT) / 2)
        return QRectF(MARGIN_X, top, width, BAR_HEIGHT)

    def _snap(self, value: float) -> float:
        """`value` on a whole device pixel, so edges stay crisp on any scale factor."""
        ratio = self._paint_ratio or self.devicePixelRatioF()
        return round(value * ratio) / ratio

    def paintEvent(self, event: QPaintEvent) -> None:
        colours = self.colours()
        painter = QPainter(self)
        # render() into a pixmap of another scale paints through this widget too.
        device = painter.device()
        self._paint_ratio = device.devicePixelRatioF() if device is not None else None
        try:
            self._paint(painter, colours)
        finally:
            self._paint_ratio = None
            painter.end()

    def _paint(self, painter: QPainter, colours: GaugeColours) -> None:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        bar = self.bar_rect()
        radius = BAR_HEIGHT / 2
        track = QPainterPath()
        track.addRoundedRect(bar, radius, radius)
        painter.fillPath(track, colours.track)

        state = self._state
        if state is not None:
            share = min(1.0, max(0.0, state.ratio))
            if share > 0:
                # At least a dot, so a nearly empty conversation still shows it is measured.
                width = max(BAR_HEIGHT, self._snap(bar.width() * share))
                filled = QPainterPath()
                filled.addRoundedRect(
                    QRectF(bar.left(), bar.top(), width, bar.height()), radius, radius
                )
                painter.fillPath(filled, colours.fill)
            self._paint_tick(painter, bar, state.trigger_ratio, colours)

        if not self.compact:
            painter.setPen(colours.text)
            painter.setFont(self.text_font())
            painter.drawText(
                self.text_rect(),
                Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                self._text,
            )

        if self.hasFocus():
            pen = QPen(self.palette().color(QPalette.ColorRole.Highlight), 1.5)
            painter.setPen(pen)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(QRectF(self.rect()).adjusted(1, 1, -1, -1), 4, 4)

    def _paint_tick(
        self, painter: QPainter, bar: QRectF, trigger_ratio: float, colours: GaugeColours
    ) -> None:
        """A thin mark where automatic summarizing starts, edged in the window colour."""
        line = self._snap(1.5)
        edge = self._snap(1.0)
        left = self._snap(bar.left() + bar.width() * min(1.0, max(0.0, trigger_ratio)) - line / 2)
        top, height = bar.top() - TICK_OVERHANG, bar.height() + 2 * TICK_OVERHANG
        window = self.palette().color(QPalette.ColorRole.Window)
        painter.fillRect(QRectF(left - edge, top, line + 2 * edge, height), window)
        painter.fillRect(QRectF(left, top, line, height), colours.tick)

    # -- text for people ----------------------------------------------------

    def _name(self) -> None:
        """Compact, the words not shown go into the name ("How full …: Plenty of room")."""
        name = f"{GAUGE_NAME}: {self._text}" if self.compact and self._text else GAUGE_NAME
        if name != self.accessibleName():
            self.setAccessibleName(name)

    def _describe(self) -> None:
        description = accessible_description(self._state)
        if description != self.accessibleDescription():
            self.setAccessibleDescription(description)
        self._follow_breakdown()

    def _follow_breakdown(self) -> None:
        """The breakdown written afresh if it shows now, else when next read."""
        if not self._breakdown_showing():
            self._explaining = False
            self._tip_stale = True
            return
        self._write_tip()
        if self._tip_anchor is not None:
            # The figures move while the user types; an open breakdown follows them.
            show_tooltip_on_screen(self._tip_anchor, self.toolTip(), self)

    def toolTip(self) -> str:
        """The breakdown, as it would show now."""
        if self._tip_stale:
            self._write_tip()
        return super().toolTip()

    def _write_tip(self) -> None:
        self._tip_stale = False
        first_time = not self._explained or self._explaining
        self.setToolTip(tooltip_html(self._state, self._cache_use, first_time=first_time))

    def _breakdown_showing(self) -> bool:
        """The breakdown shown is this gauge's (the one last written: one not written since
        was never shown)."""
        return QToolTip.isVisible() and QToolTip.text() == super().toolTip()

    def _show_breakdown(self, anchor: QPoint | None = None) -> None:
        self._tip_anchor = anchor or self.mapToGlobal(QPoint(0, self.height()))
        self._explaining = not self._explained
        self._explained = True
        self._write_tip()
        show_tooltip_on_screen(self._tip_anchor, self.toolTip(), self)

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            self._show_breakdown(event.globalPos())
            return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space):
            event.accept()
            return
        if event.key() == Qt.Key.Key_Escape and self._breakdown_showing():
            QToolTip.hideText()
            event.accept()
            return
        super().keyPressEvent(event)

    def keyReleaseEvent(self, event: QKeyEvent) -> None:
        if event.key() in _SHOW_KEYS and not event.isAutoRepeat():
            self._show_breakdown()
            event.accept()
            return
        super().keyReleaseEvent(event)

    def focusInEvent(self, event: QFocusEvent) -> None:
        super().focusInEvent(event)
        self.update()

    def focusOutEvent(self, event: QFocusEvent) -> None:
        super().focusOutEvent(event)
        self.update()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._metrics = self._widest = self._shown_width = None
            self.updateGeometry()
