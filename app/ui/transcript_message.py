"""One message in the transcript: who spoke, when, what they said, and how it ended."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Final, TypeVar

from PySide6.QtCore import QEvent, QPoint, QPointF, QRectF, QSize, Qt, QUrl, Signal
from PySide6.QtGui import (
    QColor,
    QContextMenuEvent,
    QEnterEvent,
    QFocusEvent,
    QFont,
    QKeyEvent,
    QPainter,
    QPainterPath,
    QPaintEvent,
    QPalette,
    QPen,
)
from PySide6.QtWidgets import (
    QApplication,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPushButton,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.core.lookup import Lookup
from app.core.models import Message, MessageStatus, Role
from app.ui.lookup_line import LookupLine
from app.ui.markdown_blocks import GrowingTextSplitter, SegmentKind
from app.ui.thinking_block import ThinkingBlock
from app.ui.transcript_blocks import (
    CodeBlock,
    HugeTextView,
    MarkdownView,
    TypingIndicator,
    blend,
    muted_text_colour,
    paint_focus_ring,
    scaled_font,
    set_text_colour,
)

# Above this many characters a message is shown as plain text: laying out
# Markdown that long would freeze the window.
HUGE_MESSAGE_CHARS: Final = 100_000
# A user's bubble never reaches the far side of the transcript.
_BUBBLE_INSET: Final = 56
_BUBBLE_RADIUS: Final = 12.0

PINNED_TIP: Final = "Pinned — never condensed"
PIN_TIP: Final = "Pin: never condense this message"
PIN_ACTION: Final = "Pin message"
UNPIN_ACTION: Final = "Unpin message"

STATUS_NOTES: Final = {
    MessageStatus.STOPPED: "Stopped",
    MessageStatus.ERROR: "Reply failed",
    MessageStatus.CUT_OFF: "Claude's reply reached its length limit",
    MessageStatus.PAUSED: "Claude paused this reply",
    MessageStatus.DECLINED: "Claude declined — no longer sent to Claude",
}
# A question whose reply Claude declined: it stays here, but is not sent again.
DECLINED_QUESTION_NOTE: Final = "Left out of what Claude sees"

_Block = MarkdownView | CodeBlock | HugeTextView
_BlockT = TypeVar("_BlockT", MarkdownView, CodeBlock, HugeTextView)


def format_timestamp(moment: datetime, now: datetime) -> str:
    """ "14:05" for today, "3 Mar 14:05" this year, "3 Mar 2024 14:05" before.

    An aware time is shown in the local zone; a naive one is taken as local
    already.
    """
    local = moment.astimezone() if moment.tzinfo else moment
    local_now = now.astimezone() if now.tzinfo else now
    clock = f"{local:%H:%M}"
    if local.date() == local_now.date():
        return clock
    if local.year == local_now.year:
        return f"{local.day} {local:%b} {clock}"
    return f"{local.day} {local:%b} {local.year} {clock}"


def full_timestamp(moment: datetime) -> str:
    """The long form for a tooltip: "Tuesday 3 March 2026, 14:05"."""
    local = moment.astimezone() if moment.tzinfo else moment
    return f"{local:%A} {local.day} {local:%B %Y, %H:%M}"


class _Bubble(QWidget):
    """The frame around a message's text; bare for Claude (see `_TintedBubble`).

    It draws nothing, so it has no `paintEvent`: an override would be a call
    into Python for every message on screen at every repaint.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.block_layout = QVBoxLayout(self)
        self.block_layout.setContentsMargins(0, 0, 0, 0)
        self.block_layout.setSpacing(10)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)


class _TintedBubble(_Bubble):
    """The user's bubble: tinted, rounded, only as wide as its text needs."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.block_layout.setContentsMargins(14, 9, 14, 9)
        self.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Preferred)

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(user_bubble_colour(self.palette()))
        painter.drawRoundedRect(QRectF(self.rect()), _BUBBLE_RADIUS, _BUBBLE_RADIUS)
        painter.end()


def user_bubble_colour(palette: QPalette) -> QColor:
    """Base tinted a little towards Highlight: distinct, and body text keeps its contrast."""
    return blend(
        palette.color(QPalette.ColorRole.Base), palette.color(QPalette.ColorRole.Highlight), 0.16
    )


def _error_colour(palette: QPalette) -> QColor:
    """A red readable on this palette's Base (dark red on light, pale red on dark)."""
    dark_theme = palette.color(QPalette.ColorRole.Base).lightnessF() < 0.5
    return QColor("#f2a7a2") if dark_theme else QColor("#b3261e")


