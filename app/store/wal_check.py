"""Checking `cairn.db-wal` before SQLite reads it, so damage there is seen, not swallowed.

SQLite replays the write-ahead log from its start and stops at the first frame
whose salt or checksum is wrong; everything after it is ignored, then lost for
good at the next checkpoint, which deletes or rewrites the log. A break in the
middle of the log therefore drops committed changes without a word. This module
reads the log the way SQLite does (https://www.sqlite.org/fileformat.html#the_write_ahead_log)
and says what a checkpoint would lose: committed transactions after the break.
A torn last frame (a write that never completed, so was never committed) is not damage.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

WAL_HEADER_SIZE = 32
FRAME_HEADER_SIZE = 24
_MAGIC_LITTLE = 0x377F0682
_MAGIC_BIG = 0x377F0683  # the least significant bit says the checksums are big-endian
_FORMAT_VERSION = 3007000
_MASK = 0xFFFFFFFF


@dataclass(frozen=True)
class WalDamage:
    """What is wrong with a write-ahead log.

    Attributes:
        reason: for the log.
        lost_transactions: committed transactions SQLite would skip (at least 1).
        frames: frames in the log.
    """

    reason: str
    lost_transactions: int
    frames: int


def wal_damage(wal: Path) -> WalDamage | None:
    """The damage in the write-ahead log `wal`, or None when SQLite would read all it
    holds that was committed (or there is no log). Raises OSError when it cannot be read."""
    try:
        data = wal.read_bytes()
    except FileNotFoundError:
        return None
    if len(data) < WAL_HEADER_SIZE:
        return None
    magic, version, page_size, _sequence, salt1, salt2, check1, check2 = struct.unpack(
        ">8I", data[:WAL_HEADER_SIZE]
    )
    frame_size = FRAME_HEADER_SIZE + page_size
    if magic not in (_MAGIC_LITTLE, _MAGIC_BIG) or not _valid_page_size(page_size):
        frames = (len(data) - WAL_HEADER_SIZE) // 4096 if len(data) > WAL_HEADER_SIZE else 0
        if frames == 0:
            return None
        return WalDamage("the log's header is not a write-ahead log header", 1, frames)
    big_endian = magic == _MAGIC_BIG
    frames = (len(data) - WAL_HEADER_SIZE) // frame_size
    if version != _FORMAT_VERSION or _checksum(data[:24], (0, 0), big_endian) != (check1, check2):
        commits = sum(1 for index in range(frames) if _frame(data, index, frame_size)[1] != 0)
        if commits == 0:
            return None
        return WalDamage("the log's header checksum is wrong", commits, frames)
    running = (check1, check2)
    index = 0
    for index in range(frames):
        _page, commit, frame_salt1, frame_salt2, stored1, stored2 = _frame(data, index, frame_size)
        if (frame_salt1, frame_salt2) != (salt1, salt2):
            return None  # the end of this generation of the log: older frames follow
        running = _frame_checksum(data, index, frame_size, running, big_endian)
        if running != (stored1, stored2):
            break
    else:
        return None
    # Past the break: committed frames of this generation whose own checksum holds
    # (from the checksum their predecessor stored) are transactions SQLite would drop.
    lost = 0
    for later in range(index + 1, frames):
        _page, commit, frame_salt1, frame_salt2, stored1, stored2 = _frame(data, later, frame_size)
        if (frame_salt1, frame_salt2) != (salt1, salt2):
            break
        seed = _frame(data, later - 1, frame_size)[4:6]
        if commit and _frame_checksum(data, later, frame_size, seed, big_endian) == (
            stored1,
            stored2,
        ):
            lost += 1
    if lost == 0:
        return None
    return WalDamage(f"frame {index + 1} of {frames} is damaged", lost, frames)


def _valid_page_size(size: int) -> bool:
    return 512 <= size <= 65536 and size & (size - 1) == 0


def _frame(data: bytes, index: int, frame_size: int) -> tuple[int, int, int, int, int, int]:
    start = WAL_HEADER_SIZE + index * frame_size
    values: tuple[int, int, int, int, int, int] = struct.unpack(
        ">6I", data[start : start + FRAME_HEADER_SIZE]
    )
    return values


def _frame_checksum(
    data: bytes, index: int, frame_size: int, seed: tuple[int, int], big_endian: bool
) -> tuple[int, int]:
    start = WAL_HEADER_SIZE + index * frame_size
    checksum = _checksum(data[start : start + 8], seed, big_endian)
    return _checksum(data[start + FRAME_HEADER_SIZE : start + frame_size], checksum, big_endian)


def _checksum(chunk: bytes, seed: tuple[int, int], big_endian: bool) -> tuple[int, int]:
    """SQLite's WAL checksum (fileformat.html#checksum_algorithm), from `seed`."""
    words = struct.unpack(f"{'>' if big_endian else '<'}{len(chunk) // 4}I", chunk)
    s0, s1 = seed
    for position in range(0, len(words), 2):
        s0 = (s0 + words[position] + s1) & _MASK
        s1 = (s1 + words[position + 1] + s0) & _MASK
    return s0, s1
