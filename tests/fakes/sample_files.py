"""Small real files to attach in tests: PNG, GIF, JPEG and WebP headers, PDFs of n pages."""

from __future__ import annotations

import struct
import zlib


def png(width: int, height: int, rgb: tuple[int, int, int] = (40, 120, 200)) -> bytes:
    """A real PNG of one colour (it compresses to little whatever its size)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    row = b"\x00" + bytes(rgb) * width
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(row * height, 9))
        + chunk(b"IEND", b"")
    )


def gif_header(width: int, height: int) -> bytes:
    return b"GIF89a" + struct.pack("<HH", width, height) + b"\x00" * 16


def jpeg_header(width: int, height: int) -> bytes:
    """The start of a baseline JPEG: SOI, an APP0 segment, then SOF0 with the size."""
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    sof0 = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + app0 + sof0 + b"\x00" * 16


def webp_header(width: int, height: int) -> bytes:
    """A WebP (VP8X) header with the size."""
    body = b"WEBPVP8X" + struct.pack("<I", 10) + b"\x00\x00\x00\x00"
    body += (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    return b"RIFF" + struct.pack("<I", len(body)) + body


def pdf(pages: int, padding: int = 0) -> bytes:
    """A small PDF of `pages` empty pages (`padding` bytes of comment make it larger)."""
    kids = " ".join(f"{3 + index} 0 R" for index in range(pages))
    objects = [
        b"1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj",
        f"2 0 obj << /Type /Pages /Kids [{kids}] /Count {pages} >> endobj".encode(),
        *(
            f"{3 + index} 0 obj << /Type /Page /Parent 2 0 R >> endobj".encode()
            for index in range(pages)
        ),
    ]
    filler = b"%" + b"x" * max(0, padding - 1) + b"\n" if padding else b""
    return b"%PDF-1.4\n" + filler + b"\n".join(objects) + b"\ntrailer << /Root 1 0 R >>\n%%EOF\n"
