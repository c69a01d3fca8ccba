"""How the main window reads: the composer lined up under the message column, and the
text size (see `text_size`).

On a wide screen the transcript's messages sit in a centred column of limited
width; a composer stretching across the whole window would leave the user
typing far from where the conversation is. So the composer's box and button
span exactly the column's message area, wherever the column is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from PySide6.QtCore import QObject, QPoint, SignalInstance
from PySide6.QtWidgets import QMainWindow, QWidget

from app.ui.text_size import TextSize

if TYPE_CHECKING:
    from app.ui.composer import Composer
    from app.ui.controller import ChatController
    from app.ui.transcript import TranscriptView

# The composer never comes closer to the window's edges than this.
MIN_SIDE_MARGIN: Final = 12


class ComposerAlignment(QObject):
    """Keeps the composer's left and right edges on the message column's.

    Aligned again when `laid_out` says the pane holding the transcript and the composer
    was resized or shown (its children laid out), and when the transcript's viewport
    changes size (a scroll bar, the jump band) or its scroll area shows. Signals, not
    event filters on those widgets: a filter is a call into Python for each of their
    events, every paint of the viewport among them (issue 20).
    """

    def __init__(
        self, transcript: TranscriptView, composer: QWidget, laid_out: SignalInstance
    ) -> None:
        super().__init__(composer)
        self._transcript = transcript
        self._composer = composer
        area = transcript.scroll_area
        for changed in (laid_out, area.viewport_resized, area.shown):
            changed.connect(self.align)
        self.align()

    def message_span(self) -> tuple[int, int]:
        """Where the messages' text starts and ends, in the composer's coordinates.

        Worked out from the column's maximum width and margins rather than read off
        the column, which is not laid out while the empty state shows.
        """
        area = self._transcript.scroll_area
        ground: QWidget = area.viewport() if area.isVisible() else self._transcript
        left = self._composer.mapFromGlobal(ground.mapToGlobal(QPoint(0, 0))).x()
        width = ground.width()
        column = self._transcript.message_column
        column_width = min(width, column.maximumWidth())
        layout = column.layout()
        margins = layout.contentsMargins() if layout is not None else None
        inset_left = margins.left() if margins is not None else 0
        inset_right = margins.right() if margins is not None else 0
        start = left + (width - column_width) // 2 + inset_left
        return start, start - inset_left + column_width - inset_right

    def align(self) -> None:
        layout = self._composer.layout()
        if layout is None:
            return
        start, end = self.message_span()
        margins = layout.contentsMargins()
        left = max(MIN_SIDE_MARGIN, start)
        right = max(MIN_SIDE_MARGIN, self._composer.width() - end)
        if (margins.left(), margins.right()) != (left, right):
            layout.setContentsMargins(left, margins.top(), right, margins.bottom())


class ReadingLayout(QObject):
    """The window's reading helpers, made and wired in one place.

    Attributes:
        alignment: the composer kept under the message column.
        text_size: the conversation's text size and its shortcuts.
    """

    def __init__(
        self,
        transcript: TranscriptView,
        composer: Composer,
        controller: ChatController,
        window: QMainWindow,
        laid_out: SignalInstance,
    ) -> None:
        """`laid_out` says the pane holding the transcript and the composer was resized
        or shown, its children laid out."""
        super().__init__(window)
        self.alignment = ComposerAlignment(transcript, composer, laid_out)
        self.text_size = TextSize(
            [transcript, composer],
            lambda: controller.settings,
            lambda settings: controller.service.update_settings(settings),
            window,
            size=controller.paint_settings.font_size,  # to paint, before the service is built
        )

    def window_closing(self) -> None:
        """The window is closing (its `closeEvent`, not an event filter on it: a filter
        is a call into Python for each of the window's events, every repaint's update
        request among them; issue 20): a size changed just before quitting is kept."""
        self.text_size.save_now()
