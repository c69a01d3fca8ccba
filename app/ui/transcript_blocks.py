"""The pieces a transcript message is built from: Markdown prose, code blocks,
very long plain text and the "Claude is typing" dots.

Every piece is as tall as its content at the width the layout gives it
(height-for-width), so the transcript's own scroll area is the only one the
user scrolls; none of them keeps a scroll bar of its own except the plain-text
view for huge messages, which would otherwise be many screens tall.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from typing import Any, Final

from PySide6.QtCore import QEvent, QPointF, QRectF, QSize, QSizeF, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import (
    QColor,
    QContextMenuEvent,
    QFontMetricsF,
    QGuiApplication,
    QHideEvent,
    QKeyEvent,
    QKeySequence,
    QPainter,
    QPaintEvent,
    QPalette,
    QResizeEvent,
    QShowEvent,
    QTextCursor,
    QTextDocument,
    QTextOption,
    QWheelEvent,
)
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPlainTextEdit,
    QSizePolicy,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.ui.markdown_document import LINE_HEIGHT_PERCENT as LINE_HEIGHT_PERCENT
from app.ui.markdown_document import GrowingMarkdown, keep_shaped_text
from app.ui.markdown_quotes import paint_quote_bars, quote_bars
from app.ui.theme import (
    blend,
    code_background,
    code_border,
    monospace_font,
    muted_text_colour,
    quote_bar_colour,
    scaled_font,
    set_text_colour,
)
from app.ui.transcript_text import display_text, utf16_to_index

# Keys that scroll the whole transcript even while a text piece has focus.
_PAGE_KEYS: Final = frozenset({Qt.Key.Key_PageUp, Qt.Key.Key_PageDown})
COPIED_FEEDBACK_MS: Final = 1500
HUGE_VIEW_HEIGHT: Final = 360
# The width prose that fills the transcript says it would like.
_FILL_HINT_WIDTH: Final = 480


class MarkdownView(QTextBrowser):
    """Read-only Markdown prose (or plain text) that is exactly as tall as its text.

    Rendering goes through Qt's own importer (`QTextDocument.setMarkdown`,
    GitHub dialect) and is then touched up for reading: tighter outer margins,
    air above headings, tinted inline code, ruled tables.

    Attributes:
        render_count: how many times the Markdown was (re)rendered; streaming
            tests read it to prove that only the growing message re-renders.

    Signals:
        link_clicked(QUrl): the user activated a link (nothing is opened here).
    """

    link_clicked = Signal(QUrl)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.render_count = 0
        self._plain = False
        self._source = ""
        self._shrink_to_fit = False
        self._heights: dict[int, int] = {}
        self._natural_width: int | None = None
        self._measure: QTextDocument | None = None
        self._quote_bars: tuple[float, list[QRectF]] | None = None  # (text width, bars)
        self._quoted = False
        self._bar_colour: tuple[int, QColor] | None = None  # (palette's cache key, colour)
        self._growing = GrowingMarkdown()
        self.setOpenLinks(False)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        # Focusable (to select text), so named: a screen reader said nothing for it.
        self.setAccessibleName("Message text")
        self.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
            | Qt.TextInteractionFlag.LinksAccessibleByMouse
        )
        # Transparent, so a user bubble's tint shows through.
        self.viewport().setAutoFillBackground(False)
        self.setAutoFillBackground(False)
        self.configure(shrink_to_fit=False, plain=False)
        document = self.document()
        document.setUndoRedoEnabled(False)
        document.setDocumentMargin(0)
        self.anchorClicked.connect(self.link_clicked)

    def configure(self, *, shrink_to_fit: bool, plain: bool) -> None:
        """Choose, before the first text, between Markdown and plain text, and
        between filling the width and hugging the text (a user's bubble)."""
        self._shrink_to_fit = shrink_to_fit
        self._plain = plain
        policy = QSizePolicy(
            QSizePolicy.Policy.Maximum if shrink_to_fit else QSizePolicy.Policy.Expanding,
            QSizePolicy.Policy.Preferred,
        )
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)

    @property
    def source_text(self) -> str:
        """The Markdown currently shown."""
        return self._source

    def set_source(self, source: str, *, final: bool = False) -> None:
        """Show `source`; does nothing if it is already shown (streaming re-sends the same head).

        A source that only grew (a streaming reply) has only its end rendered again.
        `final`: it will not grow any more. Growing a text nothing of which is settled yet
        renders its start again, to settle it for what comes next, and imports its end on
        its own: with nothing to come, the text is rendered whole, one import instead of
        two (a short reply's end, issue 20). Either way the document is rebuilt whole.
        """
        if source == self._source and self.render_count:
            return
        self._source = source
        growing = not final or self._growing.settled
        if self.render_count and not self._plain and growing and self._grow():
            return
        self._render()

    def _grow(self) -> bool:
        """Render the grown source's end only (`GrowingMarkdown`); False if it cannot be."""
        quoted = self._growing.grow(
            self.document(), self._source.strip("\n"), self.palette(), self.font()
        )
        if quoted is None:
            return False
        self.render_count += 1
        self._quoted = quoted
        self._forget_measures()
        return True

    def _render(self) -> None:
        self.render_count += 1
        document = self.document()
        # With no page size Qt lays nothing out, so the text is set and
        # polished without being laid out after each step, and laid out once,
        # when the page size comes back (or when first shown, for a new view).
        page = document.pageSize()
        document.setPageSize(QSizeF(0, 0))
        try:
            if self._plain:
                document.setPlainText(self._source.strip("\n"))
                keep_shaped_text(document)
            else:
                self._quoted = self._growing.render(
                    document, self._source.strip("\n"), self.palette(), self.font()
                )
        finally:
            document.setPageSize(page)
        self._forget_measures()

    def _forget_measures(self) -> None:
        """The text changed: sizes measured for the old one no longer hold."""
        self._heights.clear()
        self._natural_width = None
        self._measure = None
        self._quote_bars = None
        self.updateGeometry()

    def loadResource(self, type: int, name: QUrl | str) -> Any:
        """Load nothing: an image in a reply must not make Cairn read files or the network."""
        return None

    # --- size -------------------------------------------------------------
    #
    # Qt asks these during every layout pass, and each question from Qt is a
    # call into Python (which, while another thread runs Python, first waits
    # for the GIL). So `hasHeightForWidth` is not overridden — Qt answers it
    # from the size policy — and heights are cached until the text changes.

    def heightForWidth(self, width: int) -> int:
        """The text's height when laid out `width` pixels wide, cached per width.

        At the width the shown document is already laid out at (the widget's),
        the shown document is measured. Other widths are measured on a
        private copy: QTextEdit re-wraps its own document to the widget's
        current width whenever that document's size changes, so measuring
        other widths on it gives wrong answers.
        """
        cached = self._heights.get(width)
        if cached is not None:
            return cached
        margins = self.contentsMargins()
        text_width = max(1, width - margins.left() - margins.right())
        document = self.document()
        if document.textWidth() != text_width:
            document = self._measuring_document()
            document.setTextWidth(text_width)
        height = math.ceil(document.size().height()) + margins.top() + margins.bottom()
        self._heights[width] = height
        return height

    def natural_width(self) -> int:
        """The width the text needs to sit on its lines without wrapping."""
        if self._natural_width is None:
            document = self._measuring_document()
            document.setTextWidth(-1)
            margins = self.contentsMargins()
            self._natural_width = (
                math.ceil(document.idealWidth()) + 2 + margins.left() + margins.right()
            )
        return self._natural_width

    def _measuring_document(self) -> QTextDocument:
        if self._measure is None:
            shown = self.document()
            self._measure = shown.clone()
            self._measure.setDefaultFont(shown.defaultFont())
            self._measure.setDocumentMargin(shown.documentMargin())
        return self._measure

    def sizeHint(self) -> QSize:
        if self._shrink_to_fit:
            width = self.natural_width()
            return QSize(width, self.heightForWidth(width))
        # Prose fills the width the layout gives it. Once it has one, that
        # width is the hint: the layout then asks the height for one width
        # only (the shown document's, no copy to lay out), and its caches hold.
        return _laid_out_hint(self, _FILL_HINT_WIDTH)

    def minimumSizeHint(self) -> QSize:
        line = math.ceil(QFontMetricsF(self.font()).lineSpacing())
        return QSize(min(48, self.natural_width()) if self._shrink_to_fit else 48, line)

    # --- events -----------------------------------------------------------

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.FontChange) and (
            self.render_count
        ):
            self._render()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in _PAGE_KEYS:
            event.ignore()  # let the transcript scroll
            return
        super().keyPressEvent(event)

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        if self._quoted and not self._plain:
            width = self.document().textWidth()
            if self._quote_bars is None or self._quote_bars[0] != width:
                self._quote_bars = (width, quote_bars(self.document()))
            palette = self.palette()
            if self._bar_colour is None or self._bar_colour[0] != palette.cacheKey():
                # Found by a contrast search (2 ms): once per palette, not per paint.
                self._bar_colour = (palette.cacheKey(), quote_bar_colour(palette))
            painter = QPainter(self.viewport())
            paint_quote_bars(painter, self._quote_bars[1], self._bar_colour[1])
            painter.end()

    def wheelEvent(self, event: QWheelEvent) -> None:
        # QTextEdit zooms read-only text on Ctrl+wheel; one message changing
        # size on its own would only confuse.
        if event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            event.ignore()
            return
        super().wheelEvent(event)


