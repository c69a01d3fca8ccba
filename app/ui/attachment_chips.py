"""How an attached file looks: a chip with its thumbnail (or a type badge) and name.

Thumbnails are made once, off the GUI thread (QImage is safe there), kept as small
PNGs in "attachments/thumbs" beside the database and in memory, so a conversation
with hundreds of pictures opens without decoding any of them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, QPoint, QRect, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QIcon, QImage, QPainter, QPainterPath, QPalette, QPen, QPixmap
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QLayout,
    QLayoutItem,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.chat.runner import Job, JobRunner
from app.core.attachments import Attachment, AttachmentKind, say_size
from app.core.errors import UserFacingError
from app.store.attachments import AttachmentFiles
from app.ui.theme import blend, muted_text_colour, scaled_font, set_text_colour

log = logging.getLogger(__name__)

THUMBNAIL_SIZE = 96  # pixels, the longer side
NOT_RESENT_TIP = (
    "Claude no longer gets this file with your messages: with the newer files, the "
    "conversation's files came to more than Claude takes in one message (100 PDF pages, "
    "20 large pictures, 32 MB). Claude sees its name instead. Attach it again in a new "
    "message to ask about it."
)
CHIP_HEIGHT = 56
_THUMBS = "thumbs"


def paperclip_icon(colour: QColor, size: int = 20) -> QIcon:
    """A paperclip, drawn in `colour` (no icon files to ship, follows the theme)."""
    pixmap = QPixmap(size * 2, size * 2)
    pixmap.setDevicePixelRatio(2.0)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.translate(size / 2, size / 2)
    painter.rotate(40)
    painter.translate(-size / 2, -size / 2)
    unit = size / 24
    path = QPainterPath()
    path.moveTo(9 * unit, 15 * unit)
    path.lineTo(9 * unit, 7 * unit)
    path.arcTo(QRectF(9 * unit, 3 * unit, 7 * unit, 7 * unit), 180, -180)
    path.lineTo(16 * unit, 17 * unit)
    path.arcTo(QRectF(6 * unit, 12 * unit, 10 * unit, 10 * unit), 0, -180)
    path.lineTo(6 * unit, 8 * unit)
    pen = QPen(colour, 1.8 * unit)
    pen.setCapStyle(Qt.PenCapStyle.RoundCap)
    painter.setPen(pen)
    painter.drawPath(path)
    painter.end()
    return QIcon(pixmap)


def make_thumbnail(source: Path, target: Path) -> bool:
    """Scale the picture at `source` to a small PNG at `target` (any thread)."""
    image = QImage(str(source))
    if image.isNull():
        return False
    small = image.scaled(
        THUMBNAIL_SIZE,
        THUMBNAIL_SIZE,
        Qt.AspectRatioMode.KeepAspectRatio,
        Qt.TransformationMode.SmoothTransformation,
    )
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".part")
    if not small.save(str(partial), "PNG"):  # type: ignore[call-overload]
        return False
    partial.replace(target)  # whole or not at all
    return True


class Thumbnails(QObject):
    """Small pictures of attached images, made once and kept.

    Signals:
        ready(str): the thumbnail of this sha256 can be had now.
    """

    ready = Signal(str)

    def __init__(self, files: AttachmentFiles, runner: JobRunner, parent: QObject | None = None):
        super().__init__(parent)
        self._files = files
        self._runner = runner
        self._pixmaps: dict[str, QPixmap] = {}
        self._making: set[str] = set()

    def path(self, sha256: str) -> Path:
        return self._files.folder / _THUMBS / f"{sha256}.png"

    def forget(self) -> None:
        """Drop the thumbnails kept in memory (those on disk stay)."""
        self._pixmaps.clear()

    def get(self, attachment: Attachment) -> QPixmap | None:
        """The thumbnail, or None while it is being made (`ready` says when it is)."""
        if attachment.kind is not AttachmentKind.IMAGE:
            return None
        sha256 = attachment.sha256
        pixmap = self._pixmaps.get(sha256)
        if pixmap is not None:
            return pixmap
        path = self.path(sha256)
        if path.exists():
            pixmap = QPixmap(str(path))
            if not pixmap.isNull():
                self._pixmaps[sha256] = pixmap
                return pixmap
        self._make(sha256)
        return None

    def _make(self, sha256: str) -> None:
        if sha256 in self._making:
            return
        self._making.add(sha256)
        source, target = self._files.path(sha256), self.path(sha256)

        def done(made: bool) -> None:
            self._making.discard(sha256)
            if made:
                self.ready.emit(sha256)

        def failed(error: UserFacingError) -> None:
            self._making.discard(sha256)
            log.info("No thumbnail for %s: %s", sha256, error.message)

        self._runner.start(
            Job("thumbnail", lambda _job: make_thumbnail(source, target), done=done, failed=failed)
        )


def _badge(kind: AttachmentKind | None, palette: QPalette, name: str) -> QPixmap:
    """A type badge for a file without a thumbnail: "PDF", "TXT", or the file's ending."""
    if kind is AttachmentKind.PDF:
        label = "PDF"
    elif kind is AttachmentKind.TEXT:
        label = "TXT"
    else:  # not read yet (or a picture without its thumbnail yet)
        label = (Path(name).suffix[1:5] or "…").upper()
    side = 40
    pixmap = QPixmap(side * 2, side * 2)
    pixmap.setDevicePixelRatio(2.0)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    accent = palette.color(QPalette.ColorRole.Highlight)
    if kind is AttachmentKind.PDF:
        accent = QColor("#c8372d")
    painter.setBrush(blend(accent, palette.color(QPalette.ColorRole.Base), 0.85))
    painter.setPen(QPen(accent, 1.2))
    painter.drawRoundedRect(QRectF(1, 1, side - 2, side - 2), 6, 6)
    font = scaled_font(painter.font(), 0.8)
    font.setBold(True)
    painter.setFont(font)
    painter.setPen(palette.color(QPalette.ColorRole.Text))
    painter.drawText(QRectF(0, 0, side, side), Qt.AlignmentFlag.AlignCenter, label)
    painter.end()
    return pixmap


