"""Files given to Claude with a message: images, PDFs and text files (issue 11 item 2).

What Claude can read, the limits the API sets, what an attachment costs in
tokens and the content block it is sent as — all without Qt, files or the
network. The figures follow Anthropic's documentation:

- Images: https://docs.anthropic.com/en/docs/build-with-claude/vision — JPEG, PNG,
  GIF and WebP; larger than 8000×8000 px is rejected; at most 5 MB an image; an image
  whose long edge passes 1568 px, or which would cost more than about 1,600 tokens,
  is scaled down (aspect kept) first; then it costs about width × height / 750 tokens.
- PDFs: https://docs.anthropic.com/en/docs/build-with-claude/pdf-support — a request
  of at most 32 MB and 100 pages, standard PDFs without a password; each page costs
  its text (about 1,500–3,000 tokens a page) plus an image of the page.
- Plain text goes as a document with a text source
  (https://docs.anthropic.com/en/docs/build-with-claude/citations: `"source": {"type":
  "text", "media_type": "text/plain", "data": …}`), counted by the tokenizer.
"""

from __future__ import annotations

import base64
import io
import logging
import math
import re
import struct
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import PurePath
from typing import Any

from app.core.errors import UserFacingError

log = logging.getLogger(__name__)

IMAGE_MEDIA_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}
PDF_MEDIA_TYPE = "application/pdf"
TEXT_MEDIA_TYPE = "text/plain"
# Text files by their ending: what people attach to ask about (notes, data, code).
TEXT_SUFFIXES = frozenset(
    [
        ".txt",
        ".md",
        ".markdown",
        ".csv",
        ".tsv",
        ".json",
        ".yaml",
        ".yml",
        ".toml",
        ".ini",
        ".cfg",
        ".log",
        ".xml",
        ".html",
        ".htm",
        ".css",
        ".js",
        ".ts",
        ".py",
        ".java",
        ".c",
        ".h",
        ".cpp",
        ".hpp",
        ".cs",
        ".go",
        ".rs",
        ".rb",
        ".php",
        ".sh",
        ".sql",
        ".tex",
        ".srt",
    ]
)
# Files people often try that Claude cannot read as they are, with what to do instead.
_CONVERT_FIRST = {
    ".doc": "save it as PDF first",
    ".docx": "save it as PDF first",
    ".odt": "save it as PDF first",
    ".rtf": "save it as PDF first",
    ".pages": "export it as PDF first",
    ".ppt": "save it as PDF first",
    ".pptx": "save it as PDF first",
    ".key": "export it as PDF first",
    ".xls": "save it as CSV or PDF first",
    ".xlsx": "save it as CSV or PDF first",
    ".ods": "save it as CSV or PDF first",
    ".heic": "save it as JPEG or PNG first",
    ".tif": "save it as PNG first",
    ".tiff": "save it as PNG first",
    ".bmp": "save it as PNG first",
    ".svg": "save it as PNG first",
}

MAX_IMAGE_BYTES = 5 * 1024 * 1024  # vision: 5 MB an image, measured on its base64 as sent
MAX_IMAGE_SIDE = 8000  # vision: larger than 8000x8000 px is rejected
RESIZE_LONG_EDGE = 1568  # vision: scaled down beyond this long edge
RESIZE_TOKENS = 1600  # vision: …or beyond about this many tokens
PIXELS_PER_TOKEN = 750  # vision: tokens = width * height / 750
# errors ("Request size limits") and pdf-support: a request of at most 32 MB, read as
# 32,000,000 bytes (the smaller reading of "MB").
MAX_REQUEST_BYTES = 32_000_000
# Base64 makes 3 bytes 4: the largest PDF whose base64 fits what any model's request may
# spend on files (app/core/file_limits.py, MIN_FILE_BYTES_BUDGET: 32 MB less the framing
# and a million-token window's text).
MAX_PDF_BYTES = (MAX_REQUEST_BYTES - 512 * 1024 - 6_000_000) * 3 // 4 - 256
MAX_PDF_PAGES = 100  # pdf-support: maximum pages per request
# Offline, a PDF is counted at the top of the documented 1,500–3,000 text tokens a page
# plus the page's image at the API's largest unscaled size (≈1,600): marked an estimate.
PDF_TOKENS_PER_PAGE = 3_000 + RESIZE_TOKENS
MAX_TEXT_BYTES = 2 * 1024 * 1024
# A document block's wrapping (type, title) beside its text, in tokens.
DOCUMENT_OVERHEAD_TOKENS = 16

ATTACHED_PREFIX = "[attached: "