def _laid_out_hint(widget: QWidget, default_width: int) -> QSize:
    """A width-filling block's size hint: its own width once laid out, and its height there.

    Qt's box layouts remember one height-for-width answer each, and ask
    again (down to every block, in Python) whenever the width differs; a
    hint at any other width than the real one makes every layout pass ask
    twice.
    """
    width = widget.width() if widget.testAttribute(Qt.WidgetAttribute.WA_Resized) else default_width
    return QSize(width, widget.heightForWidth(width))


class CodeView(QPlainTextEdit):
    """Monospace, read-only, unwrapped code: every line shown, scrolled sideways if long."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._code = ""
        self._widest = 0.0
        self._natural_width = 0
        self._heights: dict[int, int] = {}
        self.setReadOnly(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.setWordWrapMode(QTextOption.WrapMode.NoWrap)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        self.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.viewport().setAutoFillBackground(False)
        self.document().setUndoRedoEnabled(False)
        self.document().setDocumentMargin(8)
        policy = QSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)
        self._apply_font()

    @property
    def code(self) -> str:
        return self._code

    def set_code(self, code: str) -> None:
        """Show `code`; appends in place when it only grew (streaming)."""
        if code == self._code:
            return
        if self._code and code.startswith(self._code):
            cursor = QTextCursor(self.document())
            cursor.movePosition(QTextCursor.MoveOperation.End)
            cursor.insertText(code[len(self._code) :])
            # Only the old last line and the new lines can be wider now.
            tail = code[self._code.rfind("\n") + 1 :]
            self._widest = max(self._widest, self._widest_line(tail))
        else:
            self.setPlainText(code)
            self._widest = self._widest_line(code)
        self._code = code
        self._measure()

    def _apply_font(self) -> None:
        fixed = monospace_font(self.font())
        self.document().setDefaultFont(fixed)
        self.setTabStopDistance(QFontMetricsF(fixed).horizontalAdvance(" ") * 4)

    def _widest_line(self, text: str) -> float:
        metrics = QFontMetricsF(self.document().defaultFont())
        return max(
            (metrics.horizontalAdvance(line.replace("\t", "    ")) for line in text.split("\n")),
            default=0.0,
        )

    def _measure(self) -> None:
        self._heights.clear()
        margin = self.document().documentMargin()
        self._natural_width = math.ceil(self._widest + 2 * margin) + 4
        self._update_scroll_policy(self.viewport().width())
        self.updateGeometry()

    def _line_count(self) -> int:
        return self._code.count("\n") + 1

    def _needs_horizontal_bar(self, width: int) -> bool:
        return self._natural_width > width

    # Not `hasHeightForWidth`: Qt answers it from the size policy, without a
    # call into Python (see MarkdownView).

    def heightForWidth(self, width: int) -> int:
        """Every line's height, and the sideways scroll bar's when lines are wider; cached."""
        cached = self._heights.get(width)
        if cached is not None:
            return cached
        # QPlainTextEdit gives every line a whole number of pixels and wants
        # one pixel more than the lines and margins before it stops scrolling.
        first_line = self.blockBoundingRect(self.document().firstBlock()).height()
        line = first_line or math.ceil(QFontMetricsF(self.document().defaultFont()).lineSpacing())
        margin = self.document().documentMargin()
        height = math.ceil(self._line_count() * line + 2 * margin) + 1
        if self._needs_horizontal_bar(width):
            height += self.horizontalScrollBar().sizeHint().height()
        self._heights[width] = height
        return height

    def sizeHint(self) -> QSize:
        # The block fills the message's width whatever its hint (long lines
        # scroll sideways); see MarkdownView.sizeHint for why the hint is it.
        return _laid_out_hint(self, self._natural_width)

    def minimumSizeHint(self) -> QSize:
        return QSize(64, self.heightForWidth(64))

    def _update_scroll_policy(self, width: int) -> None:
        policy = (
            Qt.ScrollBarPolicy.ScrollBarAlwaysOn
            if self._needs_horizontal_bar(width)
            else Qt.ScrollBarPolicy.ScrollBarAlwaysOff
        )
        if self.horizontalScrollBarPolicy() != policy:
            self.setHorizontalScrollBarPolicy(policy)

    def resizeEvent(self, event: QResizeEvent) -> None:
        self._update_scroll_policy(event.size().width())
        super().resizeEvent(event)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._apply_font()
            self._widest = self._widest_line(self._code)
            self._measure()
        elif event.type() == QEvent.Type.StyleChange:
            self._measure()  # the scroll bar's height may differ

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in _PAGE_KEYS:
            event.ignore()
            return
        super().keyPressEvent(event)

    def wheelEvent(self, event: QWheelEvent) -> None:
        # Vertical wheel scrolls the transcript; only sideways wheel (or
        # Shift+wheel) scrolls long lines.
        delta = event.angleDelta()
        sideways = abs(delta.x()) > abs(delta.y()) or bool(
            event.modifiers() & Qt.KeyboardModifier.ShiftModifier
        )
        if not sideways or event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            event.ignore()
            return
        super().wheelEvent(event)


class CodeBlock(QFrame):
    """A fenced code block: a language caption, a Copy button and the code.

    Attributes:
        render_count: how many times the code changed.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.render_count = 0
        self._source = ""
        self.setAutoFillBackground(False)
        layout = QVBoxLayout(self)
        # Inset enough that a scroll bar stays inside the rounded corners.
        layout.setContentsMargins(3, 1, 3, 3)
        layout.setSpacing(0)
        header = QHBoxLayout()
        header.setContentsMargins(8, 2, 2, 0)
        header.setSpacing(6)
        self._language = QLabel(self)
        self._language.setFont(scaled_font(self.font(), 0.85))
        self.copy_button = QToolButton(self)
        self.copy_button.setText("Copy")
        self.copy_button.setAutoRaise(True)
        self.copy_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.copy_button.setFont(scaled_font(self.font(), 0.85))
        self.copy_button.setAccessibleName("Copy code")
        self.copy_button.setToolTip("Copy this code to the clipboard")
        self.copy_button.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.copy_button.clicked.connect(self.copy_code)
        header.addWidget(self._language)
        header.addStretch(1)
        header.addWidget(self.copy_button)
        layout.addLayout(header)
        self.code_view = CodeView(self)
        # Imported with the first code block (pygments: not needed to paint the window).
        from app.ui.code_highlight import CodeHighlighter

        self.highlighter = CodeHighlighter(self.code_view.document())
        layout.addWidget(self.code_view)
        self._reset_timer = QTimer(self)
        self._reset_timer.setSingleShot(True)
        self._reset_timer.setInterval(COPIED_FEEDBACK_MS)
        self._reset_timer.timeout.connect(self._reset_copy_button)
        self._apply_palette()

    @property
    def source_text(self) -> str:
        return self._source

    @property
    def code(self) -> str:
        return self.code_view.code

    def set_code(self, source: str, code: str, language: str) -> None:
        """Show a fenced block: `source` is the fenced text (to skip repeats), `code` its body."""
        if source == self._source and self.render_count:
            return
        self._source = source
        self.render_count += 1
        self._language.setText(language or "code")
        self.code_view.setAccessibleName(f"Code ({language})" if language else "Code")
        self.highlighter.set_code(code, language, final=_fence_closed(source))
        self.code_view.set_code(code)

    def copy_code(self) -> None:
        """Put the exact code on the clipboard and say so on the button for a moment."""
        QGuiApplication.clipboard().setText(self.code_view.code)
        self.copy_button.setText("Copied")
        self.copy_button.setAccessibleDescription("Code copied to the clipboard")
        self._reset_timer.start()

    def _reset_copy_button(self) -> None:
        self.copy_button.setText("Copy")
        self.copy_button.setAccessibleDescription("")

    def _apply_palette(self) -> None:
        set_text_colour(self._language, muted_text_colour(self.palette()))
        self.highlighter.set_background(code_background(self.palette()))

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(code_border(self.palette()))
        painter.setBrush(code_background(self.palette()))
        painter.drawRoundedRect(QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5), 6, 6)
        painter.end()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._apply_palette()


