""" "Jump to latest": a button over the transcript's bottom while the user reads further up.

It shows only when the view is not at the bottom, says so when a new reply
arrives below ("New reply ↓"), and takes the view down when clicked (End does
the same from the keyboard). A message the user sends is always scrolled to,
wherever they were reading: they just wrote it and expect to see it go.

The button sits in a band the view gives up at its bottom while it shows (the
scroll area's viewport margin), never over the transcript: it cannot cover a
card's Undo or Copy (issue 23).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from PySide6.QtCore import QObject, Qt, QTimer

from app.core.message_kinds import Role
from app.ui.pill_button import PillButton
from app.ui.transcript_frame import TranscriptScrollArea
from app.ui.transcript_message import MessageWidget
from app.ui.transcript_scroll import ScrollKeeper

JUMP_TEXT: Final = "Jump to latest ↓"
NEW_REPLY_TEXT: Final = "New reply ↓"
_BAND_PADDING: Final = 6  # above and below the button, in the band it sits in


class JumpToLatest(QObject):
    """Owns the floating button and whether a reply arrived below the view.

    Attributes:
        button: the button (a child of the scroll area, in the band below the viewport).
        new_below: a message arrived at the bottom since the user scrolled up.
    """

    def __init__(
        self,
        scroll: TranscriptScrollArea,
        keeper: ScrollKeeper,
        is_newest: Callable[[MessageWidget], bool],
    ) -> None:
        """`is_newest` says whether a just-built message is the bottom one (not an
        older one built above)."""
        super().__init__(scroll)
        self._scroll = scroll
        self._keeper = keeper
        self._is_newest = is_newest
        self.new_below = False
        self.button = PillButton(JUMP_TEXT, scroll)
        self.button.setObjectName("jumpToLatest")
        self.button.setAccessibleName("Jump to latest")
        self.button.setToolTip("Scroll down to the newest message (End)")
        # End reaches the same from the keyboard; the button stays out of the Tab order.
        self.button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.button.hide()
        self.button.clicked.connect(self.jump)
        # Several changes in one go (a message built, the range grown, the view
        # scrolled) are looked at once, after they all happened.
        self._pending = QTimer(self)
        self._pending.setSingleShot(True)
        self._pending.setInterval(0)
        self._pending.timeout.connect(self._update)
        bar = scroll.verticalScrollBar()
        # Not connected to QTimer.start itself, which would take the value as its interval.
        bar.valueChanged.connect(lambda _value: self._pending.start())
        bar.rangeChanged.connect(lambda _low, _high: self._pending.start())
        # The area's signal, not an event filter on the viewport, which would call into
        # Python for each of its paints (issue 20).
        scroll.viewport_resized.connect(self._place)

    def jump(self) -> None:
        """Down to the newest message, following it from there."""
        self._keeper.scroll_to_bottom()
        self._update()

    def message_built(self, widget: MessageWidget) -> None:
        """A message's widget was made: the user's own new message is scrolled to; a
        new reply below the view is announced on the button."""
        if not self._is_newest(widget):
            return
        if widget.message.role is Role.USER:
            self._keeper.scroll_to_bottom()
        elif not self._keeper.follow_bottom:
            self.new_below = True
        self._pending.start()

    def _update(self) -> None:
        bar = self._scroll.verticalScrollBar()
        away = not self._keeper.follow_bottom and bar.maximum() > 0
        if not away:
            self.new_below = False
        text = NEW_REPLY_TEXT if self.new_below else JUMP_TEXT
        if self.button.text() != text:
            self.button.setText(text)
            self.button.setAccessibleDescription(
                "A new reply arrived below" if self.new_below else ""
            )
            self._place()
        if away != self.button.isVisible():
            band = self.button.sizeHint().height() + 2 * _BAND_PADDING if away else 0
            self._scroll.setViewportMargins(0, 0, 0, band)
            self.button.setVisible(away)
            if away:
                self._place()
                self.button.raise_()

    def _place(self) -> None:
        """In the middle of the band below the viewport."""
        viewport = self._scroll.viewport().geometry()
        hint = self.button.sizeHint()
        self.button.setGeometry(
            viewport.x() + (viewport.width() - hint.width()) // 2,
            viewport.bottom() + 1 + _BAND_PADDING,
            hint.width(),
            hint.height(),
        )
