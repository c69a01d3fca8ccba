"""Reading a damaged database file without SQLite: its header mended, its rows read
straight from the pages (https://www.sqlite.org/fileformat.html).

When the damage took the file's first bytes (its signature, its page size) SQLite
refuses the whole file, though every page after them may be whole: `mend_header`
writes back what the rest of the file says. When it took page 1 or the schema,
SQLite cannot find a single table; `read_rows` then walks every page, decodes each
row on the table pages it finds, and says which of Cairn's tables each row fits,
by its shape (the schema is known: it is Cairn's own). SQLite's constraints check
each row again when it is inserted into the fresh database.

Only ever run on a scratch copy: the kept copy is never altered.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SIGNATURE = b"SQLite format 3\x00"
_PAGE_SIZES = (4096, 1024, 2048, 8192, 16384, 32768, 65536, 512)
_TABLE_LEAF = 13
_PAGE_TYPES = frozenset({2, 5, 10, 13})
_MAX_OVERFLOW_PAGES = 1 << 20


@dataclass(frozen=True)
class RawRow:
    """One row read from a table page: its rowid and its values, in column order."""

    rowid: int
    values: tuple[object, ...]


def mend_header(path: Path) -> list[str]:
    """Write back the parts of the 100-byte header the rest of the file vouches for;
    returns what was mended ("signature", "page size", …), empty when nothing was."""
    mended: list[str] = []
    with path.open("r+b") as file:
        header = bytearray(file.read(100))
        if len(header) < 100:
            return mended
        if bytes(header[:16]) != SIGNATURE:
            header[:16] = SIGNATURE
            mended.append("signature")
        stated = _stated_page_size(bytes(header))
        size = file.seek(0, 2)
        if stated is None or _page_score(path, stated) < 0.5:
            found = page_size_of(path, size)
            if found is not None and found != stated:
                header[16:18] = struct.pack(">H", 1 if found == 65536 else found)
                mended.append("page size")
        # File format numbers (1 legacy, 2 WAL), reserved bytes, payload fractions.
        if header[18] not in (1, 2) or header[19] not in (1, 2):
            header[18:20] = b"\x01\x01"
            mended.append("format numbers")
        if bytes(header[21:24]) != b"\x40\x20\x20":
            header[21:24] = b"\x40\x20\x20"
            mended.append("payload fractions")
        if mended:
            file.seek(0)
            file.write(header)
    return mended


def page_size_of(path: Path, size: int | None = None) -> int | None:
    """The page size at which pages look like b-tree pages, or None."""
    total = size if size is not None else path.stat().st_size
    scores = {
        candidate: _page_score(path, candidate)
        for candidate in sorted(_PAGE_SIZES)
        if total >= 2 * candidate
    }
    best = max(scores.values(), default=0.0)
    if best < 0.3:
        return None
    # Every multiple of the true size also lands on page starts: the smallest that
    # scores about as well is the one.
    return next(size for size, score in scores.items() if score >= 0.9 * best)


def read_rows(path: Path, page_size: int) -> Iterator[RawRow]:
    """Every row on the file's table leaf pages that decodes whole (page 1 included)."""
    with path.open("rb") as file:
        data = file.read()
    pages = len(data) // page_size
    for number in range(1, pages + 1):
        start = (number - 1) * page_size
        page = data[start : start + page_size]
        header_at = 100 if number == 1 else 0
        if len(page) < page_size or page[header_at] != _TABLE_LEAF:
            continue
        yield from _leaf_rows(data, page, header_at, page_size)


# --- inside ------------------------------------------------------------------------------


def _stated_page_size(header: bytes) -> int | None:
    (value,) = struct.unpack(">H", header[16:18])
    size = 65536 if value == 1 else value
    return size if 512 <= size <= 65536 and size & (size - 1) == 0 else None


def _page_score(path: Path, page_size: int) -> float:
    """The share of pages (page 1 aside, at most 200 looked at) that look like b-tree pages."""
    looked = plausible = 0
    with path.open("rb") as file:
        number = 1
        while looked < 200:
            file.seek(number * page_size)
            page = file.read(page_size)
            if len(page) < page_size:
                break
            number += 1
            if not any(page[:8]):
                continue  # a free page, or one zeroed by the damage
            looked += 1
            plausible += _looks_like_btree(page, 0, page_size)
    return plausible / looked if looked else 0.0


