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
    """A valid PDF 1.4 of `pages` empty pages, with a classic cross-reference table
    (`padding` bytes of comment make it larger)."""
    objects = _page_tree(pages)
    filler = b"%" + b"x" * max(0, padding - 1) + b"\n" if padding else b""
    body = bytearray(b"%PDF-1.4\n" + filler)
    offsets = []
    for number, content in enumerate(objects, start=1):
        offsets.append(len(body))
        body += f"{number} 0 obj\n".encode() + content + b"\nendobj\n"
    xref = len(body)
    body += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    body += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    body += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\n".encode()
    body += f"startxref\n{xref}\n%%EOF\n".encode()
    return bytes(body)


def pdf_in_object_streams(pages: int, padding: int = 0) -> bytes:
    """A valid PDF 1.5 of `pages` empty pages whose catalog, page tree and pages all sit in
    one compressed object stream, found through a compressed cross-reference stream (PDF
    1.5, ISO 32000-1 §7.5.7–7.5.8): no `/Type /Page` is visible in its bytes."""
    objects = _page_tree(pages)
    numbers = range(1, len(objects) + 1)
    heads, bodies, at = [], [], 0
    for number, content in zip(numbers, objects, strict=True):
        heads.append(f"{number} {at}")
        bodies.append(content)
        at += len(content) + 1
    head = " ".join(heads).encode() + b"\n"
    packed = zlib.compress(head + b"\n".join(bodies) + b"\n")
    stream_number = len(objects) + 1
    xref_number = stream_number + 1
    filler = b"%" + b"x" * max(0, padding - 1) + b"\n" if padding else b""
    body = bytearray(b"%PDF-1.5\n%\xe2\xe3\xcf\xd3\n" + filler)
    stream_offset = len(body)
    body += (
        f"{stream_number} 0 obj\n<< /Type /ObjStm /N {len(objects)} /First {len(head)} "
        f"/Filter /FlateDecode /Length {len(packed)} >>\nstream\n"
    ).encode()
    body += packed + b"\nendstream\nendobj\n"
    xref_offset = len(body)
    # Entries of /W [1 4 2]: type 0 (free), 2 (in object stream: its number, index), 1.
    rows = [b"\x00" + (0).to_bytes(4, "big") + (65535).to_bytes(2, "big")]
    rows += [
        b"\x02" + stream_number.to_bytes(4, "big") + i.to_bytes(2, "big")
        for i in range(len(objects))
    ]
    rows.append(b"\x01" + stream_offset.to_bytes(4, "big") + (0).to_bytes(2, "big"))
    rows.append(b"\x01" + xref_offset.to_bytes(4, "big") + (0).to_bytes(2, "big"))
    table = zlib.compress(b"".join(rows))
    body += (
        f"{xref_number} 0 obj\n<< /Type /XRef /Size {xref_number + 1} /W [1 4 2] /Root 1 0 R "
        f"/Filter /FlateDecode /Length {len(table)} >>\nstream\n"
    ).encode()
    body += table + b"\nendstream\nendobj\n"
    body += f"startxref\n{xref_offset}\n%%EOF\n".encode()
    return bytes(body)


def _page_tree(pages: int) -> list[bytes]:
    """The catalog (1), the page tree (2) and `pages` pages (3…) of a PDF, in order."""
    kids = " ".join(f"{3 + index} 0 R" for index in range(pages))
    return [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode(),
        *(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>" for _ in range(pages)),
    ]