def _fence_closed(source: str) -> bool:
    """True if a fenced block's source ends with its closing fence (its code is complete)."""
    lines = source.rstrip("\r\n").splitlines()
    last = lines[-1].strip() if len(lines) > 1 else ""
    return len(last) >= 3 and last == last[0] * len(last) and last[0] in "`~"


class HugeTextEdit(QPlainTextEdit):
    """Read-only plain text shown cut into display blocks, copied back uncut.

    See `app.ui.transcript_text`: overlong lines are cut for display only;
    whatever the user selects and copies comes from the original text.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._source = ""
        # Where each display block starts in the original text.
        self._block_starts: tuple[int, ...] = (0,)
        self.setReadOnly(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        self.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.document().setUndoRedoEnabled(False)

    @property
    def source_text(self) -> str:
        return self._source

    def set_source(self, source: str) -> None:
        """Show `source`; when it only grew, re-cut and replace just its last line."""
        if source == self._source:
            return
        if self._source and source.startswith(self._source):
            line_start = self._source.rfind("\n") + 1
            first_block = bisect_right(self._block_starts, line_start) - 1
            tail = display_text(source[line_start:], offset=line_start)
            cursor = QTextCursor(self.document().findBlockByNumber(first_block))
            cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
            cursor.insertText(tail.text)
            self._block_starts = self._block_starts[:first_block] + tail.block_starts
        else:
            shown = display_text(source)
            self.setPlainText(shown.text)
            self._block_starts = shown.block_starts
        self._source = source

    def source_offset(self, position: int) -> int:
        """The offset in the original text of a document position."""
        block = self.document().findBlock(position)
        in_block = utf16_to_index(block.text(), position - block.position())
        return min(len(self._source), self._block_starts[block.blockNumber()] + in_block)

    def selected_source(self) -> str:
        """The original text under the selection (not the display cut of it)."""
        cursor = self.textCursor()
        start = self.source_offset(cursor.selectionStart())
        end = self.source_offset(cursor.selectionEnd())
        return self._source[start:end]

    def copy_selection(self) -> None:
        """Copy the original text of the selection.

        Done through `QClipboard.setText` rather than by overriding
        `createMimeDataFromSelection`: a QMimeData made in Python is handed to
        Qt's clipboard, which deletes it in a C++ exit handler after Python has
        shut down, and the process crashes on the way out.
        """
        if self.textCursor().hasSelection():
            QGuiApplication.clipboard().setText(self.selected_source())

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.matches(QKeySequence.StandardKey.Copy):
            self.copy_selection()
            event.accept()
            return
        if event.key() in _PAGE_KEYS and not self.verticalScrollBar().maximum():
            event.ignore()
            return
        super().keyPressEvent(event)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        menu = QMenu(self)
        copy = menu.addAction("Copy", self.copy_selection)
        copy.setEnabled(self.textCursor().hasSelection())
        menu.addAction("Select all", self.selectAll)
        menu.exec(event.globalPos())


class HugeTextView(QFrame):
    """A very long message as plain text in a box with its own scroll bar.

    Laying out a megabyte of Markdown freezes the window for seconds; a
    `QPlainTextEdit` lays out only what is on screen, so it stays quick.

    Attributes:
        render_count: how many times the text changed.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.render_count = 0
        self._text = ""
        self._size_label = ""
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        header = QHBoxLayout()
        header.setContentsMargins(0, 0, 0, 0)
        self._note = QLabel(self)
        self._note.setWordWrap(True)
        self._note.setFont(scaled_font(self.font(), 0.9))
        self.copy_button = QToolButton(self)
        self.copy_button.setText("Copy all")
        self.copy_button.setAutoRaise(True)
        self.copy_button.setFont(scaled_font(self.font(), 0.9))
        self.copy_button.setAccessibleName("Copy the whole message")
        self.copy_button.setToolTip("Copy the whole message to the clipboard")
        self.copy_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.copy_button.clicked.connect(self.copy_all)
        header.addWidget(self._note, 1)
        header.addWidget(self.copy_button)
        layout.addLayout(header)
        self.text_view = HugeTextEdit(self)
        self.text_view.setFixedHeight(HUGE_VIEW_HEIGHT)
        self.text_view.setAccessibleName("Long message")
        layout.addWidget(self.text_view)
        self._reset_timer = QTimer(self)
        self._reset_timer.setSingleShot(True)
        self._reset_timer.setInterval(COPIED_FEEDBACK_MS)
        self._reset_timer.timeout.connect(lambda: self.copy_button.setText("Copy all"))
        self._apply_palette()

    def sizeHint(self) -> QSize:
        # As wide as the transcript allows, even inside a user's bubble that
        # otherwise hugs its text.
        hint = super().sizeHint()
        return QSize(max(hint.width(), 4000), hint.height())

    @property
    def text(self) -> str:
        return self._text

    def set_text(self, text: str) -> None:
        """Show `text`; appends in place when it only grew (streaming)."""
        if text == self._text and self.render_count:
            return
        self.render_count += 1
        self.text_view.set_source(text)
        self._text = text
        size = _describe_size(len(text))
        if size != self._size_label:
            self._size_label = size
            self._note.setText(
                f"This message is very long ({size}), so it is shown as plain text. "
                "Scroll inside the box to read it all."
            )

    def copy_all(self) -> None:
        """Put the whole message on the clipboard, exactly."""
        QGuiApplication.clipboard().setText(self._text)
        self.copy_button.setText("Copied")
        self._reset_timer.start()

    def _apply_palette(self) -> None:
        set_text_colour(self._note, muted_text_colour(self.palette()))
        view_palette = self.text_view.palette()
        view_palette.setColor(QPalette.ColorRole.Base, code_background(self.palette()))
        self.text_view.setPalette(view_palette)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._apply_palette()


