"""Code blocks in colour following the theme, a readable language label, and quotes
with a bar."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QColor, QPalette, QTextLayout
from pytestqt.qtbot import QtBot

from app.ui.contrast import READABLE, contrast_ratio
from app.ui.markdown_quotes import QUOTE_INDENT
from app.ui.theme import code_background, quote_bar_colour
from app.ui.transcript_blocks import CodeBlock, MarkdownView
from tests.ui.test_token_gauge import PALETTES

CODE = 'def greet(name):\n    return "hi " + name  # greet'
FENCED = f"```python\n{CODE}\n```"


LIGHT, DARK = PALETTES["light"], PALETTES["dark"]


def colours_on_line(block: CodeBlock, line: int) -> dict[str, str]:
    """What each coloured run of a shown line says, and its colour."""
    text_block = block.code_view.document().findBlockByNumber(line)
    text = text_block.text()
    ranges: list[QTextLayout.FormatRange] = text_block.layout().formats()
    return {
        text[r.start : r.start + r.length]: r.format.foreground().color().name()
        for r in ranges
        if r.format.foreground().style() != r.format.foreground().style().NoBrush
    }


@pytest.fixture
def code_block(qtbot: QtBot) -> CodeBlock:
    block = CodeBlock()
    block.setPalette(LIGHT)
    qtbot.addWidget(block)
    block.resize(500, 200)
    block.show()
    return block


def test_code_is_coloured_by_its_language(code_block: CodeBlock) -> None:
    code_block.set_code(FENCED, CODE, "python")
    first = colours_on_line(code_block, 0)
    second = colours_on_line(code_block, 1)
    assert "def" in first and "greet" in first
    assert first["def"] != first["greet"]  # keyword and function name differ
    assert "# greet" in second
    assert code_block.code == CODE  # colours change nothing of the text


def test_switching_the_theme_recolours_and_every_colour_reads(code_block: CodeBlock) -> None:
    code_block.set_code(FENCED, CODE, "python")
    light = colours_on_line(code_block, 0)
    code_block.setPalette(DARK)
    dark = colours_on_line(code_block, 0)
    assert light["def"] != dark["def"]
    for palette, colours in ((LIGHT, light), (DARK, dark)):
        for colour in colours.values():
            assert contrast_ratio(QColor(colour), code_background(palette)) >= READABLE


def test_an_unknown_or_missing_language_is_shown_plain(code_block: CodeBlock) -> None:
    code_block.set_code("```zorblang\nfrob 12 'x'\n```", "frob 12 'x'", "zorblang")
    assert colours_on_line(code_block, 0) == {}
    code_block.set_code("```\nx = 'y'\n```", "x = 'y'", "")
    assert colours_on_line(code_block, 0) == {}


@pytest.mark.parametrize("palette", [LIGHT, DARK], ids=["light", "dark"])
def test_the_language_label_reads_on_the_code_panel(
    code_block: CodeBlock, palette: QPalette
) -> None:
    code_block.setPalette(palette)
    code_block.set_code(FENCED, CODE, "python")
    label = code_block._language
    ink = label.palette().color(label.foregroundRole())
    assert label.text() == "python"
    assert contrast_ratio(ink, code_background(palette)) >= READABLE


def test_streaming_code_ends_coloured_as_if_it_came_at_once(code_block: CodeBlock) -> None:
    code = ""
    source = "```python\n"
    for line in ['x = """one', "two", 'three"""', "def f():", "    return x  # end"]:
        code += ("\n" if code else "") + line
        source += line + "\n"
        code_block.set_code(source, code, "python")
    code_block.set_code(source + "```", code, "python")
    streamed = [colours_on_line(code_block, n) for n in range(5)]
    whole = CodeBlock()
    whole.setPalette(LIGHT)
    whole.set_code(source + "```", code, "python")
    assert streamed == [colours_on_line(whole, n) for n in range(5)]
    assert streamed[1] and streamed[4]
    whole.deleteLater()


@pytest.mark.parametrize("palette", [LIGHT, DARK], ids=["light", "dark"])
def test_a_quote_has_a_bar_and_a_modest_indent(qtbot: QtBot, palette: QPalette) -> None:
    view = MarkdownView()
    qtbot.addWidget(view)
    view.setPalette(palette)
    view.resize(400, 200)
    view.set_source("Before.\n\n> Quoted words\n> that go on.\n\nAfter.")
    view.show()
    qtbot.waitExposed(view)
    quoted = view.document().findBlockByNumber(1)
    assert quoted.text().startswith("Quoted words")
    assert quoted.blockFormat().leftMargin() == QUOTE_INDENT
    assert quoted.blockFormat().rightMargin() == 0
    rect = view.document().documentLayout().blockBoundingRect(quoted)
    image = view.grab().toImage()
    bar = quote_bar_colour(view.palette())
    assert image.pixelColor(1, round(rect.center().y())).name() == bar.name()
    # Not beside the unquoted paragraphs.
    after = view.document().documentLayout().blockBoundingRect(view.document().lastBlock())
    assert image.pixelColor(1, round(after.center().y())).name() != bar.name()
