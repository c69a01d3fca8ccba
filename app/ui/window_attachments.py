"""Attachments in the window: files dropped anywhere on it go to the composer's tray,
and each sent message's files show on it in the transcript (chips with thumbnails,
and which of them Claude no longer gets). `wire_attachments` connects them.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent, QDropEvent
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from app.core.attachments import (
    Attachment,
    split_attachment_line,
)
from app.core.message_kinds import Role
from app.ui.attachment_chips import (
    NOT_RESENT_TIP,
    FlowLayout,
    Thumbnails,
    chip_for,
    refresh_thumbnail,
)
from app.ui.attachment_tray import AttachmentTray, carries_files
from app.ui.theme import muted_text_colour, scaled_font, set_text_colour

if TYPE_CHECKING:
    from app.chat.service import ChatService
    from app.core.context import ContextState
    from app.core.models import Message
    from app.ui.composer import Composer
    from app.ui.controller import ChatController
    from app.ui.transcript import TranscriptView
    from app.ui.transcript_message import MessageWidget


class FileDrops(QObject):
    """Files dropped anywhere on the window go to the composer's tray.

    The window hands it its drag and drop events (`MainWindow.dragEnterEvent`…): an
    event filter on the window would be a call into Python for each of its events,
    every repaint's update request among them (issue 20).
    """

    def __init__(self, window: QWidget, tray: AttachmentTray) -> None:
        super().__init__(window)
        self._tray = tray
        window.setAcceptDrops(True)

    def enter(self, event: QDragEnterEvent | QDragMoveEvent) -> bool:
        """A drag entered or moved over the window: accepted if it carries files."""
        if carries_files(event.mimeData()):
            event.acceptProposedAction()
            return True
        return False

    def drop(self, event: QDropEvent) -> bool:
        """A drop on the window: its files go to the tray; True if any was taken."""
        if self._tray.add_mime(event.mimeData()):
            event.acceptProposedAction()
            return True
        return False


class AttachmentStrip(QWidget):
    """A sent message's files in the transcript: chips with thumbnails and names."""

    def __init__(
        self,
        attachments: Sequence[Attachment],
        thumbnails: Thumbnails,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        count = len(attachments)
        self.setAccessibleName(f"{count} attached file{'s' if count != 1 else ''}")
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(2)
        chips = QWidget(self)
        flow = FlowLayout(chips, align_right=True)
        flow.setContentsMargins(0, 0, 4, 0)
        self.chips = [chip_for(a, thumbnails, parent=chips) for a in attachments]
        for chip in self.chips:
            flow.addWidget(chip)
        column.addWidget(chips)
        # The row that says, in words, which of these files Claude no longer gets.
        self.note = QLabel(self)
        self.note.setObjectName("notResentNote")
        self.note.setWordWrap(True)
        self.note.setAlignment(Qt.AlignmentFlag.AlignRight)
        self.note.setFont(scaled_font(self.font(), 0.85))
        self.note.setToolTip(NOT_RESENT_TIP)
        self.note.hide()
        column.addWidget(self.note)

    def set_left_out(self, names: Collection[str]) -> None:
        """Mark the files Claude no longer gets with each message, and say so in a row."""
        for chip in self.chips:
            chip.set_not_resent(chip.name in names)
        shown = [chip.name for chip in self.chips if chip.not_resent]
        if not shown:
            self.note.hide()
            return
        set_text_colour(self.note, muted_text_colour(self.palette()))
        which = "this file" if len(shown) == 1 else "these files"
        self.note.setText(
            f"Not re-sent: {', '.join(shown)}. To stay within what Claude takes in one "
            f"message, Claude now gets only the name of {which}."
        )
        self.note.setAccessibleName(self.note.text())
        self.note.show()


class TranscriptAttachments(QObject):
    """Puts each sent message's files on its message in the transcript (as
    `TranscriptLookups` does for a reply's archive searches)."""

    def __init__(
        self, controller: ChatController, transcript: TranscriptView, thumbnails: Thumbnails
    ) -> None:
        super().__init__(transcript)
        self._controller = controller
        self._transcript = transcript
        self._thumbnails = thumbnails
        self._known: dict[int, tuple[Attachment, ...]] = {}
        self._left_out: dict[int, set[str]] = {}  # by message: files not re-sent
        controller.conversation_opened.connect(self._opened)
        controller.context_changed.connect(self._context_changed)
        transcript.message_built.connect(self._built)
        thumbnails.ready.connect(self._thumbnail_ready)

    @property
    def _chat(self) -> ChatService:
        """The chat service, looked up when used: built after the first paint (issue 20)."""
        return self._controller.service

    def _opened(self, _session: object, page: list[Message], _more: bool) -> None:
        self._known = self._chat.attachments.of([m.id for m in page if _has_files(m)])
        for widget in self._transcript.message_widgets():
            self._built(widget)

    def _built(self, widget: MessageWidget) -> None:
        message = widget.message
        if not _has_files(message) or widget.findChild(AttachmentStrip) is not None:
            return
        files = self._known.get(message.id)
        if files is None:
            files = self._chat.attachments.of([message.id]).get(message.id, ())
        if not files:
            return
        strip = AttachmentStrip(files, self._thumbnails, widget)
        strip.set_left_out(self._left_out.get(message.id, set()))
        widget.add_above_text(strip)
        typed, _names = split_attachment_line(message.content)
        if typed.strip():
            widget.set_text(typed)  # the chips name the files: the line is not repeated

    def _context_changed(self, state: ContextState | None) -> None:
        """The next request's plan changed: mark the files it does not re-send."""
        left: dict[int, set[str]] = {}
        for file in state.files_left_out if state is not None else ():
            left.setdefault(file.message_id, set()).add(file.name)
        if left == self._left_out:
            return
        self._left_out = left
        for widget in self._transcript.message_widgets():
            strip = widget.findChild(AttachmentStrip)
            if strip is not None:
                strip.set_left_out(left.get(widget.message.id, set()))

    def forget_thumbnails(self) -> None:
        """Drop the thumbnails kept in memory (the bench's first open)."""
        self._thumbnails.forget()

    def _thumbnail_ready(self, sha256: str) -> None:
        for widget in self._transcript.message_widgets():
            strip = widget.findChild(AttachmentStrip)
            if strip is not None:
                refresh_thumbnail(strip.chips, self._thumbnails, sha256)


def _has_files(message: Message) -> bool:
    return message.role is Role.USER and bool(split_attachment_line(message.content)[1])


def wire_attachments(
    window: QWidget, composer: Composer, transcript: TranscriptView, controller: ChatController
) -> tuple[TranscriptAttachments, FileDrops]:
    """Connect the composer's tray, the window's drops and the transcript to the chat
    service's files (`ChatService.attachments`) and the controller's signals; the
    window hands its drag and drop events to the `FileDrops` returned."""
    chat = controller.service
    thumbnails = Thumbnails(chat.attachments.preparer.files, chat.runner, window)
    tray = composer.attachments
    tray.prepare = chat.attachments.preparer.prepare
    tray.thumbnails = thumbnails
    tray.changed.connect(lambda: chat.attachments.set(tray.attachments()))
    thumbnails.ready.connect(tray.thumbnail_ready)
    drops = FileDrops(window, tray)
    return TranscriptAttachments(controller, transcript, thumbnails), drops