def _looks_like_btree(page: bytes, at: int, page_size: int) -> bool:
    kind = page[at]
    if kind not in _PAGE_TYPES:
        return False
    cells = int.from_bytes(page[at + 3 : at + 5], "big")
    content = int.from_bytes(page[at + 5 : at + 7], "big") or 65536
    header = 8 if kind in (10, 13) else 12
    return at + header + 2 * cells <= content <= page_size


def _leaf_rows(data: bytes, page: bytes, at: int, page_size: int) -> Iterator[RawRow]:
    cells = int.from_bytes(page[at + 3 : at + 5], "big")
    usable = page_size  # Cairn never reserves bytes at the end of a page
    for cell in range(cells):
        pointer_at = at + 8 + 2 * cell
        offset = int.from_bytes(page[pointer_at : pointer_at + 2], "big")
        if not at + 8 <= offset < page_size:
            continue
        try:
            row = _cell(data, page, offset, usable, page_size)
        except (IndexError, ValueError, UnicodeDecodeError, struct.error):
            continue  # a damaged cell costs that row only
        if row is not None:
            yield row


def _cell(data: bytes, page: bytes, offset: int, usable: int, page_size: int) -> RawRow | None:
    payload_size, offset = _varint(page, offset)
    rowid, offset = _varint(page, offset)
    if rowid >= 1 << 63:
        rowid -= 1 << 64
    most = usable - 35
    if payload_size <= most:
        payload = page[offset : offset + payload_size]
    else:
        least = (usable - 12) * 32 // 255 - 23
        local = least + (payload_size - least) % (usable - 4)
        if local > most:
            local = least
        parts = [page[offset : offset + local]]
        (next_page,) = struct.unpack(">I", page[offset + local : offset + local + 4])
        got, seen = local, set[int]()
        while got < payload_size:
            if next_page == 0 or next_page in seen or len(seen) > _MAX_OVERFLOW_PAGES:
                return None
            seen.add(next_page)
            start = (next_page - 1) * page_size
            overflow = data[start : start + page_size]
            if len(overflow) < page_size:
                return None
            (next_page,) = struct.unpack(">I", overflow[:4])
            chunk = overflow[4 : 4 + min(usable - 4, payload_size - got)]
            parts.append(chunk)
            got += len(chunk)
        payload = b"".join(parts)
    if len(payload) != payload_size:
        return None
    return RawRow(rowid, _record(payload))


def _record(payload: bytes) -> tuple[object, ...]:
    header_size, at = _varint(payload, 0)
    if not 1 <= header_size <= len(payload):
        raise ValueError("record header out of bounds")
    types = []
    while at < header_size:
        kind, at = _varint(payload, at)
        types.append(kind)
    values: list[object] = []
    body = header_size
    for kind in types:
        value, body = _value(payload, kind, body)
        values.append(value)
    if body != len(payload):
        raise ValueError("record size does not add up")
    return tuple(values)


_INT_SIZES = {1: 1, 2: 2, 3: 3, 4: 4, 5: 6, 6: 8}


def _value(payload: bytes, kind: int, at: int) -> tuple[object, int]:
    if kind == 0:
        return None, at
    if kind in _INT_SIZES:
        size = _INT_SIZES[kind]
        if at + size > len(payload):
            raise ValueError("integer past the end")
        return int.from_bytes(payload[at : at + size], "big", signed=True), at + size
    if kind == 7:
        if at + 8 > len(payload):
            raise ValueError("real past the end")
        return struct.unpack(">d", payload[at : at + 8])[0], at + 8
    if kind in (8, 9):
        return kind - 8, at
    if kind >= 12:
        size = (kind - 12) // 2
        if at + size > len(payload):
            raise ValueError("text past the end")
        raw = payload[at : at + size]
        return (raw.decode("utf-8") if kind % 2 else bytes(raw)), at + size
    raise ValueError(f"reserved serial type {kind}")


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = 0
    for index in range(8):
        byte = data[at + index]
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, at + index + 1
    return (value << 8) | data[at + 8], at + 9
