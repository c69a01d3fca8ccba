"""Claude's Markdown prose as a text document: Qt's importer, touched up for reading,
and grown in place while a reply streams.

`render_markdown` imports a whole text (`QTextDocument.setMarkdown`, GitHub dialect)
and polishes it: tighter outer margins, air above headings, tinted inline code, ruled
tables, indented quotes. A streaming reply grows thirty times a second, and importing,
polishing and laying out all of its last piece again each time cost milliseconds of the
GUI thread per frame, growing with the reply. `GrowingMarkdown` keeps what is settled —
the text before the last place where Markdown starts afresh (`last_fresh_start`) — and
imports, polishes and lays out only what follows, in a scratch document whose blocks it
puts in place of the old end. The document it builds is the one `render_markdown` would
build (tests/ui/test_markdown_document.py streams random replies to prove it).
"""

from __future__ import annotations

import re
from typing import Final

from PySide6.QtCore import QSizeF
from PySide6.QtGui import (
    QFont,
    QPalette,
    QTextBlock,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextDocumentFragment,
    QTextFormat,
    QTextFrameFormat,
    QTextLength,
    QTextTable,
    QTextTableFormat,
)

from app.core.markdown_blocks import last_fresh_start
from app.ui.markdown_quotes import polish_quotes
from app.ui.theme import code_background, code_border, monospace_font

MARKDOWN_FEATURES: Final = (
    QTextDocument.MarkdownFeature.MarkdownDialectGitHub
    # Raw HTML in a reply is shown as written, never interpreted: a model
    # explaining "<br>" must not have it swallowed, and nothing may load.
    | QTextDocument.MarkdownFeature.MarkdownNoHTML
)
LINE_HEIGHT_PERCENT: Final = 125
# Paragraphs keep their shaped glyphs only in texts of up to this many.
_MAX_SHAPED_BLOCKS: Final = 2000
# Put before an end imported on its own: a paragraph, so that the end's first block is
# made by a paragraph break carrying its format (and list) across, as in the whole text;
# after a task-list item with the mark the settled text left Qt's importer with.
_LEAD_INS: Final = {
    QTextBlockFormat.MarkerType.NoMarker: "x\n\n",
    QTextBlockFormat.MarkerType.Unchecked: "- [ ] x\n\nx\n\n",
    QTextBlockFormat.MarkerType.Checked: "- [x] x\n\nx\n\n",
}
# A text starting so may begin with front matter, which Qt's importer hides, up to the
# next such line: anywhere in the text.
_FRONT_MATTER: Final = ("---\n", "---\r\n")
# A line that leaves Qt's importer with a paragraph break pending, when last: in a quote
# (or in its lazy continuation: see `_ends_pending_block`); and an empty list item,
# after which it keeps a list open to the end, indenting all that follows.
_PENDING_LAST_LINE: Final = re.compile(r"[ \t]*>")
_EMPTY_LIST_ITEM: Final = re.compile(
    r"^(?:[ \t>]|(?:[-*+]|\d{1,9}[.)])[ \t])*(?:[-*+]|\d{1,9}[.)])(?:[ \t]+\[[ xX]\])?[ \t]*\r?$",
    re.MULTILINE,
)


def render_markdown(document: QTextDocument, text: str, palette: QPalette, font: QFont) -> bool:
    """Show Markdown `text` in `document`, polished for reading; True if it has quotes
    (whose bars the view paints: `markdown_quotes`)."""
    document.setMarkdown(text, MARKDOWN_FEATURES)
    keep_shaped_text(document)
    return polish_markdown_document(document, palette, font)


def keep_shaped_text(document: QTextDocument, block: QTextBlock | None = None) -> None:
    """Keep each paragraph's shaped glyphs (from `block` on) after layout, for painting.

    By default a text layout throws them away once laid out, so every paint
    shapes the visible text again — most of the cost of repainting a screen
    of prose, which a streaming reply does thirty times a second.
    """
    if document.blockCount() > _MAX_SHAPED_BLOCKS:
        return  # a huge text: the cache would cost more to fill and hold than it saves
    block = document.begin() if block is None else block
    while block.isValid():
        block.layout().setCacheEnabled(True)
        block = block.next()