class AttachmentKind(StrEnum):
    IMAGE = "image"
    PDF = "pdf"
    TEXT = "text"


class AttachmentRefusedError(UserFacingError):
    """A file Claude cannot be given: of a type it cannot read, or too large."""

    title = "This file can't be attached"


@dataclass(frozen=True)
class Attachment:
    """One file of a message, as kept in the archive (its bytes under `sha256`).

    Attributes:
        tokens: what it costs in the request (`estimated`: an offline guess, not a count).
        width, height: an image's pixels; pages: a PDF's pages (0 when not known).
    """

    sha256: str
    name: str
    media_type: str
    kind: AttachmentKind
    size: int
    tokens: int
    estimated: bool = False
    width: int = 0
    height: int = 0
    pages: int = 0


def describe(name: str, data: bytes, sha256: str, count: Callable[[str], int]) -> Attachment:
    """The attachment `data` (a file called `name`) makes, or why it cannot be one.

    Raises:
        AttachmentRefusedError: a type Claude cannot read, too large, or damaged.
    """
    shown = PurePath(name).name or "This file"
    suffix = PurePath(name).suffix.lower()
    if suffix in IMAGE_MEDIA_TYPES or _image_type(data) is not None:
        return _image(shown, data, sha256)
    if suffix == ".pdf" or data.startswith(b"%PDF-"):
        return _pdf(shown, data, sha256)
    if suffix in TEXT_SUFFIXES or (not suffix and _is_text(data)):
        return _text(shown, data, sha256, count)
    raise AttachmentRefusedError(_unreadable(shown, suffix))


def _unreadable(name: str, suffix: str) -> str:
    if suffix in _CONVERT_FIRST:
        return f"Claude can't read {suffix} files — {_CONVERT_FIRST[suffix]}."
    kind = f"{suffix} files" if suffix else f"“{name}”"
    return (
        f"Claude can't read {kind}. You can attach pictures (PNG, JPEG, GIF, WebP), "
        "PDFs and plain-text files."
    )


def _image(name: str, data: bytes, sha256: str) -> Attachment:
    media_type = _image_type(data)
    if media_type is None:
        raise AttachmentRefusedError(
            f"“{name}” is not a picture Claude can read (PNG, JPEG, GIF or WebP), or it is "
            "damaged. Open it and save it again as PNG or JPEG."
        )
    if base64_size(len(data)) > MAX_IMAGE_BYTES:
        # The 5 MB is what is sent, base64 (4 bytes for every 3): about 3.75 MB of file.
        raise AttachmentRefusedError(
            f"“{name}” is {say_size(len(data))}; Claude takes pictures of up to "
            f"{say_size(MAX_IMAGE_BYTES * 3 // 4)} (5 MB once encoded to send). Save it "
            "smaller (as JPEG, or fewer pixels) and attach it again."
        )
    width, height = image_size(data, media_type)
    if width <= 0 or height <= 0:
        raise AttachmentRefusedError(f"“{name}” looks damaged: its size cannot be read.")
    if max(width, height) > MAX_IMAGE_SIDE:
        raise AttachmentRefusedError(
            f"“{name}” is {width} × {height} pixels; Claude takes pictures of up to "
            f"{MAX_IMAGE_SIDE} × {MAX_IMAGE_SIDE}. Make it smaller and attach it again."
        )
    return Attachment(
        sha256=sha256,
        name=name,
        media_type=media_type,
        kind=AttachmentKind.IMAGE,
        size=len(data),
        tokens=image_tokens(width, height),
        width=width,
        height=height,
    )


def _pdf(name: str, data: bytes, sha256: str) -> Attachment:
    if not data.startswith(b"%PDF-"):
        raise AttachmentRefusedError(f"“{name}” is not a PDF Claude can read, or it is damaged.")
    if len(data) > MAX_PDF_BYTES:
        raise AttachmentRefusedError(
            f"“{name}” is {say_size(len(data))}; a message to Claude can carry a PDF of up to "
            f"about {say_size(MAX_PDF_BYTES)}. Split it into smaller files."
        )
    if _scan(data, _ENCRYPT):
        raise AttachmentRefusedError(
            f"“{name}” is protected by a password; Claude can only read PDFs without one. "
            "Save a copy without the password and attach that."
        )
    pages = pdf_pages(data)
    if pages < 0:
        raise AttachmentRefusedError(
            f"“{name}” looks damaged: its pages cannot be read. Open it and save it again "
            "as PDF, then attach it again."
        )
    if pages > MAX_PDF_PAGES:
        raise AttachmentRefusedError(
            f"“{name}” has {pages} pages; Claude reads at most {MAX_PDF_PAGES} pages of a PDF "
            "at a time. Split it into parts and attach them one by one."
        )
    return Attachment(
        sha256=sha256,
        name=name,
        media_type=PDF_MEDIA_TYPE,
        kind=AttachmentKind.PDF,
        size=len(data),
        tokens=max(1, pages) * PDF_TOKENS_PER_PAGE,
        estimated=True,
        pages=pages,
    )


