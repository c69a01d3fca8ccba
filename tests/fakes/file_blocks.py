"""The fake server's image and document blocks: what it accepts, and what they cost.

As the documentation defines them:
- image blocks, base64 source, media types image/jpeg, image/png, image/gif and
  image/webp, at most 5 MB an image, larger than 8000×8000 px rejected, tokens about
  width × height / 750 after scaling to a long edge of 1568 px:
  https://docs.anthropic.com/en/docs/build-with-claude/vision
- document blocks with a base64 `application/pdf` source:
  https://docs.anthropic.com/en/docs/build-with-claude/pdf-support

And for the whole request (`check_request_files`, `request_too_large`), as the pages say:
- PDFs: "Maximum pages per request: 100 … Both limits are on the entire request payload,
  including any other content sent alongside PDFs"
  (https://platform.claude.com/docs/en/build-with-claude/pdf-support); pages counted by a
  PDF reader (pypdf), as a page hidden in a compressed object stream is still a page.
- images: "up to 600 for API requests (100 for models with a 200k-token context window)";
  "If you submit more than 20 images in one API request, this limit is 2000x2000 px"
  (https://platform.claude.com/docs/en/build-with-claude/vision).
- bytes: 413 `request_too_large` over 32 MB for the Messages and Token Counting APIs,
  "returned from Cloudflare before the request reaches our API servers"
  (https://platform.claude.com/docs/en/api/errors); the fake reads "32 MB" as
  32,000,000 bytes, the stricter reading.
- document blocks with a plain-text source (`"type": "text"`, `"media_type":
  "text/plain"`, `"data"`): https://docs.anthropic.com/en/docs/build-with-claude/citations
- image and document blocks whose source is an uploaded file (`{"type": "file",
  "file_id": …}`), resolved by the server's Files API (files_api.py): the same rules
  hold for the file's bytes, and it counts toward the request's pages and images as
  any PDF or image does ("Both limits are on the entire request payload":
  pdf-support, whose ways to give a PDF include the Files API); its bytes are not in
  the request's body, so not in its 32 MB.
"""

from __future__ import annotations

import base64
import binascii
import functools
import io
import math
import struct
from collections.abc import Callable, Mapping, Sequence
from typing import Any

IMAGE_MEDIA_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
DOCUMENT_MEDIA_TYPES = frozenset({"application/pdf", "text/plain"})
MAX_IMAGE_BASE64_BYTES = 5 * 1024 * 1024
MAX_IMAGE_FILE_BYTES = 5 * 1024 * 1024  # an uploaded image: the same 5 MB, of its bytes
MAX_IMAGE_SIDE = 8000
MAX_PDF_PAGES = 100
MAX_REQUEST_BYTES = 32_000_000
MAX_IMAGES = 600
MAX_IMAGES_200K = 100
MANY_IMAGES = 20
MAX_SIDE_WITH_MANY = 2000
# The fake's price of a PDF page: inside the documented 1,500–3,000 text tokens a page.
FAKE_PDF_PAGE_TOKENS = 2_000
_MAGIC = {
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/gif": (b"GIF87a", b"GIF89a"),
    "image/webp": (b"RIFF",),
}


class FileBlockError(Exception):
    """A 400 invalid_request_error (or `status`), with the API's kind of words."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


# An uploaded file by its id: (media type, bytes); raises FileBlockError where the server
# refuses it (unknown: 404; the Files API not offered, or not this way: 400).
Resolve = Callable[[str], tuple[str, bytes]]


def no_files(file_id: str) -> tuple[str, bytes]:
    """A server without the Files API: a `file` source is not a source it knows."""
    raise FileBlockError("source.type: Input should be 'base64' or 'text'")


def _file_of(source: Mapping[str, Any], place: str, resolve: Resolve) -> tuple[str, bytes]:
    file_id = source.get("file_id")
    if not isinstance(file_id, str) or not file_id:
        raise FileBlockError(f"{place}.source.file_id: Field required")
    return resolve(file_id)


def _decoded(data: object, where: str) -> bytes:
    if not isinstance(data, str) or not data:
        raise FileBlockError(f"{where}.source.data: Field required")
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise FileBlockError(f"{where}.source.data: invalid base64 data") from None


def _image_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG, GIF or JPEG header; (0, 0) when unknown."""
    if data.startswith(b"\x89PNG"):
        return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    if data[:6] in (b"GIF87a", b"GIF89a"):
        width, height = struct.unpack("<HH", data[6:10])
        return int(width), int(height)
    if data.startswith(b"\xff\xd8"):
        index = 2
        while index + 9 < len(data) and data[index] == 0xFF:
            marker = data[index + 1]
            if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
                height, width = struct.unpack(">HH", data[index + 5 : index + 9])
                return int(width), int(height)
            index += 2 + int.from_bytes(data[index + 2 : index + 4], "big")
    return 0, 0