class GrowingMarkdown:
    """Renders a Markdown text that grows into one document, importing only its end again.

    The text splits at the last place where Markdown starts afresh: what comes before
    is settled (rendered for good, and ends at `_settled_position` in the document),
    what follows is imported again with each update.

    Qt's importer carries a little state from one block to the next, which the end,
    imported on its own, must start from: the mark of the last task-list item (which
    Qt gives every paragraph after it), and a pending paragraph break after a quote, an
    indented code block or a rule (which puts a table's first cell on a line of its
    own). The first is set by the lead-in the end is imported after; text is not
    settled after the second, so it never matters. A link target ("[a]: /url") may
    give meaning to text anywhere, and a text that starts with a "---" line may be
    front matter up to a later one (which Qt hides), so such texts are rendered whole.
    """

    def __init__(self) -> None:
        self._forget("")

    def _forget(self, text: str) -> None:
        self._text = text  # the text the document shows
        self._settled_end = 0  # the text before this is settled (0: nothing is)
        self._settled_position = 0  # where the settled blocks end in the document
        self._settled_quoted = False  # the settled blocks have quotes
        self._marker = QTextBlockFormat.MarkerType.NoMarker  # the last task item's mark
        self._unsettled_through = 0  # text up to here ends in a pending break: not settled

    @property
    def settled(self) -> bool:
        """Some of the text is settled (rendered for good): `grow` imports only what follows."""
        return self._settled_end > 0

    def render(self, document: QTextDocument, text: str, palette: QPalette, font: QFont) -> bool:
        """Show `text` whole (`render_markdown`); True if it has quotes."""
        self._forget(text)
        return render_markdown(document, text, palette, font)

    def grow(
        self, document: QTextDocument, text: str, palette: QPalette, font: QFont
    ) -> bool | None:
        """Show `text`, which the shown text starts, by re-rendering its end only; True if
        it has quotes, None if it must be rendered whole (`render`) instead."""
        if (
            not self._text
            or not text.startswith(self._text)
            or "]:" in text
            or text.startswith(_FRONT_MATTER)
        ):
            return None
        fresh = last_fresh_start(text, self._settled_end)
        if fresh <= self._unsettled_through or _ends_pending(text[self._settled_end : fresh]):
            self._unsettled_through = max(self._unsettled_through, fresh)
            fresh = self._settled_end
        if not self._settled_end and not (
            fresh and self._settle_start(document, text[:fresh], palette, font)
        ):
            return None  # nothing to settle (yet): rendered whole
        cursor = QTextCursor(document)
        cursor.beginEditBlock()  # laid out once, at the end, from the first changed block
        try:
            cursor.setPosition(self._settled_position)
            cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
            cursor.removeSelectedText()
            if fresh > self._settled_end:
                settled = self._import(
                    document, text[self._settled_end : fresh], palette, font, ends_text=False
                )
                if settled is not None and not _ends_pending_block(settled[0].lastBlock()):
                    self._insert(cursor, settled[0], settled[1])
                    self._settled_quoted |= settled[2]
                    self._marker = _carried_marker(
                        _LEAD_INS[self._marker],
                        text[self._settled_end : fresh],
                        settled[0].lastBlock(),
                    )
                    self._settled_end = fresh
                    self._settled_position = document.characterCount() - 1
                else:
                    self._unsettled_through = fresh
            end = self._import(document, text[self._settled_end :], palette, font, ends_text=True)
            if end is None:
                self._forget("")
                return None
            self._insert(cursor, end[0], end[1])
        finally:
            cursor.endEditBlock()
        self._text = text
        return self._settled_quoted or end[2]

    def _settle_start(
        self, document: QTextDocument, start: str, palette: QPalette, font: QFont
    ) -> bool:
        """Render `start`, the first text to settle, as the document (all but its last
        margin); False if it cannot settle there."""
        # Laid out once, when the page size comes back (see `MarkdownView._render`).
        page = document.pageSize()
        document.setPageSize(QSizeF(0, 0))
        try:
            document.setMarkdown(start, MARKDOWN_FEATURES)
            keep_shaped_text(document)
            quoted = polish_markdown_document(document, palette, font, ends_text=False)
        finally:
            document.setPageSize(page)
        if _ends_pending_block(document.lastBlock()):
            self._unsettled_through = len(start)
            return False
        self._settled_quoted = quoted
        self._settled_end = len(start)
        self._settled_position = document.characterCount() - 1
        self._marker = _carried_marker("", start, document.lastBlock())
        return True

    def _import(
        self, document: QTextDocument, text: str, palette: QPalette, font: QFont, *, ends_text: bool
    ) -> tuple[QTextDocument, int, bool] | None:
        """`text` imported and polished on its own, after the lead-in: the scratch
        document, where `text`'s blocks start in it (at a paragraph break), and whether
        they have quotes; None if it made no block."""
        scratch = QTextDocument()
        scratch.setUndoRedoEnabled(False)
        # The importer sizes margins and indents from these.
        scratch.setDefaultFont(document.defaultFont())
        scratch.setIndentWidth(document.indentWidth())
        lead_in = _LEAD_INS[self._marker]
        scratch.setMarkdown(lead_in + text, MARKDOWN_FEATURES)
        lead_blocks = lead_in.count("\n\n")
        if scratch.blockCount() <= lead_blocks:
            return None
        quoted = polish_markdown_document(
            scratch, palette, font, starts_text=False, ends_text=ends_text
        )
        last_lead_in = scratch.findBlockByNumber(lead_blocks - 1)
        return scratch, last_lead_in.position() + last_lead_in.length() - 1, quoted

    @staticmethod
    def _insert(cursor: QTextCursor, scratch: QTextDocument, start: int) -> None:
        """Put `scratch`'s blocks from `start` (a paragraph break, which carries the first
        block's format and list across) at the cursor, the end of the document."""
        selection = QTextCursor(scratch)
        selection.setPosition(start)
        selection.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
        document = cursor.document()
        before = document.lastBlock()
        cursor.insertFragment(QTextDocumentFragment(selection))
        keep_shaped_text(document, before.next())