def _text(name: str, data: bytes, sha256: str, count: Callable[[str], int]) -> Attachment:
    if len(data) > MAX_TEXT_BYTES:
        raise AttachmentRefusedError(
            f"“{name}” is {say_size(len(data))} of text; attach up to "
            f"{say_size(MAX_TEXT_BYTES)}, or paste the part you want to ask about."
        )
    text = decode_text(data)
    if text is None:
        raise AttachmentRefusedError(
            f"“{name}” is not plain text Claude can read (it is not UTF-8). Save it as "
            "UTF-8 text, or as PDF."
        )
    return Attachment(
        sha256=sha256,
        name=name,
        media_type=TEXT_MEDIA_TYPE,
        kind=AttachmentKind.TEXT,
        size=len(data),
        tokens=count(text) + count(name) + DOCUMENT_OVERHEAD_TOKENS,
    )


def base64_size(size: int) -> int:
    """The length of `size` bytes in base64, as an image or PDF is sent."""
    return 4 * math.ceil(size / 3)


def decode_text(data: bytes) -> str | None:
    """A text file's text (UTF-8, with or without its byte-order mark); None if not text."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None
    return None if "\x00" in text else text


def _is_text(data: bytes) -> bool:
    return decode_text(data[:4096]) is not None


# --- images


def _image_type(data: bytes) -> str | None:
    """The media type the bytes are (whatever the file is called), or None."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def image_size(data: bytes, media_type: str) -> tuple[int, int]:
    """Width and height from the file's header; (0, 0) when it cannot be read."""
    try:
        if media_type == "image/png":
            width, height = struct.unpack(">II", data[16:24])
            return int(width), int(height)
        if media_type == "image/gif":
            width, height = struct.unpack("<HH", data[6:10])
            return int(width), int(height)
        if media_type == "image/webp":
            return _webp_size(data)
        if media_type == "image/jpeg":
            return _jpeg_size(data)
    except struct.error:
        pass
    return 0, 0


def _webp_size(data: bytes) -> tuple[int, int]:
    chunk = data[12:16]
    if chunk == b"VP8 ":
        width, height = struct.unpack("<HH", data[26:30])
        return int(width) & 0x3FFF, int(height) & 0x3FFF
    if chunk == b"VP8L":
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X":
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return width, height
    return 0, 0


# JPEG start-of-frame markers (not DHT C4, JPG C8, DAC CC), where the size is.
_JPEG_FRAMES = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}


def _jpeg_size(data: bytes) -> tuple[int, int]:
    index = 2
    while index + 9 < len(data):
        if data[index] != 0xFF:
            index += 1
            continue
        marker = data[index + 1]
        if marker in (0xFF, 0x01) or 0xD0 <= marker <= 0xD9:
            index += 1 if marker == 0xFF else 2
            continue
        (length,) = struct.unpack(">H", data[index + 2 : index + 4])
        if marker in _JPEG_FRAMES:
            height, width = struct.unpack(">HH", data[index + 5 : index + 9])
            return int(width), int(height)
        index += 2 + int(length)
    return 0, 0


def image_tokens(width: int, height: int) -> int:
    """What an image costs after the API's own scaling (long edge ≤ 1568 px and about
    1,600 tokens at most, aspect kept), at width × height / 750."""
    scale = min(
        1.0,
        RESIZE_LONG_EDGE / max(width, height),
        math.sqrt(RESIZE_TOKENS * PIXELS_PER_TOKEN / (width * height)),
    )
    scaled_width, scaled_height = max(1, int(width * scale)), max(1, int(height * scale))
    return max(1, math.ceil(scaled_width * scaled_height / PIXELS_PER_TOKEN))


# --- PDFs

_ENCRYPT = re.compile(rb"/Encrypt\b")
# A large file is scanned in pieces: one regex call holds the GIL to its end, and the GUI
# thread must get it back every few milliseconds (bench/bench_attach.py).
_SCAN_STEP = 512 * 1024
_SCAN_OVERLAP = 4 * 1024  # longer than any dictionary the pattern looks into


