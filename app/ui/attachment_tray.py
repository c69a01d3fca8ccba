"""The composer's files: a chip each, from the paperclip's file dialog, a drop or a
paste (`app.ui.window_attachments` brings drops on the window and each sent message's
files in the transcript).

Reading, checking and keeping a file happens in a job (`AttachmentPreparer`): the
GUI thread only makes a chip that says "Reading…" and is told when the file is
ready, or why Claude cannot take it (said in words under the chips).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QMimeData, Qt, Signal
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QFileDialog, QLabel, QVBoxLayout, QWidget

from app.core.attachments import (
    IMAGE_MEDIA_TYPES,
    TEXT_SUFFIXES,
    Attachment,
)
from app.core.errors import UserFacingError
from app.ui.attachment_chips import (
    AttachmentChip,
    FlowLayout,
    PrepareFile,
    Thumbnails,
    refresh_thumbnail,
)
from app.ui.theme import error_text_colour, set_text_colour

PASTED_IMAGE_NAME = "Pasted image.png"
DIALOG_FILTER = (
    "Pictures, PDFs and text files ("
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
        prepare: reads, checks and keeps a file in the background (the chat service's).
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
        # Why each file of the latest pick, drop or paste was not attached (all of them:
        # a mixed pick adds what it can and names every file it refused).
        self._refusals: list[str] = []
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
        self._new_pick()
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
        # The filter reads as its words: Qt's own dialog would list its 40 patterns too.
        dialog.setOption(QFileDialog.Option.HideNameFilterDetails, True)
        dialog.setOption(QFileDialog.Option.DontUseNativeDialog, not self.native_dialog)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.filesSelected.connect(self._add_files)
        dialog.destroyed.connect(lambda: setattr(self, "dialog", None))
        self.dialog = dialog
        dialog.open()
        return dialog

    def _add_files(self, paths: Sequence[str]) -> None:
        self._new_pick()
        for path in paths:
            self.add_file(path)

    def _add(self, name: str, read: Callable[[], bytes]) -> None:
        if self.prepare is None:
            return
        chip = AttachmentChip(Path(name).name, removable=True, parent=self)
        chip.remove_requested.connect(lambda: self._remove(chip))
        self._row.addWidget(chip)
        self._chips.append(chip)
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

    def _new_pick(self) -> None:
        """A new pick, drop or paste: what an earlier one refused is old news."""
        self._refusals.clear()
        self.refusal.hide()

    def _refused(self, chip: AttachmentChip, error: UserFacingError) -> None:
        self._remove(chip)
        self._refusals.append(f"{chip.name}: {error.message}")
        if len(self._refusals) == 1:
            said = f"Not attached — {self._refusals[0]}"
        else:
            said = "Not attached:\n" + "\n".join(f"• {line}" for line in self._refusals)
        self.refusal.setText(said)
        set_text_colour(self.refusal, error_text_colour(self.palette()))
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
        self._new_pick()
        self.hide()
