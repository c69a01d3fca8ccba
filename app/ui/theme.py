"""Light and dark palettes, and following the system's colour scheme.

Qt's Fusion style gives the same look everywhere; the palettes are explicit so
"light" and "dark" mean the same on every platform, and contrast is known.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QStyleFactory

from app.core.settings import Theme


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
    Role.Highlight: "#c2572b",
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
