"""WCAG contrast, and every secondary text of the transcript readable in both themes."""

from __future__ import annotations

import pytest
from pygments.token import STANDARD_TYPES
from PySide6.QtGui import QColor, QPalette, QTextDocument

from app.ui.code_highlight import CodeHighlighter, style_colours
from app.ui.contrast import READABLE, contrast_ratio, readable_on, relative_luminance
from app.ui.theme import (
    code_background,
    muted_text_colour,
    quote_bar_colour,
    transcript_surfaces,
    user_bubble_colour,
)
from tests.ui.test_token_gauge import PALETTES

THEMES = PALETTES


def test_the_ratio_follows_wcag() -> None:
    # The extremes and a figure from WCAG's own understanding document: #767676 on
    # white is the lightest grey that passes AA (4.54:1).
    assert contrast_ratio(QColor("#000000"), QColor("#ffffff")) == pytest.approx(21.0)
    assert contrast_ratio(QColor("#777777"), QColor("#777777")) == pytest.approx(1.0)
    assert contrast_ratio(QColor("#767676"), QColor("#ffffff")) == pytest.approx(4.54, abs=0.01)
    assert relative_luminance(QColor("#ffffff")) == pytest.approx(1.0)
    assert contrast_ratio(QColor("#ff0000"), QColor("#ffffff")) == contrast_ratio(
        QColor("#ffffff"), QColor("#ff0000")
    )


def test_a_faint_colour_is_moved_just_far_enough() -> None:
    faint = QColor("#bbbbbb")
    fixed = readable_on(faint, [QColor("#ffffff")])
    assert contrast_ratio(fixed, QColor("#ffffff")) >= READABLE
    assert fixed.lightness() < faint.lightness()  # darker on a light ground
    assert contrast_ratio(fixed, QColor("#ffffff")) < 5.2  # not all the way to black
    on_dark = readable_on(QColor("#444444"), [QColor("#17171a")])
    assert on_dark.lightness() > QColor("#444444").lightness()
    assert contrast_ratio(on_dark, QColor("#17171a")) >= READABLE
    already = QColor("#000000")
    assert readable_on(already, [QColor("#ffffff")]) == already


@pytest.mark.parametrize("name", THEMES)
def test_secondary_text_reads_on_every_transcript_surface(name: str) -> None:
    palette = THEMES[name]
    muted = muted_text_colour(palette)
    surfaces = transcript_surfaces(palette)
    assert user_bubble_colour(palette) in surfaces
    assert code_background(palette) in surfaces
    for surface in surfaces:
        assert contrast_ratio(muted, surface) >= READABLE, (name, surface.name())
    # Still secondary: softer than body text.
    text = palette.color(QPalette.ColorRole.Text)
    base = palette.color(QPalette.ColorRole.Base)
    assert contrast_ratio(muted, base) < contrast_ratio(text, base)
    # The quote's bar is a graphic: 3:1 (WCAG 1.4.11).
    for surface in surfaces:
        assert contrast_ratio(quote_bar_colour(palette), surface) >= 3.0


@pytest.mark.parametrize("name", THEMES)
def test_placeholder_text_reads_on_the_composer(name: str) -> None:
    palette = THEMES[name]
    assert (
        contrast_ratio(
            palette.color(QPalette.ColorRole.PlaceholderText),
            palette.color(QPalette.ColorRole.Base),
        )
        >= READABLE
    )


@pytest.mark.parametrize("name", THEMES)
def test_every_syntax_colour_reads_on_the_code_panel(name: str) -> None:
    background = code_background(THEMES[name])
    document = QTextDocument()
    highlighter = CodeHighlighter(document)
    highlighter.set_background(background)
    dark = name == "dark"
    colours = list(style_colours(dark))
    assert colours
    faint = [c for c in colours if contrast_ratio(c, background) < READABLE]
    # Some of the style's own colours are too faint here: they are the ones nudged.
    for colour in faint:
        assert contrast_ratio(readable_on(colour, [background]), background) >= READABLE
    for token in STANDARD_TYPES:
        shown = highlighter.token_colour(token)
        if shown is not None:
            assert contrast_ratio(shown, background) >= READABLE, (token, shown.name())


@pytest.mark.parametrize("name", THEMES)
@pytest.mark.parametrize(
    "group", [QPalette.ColorGroup.Active, QPalette.ColorGroup.Inactive], ids=["active", "inactive"]
)
def test_the_selected_conversation_reads_in_both_themes(
    name: str, group: QPalette.ColorGroup
) -> None:
    """Selected rows (the sidebar's conversation, a list's pick) draw HighlightedText on
    Highlight: AA's 4.5:1, the window focused or not (light was 4.48:1, issue 23)."""
    palette = THEMES[name]
    text = palette.color(group, QPalette.ColorRole.HighlightedText)
    ground = palette.color(group, QPalette.ColorRole.Highlight)
    assert contrast_ratio(text, ground) >= READABLE, (name, text.name(), ground.name())
