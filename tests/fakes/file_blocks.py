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
MAX_IMAGE_BASE64_BYTES = 5 * 1024 * 1024
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
    """A 400 invalid_request_error, with the API's kind of words."""


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


def check_file_blocks(where: str, content: object) -> None:
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
        if block["type"] == "image":
            if kind != "base64" or media_type not in IMAGE_MEDIA_TYPES:
                raise FileBlockError(
                    f"{place}.source.media_type: Input should be 'image/jpeg', 'image/png', "
                    "'image/gif' or 'image/webp'"
                )
            if len(str(source.get("data", ""))) > MAX_IMAGE_BASE64_BYTES:
                raise FileBlockError(f"{place}.source.base64: image exceeds 5 MB maximum")
            data = _decoded(source.get("data"), place)
            if not data.startswith(_MAGIC[str(media_type)]):
                raise FileBlockError(
                    f"{place}: Image does not match the provided media type {media_type}"
                )
            if max(_image_size(data)) > MAX_IMAGE_SIDE:
                raise FileBlockError(f"{place}: image dimensions exceed max allowed size")
        elif kind == "base64":
            if media_type != "application/pdf":
                raise FileBlockError(
                    f"{place}.source.media_type: Input should be 'application/pdf'"
                )
            data = _decoded(source.get("data"), place)
            if not data.startswith(b"%PDF-"):
                raise FileBlockError(f"{place}: The PDF specified was not valid.")
            if pdf_pages(data) > MAX_PDF_PAGES:
                raise FileBlockError(f"{place}: A maximum of 100 PDF pages may be provided.")
        elif kind == "text":
            if media_type != "text/plain" or not isinstance(source.get("data"), str):
                raise FileBlockError(f"{place}.source: a text source needs text/plain data")
        else:
            raise FileBlockError(f"{place}.source.type: Input should be 'base64' or 'text'")


def file_tokens(content: object, count_text: Callable[[str], int]) -> int:
    """What the image and document blocks of `content` cost (their text is not in
    `text_of_content`)."""
    if not isinstance(content, list):
        return 0
    tokens = 0
    for block in content:
        if not isinstance(block, Mapping):
            continue
        source: Any = block.get("source")
        if block.get("type") == "image" and isinstance(source, Mapping):
            width, height = _image_size(_decoded(source.get("data"), "image"))
            scale = min(1.0, 1568 / max(width, height, 1))
            tokens += math.ceil(max(width * scale, 1) * max(height * scale, 1) / 750)
        elif block.get("type") == "document" and isinstance(source, Mapping):
            if source.get("type") == "text":
                tokens += count_text(str(source.get("data", "")))
            else:
                pdf = base64.b64decode(str(source.get("data", "")))
                tokens += max(1, pdf_pages(pdf)) * FAKE_PDF_PAGE_TOKENS
    return tokens


def request_too_large(headers: Mapping[str, str]) -> str | None:
    """The 413 message for a body over 32 MB (errors: "Request size limits"), else None."""
    try:
        length = int(headers.get("content-length") or 0)
    except ValueError:
        return None
    if length > MAX_REQUEST_BYTES:
        return "Request exceeds the maximum allowed number of bytes."
    return None


def check_request_files(messages: Sequence[object], context_window: int | None) -> None:
    """Raise FileBlockError where the files of the whole request break a limit: 100 PDF
    pages, 600 images (100 on a 200k-token window), and past 20 images none larger than
    2000×2000 px (see the module notes). `context_window`: the model's, when known."""
    pages, images, largest = 0, 0, (0, 0, "")
    for index, message in enumerate(messages):
        content = message.get("content") if isinstance(message, Mapping) else None
        if not isinstance(content, list):
            continue
        for position, block in enumerate(content):
            if not isinstance(block, Mapping) or not isinstance(block.get("source"), Mapping):
                continue
            source = block["source"]
            if source.get("type") != "base64":
                continue
            if block.get("type") == "document":
                pages += pdf_pages(_decoded(source.get("data"), f"messages.{index}"))
            elif block.get("type") == "image":
                images += 1
                width, height = _image_size(_decoded(source.get("data"), f"messages.{index}"))
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
