"""The transcript: a conversation's messages, newest at the bottom.

Only a page of messages is ever built (the window loads the newest ~50 and
prepends older pages on request), so a conversation of ten thousand messages
opens as fast as one of fifty. Each message is its own widget; a streaming
update re-renders only the message it belongs to.

Scrolling follows two rules: if the user is at the bottom, stay there as text
arrives; otherwise keep the message they are reading exactly where it is —
when older messages are prepended above it, and when the window is resized.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Final

from PySide6.QtCore import QEvent, QObject, QPoint, QRectF, QSize, Qt, QUrl, Signal
from PySide6.QtGui import (
    QDesktopServices,
    QFocusEvent,
    QFont,
    QFontMetrics,
    QKeyEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QPen,
    QResizeEvent,
)
from PySide6.QtWidgets import (
    QApplication,
    QFrame,
    QLabel,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QStackedLayout,
    QVBoxLayout,
    QWidget,
)

from app.core.models import Message
from app.ui.transcript_blocks import (
    blend,
    code_background,
    code_border,
    muted_text_colour,
    scaled_font,
    set_text_colour,
)
from app.ui.transcript_message import MessageWidget

log = logging.getLogger(__name__)

EMPTY_TITLE: Final = "Ask Claude anything."
EMPTY_HINT: Final = "Press Enter to send, Shift+Enter for a new line."
EARLIER_BUTTON_TEXT: Final = "Show earlier messages"
# Links in replies open in the browser only for these schemes; a "file:" or
# "javascript:" link in model output is ignored.
OPENABLE_SCHEMES: Final = frozenset({"http", "https", "mailto"})
# Within this many pixels of the end counts as "at the bottom".
_BOTTOM_SLACK: Final = 8
# Lines stay readable: the column of messages never grows wider than this.
_COLUMN_MAX_WIDTH: Final = 860


def _local_now() -> datetime:
    return datetime.now().astimezone()


class _CentredContent(QWidget):
    """The scroll area's content: one column, centred and at most `max_width` wide.

    A box layout with a centring alignment would ask the column's height for
    the full width even though the column ends up narrower, making the
    content too short on wide windows; this widget asks for the width the
    column really gets. (A QLayout subclass would be the textbook way, but
    PySide drops a reference to None each time Qt calls a Python `itemAt`
    that returns None, which eventually crashes the interpreter.)
    """

    def __init__(self, max_width: int) -> None:
        super().__init__()
        self._max_width = max_width
        self.column = QWidget(self)
        policy = QSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)

    def _column_width(self, width: int) -> int:
        return min(width, self._max_width)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return self.column.heightForWidth(self._column_width(width))

    def sizeHint(self) -> QSize:
        return self.column.sizeHint()

    def minimumSizeHint(self) -> QSize:
        return self.column.minimumSizeHint()

    def _place_column(self) -> None:
        width = self._column_width(self.width())
        self.column.setGeometry((self.width() - width) // 2, 0, width, self.height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._place_column()

    def event(self, event: QEvent) -> bool:
        # The column's layout changed its size: re-place it and tell the scroll area.
        if event.type() == QEvent.Type.LayoutRequest:
            self.updateGeometry()
            self._place_column()
        return super().event(event)


class _FocusRing(QWidget):
    """A thin Highlight outline over the transcript while it has keyboard focus."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.hide()

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        pen = QPen(self.palette().color(QPalette.ColorRole.Highlight))
        pen.setWidthF(2.0)
        painter.setPen(pen)
        painter.drawRoundedRect(QRectF(self.rect()).adjusted(1, 1, -1, -1), 4, 4)
        painter.end()


class _PillButton(QPushButton):
    """A quiet rounded button that sits in the transcript (drawn with palette colours)."""

    def __init__(self, text: str, parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.setAttribute(Qt.WidgetAttribute.WA_Hover)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)

    def sizeHint(self) -> QSize:
        metrics = QFontMetrics(self.font())
        return QSize(metrics.horizontalAdvance(self.text()) + 36, metrics.height() + 14)

    def paintEvent(self, event: QPaintEvent) -> None:
        palette = self.palette()
        hovered = self.underMouse() or self.isDown()
        background = code_background(palette)
        if hovered:
            background = blend(background, palette.color(QPalette.ColorRole.Text), 0.06)
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        frame = QRectF(self.rect()).adjusted(1, 1, -1, -1)
        if self.hasFocus():
            pen = QPen(palette.color(QPalette.ColorRole.Highlight))
            pen.setWidthF(2.0)
        else:
            pen = QPen(code_border(palette))
        painter.setPen(pen)
        painter.setBrush(background)
        radius = frame.height() / 2
        painter.drawRoundedRect(frame, radius, radius)
        painter.setPen(palette.color(QPalette.ColorRole.Text))
        painter.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, self.text())
        painter.end()


