"""A message's text, in its bubble: Claude's Markdown rendered in pieces (prose, code
blocks with Copy buttons), the user's words exactly as typed; the "Claude is writing"
dots until the first words arrive."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, TypeVar

from PySide6.QtCore import QRectF, Qt, QUrl, Signal
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import QSizePolicy, QVBoxLayout, QWidget

from app.core.markdown_blocks import GrowingTextSplitter, SegmentKind
from app.ui.theme import user_bubble_colour
from app.ui.transcript_blocks import (
    CodeBlock,
    HugeTextView,
    MarkdownView,
    TypingIndicator,
)

# Above this many characters a message is shown as plain text: laying out
# Markdown that long would freeze the window.
HUGE_MESSAGE_CHARS: Final = 100_000
# A user's bubble never reaches the far side of the transcript.
BUBBLE_INSET: Final = 56
_BUBBLE_RADIUS: Final = 12.0

_Block = MarkdownView | CodeBlock | HugeTextView
_BlockT = TypeVar("_BlockT", MarkdownView, CodeBlock, HugeTextView)


class MessageText(QWidget):
    """The frame around a message's text, and its text pieces; bare for Claude (see
    `UserBubble`).

    It draws nothing, so it has no `paintEvent`: an override would be a call into
    Python for every message on screen at every repaint.

    Signals:
        link_clicked(QUrl): a link in the text was activated.
    """

    link_clicked = Signal(QUrl)

    def __init__(self, parent: QWidget, *, plain: bool = False) -> None:
        """`plain`: the user's words, shown exactly as typed (no Markdown)."""
        super().__init__(parent)
        self._plain = plain
        self.block_layout = QVBoxLayout(self)
        self.block_layout.setContentsMargins(0, 0, 0, 0)
        self.block_layout.setSpacing(10)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self._blocks: list[_Block] = []
        self._retired_renders = 0
        self._splitter = GrowingTextSplitter()
        # Made only when a reply waits for its first words.
        self._typing: TypingIndicator | None = None
        self._typing_shown = False  # `_typing` made and not hidden (`set_typing`)
        # The first text piece made ahead, hidden (`prepare_block`).
        self._spare_block: MarkdownView | None = None

    def prepare_block(self) -> None:
        """Make the first piece of Claude's text ahead, hidden: a reply's row built ahead
        then shows its first words without making it (see `MessageWidget.spare`)."""
        if self._spare_block is None and not self._plain and not self._blocks:
            block = self._spare_block = MarkdownView(self)
            block.hide()  # not with the message: only once it holds the first words
            block.configure(shrink_to_fit=False, plain=False)
            block.link_clicked.connect(self.link_clicked)

    def blocks(self) -> Sequence[_Block]:
        """The text pieces, in order (for tests and the transcript's anchoring)."""
        return tuple(self._blocks)

    def has_blocks(self) -> bool:
        """Some text is shown (a piece at least)."""
        return bool(self._blocks)

    @property
    def render_count(self) -> int:
        """How many times a piece of this text was (re)rendered."""
        return self._retired_renders + sum(block.render_count for block in self._blocks)

    def set_text(self, text: str, *, final: bool = False) -> None:
        """Show `text`, re-rendering only the pieces that changed (`final`: it will not
        grow any more, see `MarkdownView.set_source`)."""
        if len(text) > HUGE_MESSAGE_CHARS:
            self._reuse_or_replace(0, HugeTextView).set_text(text)
            self._drop_blocks_from(1)
        elif self._plain:
            self._reuse_or_replace(0, MarkdownView).set_source(text)
            self._drop_blocks_from(1)
        else:
            self._show_segments(text, final)

    def text_will_not_grow(self) -> None:
        """The text is final: keep no copy of it for splitting what comes next."""
        self._splitter.reset()

    def set_typing(self, typing: bool) -> None:
        """The "Claude is writing" dots, until the first words arrive."""
        if typing == self._typing_shown:
            return  # asked again with every delta: no call into Qt
        self._typing_shown = typing
        if self._typing is None:
            self._typing = TypingIndicator(self)
            self.block_layout.addWidget(self._typing)
        self._typing.setVisible(typing)

    def is_typing(self) -> bool:
        """True while the "Claude is writing" dots are shown."""
        return self._typing_shown

    def refresh_size_hints(self) -> None:
        for block in self._blocks:
            block.updateGeometry()

    def _show_segments(self, text: str, final: bool) -> None:
        index = 0
        # A streaming reply only grows: the splitter splits only its end again.
        for segment, pieces in self._splitter.split(text):
            if segment.kind is SegmentKind.CODE:
                block = self._reuse_or_replace(index, CodeBlock)
                block.set_code(segment.source, segment.code, segment.language)
                index += 1
                continue
            # Long prose comes in pieces, so a streaming update re-renders
            # only the last few thousand characters, not the whole reply.
            for piece in pieces:
                if piece.strip():
                    self._reuse_or_replace(index, MarkdownView).set_source(piece, final=final)
                    index += 1
        self._drop_blocks_from(index)

    def _reuse_or_replace(self, index: int, kind: type[_BlockT]) -> _BlockT:
        """The block at `index` if it is of `kind`, else a fresh one put in its place."""
        if index < len(self._blocks):
            existing = self._blocks[index]
            if isinstance(existing, kind):
                return existing
            self._retire(existing)
        block = self._take_spare(index, kind)
        spare = block is not None
        if block is None:
            block = kind(self)
            if isinstance(block, MarkdownView):
                block.configure(shrink_to_fit=self._plain, plain=self._plain)
                block.link_clicked.connect(self.link_clicked)
        message = self.parentWidget()
        if (
            not self._plain
            and message is not None
            and message.testAttribute(Qt.WidgetAttribute.WA_Resized)
        ):
            # Claude's blocks fill the message's width: say so before the
            # first layout (see `MessageWidget.sizeHint`).
            block.resize(message.width(), block.height())
        if index < len(self._blocks):
            self._blocks[index] = block
        else:
            self._blocks.append(block)
        self.block_layout.insertWidget(index, block)
        if self.isVisible() or spare:
            block.show()  # else it shows with the message (a spare was hidden on purpose)
        return block

    def _take_spare(self, index: int, kind: type[_BlockT]) -> _BlockT | None:
        """The piece made ahead (`prepare_block`), if the first piece is to be one."""
        spare, self._spare_block = self._spare_block, None
        if spare is None:
            return None
        if index == 0 and isinstance(spare, kind):
            return spare
        spare.deleteLater()  # the text starts with another kind of piece
        return None

    def _drop_blocks_from(self, index: int) -> None:
        for block in self._blocks[index:]:
            self._retire(block)
        del self._blocks[index:]

    def _retire(self, block: _Block) -> None:
        self._retired_renders += block.render_count
        self.block_layout.removeWidget(block)
        block.hide()
        block.deleteLater()


class UserBubble(MessageText):
    """The user's bubble: tinted, rounded, only as wide as its text needs."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent, plain=True)
        self.block_layout.setContentsMargins(14, 9, 14, 9)
        self.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Preferred)

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(user_bubble_colour(self.palette()))
        painter.drawRoundedRect(QRectF(self.rect()), _BUBBLE_RADIUS, _BUBBLE_RADIUS)
        painter.end()
