"""Syntax colours for fenced code blocks: Pygments' tokens, painted by a QSyntaxHighlighter.

Pygments lexes the whole block (a line-by-line highlighter would lose multi-line
strings and comments); the tokens are cut into per-line spans, and the highlighter
only looks up the spans of the line Qt asks about. A light and a dark Pygments
style follow the theme, each token colour nudged until it reads on the code panel
(≥ 4.5:1). A language Pygments does not know, or none, is shown plain.

A streaming reply grows its code thirty times a second: only the end is lexed
again, from the start of the last line the lexer began in its initial state
(its line break was plain whitespace, not inside a string or comment). When the
fence closes, a block of ordinary size is lexed once whole, so the colours end
exactly as a one-shot lex gives them.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable
from functools import lru_cache
from typing import Any, Final, NamedTuple

from pygments.lexers import get_lexer_by_name
from pygments.styles import get_style_by_name
from pygments.token import Token
from pygments.util import ClassNotFound
from PySide6.QtGui import (
    QColor,
    QFont,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextDocument,
    QTextFormat,
)

from app.ui.contrast import READABLE, readable_on

LIGHT_STYLE: Final = "default"
DARK_STYLE: Final = "github-dark"
# A finished block up to this long is lexed whole once more when its fence closes
# (Pygments' Python lexer reads about 350 characters a millisecond: ~20 ms here);
# a longer one keeps the colours it streamed with rather than stall the window.
FULL_LEX_LIMIT: Final = 8000
# Line breaks as QTextDocument.setPlainText makes blocks of them ("\r\n" is one).
_LINE_BREAK: Final = re.compile(r"\r\n|\r|\n")

# A Pygments token type (pygments.token._TokenType): typed loosely, Pygments ships no types.
TokenType = Any


class Span(NamedTuple):
    """A token's piece on one line: where it starts on the line, how long, its type."""

    start: int
    length: int
    token: TokenType


@lru_cache(maxsize=64)
def lexer_for(language: str) -> Any | None:
    """Pygments' lexer for a fence's language ("python", "py", "js", "c++"…), or None.

    The lexer is told to keep the text as it is (no stripped or added line
    breaks), so token offsets are offsets into the code shown.
    """
    name = language.strip().lower()
    if not name:
        return None
    try:
        return get_lexer_by_name(name, stripnl=False, stripall=False, ensurenl=False)
    except ClassNotFound:
        return None


def _line_starts(code: str) -> list[int]:
    return [0, *(match.end() for match in _LINE_BREAK.finditer(code))]


class CodeColouring:
    """The token spans of one code block, line by line, lexed again only at its end as it grows.

    Attributes:
        lines: each line's spans (plain text has none).
        lex_count: how many characters were lexed so far (tests read it to see
            that growing code is not lexed whole each time).
    """

    def __init__(self) -> None:
        self.lines: list[list[Span]] = []
        self.lex_count = 0
        self._code = ""
        self._language = ""
        # For each line, True if lexing may start afresh at its start.
        self._restartable: list[bool] = []
        self._exact = True  # the spans are those of one lex of the whole code

    def update(self, code: str, language: str, *, final: bool) -> int:
        """Colour `code` in `language`; returns the first line whose spans may have changed.

        `final`: the code is complete (its closing fence arrived): lex it whole
        if it was coloured piecemeal. Returns len(lines) when nothing changed.
        """
        lexer = lexer_for(language)
        final = final and len(code) <= FULL_LEX_LIMIT
        if code == self._code and language == self._language and (self._exact or not final):
            return len(self.lines)
        grew = (
            language == self._language
            and code.startswith(self._code)
            and bool(self._code)
            and not final
        )
        old_lines = self.lines
        if lexer is None:
            self.lines = [[] for _ in _line_starts(code)]
            self._restartable = [True] * len(self.lines)
            first = 0
        elif grew:
            first = self._restart_line()
            self._lex(lexer, code, first)
        else:
            first = 0
            self._lex(lexer, code, 0)
        self._exact = lexer is None or not grew or first == 0
        self._code, self._language = code, language
        while (
            first < min(len(old_lines), len(self.lines)) and old_lines[first] == self.lines[first]
        ):
            first += 1
        return first

    def _restart_line(self) -> int:
        """The last line of the old code at whose start the lexer was in its first state."""
        line = len(self.lines) - 1
        while line > 0 and not self._restartable[line]:
            line -= 1
        return max(line, 0)

    def _lex(self, lexer: Any, code: str, first_line: int) -> None:
        """Lex `code` from the start of `first_line`; the spans before it are kept."""
        starts = _line_starts(code)
        origin = starts[first_line] if first_line < len(starts) else len(code)
        lines: list[list[Span]] = [[] for _ in range(len(starts) - first_line)]
        restartable = [True] * len(lines)
        tail = code[origin:]
        self.lex_count += len(tail)
        local_starts = [start - origin for start in starts[first_line:]]
        for offset, token, value in lexer.get_tokens_unprocessed(tail):
            _place(token, offset, offset + len(value), tail, local_starts, lines, restartable)
        self.lines = self.lines[:first_line] + lines
        self._restartable = self._restartable[:first_line] + restartable


