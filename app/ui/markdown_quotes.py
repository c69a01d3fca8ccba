"""Quotes in Markdown prose: a bar down their left side and a modest indent.

Qt's Markdown importer marks a blockquote's paragraphs with a quote level and
indents them 40 pixels on both sides, but draws nothing: the quote reads as
an odd indent. A text block's format cannot draw a border, so the view paints
the bars itself, beside the paragraphs the level marks.
"""

from __future__ import annotations

from typing import Final

from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QPainter, QTextBlock, QTextCursor, QTextDocument, QTextFormat

QUOTE_INDENT: Final = 16  # per level, the bar included
BAR_WIDTH: Final = 3


def quote_level(block: QTextBlock) -> int:
    """How deep a paragraph is quoted (0: not a quote)."""
    level = block.blockFormat().property(QTextFormat.Property.BlockQuoteLevel)
    return level if isinstance(level, int) else 0


def polish_quotes(document: QTextDocument, cursor: QTextCursor) -> bool:
    """Indent quoted paragraphs by their level (and not on the right); True if any."""
    found = False
    block = document.begin()
    while block.isValid():
        level = quote_level(block)
        if level:
            found = True
            quoted = block.blockFormat()
            quoted.setLeftMargin(QUOTE_INDENT * level)
            quoted.setRightMargin(0)
            cursor.setPosition(block.position())
            cursor.setBlockFormat(quoted)
        block = block.next()
    return found


def quote_bars(document: QTextDocument) -> list[QRectF]:
    """The bars to draw, in document coordinates: one per level beside each quoted
    paragraph, reaching down to the next paragraph of the same quote."""
    layout = document.documentLayout()
    bars: list[QRectF] = []
    block = document.begin()
    while block.isValid():
        level = quote_level(block)
        following = block.next()
        if level:
            rect = layout.blockBoundingRect(block)
            bottom = rect.bottom()
            if following.isValid() and quote_level(following):
                bottom = layout.blockBoundingRect(following).top()
            for depth in range(level):
                left = rect.left() + depth * QUOTE_INDENT
                bars.append(QRectF(left, rect.top(), BAR_WIDTH, bottom - rect.top()))
        block = following
    return bars


def paint_quote_bars(painter: QPainter, bars: list[QRectF], colour: QColor) -> None:
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    for bar in bars:
        painter.fillRect(bar, colour)