def detail_of(attachment: Attachment) -> str:
    """The chip's second line: what the file is, in pages or its size on disk (what it
    costs Claude to read is in the chip's tooltip, with the other details)."""
    if attachment.kind is AttachmentKind.IMAGE:
        return f"Picture · {say_size(attachment.size)}"
    if attachment.kind is AttachmentKind.PDF:
        return f"{attachment.pages} page{'s' if attachment.pages != 1 else ''}"
    return say_size(attachment.size)


def details_of(attachment: Attachment) -> str:
    """The chip's tooltip Details: pixels, and the file's size in tokens."""
    about = "about " if attachment.estimated else ""
    pixels = (
        f"{attachment.width} × {attachment.height} pixels · "
        if attachment.kind is AttachmentKind.IMAGE
        else ""
    )
    return f"Details: {pixels}{about}{attachment.tokens:,} tokens for Claude to read"


class FlowLayout(QLayout):
    """Widgets in rows that wrap at the available width (the chips of a message or of
    the composer), packed to the left, or to the right for the user's side."""

    def __init__(self, parent: QWidget | None = None, *, align_right: bool = False) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self._align_right = align_right
        self.setContentsMargins(0, 0, 0, 0)
        self.setSpacing(6)

    def addItem(self, item: QLayoutItem) -> None:
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self) -> Qt.Orientation:
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return self._arrange(QRect(0, 0, width, 0), apply=False)

    def setGeometry(self, rect: QRect) -> None:
        super().setGeometry(rect)
        self._arrange(rect, apply=True)

    def sizeHint(self) -> QSize:
        width = sum(i.sizeHint().width() for i in self._items) + self.spacing() * max(
            0, len(self._items) - 1
        )
        height = max((i.sizeHint().height() for i in self._items), default=0)
        return QSize(width, height)

    def minimumSize(self) -> QSize:
        size = QSize()
        for item in self._items:
            size = size.expandedTo(item.minimumSize())
        return size

    def _arrange(self, rect: QRect, *, apply: bool) -> int:
        rows: list[list[tuple[QLayoutItem, QSize]]] = [[]]
        used = 0
        for item in self._items:
            if item.isEmpty():
                continue
            hint = item.sizeHint()
            if rows[-1] and used + self.spacing() + hint.width() > rect.width():
                rows.append([])
                used = 0
            used += (self.spacing() if rows[-1] else 0) + hint.width()
            rows[-1].append((item, hint))
        y = rect.y()
        for row in rows:
            if not row:
                continue
            width = sum(hint.width() for _, hint in row) + self.spacing() * (len(row) - 1)
            x = rect.x() + (rect.width() - width if self._align_right else 0)
            height = max(hint.height() for _, hint in row)
            for item, hint in row:
                if apply:
                    item.setGeometry(QRect(QPoint(x, y), hint))
                x += hint.width() + self.spacing()
            y += height + self.spacing()
        return max(0, y - rect.y() - self.spacing())