def _place(
    token: TokenType,
    start: int,
    end: int,
    text: str,
    line_starts: list[int],
    lines: list[list[Span]],
    restartable: list[bool],
) -> None:
    """Cut one token into the spans of the lines it covers, noting for each line break
    it holds whether a fresh lex could start after it."""
    line = bisect_right(line_starts, start) - 1
    while start < end and line < len(lines):
        next_start = line_starts[line + 1] if line + 1 < len(line_starts) else len(text)
        line_end = next_start
        while line_end > line_starts[line] and text[line_end - 1] in "\r\n":
            line_end -= 1  # the line's own text, without its break
        piece_end = min(end, line_end)
        if piece_end > start and token is not Token.Text:
            lines[line].append(Span(start - line_starts[line], piece_end - start, token))
        if end > line_end and line + 1 < len(lines):
            # This token holds the break before the next line.
            restartable[line + 1] = token in Token.Text
        start = max(start, next_start)
        line += 1


class CodeHighlighter(QSyntaxHighlighter):
    """Colours a code view's document from a `CodeColouring`, in the theme's style.

    Call `set_code` before the document's text changes (Qt re-highlights what
    the change touches as it happens), and `set_background` when the theme does.
    """

    def __init__(self, document: QTextDocument) -> None:
        super().__init__(document)
        self.colouring = CodeColouring()
        self._background = QColor("#ffffff")
        self._shown = ""
        self._formats: dict[TokenType, QTextCharFormat] = {}

    def set_code(self, code: str, language: str, *, final: bool) -> None:
        """The code about to be shown (and whether it is complete)."""
        appending = bool(self._shown) and code.startswith(self._shown)
        unchanged = code == self._shown
        first = self.colouring.update(code, language, final=final)
        self._shown = code
        if not appending:
            return  # the whole text is set anew, and Qt colours every line of it
        # The coming edit appends after the last line shown (and re-colours that
        # line): lines before it whose colours changed are redone here.
        document = self.document()
        end = document.blockCount() - (0 if unchanged else 1)
        for number in range(first, end):
            self.rehighlightBlock(document.findBlockByNumber(number))

    def set_background(self, background: QColor) -> None:
        """The code panel's colour: picks the light or dark style, and re-colours."""
        if background == self._background:
            return
        self._background = QColor(background)
        self._formats.clear()
        self.rehighlight()

    def token_colour(self, token: TokenType) -> QColor | None:
        """The colour a token type is drawn in on the current background (None: the text colour)."""
        text_format = self._format(token)
        if not text_format.hasProperty(QTextFormat.Property.ForegroundBrush):
            return None
        return text_format.foreground().color()

    def highlightBlock(self, text: str) -> None:
        number = self.currentBlock().blockNumber()
        if number >= len(self.colouring.lines):
            return
        spans = self.colouring.lines[number]
        wide = any(ord(character) > 0xFFFF for character in text)
        for span in spans:
            start, length = span.start, span.length
            if wide:  # Qt counts UTF-16 units: a character beyond the BMP is two
                start = _utf16_length(text[:start])
                length = _utf16_length(text[span.start : span.start + span.length])
            self.setFormat(start, length, self._format(span.token))

    def _format(self, token: TokenType) -> QTextCharFormat:
        cached = self._formats.get(token)
        if cached is not None:
            return cached
        style = pygments_style(_is_dark(self._background)).style_for_token(token)
        text_format = QTextCharFormat()
        if style["color"]:
            colour = readable_on(QColor(f"#{style['color']}"), [self._background], READABLE)
            text_format.setForeground(colour)
        if style["bold"]:
            text_format.setFontWeight(QFont.Weight.Bold)
        if style["italic"]:
            text_format.setFontItalic(True)
        if style["underline"]:
            text_format.setFontUnderline(True)
        self._formats[token] = text_format
        return text_format


@lru_cache(maxsize=2)
def pygments_style(dark: bool) -> Any:
    """The Pygments style class for a light or a dark code panel."""
    return get_style_by_name(DARK_STYLE if dark else LIGHT_STYLE)


def style_colours(dark: bool) -> Iterable[QColor]:
    """Every foreground colour the style names (for the contrast tests)."""
    for _token, style in pygments_style(dark):
        if style["color"]:
            yield QColor(f"#{style['color']}")


def _is_dark(background: QColor) -> bool:
    return background.lightnessF() < 0.5


def _utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2
