"""One message in the transcript: who spoke, when, what they said, and how it ended.

`MessageWidget` puts together the message's parts, each owning its role: the header
line (`message_header`: name, time, pin, "Writing…", and the bar of versions and hover
actions that `message_actions` adds), what goes above the text (Claude's thinking,
its archive searches, the files sent), the text in its bubble (`message_text`), and
the note on how it ended with the action offered (`message_note`). The message itself
keeps what is about the whole: its pin and menu, focus and hover, and its size.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Final

from PySide6.QtCore import QEvent, QPoint, QSize, Qt, QUrl, Signal
from PySide6.QtGui import (
    QContextMenuEvent,
    QEnterEvent,
    QFocusEvent,
    QKeyEvent,
    QKeySequence,
    QResizeEvent,
)
from PySide6.QtWidgets import (
    QApplication,
    QHBoxLayout,
    QMenu,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from app.core.lookup import Lookup
from app.core.message_kinds import MessageStatus, Role
from app.ui.lookup_line import LookupLine
from app.ui.message_header import PIN_TIP, PINNED_TIP, MessageHeader
from app.ui.message_note import MessageNote
from app.ui.message_text import BUBBLE_INSET, MessageText, UserBubble
from app.ui.thinking_block import ThinkingBlock
from app.ui.transcript_frame import FocusRing

if TYPE_CHECKING:
    from app.core.models import Message

PIN_ACTION: Final = "Pin message"
UNPIN_ACTION: Final = "Unpin message"


class MessageWidget(QWidget):
    """One message: a "You"/"Claude" line with the time, the text, a status note.

    Claude's Markdown is rendered (prose, code blocks with Copy buttons); the
    user's words are shown exactly as typed, in a tinted bubble on the right.

    Attributes:
        message: the message as last shown.
        header: the name, the time, the pin and the message's bar (`MessageHeader`).
        body: the text in its bubble (`MessageText`).
        note: how it ended, and the action offered (`MessageNote`).

    Signals:
        link_clicked(QUrl): a link in the text was activated.
        pin_requested(int, bool): the user pinned (True) or unpinned the message (its id).
        action_requested(): the action offered beside the status note was clicked.
        pointer_changed(): the pointer or the keyboard came onto the message or left it
            (`pointed_at`).
        copy_requested(): Ctrl+C with the keyboard on the message.

    `menu_for`, when set, makes the message's menu (its pin's alone otherwise): what a
    right-click, the Menu key and Shift+F10 open.
    """

    link_clicked = Signal(QUrl)
    pin_requested = Signal(int, bool)
    action_requested = Signal()
    pointer_changed = Signal()
    copy_requested = Signal()

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
        # As tall as its text needs, never squeezed: the column grows instead (see
        # `TranscriptView`), so adding a row moves no other row.
        policy = self.sizePolicy()
        policy.setVerticalPolicy(QSizePolicy.Policy.Fixed)
        self.setSizePolicy(policy)
        if width is not None:
            self.resize(width, self.height())
        is_user = message.role is Role.USER
        self._text: str | None = None

        self._column = QVBoxLayout(self)
        self._column.setContentsMargins(0, 0, 0, 0)
        self._column.setSpacing(4)
        self.header = MessageHeader(
            self,
            is_user=is_user,
            created_at=message.created_at,
            now=now,
            pin_clicked=lambda: self._request_pin(not self.message.pinned),
        )
        self.setAccessibleName(self.header.said_by)
        self._column.addLayout(self.header.row)

        body_row = QHBoxLayout()
        body_row.setContentsMargins(0, 0, 0, 0)
        body_row.setSpacing(0)
        self.body = UserBubble(self) if is_user else MessageText(self)
        self._body_shown = True  # the body not hidden (`_show_status`)
        self.body.link_clicked.connect(self.link_clicked)
        if is_user:
            body_row.addSpacing(BUBBLE_INSET)
            body_row.addStretch(1)
        body_row.addWidget(self.body)
        self._column.addLayout(body_row)
        self.note = MessageNote(
            self, self._column, is_user=is_user, action=lambda: self.action_requested.emit()
        )

        # Made only when needed: most messages never show them, and a page of
        # fifty messages opens faster with fewer widgets.
        self._lookups: LookupLine | None = None  # the archive searches (a reply's, if any)
        self._thinking: ThinkingBlock | None = None  # Claude's thinking (a reply's, if any)
        self._pointer_over = False
        self._sending = False  # on its way to the disk (`set_sending`)
        self._focus_ring: FocusRing | None = None  # made at the first focus
        self.menu_for: Callable[[MessageWidget], QMenu] | None = None
        # Reachable by Tab, so its menu (Menu key, Shift+F10) can pin it by keyboard.
        self.setFocusPolicy(Qt.FocusPolicy.TabFocus)

        self.header.apply_palette()
        self.set_message(message)

    @classmethod
    def spare(
        cls, role: Role, now: datetime, parent: QWidget, *, width: int | None = None
    ) -> MessageWidget:
        """A row built ahead of need, hidden, for the next message of `role` (`adopt`
        gives it its message): what building a row costs is paid while nothing waits
        for it, not between Enter and the request. A user's row has its text piece
        and its "Sending…" made; Claude's its "is writing" dots and, hidden, its
        "Writing…" and the piece its first words go in."""
        from app.core.models import Message  # built after the first paint (issue 20)

        user = role is Role.USER
        stand_in = Message(
            id=0,
            session_id="",
            seq=0,
            role=role,
            content="…" if user else "",
            status=MessageStatus.COMPLETE if user else MessageStatus.STREAMING,
            created_at=now,
        )
        widget = cls(stand_in, now, parent, width=width)
        if user:
            widget.set_sending(True)
            widget.set_sending(False)
        else:
            widget.body.prepare_block()
            # "Writing…", made and hidden: the first words show it without making it.
            widget.header.set_writing(True)
            widget.header.set_writing(False)
        widget.ensurePolished()
        return widget

    def adopt(self, message: Message, now: datetime, *, sending: bool = False) -> None:
        """Show `message` in this row built ahead (`spare`), as if built for it."""
        self.header.set_time(message.created_at, now)
        self.setAccessibleName(self.header.said_by)
        self._sending = sending
        self.set_message(message)

    # --- content ----------------------------------------------------------

    @property
    def text(self) -> str:
        return self._text or ""

    def set_message(self, message: Message) -> None:
        """Show `message`'s final (or current) text and status."""
        self.message = message
        if message.content != self._text:
            # Shows the status too; a message no longer streaming will not grow.
            self.set_text(message.content, final=message.status is not MessageStatus.STREAMING)
        else:
            self._show_status()
        if message.status is not MessageStatus.STREAMING:
            self.body.text_will_not_grow()
        if message.thinking or self._thinking is not None:
            self.set_thinking(message.thinking or self.thinking_text)
        self._show_pin()

    def set_text(self, text: str, *, final: bool = False) -> None:
        """Replace the text, re-rendering only the pieces that changed (`final`: it will
        not grow any more, see `MarkdownView.set_source`)."""
        if text == self._text:
            return
        self._text = text
        if text.strip():
            # The dots go before the words come: laid out beside them, the row would be
            # too tall for a pass, then shrink, leaving a strip in view to paint as the
            # view follows the bottom, and Qt repaints the whole page it scrolls.
            self.body.set_typing(False)
        self.body.set_text(text, final=final)
        self._show_status()

    def add_above_text(self, widget: QWidget) -> None:
        """Put `widget` right under the header, above what was put there before (the
        files sent, Claude's thinking, its archive searches)."""
        self._column.insertWidget(1, widget)

    def add_below(self, widget: QWidget) -> None:
        """Put `widget` under everything else (a mark on the message)."""
        self._column.addWidget(widget)

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
            self.add_above_text(self._thinking)
        streaming = self.message.status is MessageStatus.STREAMING
        self._thinking.set_thinking(thinking, self.message.thinking_seconds, streaming=streaming)

    def set_lookups(self, lookups: Sequence[Lookup]) -> None:
        """Show the archive searches Claude ran for this reply, collapsed, above its text."""
        if self._lookups is None:
            self._lookups = LookupLine(self)
            self.add_above_text(self._lookups)
        self._lookups.set_lookups(lookups)

    def offer(self, action: str, note: str = "") -> None:
        """Offer an action beside the status note ("Continue"; "" none); `note` if none."""
        self.note.offer(action, note)
        self._show_status()

    def set_sending(self, sending: bool) -> None:
        """Show the user's message as sending (not on disk yet), or as sent."""
        self._sending = sending
        self._show_status()
        self._show_pin()

    @property
    def sending(self) -> bool:
        return self._sending

    def _show_status(self) -> None:
        streaming = self.message.status is MessageStatus.STREAMING
        waiting = streaming and not self.text.strip()
        self.body.set_typing(waiting)
        if self._sending:
            self.header.set_sending(True)
        else:
            self.header.set_writing(streaming and not waiting)
        self.note.show(self.message)
        showing_text = self.body.has_blocks() or waiting
        if self._body_shown != showing_text:
            self._body_shown = showing_text
            self.body.setVisible(showing_text)

    # --- pins and the menu --------------------------------------------------

    @property
    def pinnable(self) -> bool:
        """A stored message that no summary covers, and not still being written."""
        return (
            self.message.summary_id is None
            and self.message.status is not MessageStatus.STREAMING
            and not self._sending
        )

    def _show_pin(self) -> None:
        """The pin shows while pinned, and on hover or focus to offer pinning."""
        pinned = self.message.pinned
        offered = self.pinnable and (self._pointer_over or self.hasFocus())
        self.header.show_pin(pinned=pinned, offered=offered)
        if pinned or offered:
            name = self.header.said_by
            self.setAccessibleName(f"{name}, pinned" if pinned else name)

    def _request_pin(self, pinned: bool) -> None:
        if self.header.pin is not None:
            self.header.pin.setChecked(self.message.pinned)  # until the service says it changed
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
            self._open_menu(self.header.menu_anchor())
        else:
            self._open_menu(event.globalPos())

    def keyPressEvent(self, event: QKeyEvent) -> None:
        shift = bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
        if event.key() == Qt.Key.Key_Menu or (event.key() == Qt.Key.Key_F10 and shift):
            self._open_menu(self.header.menu_anchor())
            return
        if event.matches(QKeySequence.StandardKey.Copy):
            self.copy_requested.emit()
            return
        super().keyPressEvent(event)

    def _open_menu(self, where: QPoint) -> None:
        if isinstance(QApplication.activePopupWidget(), QMenu):
            return  # the Menu key may come as a key and as a context menu event
        menu = self.menu_for(self) if self.menu_for is not None else self.context_menu()
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        menu.popup(where)

    # --- focus and hover ------------------------------------------------------

    @property
    def pointed_at(self) -> bool:
        """The pointer is over the message, or the keyboard is on it."""
        return self._pointer_over or self.hasFocus()

    def enterEvent(self, event: QEnterEvent) -> None:
        super().enterEvent(event)
        self._pointer_over = True
        self._show_pin()
        self.pointer_changed.emit()

    def leaveEvent(self, event: QEvent) -> None:
        super().leaveEvent(event)
        self._pointer_over = False
        self._show_pin()
        self.pointer_changed.emit()

    def focusInEvent(self, event: QFocusEvent) -> None:
        super().focusInEvent(event)
        self._show_pin()
        self._show_focus_ring(True)
        self.pointer_changed.emit()

    def focusOutEvent(self, event: QFocusEvent) -> None:
        super().focusOutEvent(event)
        self._show_pin()
        self._show_focus_ring(False)
        self.pointer_changed.emit()

    def _show_focus_ring(self, shown: bool) -> None:
        """Where the keyboard is, shown the way Qt shows a focus ring: beneath the
        message's parts, as if the message painted it itself (made at its first focus)."""
        if self._focus_ring is None:
            if not shown:
                return
            self._focus_ring = FocusRing(self, 6, 1.5)
        if shown:
            self._focus_ring.setGeometry(self.rect())
            self._focus_ring.lower()
        self._focus_ring.setVisible(shown)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if self._focus_ring is not None:
            self._focus_ring.setGeometry(self.rect())

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
        self.body.refresh_size_hints()
        self.updateGeometry()

    # --- looks ------------------------------------------------------------

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self.header.apply_palette()
            self.note.apply_palette(self.message)
