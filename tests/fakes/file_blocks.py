"""The fake server's image and document blocks: what it accepts, and what they cost.

As the documentation defines them:
- image blocks, base64 source, media types image/jpeg, image/png, image/gif and
  image/webp, at most 5 MB an image, larger than 8000×8000 px rejected, tokens about
  width × height / 750 after scaling to a long edge of 1568 px:
  https://docs.anthropic.com/en/docs/build-with-claude/vision
- document blocks with a base64 `application/pdf` source, at most 100 pages:
  https://docs.anthropic.com/en/docs/build-with-claude/pdf-support
- document blocks with a plain-text source (`"type": "text"`, `"media_type":
  "text/plain"`, `"data"`): https://docs.anthropic.com/en/docs/build-with-claude/citations
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

IMAGE_MEDIA_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
MAX_IMAGE_BASE64_BYTES = 5 * 1024 * 1024
MAX_IMAGE_SIDE = 8000
MAX_PDF_PAGES = 100
# The fake's price of a PDF page: inside the documented 1,500–3,000 text tokens a page.
FAKE_PDF_PAGE_TOKENS = 2_000
_MAGIC = {
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/gif": (b"GIF87a", b"GIF89a"),
    "image/webp": (b"RIFF",),
}
_PAGE = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")


class FileBlockError(Exception):
    """A 400 invalid_request_error, with the API's kind of words."""


def _decoded(data: object, where: str) -> bytes:
    if not isinstance(data, str) or not data:
        raise FileBlockError(f"{where}.source.data: Field required")
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise FileBlockError(f"{where}.source.data: invalid base64 data") from None


def _png_size(data: bytes) -> tuple[int, int]:
    if data.startswith(b"\x89PNG"):
        return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    return 0, 0


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
            if max(_png_size(data)) > MAX_IMAGE_SIDE:
                raise FileBlockError(f"{place}: image dimensions exceed max allowed size")
        elif kind == "base64":
            if media_type != "application/pdf":
                raise FileBlockError(
                    f"{place}.source.media_type: Input should be 'application/pdf'"
                )
            data = _decoded(source.get("data"), place)
            if not data.startswith(b"%PDF-"):
                raise FileBlockError(f"{place}: The PDF specified was not valid.")
            if len(_PAGE.findall(data)) > MAX_PDF_PAGES:
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
            width, height = _png_size(base64.b64decode(str(source.get("data", ""))[:64]))
            scale = min(1.0, 1568 / max(width, height, 1))
            tokens += math.ceil(max(width * scale, 1) * max(height * scale, 1) / 750)
        elif block.get("type") == "document" and isinstance(source, Mapping):
            if source.get("type") == "text":
                tokens += count_text(str(source.get("data", "")))
            else:
                pdf = base64.b64decode(str(source.get("data", "")))
                tokens += max(1, len(_PAGE.findall(pdf))) * FAKE_PDF_PAGE_TOKENS
    return tokens