class PinButton(QToolButton):
    """A small drawn pushpin: outlined when it offers to pin, filled when pinned.

    Drawn, not a glyph: an emoji pin is missing from many fonts.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setCheckable(True)
        self.setAutoRaise(True)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # the message's menu reaches it by keyboard
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setFixedSize(20, 18)

    def paintEvent(self, event: QPaintEvent) -> None:
        if self.underMouse():
            super().paintEvent(event)  # the button's hover frame, not a pressed look when pinned
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        palette = self.palette()
        colour = (
            palette.color(QPalette.ColorRole.Highlight)
            if self.isChecked()
            else muted_text_colour(palette)
        )
        centre_x = self.width() / 2
        top = (self.height() - 14) / 2
        # The needle, then the head (a round top on a collar).
        painter.setPen(QPen(colour, 1.4, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap))
        painter.drawLine(QPointF(centre_x, top + 8), QPointF(centre_x, top + 14))
        head = QPainterPath()
        head.addEllipse(QRectF(centre_x - 3.5, top, 7, 6))
        head.addRoundedRect(QRectF(centre_x - 5, top + 5.5, 10, 2.5), 1, 1)
        if self.isChecked():
            painter.fillPath(head.simplified(), colour)
        else:
            painter.setPen(QPen(colour, 1.2))
            painter.drawPath(head.simplified())
        painter.end()


class MessageWidget(QWidget):
    """One message: a "You"/"Claude" line with the time, the text, a status note.

    Claude's Markdown is rendered (prose, code blocks with Copy buttons); the
    user's words are shown exactly as typed, in a tinted bubble on the right.

    Attributes:
        message: the message as last shown.
        render_count: how many text pieces were (re)rendered so far.

    Signals:
        link_clicked(QUrl): a link in the text was activated.
        pin_requested(int, bool): the user pinned (True) or unpinned the message (its id).
        action_requested(): the action offered beside the status note was clicked.
    """

    link_clicked = Signal(QUrl)
    pin_requested = Signal(int, bool)
    action_requested = Signal()

    def __init__(
        self,
        message: Message,
        now: datetime,
        parent: QWidget | None = None,
        *,
        width: int | None = None,
    ) -> None:
        """`width`, when known, is the width the message will be laid out at: its
        text is then laid out once, at that width, not at a guess first."""
        super().__init__(parent)
        self.message = message
        if width is not None:
            self.resize(width, self.height())
        self._retired_renders = 0
        self._is_user = message.role is Role.USER
        self._blocks: list[_Block] = []
        self._text: str | None = None
        self._splitter = GrowingTextSplitter()

        root = QVBoxLayout(self)
        root.setContentsMargins(0, 0, 0, 0)
        root.setSpacing(4)

        header = QHBoxLayout()
        header.setSpacing(8)
        header.setContentsMargins(4 if self._is_user else 0, 0, 4 if self._is_user else 0, 0)
        self._name = QLabel("You" if self._is_user else "Claude", self)
        name_font = QFont(self.font())
        name_font.setWeight(QFont.Weight.DemiBold)
        self._name.setFont(name_font)
        stamp = format_timestamp(message.created_at, now)
        self.setAccessibleName(f"{self._name.text()}, {stamp}")
        self._time = QLabel(stamp, self)
        self._time.setToolTip(full_timestamp(message.created_at))
        self._time.setFont(scaled_font(self.font(), 0.88))
        if self._is_user:
            header.addStretch(1)
        header.addWidget(self._name)
        header.addWidget(self._time)
        if not self._is_user:
            header.addStretch(1)
        self._header = header
        root.addLayout(header)

        body_row = QHBoxLayout()
        body_row.setContentsMargins(0, 0, 0, 0)
        body_row.setSpacing(0)
        self._bubble = _TintedBubble(self) if self._is_user else _Bubble(self)
        self._bubble_layout = self._bubble.block_layout
        if self._is_user:
            body_row.addSpacing(_BUBBLE_INSET)
            body_row.addStretch(1)
        body_row.addWidget(self._bubble)
        root.addLayout(body_row)
        self._root = root

        # Made only when needed: most messages never show them, and a page of
        # fifty messages opens faster with fewer widgets.
        self._state: QLabel | None = None
        self._typing: TypingIndicator | None = None
        self._note: QLabel | None = None
        self._offer = ("", "")  # an action beside the note ("Retry"), and a note for it
        self._action: QPushButton | None = None
        self._pin: PinButton | None = None
        self._lookups: LookupLine | None = None  # the archive searches (a reply's, if any)
        self._thinking: ThinkingBlock | None = None  # Claude's thinking (a reply's, if any)
        self._pointer_over = False
        # Reachable by Tab, so its menu (Menu key, Shift+F10) can pin it by keyboard.
        self.setFocusPolicy(Qt.FocusPolicy.TabFocus)

        self._apply_palette()
        self.set_message(message)

    # --- content ----------------------------------------------------------

    @property
    def text(self) -> str:
        return self._text or ""

    def blocks(self) -> Sequence[_Block]:
        """The text pieces, in order (for tests and the transcript's anchoring)."""
        return tuple(self._blocks)

    def set_message(self, message: Message) -> None:
        """Show `message`'s final (or current) text and status."""
        self.message = message
        if message.content != self._text:
            self.set_text(message.content)  # shows the status too
        else:
            self._show_status()
        if message.status is not MessageStatus.STREAMING:
            self._splitter.reset()  # the text will not grow: keep no copy of it
        if message.thinking or self._thinking is not None:
            self.set_thinking(message.thinking or self.thinking_text)
        self._show_pin()

    @property
    def lookup_line(self) -> LookupLine | None:
        """The line of this reply's archive searches, once it has any."""
        return self._lookups

    @property
    def thinking_block(self) -> ThinkingBlock | None:
        return self._thinking

    @property
    def thinking_text(self) -> str:
        return self._thinking.details.text() if self._thinking is not None else ""

    def set_thinking(self, thinking: str) -> None:
        """Show Claude's thinking above the reply, collapsed ("Thought for N s")."""
        if not thinking.strip() and self._thinking is None:
            return
        if self._thinking is None:
            self._thinking = ThinkingBlock(self)
            self._root.insertWidget(1, self._thinking)
        streaming = self.message.status is MessageStatus.STREAMING
        self._thinking.set_thinking(thinking, self.message.thinking_seconds, streaming=streaming)

    def set_lookups(self, lookups: Sequence[Lookup]) -> None:
        """Show the archive searches Claude ran for this reply, collapsed, above its text."""
        if self._lookups is None:
            self._lookups = LookupLine(self)
            self._root.insertWidget(1, self._lookups)
        self._lookups.set_lookups(lookups)

    def set_text(self, text: str) -> None:
        """Replace the text, re-rendering only the pieces that changed."""
        if text == self._text:
            return
        self._text = text
        if len(text) > HUGE_MESSAGE_CHARS:
            self._reuse_or_replace(0, HugeTextView).set_text(text)
            self._drop_blocks_from(1)
        elif self._is_user:
            self._reuse_or_replace(0, MarkdownView).set_source(text)
            self._drop_blocks_from(1)
        else:
            self._show_segments(text)
        self._show_status()

    def _show_segments(self, text: str) -> None:
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
                    self._reuse_or_replace(index, MarkdownView).set_source(piece)
                    index += 1
        self._drop_blocks_from(index)

    @property
    def render_count(self) -> int:
        """How many times a piece of this message's text was (re)rendered."""
        return self._retired_renders + sum(block.render_count for block in self._blocks)

    def _reuse_or_replace(self, index: int, kind: type[_BlockT]) -> _BlockT:
        """The block at `index` if it is of `kind`, else a fresh one put in its place."""
        if index < len(self._blocks):
            existing = self._blocks[index]
            if isinstance(existing, kind):
                return existing
            self._retire(existing)
        block = kind(self._bubble)
        if isinstance(block, MarkdownView):
            block.configure(shrink_to_fit=self._is_user, plain=self._is_user)
            block.link_clicked.connect(self.link_clicked)
        if not self._is_user and self.testAttribute(Qt.WidgetAttribute.WA_Resized):
            # Claude's blocks fill the message's width: say so before the
            # first layout (see `sizeHint`).
            block.resize(self.width(), block.height())
        if index < len(self._blocks):
            self._blocks[index] = block
        else:
            self._blocks.append(block)
        self._bubble_layout.insertWidget(index, block)
        if self._bubble.isVisible():
            block.show()  # else it shows with the message
        return block

    def _drop_blocks_from(self, index: int) -> None:
        for block in self._blocks[index:]:
            self._retire(block)
        del self._blocks[index:]

    def _retire(self, block: _Block) -> None:
        self._retired_renders += block.render_count
        self._bubble_layout.removeWidget(block)
        block.hide()
        block.deleteLater()

    # --- pins -------------------------------------------------------------

    @property
    def pinnable(self) -> bool:
        """A stored message that no summary covers, and not still being written."""
        return self.message.summary_id is None and self.message.status is not (
            MessageStatus.STREAMING
        )

    def pin_button(self) -> PinButton | None:
        return self._pin

    def _show_pin(self) -> None:
        """The pin shows while pinned, and on hover or focus to offer pinning."""
        pinned = self.message.pinned
        wanted = pinned or (self.pinnable and (self._pointer_over or self.hasFocus()))
        if not wanted:
            if self._pin is not None:
                self._pin.hide()
            return
        if self._pin is None:
            self._pin = PinButton(self)
            self._pin.clicked.connect(lambda: self._request_pin(not self.message.pinned))
            # Beside the name and time, on the side away from the bubble's edge.
            index = self._header.indexOf(self._time) + 1
            self._header.insertWidget(index, self._pin)
        self._pin.setChecked(pinned)
        tip = PINNED_TIP if pinned else PIN_TIP
        self._pin.setToolTip(tip)
        self._pin.setAccessibleName(tip)
        self._pin.show()
        name = f"{self._name.text()}, {self._time.text()}"
        self.setAccessibleName(f"{name}, pinned" if pinned else name)

    def _request_pin(self, pinned: bool) -> None:
        if self._pin is not None:
            self._pin.setChecked(self.message.pinned)  # until the service says it changed
        self.pin_requested.emit(self.message.id, pinned)

    def context_menu(self) -> QMenu:
        """The message's menu: pin or unpin."""
        menu = QMenu(self)
        pinned = self.message.pinned
        action = menu.addAction(UNPIN_ACTION if pinned else PIN_ACTION)
        action.setToolTip(PINNED_TIP if pinned else PIN_TIP)
        action.setEnabled(pinned or self.pinnable)
        action.triggered.connect(lambda: self._request_pin(not pinned))
        return menu

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        if event.reason() is QContextMenuEvent.Reason.Keyboard:
            self._open_menu(self._menu_anchor())
        else:
            self._open_menu(event.globalPos())

    def keyPressEvent(self, event: QKeyEvent) -> None:
        shift = bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
        if event.key() == Qt.Key.Key_Menu or (event.key() == Qt.Key.Key_F10 and shift):
            self._open_menu(self._menu_anchor())
            return
        super().keyPressEvent(event)

    def _menu_anchor(self) -> QPoint:
        return self.mapToGlobal(self._name.geometry().bottomLeft())

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        if self.hasFocus():  # where the keyboard is, shown the way Qt shows a focus ring
            paint_focus_ring(self, 6, 1.5)

    def _open_menu(self, where: QPoint) -> None:
        if isinstance(QApplication.activePopupWidget(), QMenu):
            return  # the Menu key may come as a key and as a context menu event
        menu = self.context_menu()
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        menu.popup(where)

    def enterEvent(self, event: QEnterEvent) -> None:
        super().enterEvent(event)
        self._pointer_over = True
        self._show_pin()

    def leaveEvent(self, event: QEvent) -> None:
        super().leaveEvent(event)
        self._pointer_over = False
        self._show_pin()

    def focusInEvent(self, event: QFocusEvent) -> None:
        super().focusInEvent(event)
        self._show_pin()
        self.update()

    def focusOutEvent(self, event: QFocusEvent) -> None:
        super().focusOutEvent(event)
        self._show_pin()
        self.update()

    # --- status -----------------------------------------------------------

    def _show_status(self) -> None:
        status = self.message.status
        streaming = status is MessageStatus.STREAMING
        waiting = streaming and not self.text.strip()
        if waiting or self._typing is not None:
            self._typing_indicator().setVisible(waiting)
        writing = streaming and not waiting
        if writing or self._state is not None:
            self._state_label().setVisible(writing)
        note = _note_for(self.message, self._offer[1])
        if note is not None:
            label = self._note_label()
            label.setText(("⚠ " if status is MessageStatus.ERROR else "■ ") + note)
            label.setAccessibleName(note)
            self._apply_note_colour()
            label.show()
        elif self._note is not None:
            self._note.hide()
        if self._offer[0] or self._action is not None:
            self._action = _show_action(self, self._action, self._offer[0] if note else "")
        showing_bubble = bool(self._blocks) or waiting
        if self._bubble.isVisibleTo(self) != showing_bubble:
            self._bubble.setVisible(showing_bubble)

    def offer(self, action: str, note: str = "") -> None:
        """Offer an action beside the status note ("Continue"; "" none); `note` if none."""
        self._offer = (action, note)
        self._show_status()

    def _typing_indicator(self) -> TypingIndicator:
        if self._typing is None:
            self._typing = TypingIndicator(self._bubble)
            self._bubble_layout.addWidget(self._typing)
        return self._typing

    def _state_label(self) -> QLabel:
        if self._state is None:
            self._state = QLabel("Writing…", self)
            self._state.setFont(scaled_font(self.font(), 0.88))
            set_text_colour(self._state, muted_text_colour(self.palette()))
            self._header.insertWidget(self._header.indexOf(self._time) + 1, self._state)
        return self._state

    def _note_label(self) -> QLabel:
        if self._note is None:
            self._note = QLabel(self)
            self._note.setFont(scaled_font(self.font(), 0.92))
            # A refusal's explanation can be long: it wraps, never widens the transcript.
            self._note.setWordWrap(True)
            self._note.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
            row = QHBoxLayout()
            row.setContentsMargins(4 if self._is_user else 0, 0, 4 if self._is_user else 0, 0)
            if self._is_user:
                row.addStretch(1)
            row.addWidget(self._note, 1)
            self._root.addLayout(row)
            self._note_row = row
        return self._note

    def status_note(self) -> str:
        """The status note shown under the message ("" when none), as a screen reader says it."""
        if self._note is None or not self._note.isVisibleTo(self):
            return ""
        return self._note.accessibleName()

    def is_typing(self) -> bool:
        """True while the "Claude is writing" dots are shown."""
        return self._typing is not None and self._typing.isVisibleTo(self)

    # --- size -------------------------------------------------------------

    def sizeHint(self) -> QSize:
        """Once laid out: as wide as the message, as tall as that width makes it. Every
        message is the column's width, so layouts ask each its height for that one width;
        any other hint width makes every pass ask every block twice, in Python."""
        if not self.testAttribute(Qt.WidgetAttribute.WA_Resized):
            return super().sizeHint()
        width = self.width()
        return QSize(width, self.heightForWidth(width))

    def refresh_size_hints(self) -> None:
        """After the width changed: hints follow the new width (see `sizeHint`)."""
        for block in self._blocks:
            block.updateGeometry()
        self.updateGeometry()

    # --- looks ------------------------------------------------------------

    def _apply_palette(self) -> None:
        muted = muted_text_colour(self.palette())
        for label in (self._time, self._state):
            if label is not None:
                set_text_colour(label, muted)
        self._apply_note_colour()

    def _apply_note_colour(self) -> None:
        if self._note is None:
            return
        colour = (
            _error_colour(self.palette())
            if self.message.status is MessageStatus.ERROR
            else muted_text_colour(self.palette())
        )
        set_text_colour(self._note, colour)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._apply_palette()


def _note_for(message: Message, fallback: str) -> str | None:
    """The note under `message`: its status's, else `fallback` (an offer's), else none."""
    if message.role is Role.USER and message.status is MessageStatus.DECLINED:
        return DECLINED_QUESTION_NOTE
    note = STATUS_NOTES.get(message.status)
    if note and fallback and message.status is MessageStatus.DECLINED:
        return f"{note}. {fallback}"  # the explanation, and "Ask another model"
    return note or fallback or None


def _show_action(widget: MessageWidget, button: QPushButton | None, text: str) -> QPushButton:
    """The button of the action `widget` offers, beside its note; hidden when `text` is ""."""
    if button is None:
        note = widget._note_label()
        button = QPushButton(widget)
        button.clicked.connect(widget.action_requested)
        widget._note_row.insertWidget(widget._note_row.indexOf(note) + 1, button)
    button.setText(text)
    button.setAccessibleName(text)
    button.setVisible(bool(text))
    return button