class _TranscriptScrollArea(QScrollArea):
    """The scroll area, reachable by Tab: PageUp/PageDown/arrows scroll, Home/End jump."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setAccessibleName("Conversation")
        self._ring = _FocusRing(self)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        bar = self.verticalScrollBar()
        if event.key() == Qt.Key.Key_Home:
            bar.setValue(bar.minimum())
        elif event.key() == Qt.Key.Key_End:
            bar.setValue(bar.maximum())
        else:
            super().keyPressEvent(event)

    def focusInEvent(self, event: QFocusEvent) -> None:
        super().focusInEvent(event)
        # Only a keyboard user needs to see where focus went.
        if event.reason() in (Qt.FocusReason.TabFocusReason, Qt.FocusReason.BacktabFocusReason):
            self._ring.setGeometry(self.rect())
            self._ring.raise_()
            self._ring.show()

    def focusOutEvent(self, event: QFocusEvent) -> None:
        super().focusOutEvent(event)
        self._ring.hide()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._ring.setGeometry(self.rect())


class _EmptyState(QWidget):
    """What a conversation with no messages shows: a friendly hint, centred."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.addStretch(1)
        self.title = QLabel(EMPTY_TITLE, self)
        title_font = scaled_font(self.font(), 1.5)
        title_font.setWeight(QFont.Weight.DemiBold)
        self.title.setFont(title_font)
        self.title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.hint = QLabel(EMPTY_HINT, self)
        self.hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.hint.setWordWrap(True)
        layout.addWidget(self.title)
        layout.addSpacing(6)
        layout.addWidget(self.hint)
        layout.addStretch(1)
        self._apply_palette()

    def _apply_palette(self) -> None:
        set_text_colour(self.hint, muted_text_colour(self.palette()))

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._apply_palette()


