"""Attaching files in the window: the composer's chips, the paperclip's file dialog,
drag and drop, paste; and each message's files shown in the transcript.

Reading, checking and keeping a file happens in a job (`AttachmentPreparer`): the
GUI thread only makes a chip that says "Reading…" and is told when the file is
ready, or why Claude cannot take it (said in words under the chips).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QBuffer, QByteArray, QEvent, QIODevice, QMimeData, QObject, Qt, Signal
from PySide6.QtGui import QColor, QDragEnterEvent, QDropEvent, QImage, QPalette
from PySide6.QtWidgets import QFileDialog, QLabel, QVBoxLayout, QWidget

from app.core.attachments import (
    IMAGE_MEDIA_TYPES,
    TEXT_SUFFIXES,
    Attachment,
    split_attachment_line,
)
from app.core.context import ContextState
from app.core.errors import UserFacingError
from app.core.models import Message, Role
from app.store.attachments import AttachmentFiles
from app.ui.attachment_chips import (
    NOT_RESENT_TIP,
    AttachmentChip,
    FlowLayout,
    PrepareFile,
    Thumbnails,
    chip_for,
    refresh_thumbnail,
)
from app.ui.transcript_blocks import muted_text_colour, scaled_font, set_text_colour

if TYPE_CHECKING:
    from app.ui.composer import Composer
    from app.ui.controller import ChatController
    from app.ui.transcript import TranscriptView
    from app.ui.transcript_message import MessageWidget

PASTED_IMAGE_NAME = "Pasted image.png"
DIALOG_FILTER = (
    "Pictures, PDFs and text ("
    + " ".join(f"*{suffix}" for suffix in sorted({*IMAGE_MEDIA_TYPES, ".pdf", *TEXT_SUFFIXES}))
    + ");;All files (*)"
)


def png_bytes(image: QImage) -> bytes:
    """A picture as PNG bytes (QImage may be used off the GUI thread)."""
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")  # type: ignore[call-overload]
    buffer.close()
    return bytes(data.data())


def files_in(mime: QMimeData) -> list[str]:
    """The local files a drop or paste carries."""
    if not mime.hasUrls():
        return []
    return [url.toLocalFile() for url in mime.urls() if url.isLocalFile() and url.toLocalFile()]


def carries_files(mime: QMimeData) -> bool:
    return bool(files_in(mime)) or mime.hasImage()


class AttachmentTray(QWidget):
    """The composer's files: a chip each (× removes it), and why a file was refused.

    Attributes:
        prepare: reads, checks and keeps a file in the background (the controller's).
        thumbnails: the pictures' thumbnails.
        dialog: the paperclip's file dialog while it is open.
        native_dialog: use the system's file dialog (tests drive Qt's own).

    Signals:
        changed(): the files changed (one added, read, refused or removed).
    """

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.prepare: PrepareFile | None = None
        self.thumbnails: Thumbnails | None = None
        self.dialog: QFileDialog | None = None
        self.native_dialog = True
        self._chips: list[AttachmentChip] = []
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        self._row = FlowLayout()
        layout.addLayout(self._row)
        self.refusal = QLabel(self)
        self.refusal.setWordWrap(True)
        self.refusal.setAccessibleName("Why the file was not attached")
        self.refusal.hide()
        layout.addWidget(self.refusal)
        self.hide()

    # --- reading

    def attachments(self) -> list[Attachment]:
        """The files read and ready to go, in the order they were given."""
        return [chip.attachment for chip in self._chips if chip.attachment is not None]

    @property
    def busy(self) -> bool:
        """A file is still being read."""
        return any(chip.attachment is None for chip in self._chips)

    def chips(self) -> list[AttachmentChip]:
        return list(self._chips)

    # --- adding

    def add_file(self, path: str) -> None:
        self._add(path, Path(path).read_bytes)

    def add_image(self, image: QImage, name: str = PASTED_IMAGE_NAME) -> None:
        """A picture from the clipboard: made a PNG in the background."""
        copy = image.copy()
        self._add(name, lambda: png_bytes(copy))

    def add_mime(self, mime: QMimeData) -> bool:
        """Attach what a drop or paste carries; False when it carries no file or picture."""
        paths = files_in(mime)
        for path in paths:
            self.add_file(path)
        if not paths and mime.hasImage():
            image = QImage(mime.imageData())
            if image.isNull():
                return False
            self.add_image(image)
        return bool(paths) or mime.hasImage()

    def open_dialog(self) -> QFileDialog:
        """The paperclip: choose files (the dialog does not block the window)."""
        dialog = QFileDialog(self.window(), "Attach files")
        dialog.setFileMode(QFileDialog.FileMode.ExistingFiles)
        dialog.setNameFilter(DIALOG_FILTER)
        dialog.setOption(QFileDialog.Option.DontUseNativeDialog, not self.native_dialog)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.filesSelected.connect(self._add_files)
        dialog.destroyed.connect(lambda: setattr(self, "dialog", None))
        self.dialog = dialog
        dialog.open()
        return dialog

    def _add_files(self, paths: Sequence[str]) -> None:
        for path in paths:
            self.add_file(path)

    def _add(self, name: str, read: Callable[[], bytes]) -> None:
        if self.prepare is None:
            return
        chip = AttachmentChip(Path(name).name, removable=True, parent=self)
        chip.remove_requested.connect(lambda: self._remove(chip))
        self._row.addWidget(chip)
        self._chips.append(chip)
        self.refusal.hide()
        self.show()
        self.changed.emit()
        self.prepare(
            name,
            read,
            lambda attachment: self._ready(chip, attachment),
            lambda error: self._refused(chip, error),
        )

    def _ready(self, chip: AttachmentChip, attachment: Attachment) -> None:
        if chip not in self._chips:
            return  # removed while it was read
        thumbnail = self.thumbnails.get(attachment) if self.thumbnails is not None else None
        chip.set_attachment(attachment, thumbnail)
        self.changed.emit()

    def _refused(self, chip: AttachmentChip, error: UserFacingError) -> None:
        self._remove(chip)
        self.refusal.setText(error.message)
        set_text_colour(self.refusal, _error_colour(self.palette()))
        self.refusal.show()
        self.show()

    def thumbnail_ready(self, sha256: str) -> None:
        if self.thumbnails is not None:
            refresh_thumbnail(self._chips, self.thumbnails, sha256)

    # --- removing

    def _remove(self, chip: AttachmentChip) -> None:
        if chip not in self._chips:
            return
        self._chips.remove(chip)
        self._row.removeWidget(chip)
        chip.hide()
        chip.deleteLater()
        self.setVisible(bool(self._chips) or self.refusal.isVisible())
        self.changed.emit()

    def clear(self) -> None:
        """The message went: no files, no refusal."""
        for chip in list(self._chips):
            self._remove(chip)
        self.refusal.hide()
        self.hide()


def _error_colour(palette: QPalette) -> QColor:
    """A red readable on this palette's Base (as the transcript's notes use)."""
    dark_theme = palette.color(QPalette.ColorRole.Base).lightnessF() < 0.5
    return QColor("#f2a7a2") if dark_theme else QColor("#b3261e")


class _FileDrops(QObject):
    """Files dropped anywhere on the window go to the composer's tray."""

    def __init__(self, window: QWidget, tray: AttachmentTray) -> None:
        super().__init__(window)
        self._tray = tray
        window.setAcceptDrops(True)
        window.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind in (QEvent.Type.DragEnter, QEvent.Type.DragMove) and isinstance(
            event, QDragEnterEvent | QDropEvent
        ):
            if carries_files(event.mimeData()):
                event.acceptProposedAction()
                return True
        elif (
            kind == QEvent.Type.Drop
            and isinstance(event, QDropEvent)
            and self._tray.add_mime(event.mimeData())
        ):
            event.acceptProposedAction()
            return True
        return super().eventFilter(watched, event)


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

    def _opened(self, _session: object, page: list[Message], _more: bool) -> None:
        self._known = self._controller.attachments_of([m.id for m in page if _has_files(m)])
        for widget in self._transcript.message_widgets():
            self._built(widget)

    def _built(self, widget: MessageWidget) -> None:
        message = widget.message
        if not _has_files(message) or widget.findChild(AttachmentStrip) is not None:
            return
        files = self._known.get(message.id)
        if files is None:
            files = self._controller.attachments_of([message.id]).get(message.id, ())
        if not files:
            return
        strip = AttachmentStrip(files, self._thumbnails, widget)
        strip.set_left_out(self._left_out.get(message.id, set()))
        layout = widget.layout()
        if isinstance(layout, QVBoxLayout):
            layout.insertWidget(1, strip)
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
) -> TranscriptAttachments:
    """Connect the composer's tray, the window's drops and the transcript to the controller."""
    thumbnails = Thumbnails(AttachmentFiles(controller.database), controller.service.runner, window)
    tray = composer.attachments
    tray.prepare = controller.prepare_attachment
    tray.thumbnails = thumbnails
    tray.changed.connect(lambda: controller.set_attachments(tray.attachments()))
    thumbnails.ready.connect(tray.thumbnail_ready)
    _FileDrops(window, tray)
    return TranscriptAttachments(controller, transcript, thumbnails)
