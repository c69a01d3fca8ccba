"""Opening a conversation at a message: found by search, Ctrl+F or the History window.

Opening is asynchronous (the service reads the conversation, the transcript builds its
page after the first paint), so the jump waits for the page and the summaries, loads
earlier pages until the message or its summary's card is there, unfolds the card (a
compressed one's parts too), scrolls there and marks the target for a moment
(`LandingHighlight`); the focus goes to it, so a screen reader says where it landed.

The summary a search hit named may be gone by the time the conversation is shown
(undone, or folded into a summary of summaries): the jump then goes to the message
where it is now. A place nothing shows any more (a deleted message) is said so, in
plain words, and the jump stops waiting.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QPoint, Qt, QTimer, Signal
from PySide6.QtWidgets import QScrollArea, QWidget

from app.core.summary_kinds import SummaryTier
from app.ui.landing_highlight import LandingHighlight
from app.ui.summary_block import SummaryBlock
from app.ui.transcript_frame import settle_layout

if TYPE_CHECKING:
    from app.chat.service import ChatService
    from app.ui.controller import ChatController
    from app.ui.history_source import Place
    from app.ui.transcript import TranscriptView

_MARGIN = 48  # space above the target, so it does not touch the top edge

MISSED_TITLE = "That message isn't here any more"
MISSED_TEXT = "It may have been deleted. The conversation is open at its newest message."


class MessageJump(QObject):
    """Goes to a `Place` in the main window's transcript.

    Attributes:
        pending: the place still to reach (the conversation is opening), or None.
        flash: the mark on the last place reached (it deletes itself once faded).

    Signals:
        arrived(object): the place was reached (the Place), its target marked.
        missed(str, str): the place cannot be reached (title, text to show); the jump
            stopped waiting.
    """

    arrived = Signal(object)
    missed = Signal(str, str)

    def __init__(
        self,
        controller: ChatController,
        transcript: TranscriptView,
        load_earlier: Callable[[], None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._controller = controller
        self._transcript = transcript
        self._load_earlier = load_earlier
        self.pending: Place | None = None
        self.flash: LandingHighlight | None = None
        self._focus = True
        transcript.page_built.connect(self._try_later)
        controller.summaries_changed.connect(self._try_later)

    @property
    def _chat(self) -> ChatService:
        """The chat service, looked up when used: built after the first paint (issue 20)."""
        return self._controller.service

    def go(self, place: Place, *, focus: bool = True) -> None:
        """Open `place`'s conversation (if not on screen) and go there once it is shown;
        the focus goes there too unless not `focus` (a find step keeps it in its box)."""
        self.pending = place
        self._focus = focus
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
                if not self._chat.current.state.loaded:
                    return  # the summaries may still come (summaries_changed)
                # Every page and summary is shown, and the place is not among them.
                moved = self._where_now(place)
                if moved is None:
                    self.pending = None
                    self.missed.emit(MISSED_TITLE, MISSED_TEXT)
                    return
                place = self.pending = moved
                continue
            oldest = self._transcript.oldest_seq
            self._load_earlier()
            if self._transcript.oldest_seq == oldest:
                return

    def _where_now(self, place: Place) -> Place | None:
        """Where the message of `place` is now, when it is not where the place said: the
        summary it named gone (undone, or folded into another), or a live message
        condensed meanwhile. Under the summary covering it, or live; None when that is
        where it was looked for already (nothing shows it: deleted)."""
        if place.seq is None:
            return None
        covering = next(
            (
                summary.id
                for summary in self._chat.current.state.summaries
                if summary.first_seq <= place.seq <= summary.last_seq
            ),
            None,
        )
        moved = replace(place, summary_id=covering)
        return None if moved == place else moved

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
        block.show_original_messages(scroll_to_seq=seq)  # scrolls there and marks it
        if block.highlight is None:
            self._show(block)
        else:
            self.flash = block.highlight
        return True

    def _show(self, widget: QWidget) -> None:
        self._scroll_to(widget, 0)
        self.flash = LandingHighlight(widget)
        if self._focus:
            target = widget.header if isinstance(widget, SummaryBlock) else widget
            target.setFocus(Qt.FocusReason.OtherFocusReason)

    def _scroll_to(self, widget: QWidget, y: int) -> None:
        settle_layout()
        scroll: QScrollArea = self._transcript.scroll_area
        content = scroll.widget()
        if content is None:
            return
        top = widget.mapTo(content, QPoint(0, y)).y()
        scroll.verticalScrollBar().setValue(max(0, top - _MARGIN))