def _ends_pending(text: str) -> bool:
    """True if Qt's importer would carry more than a task mark past `text`
    (`_PENDING_LAST_LINE`, `_EMPTY_LIST_ITEM`): text after it cannot settle."""
    body = text.rstrip(" \t\r\n")
    last_line = body[body.rfind("\n") + 1 :]
    return bool(_PENDING_LAST_LINE.match(last_line) or _EMPTY_LIST_ITEM.search(body))


def _ends_pending_block(block: QTextBlock) -> bool:
    """True if Qt's importer may have a paragraph break pending after `block`, the last
    one imported: a quote's, an indented code block's, a rule's, a table's or an empty one."""
    form = block.blockFormat()
    return (
        not block.text()
        or bool(form.property(QTextFormat.Property.BlockQuoteLevel))
        or form.hasProperty(QTextFormat.Property.BlockCodeLanguage)
        or form.hasProperty(QTextFormat.Property.BlockTrailingHorizontalRulerWidth)
        or QTextCursor(block).currentTable() is not None
    )


# A task item's mark (md4c's: "[ ]", "[x]" or "[X]"); a text without one carries what
# its last paragraph shows.
_TASK_MARK = re.compile(r"\[[ xX]\]")


def _carried_marker(lead_in: str, text: str, last: QTextBlock) -> QTextBlockFormat.MarkerType:
    """The task-list mark Qt's importer carries past `text` (imported after `lead_in`,
    its last block `last`). Usually its last paragraph's mark (`_last_marker`); a text
    with a task mark is asked of the importer itself, since an item it does not make a
    list item ("- [ ] &amp;": a plain paragraph, no mark) still passes its mark on."""
    if not _TASK_MARK.search(text):
        return _last_marker(last)
    probe = QTextDocument()
    probe.setUndoRedoEnabled(False)
    probe.setMarkdown(f"{lead_in}{text}\n\nx", MARKDOWN_FEATURES)
    return probe.lastBlock().blockFormat().marker()


def _last_marker(block: QTextBlock) -> QTextBlockFormat.MarkerType:
    """The task-list mark Qt's importer gives the next paragraph after `block`: the mark
    of the last paragraph it made (headings, rules and tables are made without one)."""
    while block.isValid():
        form = block.blockFormat()
        if not (
            form.headingLevel()
            or form.hasProperty(QTextFormat.Property.BlockTrailingHorizontalRulerWidth)
            or QTextCursor(block).currentTable() is not None
            or not block.text()
        ):
            return form.marker()
        block = block.previous()
    return QTextBlockFormat.MarkerType.NoMarker