class TranscriptView(QWidget):
    """A conversation's messages, paged: the newest page first, older ones on request.

    Signals:
        earlier_requested(): the user asked for older messages (the "Show
            earlier messages" button, or scrolling to the very top); answer
            with `prepend_messages`.
        link_activated(str): a web or mail link was opened from a message.
    """

    earlier_requested = Signal()
    link_activated = Signal(str)

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        open_url: Callable[[QUrl], object] = QDesktopServices.openUrl,
        clock: Callable[[], datetime] = _local_now,
    ) -> None:
        """`open_url` opens a link (the system browser; tests pass a fake);
        `clock` gives "now" for the timestamps ("14:05" today, with the date otherwise)."""
        super().__init__(parent)
        self._open_url = open_url
        self._clock = clock
        self._widgets: list[MessageWidget] = []
        self._by_id: dict[int, MessageWidget] = {}
        self._has_earlier = False
        self._earlier_pending = False
        self._follow_bottom = True
        self._anchor: tuple[MessageWidget, int] | None = None
        self._adjusting = False

        self.setBackgroundRole(QPalette.ColorRole.Base)
        self.setAutoFillBackground(True)
        self._stack = QStackedLayout(self)
        self.empty_state = _EmptyState(self)
        self._stack.addWidget(self.empty_state)

        self._scroll = _TranscriptScrollArea(self)
        self._scroll.setFrameShape(QFrame.Shape.NoFrame)
        self._scroll.setWidgetResizable(True)
        self._scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._scroll.viewport().setBackgroundRole(QPalette.ColorRole.Base)
        self._scroll.viewport().setAutoFillBackground(True)
        self._stack.addWidget(self._scroll)

        self._content = _CentredContent(_COLUMN_MAX_WIDTH)
        self._column = self._content.column
        self._column_layout = QVBoxLayout(self._column)
        self._column_layout.setContentsMargins(28, 16, 28, 28)
        self._column_layout.setSpacing(22)

        self.earlier_button = _PillButton(EARLIER_BUTTON_TEXT, self._column)
        self.earlier_button.setAccessibleName(EARLIER_BUTTON_TEXT)
        self.earlier_button.setToolTip("Load the messages before these")
        self.earlier_button.clicked.connect(self._request_earlier)
        self.earlier_button.hide()
        self._column_layout.addWidget(self.earlier_button, 0, Qt.AlignmentFlag.AlignHCenter)
        self._column_layout.addStretch(1)
        self._scroll.setWidget(self._content)

        bar = self._scroll.verticalScrollBar()
        bar.rangeChanged.connect(self._on_range_changed)
        bar.valueChanged.connect(self._on_value_changed)
        self._scroll.installEventFilter(self)
        self._show_current_page()

    # --- public API ---------------------------------------------------------

    def set_messages(self, messages: Sequence[Message], *, has_earlier: bool) -> None:
        """Show a conversation: its newest page, oldest first, scrolled to the bottom."""
        with self._building():
            self._remove_all()
            now = self._clock()
            for message in messages:
                self._insert(len(self._widgets), message, now)
            self._set_has_earlier(has_earlier)
            self._earlier_pending = False
            self._show_current_page()
        self.scroll_to_bottom()

    def prepend_messages(self, messages: Sequence[Message], *, has_earlier: bool) -> None:
        """Add an older page above the current one without moving what the user sees."""
        self._earlier_pending = False
        self._capture_anchor()
        with self._building():
            now = self._clock()
            fresh = [message for message in messages if message.id not in self._by_id]
            for index, message in enumerate(fresh):
                self._insert(index, message, now)
            self._set_has_earlier(has_earlier)
            self._show_current_page()
        self._settle_layout()
        self._restore_anchor()

    def append_message(self, message: Message) -> None:
        """Add a new message at the bottom; follow it if the user was at the bottom."""
        existing = self._by_id.get(message.id)
        if existing is not None:
            existing.set_message(message)
            return
        self._insert(len(self._widgets), message, self._clock())
        self._show_current_page()

    def update_message_text(self, message_id: int, text: str) -> None:
        """Streaming: replace one message's text; only that message re-renders."""
        widget = self._by_id.get(message_id)
        if widget is None:
            log.debug("text for message %s, which is not shown", message_id)
            return
        widget.set_text(text)

    def update_message(self, message: Message) -> None:
        """Show a message's final state: its text and status (complete, stopped, failed)."""
        widget = self._by_id.get(message.id)
        if widget is None:
            log.debug("update for message %s, which is not shown", message.id)
            return
        widget.set_message(message)

    def clear(self) -> None:
        """Show no conversation: the empty state."""
        self._remove_all()
        self._set_has_earlier(False)
        self._earlier_pending = False
        self._follow_bottom = True
        self._show_current_page()

    def message_count(self) -> int:
        """How many messages are shown (built), not how many the conversation has."""
        return len(self._widgets)

    def scroll_to_bottom(self) -> None:
        """Jump to the newest message and keep following new text."""
        self._follow_bottom = True
        self._set_anchor(None)
        bar = self._scroll.verticalScrollBar()
        self._set_scroll(bar.maximum())

    @property
    def oldest_seq(self) -> int | None:
        """The seq of the oldest message shown (what an earlier page comes before)."""
        return self._widgets[0].message.seq if self._widgets else None

    def message_widget(self, message_id: int) -> MessageWidget | None:
        """The widget showing a message, if it is shown."""
        return self._by_id.get(message_id)

    def message_widgets(self) -> Sequence[MessageWidget]:
        """The shown messages' widgets, oldest first."""
        return tuple(self._widgets)

    @property
    def scroll_area(self) -> QScrollArea:
        return self._scroll

    # --- building -----------------------------------------------------------

    def _settle_layout(self) -> None:
        """Run the pending layout passes now, so the view is right before anything paints.

        Layout requests travel up one parent per pass (column, content, scroll
        area), each posted as an event; a few rounds deliver them all.
        """
        if not self.isVisible():
            return
        for _ in range(4):
            QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)

    @contextmanager
    def _building(self) -> Iterator[None]:
        """Add many messages with the column hidden, then show it once.

        Showing a widget inside a visible layout lays that layout out at once,
        so fifty messages shown one by one would lay the column out fifty
        times. Keyboard focus inside the column survives the hiding.
        """
        focused = QApplication.focusWidget()
        keep_focus = focused is not None and self._column.isAncestorOf(focused)
        self._column.hide()
        try:
            yield
        finally:
            self._column.show()
            if keep_focus and focused is not None and focused.isVisible():
                focused.setFocus(Qt.FocusReason.OtherFocusReason)

    def _insert(self, index: int, message: Message, now: datetime) -> None:
        widget = MessageWidget(message, now, self._column)
        widget.link_clicked.connect(self._on_link_clicked)
        # +1: the "Show earlier messages" button is the layout's first item.
        self._column_layout.insertWidget(index + 1, widget)
        widget.show()
        self._widgets.insert(index, widget)
        self._by_id[message.id] = widget

    def _remove_all(self) -> None:
        self._set_anchor(None)
        for widget in self._widgets:
            self._column_layout.removeWidget(widget)
            widget.hide()
            widget.deleteLater()
        self._widgets.clear()
        self._by_id.clear()

    def _set_has_earlier(self, has_earlier: bool) -> None:
        self._has_earlier = has_earlier
        self.earlier_button.setVisible(has_earlier)

    def _show_current_page(self) -> None:
        empty = not self._widgets and not self._has_earlier
        self._stack.setCurrentWidget(self.empty_state if empty else self._scroll)

    # --- earlier messages ---------------------------------------------------

    def _request_earlier(self) -> None:
        self._earlier_pending = True
        self.earlier_requested.emit()

    # --- links --------------------------------------------------------------

    def _on_link_clicked(self, url: QUrl) -> None:
        if url.scheme().lower() not in OPENABLE_SCHEMES:
            log.info("ignored a link with scheme %r", url.scheme())
            return
        self.link_activated.emit(url.toString())
        self._open_url(url)

    # --- scrolling ----------------------------------------------------------

    def _set_scroll(self, value: int) -> None:
        self._adjusting = True
        try:
            self._scroll.verticalScrollBar().setValue(value)
        finally:
            self._adjusting = False

    def _on_range_changed(self, minimum: int, maximum: int) -> None:
        if self._follow_bottom:
            self._set_scroll(maximum)
        else:
            self._restore_anchor()

    def _on_value_changed(self, value: int) -> None:
        if self._adjusting:
            return
        bar = self._scroll.verticalScrollBar()
        self._follow_bottom = value >= bar.maximum() - _BOTTOM_SLACK
        self._set_anchor(None)
        if (
            value == bar.minimum()
            and bar.maximum() > 0
            and self._has_earlier
            and not self._earlier_pending
        ):
            self._request_earlier()

    def _content_y(self, widget: QWidget) -> int:
        return widget.mapTo(self._content, QPoint(0, 0)).y()

    def _capture_anchor(self) -> None:
        """Remember which message is at the top of the view, and where."""
        if self._follow_bottom:
            self._set_anchor(None)
            return
        top = self._scroll.verticalScrollBar().value()
        for widget in self._widgets:
            y = self._content_y(widget)
            if y + widget.height() > top:
                self._set_anchor((widget, y - top))
                return
        self._set_anchor(None)

    def _set_anchor(self, anchor: tuple[MessageWidget, int] | None) -> None:
        # The anchor message is watched: whenever the layout moves it (older
        # messages placed above it, text reflowed), the view moves with it.
        if self._anchor is not None and (anchor is None or anchor[0] is not self._anchor[0]):
            self._anchor[0].removeEventFilter(self)
        if anchor is not None and (self._anchor is None or anchor[0] is not self._anchor[0]):
            anchor[0].installEventFilter(self)
        self._anchor = anchor

    def _restore_anchor(self) -> None:
        if self._anchor is None:
            return
        widget, offset = self._anchor
        self._set_scroll(self._content_y(widget) - offset)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._scroll and event.type() == QEvent.Type.Resize:
            # Before the scroll area reflows for a new size, note what is on screen.
            self._capture_anchor()
        elif (
            self._anchor is not None
            and watched is self._anchor[0]
            and event.type() == QEvent.Type.Move
        ):
            self._restore_anchor()
        return super().eventFilter(watched, event)
