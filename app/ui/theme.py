"""Light and dark palettes, following the system's colour scheme, and the colours and
fonts drawn from them.

Qt's Fusion style gives the same look everywhere; the palettes are explicit so
"light" and "dark" mean the same on every platform, and contrast is known. The
helpers below derive every other colour (muted text, panels, borders, the user's
bubble, error text) and font (scaled, fixed-width) from the palette and font a
widget has, so both themes and every text size follow from one place.
"""

from __future__ import annotations

from functools import lru_cache

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontDatabase, QGuiApplication, QPainter, QPalette, QPen
from PySide6.QtWidgets import QApplication, QStyleFactory, QWidget

from app.core.paint_settings import Theme
from app.ui.contrast import readable_on


def _palette(colors: dict[QPalette.ColorRole, str], disabled_text: str) -> QPalette:
    palette = QPalette()
    for role, value in colors.items():
        palette.setColor(role, QColor(value))
    for role in (
        QPalette.ColorRole.Text,
        QPalette.ColorRole.WindowText,
        QPalette.ColorRole.ButtonText,
    ):
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor(disabled_text))
    return palette


Role = QPalette.ColorRole

LIGHT = {
    Role.Window: "#f4f4f6",
    Role.WindowText: "#1d1d22",
    Role.Base: "#ffffff",
    Role.AlternateBase: "#ececf0",
    Role.ToolTipBase: "#ffffff",
    Role.ToolTipText: "#1d1d22",
    Role.PlaceholderText: "#6b6b76",
    Role.Text: "#1d1d22",
    Role.Button: "#e9e9ee",
    Role.ButtonText: "#1d1d22",
    Role.BrightText: "#b00020",
    # 5.2:1 under white text (the selected conversation; AA is 4.5:1, issue 23).
    Role.Highlight: "#b54d22",
    Role.HighlightedText: "#ffffff",
    Role.Link: "#1f5fbf",
    Role.LinkVisited: "#6a3fb0",
    Role.Mid: "#c4c4cc",
    Role.Midlight: "#dcdce2",
    Role.Dark: "#9c9ca6",
    Role.Shadow: "#5c5c66",
    Role.Light: "#ffffff",
}

DARK = {
    Role.Window: "#1f1f23",
    Role.WindowText: "#e8e8ec",
    Role.Base: "#17171a",
    Role.AlternateBase: "#2a2a30",
    Role.ToolTipBase: "#2a2a30",
    Role.ToolTipText: "#e8e8ec",
    Role.PlaceholderText: "#9a9aa6",
    Role.Text: "#e8e8ec",
    Role.Button: "#2d2d33",
    Role.ButtonText: "#e8e8ec",
    Role.BrightText: "#ff6b6b",
    Role.Highlight: "#d9774b",
    Role.HighlightedText: "#101012",
    Role.Link: "#7fb0ff",
    Role.LinkVisited: "#c3a6ff",
    Role.Mid: "#4a4a52",
    Role.Midlight: "#3a3a42",
    Role.Dark: "#121214",
    Role.Shadow: "#000000",
    Role.Light: "#3f3f46",
}


def system_prefers_dark() -> bool:
    hints = QGuiApplication.styleHints()
    return hints.colorScheme() == Qt.ColorScheme.Dark


def is_dark(theme: Theme) -> bool:
    return theme == "dark" or (theme == "system" and system_prefers_dark())


def apply_theme(app: QApplication, theme: Theme) -> None:
    """Set Fusion with the light or dark palette the chosen theme implies."""
    if app.style().name().lower() != "fusion":
        app.setStyle(QStyleFactory.create("Fusion"))
    dark = is_dark(theme)
    app.setPalette(_palette(DARK, "#7a7a84") if dark else _palette(LIGHT, "#9a9aa4"))
    app.setProperty("cairnDarkTheme", dark)
    _muted_by_palette.clear()


# --- colours and fonts drawn from a palette


def blend(base: QColor, other: QColor, amount: float) -> QColor:
    """`base` moved `amount` (0…1) of the way towards `other`, fully opaque."""
    return QColor.fromRgbF(
        base.redF() + (other.redF() - base.redF()) * amount,
        base.greenF() + (other.greenF() - base.greenF()) * amount,
        base.blueF() + (other.blueF() - base.blueF()) * amount,
    )


# QPalette.cacheKey → the muted colour's rgba; emptied by `apply_theme`, and when full.
_muted_by_palette: dict[int, int] = {}
_MUTED_KEYS = 64


def muted_text_colour(palette: QPalette) -> QColor:
    """Secondary text (names, times, notes, a code block's language): softer than body
    text, still ≥ 4.5:1 on every surface of the transcript it is drawn on.

    Every message asks it as it is built: the answer is remembered per palette (its
    `cacheKey`, which changes with its contents), then per palette colours (issue 20).
    """
    key = palette.cacheKey()
    rgba = _muted_by_palette.get(key)
    if rgba is None:
        roles = (
            QPalette.ColorRole.Text,
            QPalette.ColorRole.Base,
            QPalette.ColorRole.Window,
            QPalette.ColorRole.Highlight,
        )
        rgba = _muted_text_rgba(*(palette.color(role).rgba() for role in roles))
        if len(_muted_by_palette) >= _MUTED_KEYS:
            _muted_by_palette.clear()
        _muted_by_palette[key] = rgba
    return QColor.fromRgba(rgba)