def polish_markdown_document(
    document: QTextDocument,
    palette: QPalette,
    font: QFont,
    *,
    starts_text: bool = True,
    ends_text: bool = True,
) -> bool:
    """Touch up what Qt's Markdown importer produced so it reads like a chat reply;
    True if it has quotes (whose bars the view paints: `markdown_quotes`).

    `starts_text`/`ends_text`: the document's first/last block is the text's (no margin
    above/below it); False for a part of a longer text.
    """
    cursor = QTextCursor(document)
    # One edit block: the document is laid out once, when it ends, instead of
    # after every format merged here.
    cursor.beginEditBlock()
    try:
        tables = [
            frame for frame in document.rootFrame().childFrames() if isinstance(frame, QTextTable)
        ]
        _polish_blocks(
            document, cursor, has_tables=bool(tables), starts_text=starts_text, ends_text=ends_text
        )
        if _has_fixed_pitch_text(document):
            _tint_inline_code(document, cursor, palette, font)
        for table in tables:
            _polish_table(table, palette)
        return polish_quotes(document, cursor)
    finally:
        cursor.endEditBlock()


def _polish_blocks(
    document: QTextDocument,
    cursor: QTextCursor,
    *,
    has_tables: bool,
    starts_text: bool,
    ends_text: bool,
) -> None:
    """Line height, air above headings, no margin above the first block or below the last."""
    # A little more line height than Qt's default: long replies read more
    # easily. (Not in tables: it would push cell text off centre.)
    line_height = QTextBlockFormat()
    line_height.setLineHeight(
        LINE_HEIGHT_PERCENT, QTextBlockFormat.LineHeightTypes.ProportionalHeight.value
    )
    if not has_tables:
        cursor.select(QTextCursor.SelectionType.Document)
        cursor.mergeBlockFormat(line_height)
    block = document.begin()
    first = starts_text
    while block.isValid():
        changed = QTextBlockFormat()
        cursor.setPosition(block.position())
        if has_tables and cursor.currentTable() is None:
            changed.merge(line_height)
        level = block.blockFormat().headingLevel()
        if level:
            changed.setTopMargin(0 if first else 14 if level <= 2 else 10)
            changed.setBottomMargin(4)
        elif first:
            changed.setTopMargin(0)
        if changed.propertyCount():
            cursor.mergeBlockFormat(changed)
        first = False
        block = block.next()
    last = document.lastBlock()
    if ends_text and last.isValid():
        trailing = QTextBlockFormat()
        trailing.setBottomMargin(0)
        cursor.setPosition(last.position())
        cursor.mergeBlockFormat(trailing)


def _has_fixed_pitch_text(document: QTextDocument) -> bool:
    """True if any text is monospace (inline code): most prose has none to tint."""
    return any(
        form.isCharFormat() and form.toCharFormat().fontFixedPitch()
        for form in document.allFormats()
    )


def _tint_inline_code(
    document: QTextDocument, cursor: QTextCursor, palette: QPalette, font: QFont
) -> None:
    """Inline code on a faint panel, in the system's fixed-width font."""
    inline_code = QTextCharFormat()
    inline_code.setBackground(code_background(palette))
    inline_code.setFontFamilies(monospace_font(font).families())
    block = document.begin()
    while block.isValid():
        # A block's formatted runs in one call: a third cheaper than walking its
        # fragments one by one, each step a call into Qt.
        start = block.position()
        for run in block.textFormats():
            if run.format.fontFixedPitch():
                cursor.setPosition(start + run.start)
                cursor.setPosition(start + run.start + run.length, QTextCursor.MoveMode.KeepAnchor)
                cursor.mergeCharFormat(inline_code)
        block = block.next()


def _polish_table(table: QTextTable, palette: QPalette) -> None:
    table_format: QTextTableFormat = table.format()
    table_format.setBorder(1)
    table_format.setBorderStyle(QTextFrameFormat.BorderStyle.BorderStyle_Solid)
    table_format.setBorderBrush(code_border(palette))
    table_format.setBorderCollapse(True)
    table_format.setCellSpacing(0)
    table_format.setCellPadding(6)
    table_format.setTopMargin(6)
    table_format.setBottomMargin(6)
    table_format.setWidth(QTextLength())
    table.setFormat(table_format)
    header = QTextCharFormat()
    header.setFontWeight(QFont.Weight.DemiBold)
    header_background = code_background(palette)
    for column in range(table.columns()):
        cell = table.cellAt(0, column)
        cell_format = cell.format().toTableCellFormat()
        cell_format.setBackground(header_background)
        cell.setFormat(cell_format)
        cursor = cell.firstCursorPosition()
        cursor.setPosition(cell.lastCursorPosition().position(), QTextCursor.MoveMode.KeepAnchor)
        cursor.mergeCharFormat(header)