@functools.lru_cache(maxsize=64)
def pdf_pages(data: bytes) -> int:
    """The pages a PDF reader finds in the file (0 when it cannot read it)."""
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    try:
        return len(PdfReader(io.BytesIO(data), strict=False).pages)
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, OSError):
        return 0


def check_file_blocks(where: str, content: object, resolve: Resolve = no_files) -> None:
    """Raise FileBlockError for an image or document block the API would refuse."""
    if not isinstance(content, list):
        return
    for index, block in enumerate(content):
        if not isinstance(block, Mapping) or block.get("type") not in ("image", "document"):
            continue
        place = f"{where}.content.{index}"
        source = block.get("source")
        if not isinstance(source, Mapping):
            raise FileBlockError(f"{place}.source: Field required")
        media_type, kind = source.get("media_type"), source.get("type")
        if kind == "file":
            # files, "Error handling": "Invalid file type (400): The file type doesn't
            # match the content block type (e.g., using an image file in a document block)".
            media_type, data = _file_of(source, place, resolve)
            wanted = IMAGE_MEDIA_TYPES if block["type"] == "image" else DOCUMENT_MEDIA_TYPES
            if media_type not in wanted:
                raise FileBlockError(
                    f"{place}.source: the file's type {media_type} does not match the "
                    f"{block['type']} block"
                )
            if len(data) > MAX_IMAGE_FILE_BYTES and block["type"] == "image":
                raise FileBlockError(f"{place}.source: image exceeds 5 MB maximum")
            _check_file_bytes(place, media_type, data)
            continue
        if block["type"] == "image":
            if kind != "base64" or media_type not in IMAGE_MEDIA_TYPES:
                raise FileBlockError(
                    f"{place}.source.media_type: Input should be 'image/jpeg', 'image/png', "
                    "'image/gif' or 'image/webp'"
                )
            if len(str(source.get("data", ""))) > MAX_IMAGE_BASE64_BYTES:
                raise FileBlockError(f"{place}.source.base64: image exceeds 5 MB maximum")
            _check_file_bytes(place, str(media_type), _decoded(source.get("data"), place))
        elif kind == "base64":
            if media_type != "application/pdf":
                raise FileBlockError(
                    f"{place}.source.media_type: Input should be 'application/pdf'"
                )
            _check_file_bytes(place, "application/pdf", _decoded(source.get("data"), place))
        elif kind == "text":
            if media_type != "text/plain" or not isinstance(source.get("data"), str):
                raise FileBlockError(f"{place}.source: a text source needs text/plain data")
        else:
            raise FileBlockError(f"{place}.source.type: Input should be 'base64' or 'text'")


def _check_file_bytes(place: str, media_type: str, data: bytes) -> None:
    """An image's or a PDF's bytes as the pages say they must be."""
    if media_type in IMAGE_MEDIA_TYPES:
        if not data.startswith(_MAGIC[media_type]):
            raise FileBlockError(
                f"{place}: Image does not match the provided media type {media_type}"
            )
        if max(_image_size(data)) > MAX_IMAGE_SIDE:
            raise FileBlockError(f"{place}: image dimensions exceed max allowed size")
    elif media_type == "application/pdf":
        if not data.startswith(b"%PDF-"):
            raise FileBlockError(f"{place}: The PDF specified was not valid.")
        if pdf_pages(data) > MAX_PDF_PAGES:
            raise FileBlockError(f"{place}: A maximum of 100 PDF pages may be provided.")