@lru_cache(maxsize=16)
def _muted_text_rgba(text: int, base: int, window: int, highlight: int) -> int:
    palette = QPalette()
    for role, rgba in (
        (QPalette.ColorRole.Text, text),
        (QPalette.ColorRole.Base, base),
        (QPalette.ColorRole.Window, window),
        (QPalette.ColorRole.Highlight, highlight),
    ):
        palette.setColor(role, QColor.fromRgba(rgba))
    colour = blend(
        palette.color(QPalette.ColorRole.Text), palette.color(QPalette.ColorRole.Base), 0.35
    )
    return readable_on(colour, transcript_surfaces(palette)).rgba()


def transcript_surfaces(palette: QPalette) -> list[QColor]:
    """What text in the transcript sits on: the page, the window, code and summary
    panels (a nested card is a shade deeper), and the user's bubble
    (`user_bubble_colour`)."""
    base = palette.color(QPalette.ColorRole.Base)
    panel = code_background(palette)
    return [
        base,
        palette.color(QPalette.ColorRole.Window),
        panel,
        blend(panel, palette.color(QPalette.ColorRole.Text), 0.03),
        blend(base, palette.color(QPalette.ColorRole.Highlight), 0.16),
    ]


def code_background(palette: QPalette) -> QColor:
    """A faint panel behind code: Base nudged towards Text, so it works light or dark."""
    return blend(
        palette.color(QPalette.ColorRole.Base), palette.color(QPalette.ColorRole.Text), 0.055
    )


def code_border(palette: QPalette) -> QColor:
    return blend(
        palette.color(QPalette.ColorRole.Base), palette.color(QPalette.ColorRole.Text), 0.14
    )


def quote_bar_colour(palette: QPalette) -> QColor:
    """The bar beside a quote: a quiet grey that still stands out (3:1, WCAG 1.4.11)."""
    return readable_on(code_border(palette), transcript_surfaces(palette), 3.0)


def paint_focus_ring(widget: QWidget, radius: float, width: float = 2.0) -> None:
    """A Highlight outline just inside `widget`: where the keyboard focus is."""
    painter = QPainter(widget)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    pen = QPen(widget.palette().color(QPalette.ColorRole.Highlight))
    pen.setWidthF(width)
    painter.setPen(pen)
    painter.drawRoundedRect(QRectF(widget.rect()).adjusted(1, 1, -1, -1), radius, radius)
    painter.end()


def set_text_colour(widget: QWidget, colour: QColor) -> None:
    """Give `widget` this text colour whichever role its background makes it use.

    A label on the transcript's Base background draws with Text, elsewhere
    with WindowText, so both are set.
    """
    palette = widget.palette()
    palette.setColor(QPalette.ColorRole.WindowText, colour)
    palette.setColor(QPalette.ColorRole.Text, colour)
    widget.setPalette(palette)


def set_muted(owner: QWidget, *widgets: QWidget) -> None:
    """Give `widgets` the muted text colour of `owner`'s palette. The owner calls it again
    from its own `changeEvent` on a palette change (a theme switch): an override, not an
    event filter, which would call into Python for each of the owner's events, its
    paints and moves among them (issue 20)."""
    muted = muted_text_colour(owner.palette())
    for widget in widgets:
        set_text_colour(widget, muted)


def scaled_font(font: QFont, factor: float) -> QFont:
    """A copy of `font` `factor` times its size, whether it is sized in points or pixels."""
    scaled = QFont(font)
    if font.pointSizeF() > 0:
        scaled.setPointSizeF(font.pointSizeF() * factor)
    elif font.pixelSize() > 0:
        scaled.setPixelSize(max(1, round(font.pixelSize() * factor)))
    return scaled


def monospace_font(font: QFont) -> QFont:
    """The system's fixed-width font at the size of `font`."""
    fixed = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    if font.pointSizeF() > 0:
        fixed.setPointSizeF(font.pointSizeF() * 0.95)
    elif font.pixelSize() > 0:
        fixed.setPixelSize(font.pixelSize())
    return fixed


def user_bubble_colour(palette: QPalette) -> QColor:
    """Base tinted a little towards Highlight: distinct, and body text keeps its contrast."""
    return blend(
        palette.color(QPalette.ColorRole.Base), palette.color(QPalette.ColorRole.Highlight), 0.16
    )


def error_text_colour(palette: QPalette) -> QColor:
    """A red readable on this palette's Base (dark red on light, pale red on dark)."""
    dark_theme = palette.color(QPalette.ColorRole.Base).lightnessF() < 0.5
    return QColor("#f2a7a2") if dark_theme else QColor("#b3261e")