def _describe_size(characters: int) -> str:
    if characters >= 1_000_000:
        return f"{characters / 1_000_000:.1f} million characters"
    return f"{characters // 1000:,} thousand characters"


class TypingIndicator(QWidget):
    """Three softly pulsing dots while a reply has started but no text has arrived.

    The animation timer runs only while the dots are on screen.
    """

    _DOT_COUNT: Final = 3
    _INTERVAL_MS: Final = 350

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._phase = 0
        self._timer = QTimer(self)
        self._timer.setInterval(self._INTERVAL_MS)
        self._timer.timeout.connect(self._advance)
        self.setAccessibleName("Claude is writing")
        self.setToolTip("Claude is writing…")
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)

    def sizeHint(self) -> QSize:
        height = math.ceil(QFontMetricsF(self.font()).height())
        return QSize(round(height * 2.6), height)

    def _advance(self) -> None:
        self._phase = (self._phase + 1) % self._DOT_COUNT
        self.update()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self._timer.start()

    def hideEvent(self, event: QHideEvent) -> None:
        super().hideEvent(event)
        self._timer.stop()

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        text = self.palette().color(QPalette.ColorRole.Text)
        base = self.palette().color(QPalette.ColorRole.Base)
        radius = max(2.5, self.height() / 5)
        step = self.width() / self._DOT_COUNT
        for index in range(self._DOT_COUNT):
            amount = 0.15 if index == self._phase else 0.55
            painter.setBrush(blend(text, base, amount))
            painter.drawEllipse(QPointF(step * (index + 0.5), self.height() / 2), radius, radius)
        painter.end()
