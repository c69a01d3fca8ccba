"""Opening a conversation at a message: found by search, Ctrl+F or the History window.

Opening is asynchronous (the service reads the conversation, the transcript builds its
page after the first paint), so the jump waits for the page and the summaries, loads
earlier pages until the message or its summary's card is there, unfolds the card (a
compressed one's parts too), scrolls there and outlines the target for a moment.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QPoint, QRect, Qt, QTimer, Signal
from PySide6.QtGui import QPaintEvent
from PySide6.QtWidgets import QScrollArea, QWidget

from app.core.summary import SummaryTier
from app.ui.controller import ChatController
from app.ui.history_source import Place
from app.ui.summary_block import SummaryBlock
from app.ui.theme import paint_focus_ring
from app.ui.transcript import TranscriptView
from app.ui.transcript_frame import settle_layout

FLASH_MS = 1600
_MARGIN = 48  # space above the target, so it does not touch the top edge


class Flash(QWidget):
    """A Highlight outline over part of a widget, gone after `FLASH_MS`."""

    def __init__(self, target: QWidget, area: QRect | None = None) -> None:
        super().__init__(target)
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setObjectName("jumpFlash")
        self.setGeometry(area if area is not None else target.rect())
        self.show()
        self.raise_()
        QTimer.singleShot(FLASH_MS, self, self.deleteLater)

    def paintEvent(self, event: QPaintEvent) -> None:
        paint_focus_ring(self, 8, 3.0)


class MessageJump(QObject):
    """Goes to a `Place` in the main window's transcript.

    Attributes:
        pending: the place still to reach (the conversation is opening), or None.

    Signals:
        arrived(object): the place was reached (the Place), its target outlined.
    """

    arrived = Signal(object)

    def __init__(
        self,
        controller: ChatController,
        transcript: TranscriptView,
        load_earlier: Callable[[], None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._controller = controller
        self._chat = controller.service
        self._transcript = transcript
        self._load_earlier = load_earlier
        self.pending: Place | None = None
        self.flash: Flash | None = None
        transcript.page_built.connect(self._try_later)
        controller.summaries_changed.connect(self._try_later)

    def go(self, place: Place) -> None:
        """Open `place`'s conversation (if not on screen) and go there once it is shown."""
        self.pending = place
        current = self._chat.current.state.session
        if current is not None and current.id == place.session_id:
            self._try_later()
        else:
            self._chat.open_session(place.session_id)

    # -- inside -------------------------------------------------------------------------

    def _try_later(self, *_: object) -> None:
        if self.pending is not None:
            QTimer.singleShot(0, self, self._try)

    def _try(self) -> None:
        place = self.pending
        current = self._chat.current.state.session
        if place is None or current is None or current.id != place.session_id:
            return
        if self._transcript.building:
            return  # page_built comes
        while True:
            if self._reach(place):
                self.pending = None
                self.arrived.emit(place)
                return
            if not self._transcript.has_earlier:
                return  # the summaries may still come (summaries_changed)
            oldest = self._transcript.oldest_seq
            self._load_earlier()
            if self._transcript.oldest_seq == oldest:
                return

    def _reach(self, place: Place) -> bool:
        if place.summary_id is not None:
            block = self._transcript.summary_block(place.summary_id)
            if block is None:
                return False
            return self._unfold(block, place.seq)
        if place.seq is None:
            return True  # the conversation itself: opened at its newest message
        for widget in self._transcript.message_widgets():
            if widget.message.seq >= place.seq:
                self._show(widget)
                return True
        return False

    def _unfold(self, block: SummaryBlock, seq: int | None) -> bool:
        """Open `block`; for a message, open the part that covers it and its originals."""
        block.set_expanded(True)
        if seq is None:
            self._show(block)
            return True
        while block.summary.tier is SummaryTier.COMPRESSED:
            block.set_expanded(True)  # asks for its parts, answered at once
            part = next(
                (
                    child
                    for child in block.child_blocks()
                    if child.summary.first_seq <= seq <= child.summary.last_seq
                ),
                None,
            )
            if part is None:
                self._show(block)
                return True
            block = part
        block.show_original_messages(scroll_to_seq=seq)
        view = block.originals_view
        top = view.top_of(seq) if view is not None else None
        if view is None or top is None:
            self._show(block)
            return True
        following = [s for s in view.seqs if s > seq]
        bottom = view.top_of(following[0]) if following else None
        height = (bottom if bottom is not None else view.height()) - top
        settle_layout()
        self._scroll_to(view, top)
        self.flash = Flash(view, QRect(0, max(0, top - 4), view.width(), max(24, height + 4)))
        return True

    def _show(self, widget: QWidget) -> None:
        self._scroll_to(widget, 0)
        self.flash = Flash(widget)

    def _scroll_to(self, widget: QWidget, y: int) -> None:
        settle_layout()
        scroll: QScrollArea = self._transcript.scroll_area
        content = scroll.widget()
        if content is None:
            return
        top = widget.mapTo(content, QPoint(0, y)).y()
        scroll.verticalScrollBar().setValue(max(0, top - _MARGIN))