def file_tokens(
    content: object,
    count_text: Callable[[str], int],
    lookup: Callable[[str], tuple[str, bytes] | None] = lambda _file_id: None,
) -> int:
    """What the image and document blocks of `content` cost (their text is not in
    `text_of_content`); an uploaded file's by its bytes (`lookup`)."""
    if not isinstance(content, list):
        return 0
    tokens = 0
    for block in content:
        if not isinstance(block, Mapping) or not isinstance(block.get("source"), Mapping):
            continue
        source: Mapping[str, Any] = block["source"]
        if source.get("type") == "text":
            tokens += count_text(str(source.get("data", "")))
            continue
        if source.get("type") == "file":
            found = lookup(str(source.get("file_id", "")))
            if found is None:
                continue
            media_type, data = found
        else:
            media_type = str(source.get("media_type", ""))
            data = base64.b64decode(str(source.get("data", "")))
        if media_type == "text/plain":
            tokens += count_text(data.decode("utf-8-sig", "replace"))
        elif media_type == "application/pdf":
            tokens += max(1, pdf_pages(data)) * FAKE_PDF_PAGE_TOKENS
        else:
            width, height = _image_size(data)
            scale = min(1.0, 1568 / max(width, height, 1))
            tokens += math.ceil(max(width * scale, 1) * max(height * scale, 1) / 750)
    return tokens


def request_too_large(headers: Mapping[str, str], limit: int = MAX_REQUEST_BYTES) -> str | None:
    """The 413 message for a body over 32 MB (errors: "Request size limits"; the Files
    API's `limit` is 500 MB), else None."""
    try:
        length = int(headers.get("content-length") or 0)
    except ValueError:
        return None
    if length > limit:
        return "Request exceeds the maximum allowed number of bytes."
    return None


def check_request_files(
    messages: Sequence[object], context_window: int | None, resolve: Resolve = no_files
) -> None:
    """Raise FileBlockError where the files of the whole request break a limit: 100 PDF
    pages, 600 images (100 on a 200k-token window), and past 20 images none larger than
    2000×2000 px (see the module notes), uploaded files counted as any other.
    `context_window`: the model's, when known."""
    pages, images, largest = 0, 0, (0, 0, "")
    for index, message in enumerate(messages):
        content = message.get("content") if isinstance(message, Mapping) else None
        if not isinstance(content, list):
            continue
        for position, block in enumerate(content):
            if not isinstance(block, Mapping) or not isinstance(block.get("source"), Mapping):
                continue
            source = block["source"]
            if source.get("type") == "base64":
                media_type = str(source.get("media_type", ""))
                data = _decoded(source.get("data"), f"messages.{index}")
            elif source.get("type") == "file":
                media_type, data = _file_of(source, f"messages.{index}", resolve)
            else:
                continue
            if block.get("type") == "document":
                pages += pdf_pages(data) if media_type == "application/pdf" else 0
            elif block.get("type") == "image":
                images += 1
                width, height = _image_size(data)
                if max(width, height) > max(largest[0], largest[1]):
                    largest = (width, height, f"messages.{index}.content.{position}")
    if pages > MAX_PDF_PAGES:
        raise FileBlockError(f"A maximum of {MAX_PDF_PAGES} PDF pages may be provided.")
    most = (
        MAX_IMAGES_200K if context_window is not None and context_window <= 200_000 else MAX_IMAGES
    )
    if images > most:
        raise FileBlockError(f"Too many images: {images} > {most} images in one request.")
    width, height, place = largest
    if images > MANY_IMAGES and max(width, height) > MAX_SIDE_WITH_MANY:
        raise FileBlockError(
            f"{place}: At least one of the image dimensions exceed max allowed size for "
            f"many-image requests: {MAX_SIDE_WITH_MANY} pixels"
        )