class AttachmentChip(QFrame):
    """One file: its picture or badge, its name and a second line; removable or not.

    Signals:
        remove_requested(): the × was clicked.
    """

    remove_requested = Signal()

    def __init__(self, name: str, *, removable: bool, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.name = name
        self.attachment: Attachment | None = None
        self.not_resent = False  # Claude no longer gets it with each message
        self.has_thumbnail = False  # a picture's own thumbnail shown (not a badge)
        self.setObjectName("attachmentChip")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setFixedHeight(CHIP_HEIGHT)
        self.setMaximumWidth(280)
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self.setAccessibleName(f"Attached file {name}")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 6, 4 if removable else 8, 6)
        layout.setSpacing(8)
        self.picture = QLabel(self)
        self.picture.setFixedSize(QSize(44, 44))
        self.picture.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout.addWidget(self.picture)
        words = QVBoxLayout()
        words.setSpacing(0)
        self.title = QLabel(self)
        self.title.setToolTip(name)
        self.detail = QLabel("Reading…", self)
        self.detail.setFont(scaled_font(self.font(), 0.85))
        words.addWidget(self.title)
        words.addWidget(self.detail)
        layout.addLayout(words, 1)
        self.remove: QToolButton | None = None
        if removable:
            self.remove = QToolButton(self)
            self.remove.setText("×")
            self.remove.setAutoRaise(True)
            self.remove.setAccessibleName(f"Remove {name}")
            self.remove.setToolTip(f"Remove {name}")
            self.remove.clicked.connect(self.remove_requested)
            layout.addWidget(self.remove, 0, Qt.AlignmentFlag.AlignTop)
        self._set_title()
        self.picture.setPixmap(_badge(None, self.palette(), name))
        self._apply_palette()

    def _set_title(self) -> None:
        metrics = self.title.fontMetrics()
        self.title.setText(metrics.elidedText(self.name, Qt.TextElideMode.ElideMiddle, 170))

    def set_attachment(self, attachment: Attachment, thumbnail: QPixmap | None) -> None:
        """The file is read: show what it is."""
        self.attachment = attachment
        self.detail.setText(detail_of(attachment))
        self.detail.setToolTip(details_of(attachment))
        self.set_thumbnail(thumbnail)

    def set_not_resent(self, left_out: bool) -> None:
        """Say on the chip, in words, that Claude no longer gets this file with each
        message (the API's limits on a whole request's files): its name goes instead."""
        if self.attachment is None or self.not_resent == left_out:
            return
        self.not_resent = left_out
        detail = detail_of(self.attachment)
        self.detail.setText(f"{detail} · not re-sent" if left_out else detail)
        self.title.setToolTip(f"{self.name}\n{NOT_RESENT_TIP}" if left_out else self.name)
        self.detail.setToolTip(NOT_RESENT_TIP if left_out else details_of(self.attachment))
        suffix = ", not re-sent to Claude" if left_out else ""
        self.setAccessibleName(f"Attached file {self.name}{suffix}")

    def set_thumbnail(self, thumbnail: QPixmap | None) -> None:
        self.has_thumbnail = thumbnail is not None
        if thumbnail is not None:
            self.picture.setPixmap(
                thumbnail.scaled(
                    44,
                    44,
                    Qt.AspectRatioMode.KeepAspectRatio,
                    Qt.TransformationMode.SmoothTransformation,
                )
            )
        else:
            kind = self.attachment.kind if self.attachment is not None else None
            self.picture.setPixmap(_badge(kind, self.palette(), self.name))

    def _apply_palette(self) -> None:
        palette = self.palette()
        set_text_colour(self.detail, muted_text_colour(palette))
        border = blend(
            palette.color(QPalette.ColorRole.Text), palette.color(QPalette.ColorRole.Base), 0.75
        )
        fill = blend(
            palette.color(QPalette.ColorRole.Text), palette.color(QPalette.ColorRole.Base), 0.94
        )
        self.setStyleSheet(
            f"#attachmentChip {{ border: 1px solid {border.name()}; border-radius: 8px; "
            f"background: {fill.name()}; }}"
        )


def chip_for(
    attachment: Attachment,
    thumbnails: Thumbnails,
    *,
    removable: bool = False,
    parent: QWidget | None = None,
) -> AttachmentChip:
    chip = AttachmentChip(attachment.name, removable=removable, parent=parent)
    chip.set_attachment(attachment, thumbnails.get(attachment))
    return chip


def refresh_thumbnail(chips: list[AttachmentChip], thumbnails: Thumbnails, sha256: str) -> None:
    """A thumbnail was made: show it on the chips of that file."""
    for chip in chips:
        if chip.attachment is not None and chip.attachment.sha256 == sha256:
            chip.set_thumbnail(thumbnails.get(chip.attachment))


PrepareFile = Callable[
    [str, Callable[[], bytes], Callable[[Attachment], None], Callable[[UserFacingError], None]],
    object,
]
