"""The mark on a reply the disk did not take yet (issue 10 item 8).

When the disk is full as a reply ends, Cairn keeps the reply in memory and saves it
as soon as it can (app.chat.unsaved). `UnsavedMark` says so on the reply itself, in
words and with a sign, not by colour alone: "Not saved yet — Cairn will save this
reply when there is room on the disk". `TranscriptUnsaved` puts it on the reply the
controller names (`unsaved_changed`) and takes it off once the reply is saved; it
also marks the reply's widget when that is built after the news (a page is built in
slices once first painted).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QLabel, QWidget
from shiboken6 import isValid

from app.ui.theme import scaled_font, set_text_colour

if TYPE_CHECKING:
    from app.ui.controller import ChatController
    from app.ui.transcript import TranscriptView
    from app.ui.transcript_message import MessageWidget

UNSAVED_TEXT: Final = "Not saved yet — Cairn will save this reply when there is room on the disk"
UNSAVED_TIP: Final = (
    "The reply is kept in memory, and Cairn tries to save it every few seconds, and "
    "before your next message. Free some space on the disk; if Cairn is closed "
    "before then, only what was saved while the reply arrived is kept."
)


def warning_colour(palette: QPalette) -> QColor:
    """An amber readable on this palette's Base (dark amber on light, pale on dark)."""
    dark_theme = palette.color(QPalette.ColorRole.Base).lightnessF() < 0.5
    return QColor("#f0c36d") if dark_theme else QColor("#8a4b00")


class UnsavedMark(QLabel):
    """ "⚠ Not saved yet — …" under a reply's text."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(f"⚠ {UNSAVED_TEXT}", parent)
        self.setObjectName("unsaved-mark")
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setFont(scaled_font(self.font(), 0.92))
        self.setAccessibleName(UNSAVED_TEXT)
        self.setToolTip(UNSAVED_TIP)
        self._apply_palette()

    def _apply_palette(self) -> None:
        set_text_colour(self, warning_colour(self.palette()))

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._apply_palette()


class TranscriptUnsaved(QObject):
    """Keeps the "not saved yet" mark on the reply that needs it, and on no other.

    Attributes:
        message_id: the reply not saved yet; None when everything shown is saved.
    """

    def __init__(self, controller: ChatController, transcript: TranscriptView) -> None:
        super().__init__(transcript)
        self._transcript = transcript
        self.message_id: int | None = None
        self._mark: UnsavedMark | None = None
        # The service says which reply after it opened the conversation (see `opened`).
        controller.conversation_opened.connect(lambda *_opened: self.set_unsaved(None))
        controller.unsaved_changed.connect(self.set_unsaved)
        transcript.message_built.connect(self._built)

    def mark(self) -> UnsavedMark | None:
        """The mark on screen, if any (for tests)."""
        return self._mark if self._mark is not None and isValid(self._mark) else None

    def set_unsaved(self, message_id: int | None) -> None:
        """Mark reply `message_id` as not saved yet (None: no reply)."""
        self.message_id = message_id
        widget = None if message_id is None else self._transcript.message_widget(message_id)
        self._place(widget)

    def _built(self, widget: MessageWidget) -> None:
        if self.message_id is not None and widget.message.id == self.message_id:
            self._place(widget)

    def _place(self, widget: MessageWidget | None) -> None:
        mark = self.mark()
        if mark is not None and mark.parent() is widget:
            return
        if mark is not None:
            mark.hide()
            mark.deleteLater()
        self._mark = None
        if widget is None:
            return
        # Under the reply's text and its status line, in the message: the transcript
        # sizes the message with it.
        self._mark = UnsavedMark(widget)
        widget.add_below(self._mark)
        self._mark.show()