def _scan(data: bytes, pattern: re.Pattern[bytes]) -> list[re.Match[bytes]]:
    """Every match of `pattern` in `data`, found piece by piece, each once."""
    view = memoryview(data)
    found: list[re.Match[bytes]] = []
    for start in range(0, len(data), _SCAN_STEP):
        piece = view[start : start + _SCAN_STEP + _SCAN_OVERLAP]
        found.extend(m for m in pattern.finditer(piece) if m.start() < _SCAN_STEP)
    return found


def pdf_pages(data: bytes) -> int:
    """The pages of a PDF, as a PDF reader (pypdf) finds them in its page tree; -1 when
    the file cannot be read as a PDF.

    Not a scan of the raw bytes: since PDF 1.5 the page objects may sit in compressed
    object streams, where no `/Type /Page` can be seen.
    """
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    try:
        return len(PdfReader(io.BytesIO(data), strict=False).pages)
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, OSError) as error:
        log.info("A PDF's pages could not be read: %s", error)
        return -1


# --- what is sent


def content_block(attachment: Attachment, data: bytes) -> dict[str, Any]:
    """The Messages API content block for an attachment (see the module notes)."""
    if attachment.kind is AttachmentKind.TEXT:
        return {
            "type": "document",
            "source": {"type": "text", "media_type": TEXT_MEDIA_TYPE, "data": decode_text(data)},
            "title": attachment.name,
        }
    encoded = _base64(data)
    source = {"type": "base64", "media_type": attachment.media_type, "data": encoded}
    if attachment.kind is AttachmentKind.IMAGE:
        return {"type": "image", "source": source}
    return {"type": "document", "source": source, "title": attachment.name}


def reference_block(attachment: Attachment, file_id: str) -> dict[str, Any]:
    """The block for a file uploaded through the Files API: its source a `file_id` in an
    image or document block, as an image, a PDF or plain text is referred to
    (https://platform.claude.com/docs/en/build-with-claude/files, "Using a file in
    messages"; the SDK's `FileImageSourceParam`, `FileDocumentSourceParam`)."""
    source = {"type": "file", "file_id": file_id}
    if attachment.kind is AttachmentKind.IMAGE:
        return {"type": "image", "source": source}
    return {"type": "document", "source": source, "title": attachment.name}


# The Files API refuses a filename of more than 255 characters or with any of these
# (files, "Error handling": "Invalid filename (400)").
_FORBIDDEN_IN_UPLOAD_NAME = re.compile(r'[<>:"|?*\\/\x00-\x1f]')
_MAX_UPLOAD_NAME = 255


def upload_name(name: str) -> str:
    """`name` as the Files API takes it: forbidden characters as "_", at most 255
    characters with the ending kept, never empty."""
    cleaned = _FORBIDDEN_IN_UPLOAD_NAME.sub("_", name).strip() or "file"
    if len(cleaned) <= _MAX_UPLOAD_NAME:
        return cleaned
    suffix = PurePath(cleaned).suffix[:16]
    return cleaned[: _MAX_UPLOAD_NAME - len(suffix)] + suffix


def _base64(data: bytes) -> str:
    """Base64 in pieces (whole 3-byte groups), so other threads get the GIL between them."""
    view = memoryview(data)
    step = 3 * 256 * 1024
    return "".join(
        base64.standard_b64encode(view[start : start + step]).decode("ascii")
        for start in range(0, len(data), step)
    )


def attachment_line(names: Iterable[str]) -> str:
    """The line naming a message's files: "[attached: a.pdf, b.png]"."""
    return ATTACHED_PREFIX + ", ".join(names) + "]"


def with_attachment_line(text: str, attachments: Sequence[Attachment]) -> str:
    """The message as stored: what was typed, then the line naming its files.

    The names stay in the text, so Claude, the summaries, search and export all see
    which files were given (the files themselves go as blocks). Idempotent.
    """
    if not attachments:
        return text
    line = attachment_line(a.name for a in attachments)
    if text.rstrip().endswith(line):
        return text
    return f"{text.rstrip()}\n\n{line}" if text.strip() else line


def split_attachment_line(content: str) -> tuple[str, list[str]]:
    """The typed text and the file names of a stored message (none: `[]`)."""
    head, _, last = content.rpartition("\n")
    if not last.startswith(ATTACHED_PREFIX) or not last.endswith("]"):
        return content, []
    names = last[len(ATTACHED_PREFIX) : -1]
    return head.rstrip("\n"), [name for name in names.split(", ") if name]


def say_size(size: int) -> str:
    """A file size in plain words: "820 KB", "7.2 MB"."""
    if size < 1024 * 1024:
        return f"{max(1, round(size / 1024))} KB"
    return f"{size / (1024 * 1024):.1f} MB"
