"""Checking `cairn.db-wal` before SQLite reads it, so damage there is seen, not swallowed.

SQLite replays the write-ahead log from its start and stops at the first frame
whose salt or checksum is wrong; everything after it is ignored, then lost for
good at the next checkpoint, which rewrites the log. A break in the middle of
the log therefore drops committed changes without a word, and so does a log cut
short. This module reads the log (and its index, `cairn.db-shm`) the way SQLite
does (https://www.sqlite.org/fileformat.html#the_write_ahead_log,
https://www.sqlite.org/walformat.html) and says what SQLite would not read:

- the frames that follow a broken one and still belong to the same generation
  of the log (same salts, same page size), up to its last commit mark: each
  commit mark among them is one saved change SQLite would skip;
- frames the index (`-shm`) counted as committed (`mxFrame`) that the log no
  longer holds: a log cut short;
- a header too damaged to read: the generation is then taken from the index, or
  from the frames themselves.

Frames the index says were already copied into the database (`nBackfill`) are
not lost, whatever happened to the log since. A torn last frame (a write that
never completed, so was never committed) is not damage.

`rebuild` writes the database as the whole log says it is: the main file with
every readable frame of the generation applied in order (a frame whose header
is broken is placed by the page number the index recorded for it). What is in
that picture can then be checked and kept, or salvaged row by row.
"""

from __future__ import annotations

import os
import shutil
import struct
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

WAL_HEADER_SIZE = 32
FRAME_HEADER_SIZE = 24
_MAGIC_LITTLE = 0x377F0682
_MAGIC_BIG = 0x377F0683  # the least significant bit says the checksums are big-endian
_FORMAT_VERSION = 3007000
_MASK = 0xFFFFFFFF
# The wal-index (https://www.sqlite.org/walformat.html#the_wal_index_file_format): two
# copies of a 48-byte header, then the checkpoint information, in the machine's byte order.
_INDEX_HEADER_SIZE = 48
_INDEX_PAGE = 32768
_INDEX_FIRST_FRAMES = 4062  # page numbers in the first index page (after 136 header bytes)
_INDEX_FRAMES = 4096  # page numbers in each later index page
_INDEX_PAGE_NUMBERS_AT = 136
_CANDIDATE_PAGE_SIZES = (4096, 1024, 2048, 8192, 16384, 32768, 65536, 512)


@dataclass(frozen=True)
class WalIndex:
    """What `cairn.db-shm` says about the log, when its header is sound.

    Attributes:
        page_size: the database's page size.
        committed_frames: frames of the log committed so far (`mxFrame`).
        backfilled: frames already copied into the database file (`nBackfill`).
        salts: the salts of the log's current generation.
        big_endian: whether the log's checksums are big-endian.
        database_pages: the database's size in pages after the last commit.
        pages: the page number each committed frame holds, frame 1 first.
    """

    page_size: int
    committed_frames: int
    backfilled: int
    salts: tuple[int, int]
    big_endian: bool
    database_pages: int
    pages: tuple[int, ...]


@dataclass(frozen=True)
class WalDamage:
    """What is wrong with a write-ahead log, and what can still be read from it.

    Attributes:
        reason: for the log.
        lost_transactions: saved changes (commits) SQLite would not read; at least 1.
        exact: whether `lost_transactions` is exact (else it is the least there were).
        frames: frames in the log file.
        page_size: the database's page size, as the log says.
        placements: (page number, byte offset in the log) of each frame to apply, in
            order, to rebuild the database the log describes; frames whose page is
            unknown are left out (`unplaced`).
        unplaced: frames of lost changes that cannot be placed (header and index lost).
        missing_frames: committed frames the log no longer holds (cut short).
        cut_transactions: of `lost_transactions`, the least number in those frames.
        database_pages: the database's size in pages after the last readable commit
            (0: unknown, keep the file's).
    """

    reason: str
    lost_transactions: int
    exact: bool
    frames: int
    page_size: int = 0
    placements: tuple[tuple[int, int], ...] = ()
    unplaced: int = 0
    missing_frames: int = 0
    database_pages: int = 0
    cut_transactions: int = 0

    @property
    def recoverable(self) -> bool:
        """Whether frames SQLite would skip are there to be read back."""
        return self.missing_frames == 0 and bool(self.placements)


@dataclass(frozen=True)
class _Frame:
    index: int
    page: int
    commit: int
    salts: tuple[int, int]
    stored: tuple[int, int]
    offset: int


def wal_damage(wal: Path, shm: Path | None = None) -> WalDamage | None:
    """The damage in the write-ahead log `wal` (with its index `shm` when there), or None
    when SQLite would read all that was committed. Raises OSError when it cannot be read."""
    try:
        data = wal.read_bytes()
    except FileNotFoundError:
        return None
    index = read_index(shm) if shm is not None else None
    if len(data) < WAL_HEADER_SIZE:
        if index is not None and index.committed_frames > index.backfilled:
            emptied = index.pages[index.backfilled : index.committed_frames]
            return WalDamage(
                "the log was emptied",
                _fewest_transactions(emptied),
                exact=False,
                frames=0,
                page_size=index.page_size,
                missing_frames=len(emptied),
                cut_transactions=_fewest_transactions(emptied),
            )
        return None
    header = struct.unpack(">8I", data[:WAL_HEADER_SIZE])
    magic, version, page_size, _sequence, salt1, salt2, check1, check2 = header
    header_sound = (
        magic in (_MAGIC_LITTLE, _MAGIC_BIG)
        and version == _FORMAT_VERSION
        and _valid_page_size(page_size)
        and _checksum(data[:24], (0, 0), magic == _MAGIC_BIG) == (check1, check2)
    )
    if header_sound:
        salts, big_endian = (salt1, salt2), magic == _MAGIC_BIG
    elif index is not None:
        page_size, salts, big_endian = index.page_size, index.salts, index.big_endian
    else:
        guessed = _guess_generation(data, page_size if _valid_page_size(page_size) else None)
        if guessed is None:
            return _unreadable(data)
        page_size, salts, big_endian = guessed
    if index is not None and (index.salts != salts or index.page_size != page_size):
        index = None  # the index speaks of another generation of the log
    frame_size = FRAME_HEADER_SIZE + page_size
    frames = [_frame(data, number, frame_size) for number in range(_count(data, frame_size))]
    # What SQLite reads: frames in order while salts and the running checksum hold.
    sqlite_commit = -1
    # Frames up to this one passed SQLite's reading: each is whole (`_whole`, the same sum).
    read_whole = -1
    if header_sound:
        running = (check1, check2)
        for frame in frames:
            if frame.salts != salts or frame.page == 0:
                break
            running = _frame_checksum(data, frame, frame_size, running, big_endian)
            if running != frame.stored:
                break
            read_whole = frame.index
            if frame.commit:
                sqlite_commit = frame.index
    generation = [frame for frame in frames if frame.salts == salts and frame.page != 0]
    # The last commit of the generation whose frame is whole: its checksum holds from
    # the one its predecessor stored. A commit frame whose own checksum fails is a write
    # torn by a crash, never reported as saved (synchronous=FULL): not damage.
    last = max(
        (
            frame.index
            for frame in generation
            if frame.commit
            and (
                frame.index <= read_whole
                or _whole(data, frames, frame, salts, frame_size, big_endian)
            )
        ),
        default=-1,
    )
    backfilled = index.backfilled if index is not None else 0
    lost, exact = 0, True
    if last > sqlite_commit and last >= backfilled:
        lost, exact = _lost_commits(frames, salts, index, sqlite_commit, last, backfilled)
    read_up_to = max(sqlite_commit, last)
    missing: tuple[int, ...] = ()
    cut = 0
    if index is not None and index.committed_frames > max(read_up_to + 1, backfilled):
        # The index counted committed frames the log no longer holds: cut short.
        missing = index.pages[max(read_up_to + 1, backfilled) : index.committed_frames]
        cut = _fewest_transactions(missing)
        lost += cut
        exact = False
    if lost == 0:
        return None
    unplaced = sum(
        1
        for frame in frames[sqlite_commit + 1 : last + 1]
        if frame.salts != salts and _index_page(index, frame.index) is None
    )
    if missing:
        reason = f"the log was cut short: {len(missing)} committed frames are missing"
    elif header_sound:
        reason = f"frame {sqlite_commit + 2} of {len(frames)} is damaged"
    else:
        reason = "the log's header is damaged"
    return WalDamage(
        reason,
        lost,
        exact and unplaced == 0,
        len(frames),
        page_size,
        # Only when there are frames SQLite would skip to read back.
        _placements(frames, salts, index, 0, last) if last > sqlite_commit else (),
        unplaced,
        missing_frames=len(missing),
        database_pages=frames[last].commit if last >= 0 else 0,
        cut_transactions=cut,
    )


def read_index(shm: Path) -> WalIndex | None:
    """The header and page numbers of `cairn.db-shm`, or None when it is missing or
    not sound (its two header copies differ, or its checksum is wrong)."""
    try:
        with shm.open("rb") as file:
            data = file.read()
    except OSError:
        return None
    if len(data) < _INDEX_PAGE_NUMBERS_AT:
        return None
    first = data[:_INDEX_HEADER_SIZE]
    if first != data[_INDEX_HEADER_SIZE : 2 * _INDEX_HEADER_SIZE]:
        return None
    order = "<" if sys.byteorder == "little" else ">"
    (version, _unused, _change, is_init, big_end, size, mx_frame, n_page) = struct.unpack(
        f"{order}3IBBH2I", first[:24]
    )
    # The salts are the log header's bytes, copied as they are (big-endian).
    salt1, salt2 = struct.unpack(">2I", first[32:40])
    check1, check2 = struct.unpack(f"{order}2I", first[40:48])
    if version != _FORMAT_VERSION or not is_init:
        return None
    if _checksum(first[:40], (0, 0), sys.byteorder == "big") != (check1, check2):
        return None
    page_size = 65536 if size == 1 else size
    if not _valid_page_size(page_size):
        return None
    (backfilled,) = struct.unpack(f"{order}I", data[96:100])
    pages = []
    for frame in range(1, mx_frame + 1):
        offset = _index_offset(frame)
        if offset + 4 > len(data):
            break
        pages.append(struct.unpack(f"{order}I", data[offset : offset + 4])[0])
    return WalIndex(
        page_size, mx_frame, backfilled, (salt1, salt2), bool(big_end), n_page, tuple(pages)
    )


def rebuild(database: Path, wal: Path, damage: WalDamage, target: Path) -> None:
    """Write to `target` the database as the whole log describes it: `database` with
    every placed frame of `damage` applied in order. Raises OSError."""
    shutil.copyfile(database, target)
    with wal.open("rb") as log, target.open("r+b") as out:
        for page, offset in damage.placements:
            log.seek(offset + FRAME_HEADER_SIZE)
            out.seek((page - 1) * damage.page_size)
            out.write(log.read(damage.page_size))
        if damage.database_pages:
            out.truncate(damage.database_pages * damage.page_size)
        out.flush()
        os.fsync(out.fileno())


# --- inside ------------------------------------------------------------------------------


def _whole(
    data: bytes,
    frames: Sequence[_Frame],
    frame: _Frame,
    salts: tuple[int, int],
    frame_size: int,
    big_endian: bool,
) -> bool:
    """Whether `frame` checks out against its predecessor (unknowable after a broken one)."""
    if frame.index == 0:
        return True
    before = frames[frame.index - 1]
    if before.salts != salts:
        return True
    return _frame_checksum(data, frame, frame_size, before.stored, big_endian) == frame.stored


def _lost_commits(
    frames: Sequence[_Frame],
    salts: tuple[int, int],
    index: WalIndex | None,
    sqlite_commit: int,
    last: int,
    backfilled: int,
) -> tuple[int, bool]:
    """How many commits lie in frames (sqlite_commit, last] beyond the backfilled ones,
    and whether that count is exact.

    A broken frame's own commit mark is unreadable. Within one transaction SQLite
    writes each page once, so a page seen again before the next commit mark means a
    transaction ended in between: at the broken frame, the only place it can.
    """
    start = max(sqlite_commit + 1, backfilled)
    lost, exact = 0, True
    segment_pages: set[int] = set()
    pending: list[_Frame] = []  # broken frames of the current segment
    for frame in frames[start : last + 1]:
        if frame.salts != salts:
            pending.append(frame)
            continue
        if pending:
            ended = frame.page in segment_pages
            if ended:
                lost += 1
                segment_pages = set()
            elif len(pending) > 1 or _index_page(index, pending[0].index) is None:
                exact = False
            for broken in pending:
                page = _index_page(index, broken.index)
                if page is not None and not ended:
                    segment_pages.add(page)
            pending = []
        segment_pages.add(frame.page)
        if frame.commit:
            lost += 1
            segment_pages = set()
    return lost, exact


def _placements(
    frames: Sequence[_Frame],
    salts: tuple[int, int],
    index: WalIndex | None,
    first: int,
    last: int,
) -> tuple[tuple[int, int], ...]:
    placed = []
    for frame in frames[first : last + 1] if first <= last else ():
        page = frame.page if frame.salts == salts else _index_page(index, frame.index)
        if page:
            placed.append((page, frame.offset))
    return tuple(placed)


def _fewest_transactions(pages: Sequence[int]) -> int:
    """The fewest transactions that can have written frames holding `pages`, in order:
    SQLite writes a page once per transaction, so a page seen again starts a new one."""
    transactions, seen = 1, set[int]()
    for page in pages:
        if page in seen:
            transactions += 1
            seen = set()
        seen.add(page)
    return transactions


def _unreadable(data: bytes) -> WalDamage | None:
    """A log whose header, index and frames give no generation to read."""
    if len(data) <= WAL_HEADER_SIZE:
        return None
    frames = (len(data) - WAL_HEADER_SIZE) // (FRAME_HEADER_SIZE + 4096)
    if frames == 0:
        return None
    return WalDamage("the log's header is not a write-ahead log header", 1, False, frames)


def _guess_generation(data: bytes, stated: int | None) -> tuple[int, tuple[int, int], bool] | None:
    """Page size, salts and byte order from the frames alone (the header is unreadable):
    the first two frames of a generation share their salts."""
    for size in (stated, *_CANDIDATE_PAGE_SIZES) if stated else _CANDIDATE_PAGE_SIZES:
        frame_size = FRAME_HEADER_SIZE + size
        if _count(data, frame_size) < 2:
            continue
        one, two = _frame(data, 0, frame_size), _frame(data, 1, frame_size)
        if one.salts != two.salts or one.salts == (0, 0) or one.page == 0 or two.page == 0:
            continue
        for big_endian in (False, True):
            if _frame_checksum(data, two, frame_size, one.stored, big_endian) == two.stored:
                return size, one.salts, big_endian
        return size, one.salts, False
    return None


def _count(data: bytes, frame_size: int) -> int:
    return max(0, (len(data) - WAL_HEADER_SIZE) // frame_size)


def _index_offset(frame: int) -> int:
    """Where the page number of frame `frame` (1-based) is kept in the index."""
    if frame <= _INDEX_FIRST_FRAMES:
        return _INDEX_PAGE_NUMBERS_AT + (frame - 1) * 4
    table, at = divmod(frame - _INDEX_FIRST_FRAMES - 1, _INDEX_FRAMES)
    return (table + 1) * _INDEX_PAGE + at * 4


def _index_page(index: WalIndex | None, frame_index: int) -> int | None:
    if index is None or frame_index >= len(index.pages):
        return None
    return index.pages[frame_index] or None


def _valid_page_size(size: int) -> bool:
    return 512 <= size <= 65536 and size & (size - 1) == 0


def _frame(data: bytes, index: int, frame_size: int) -> _Frame:
    start = WAL_HEADER_SIZE + index * frame_size
    page, commit, salt1, salt2, stored1, stored2 = struct.unpack(
        ">6I", data[start : start + FRAME_HEADER_SIZE]
    )
    return _Frame(index, page, commit, (salt1, salt2), (stored1, stored2), start)


def _frame_checksum(
    data: bytes, frame: _Frame, frame_size: int, seed: tuple[int, int], big_endian: bool
) -> tuple[int, int]:
    start = frame.offset
    checksum = _checksum(data[start : start + 8], seed, big_endian)
    return _checksum(data[start + FRAME_HEADER_SIZE : start + frame_size], checksum, big_endian)


def _checksum(chunk: bytes, seed: tuple[int, int], big_endian: bool) -> tuple[int, int]:
    """SQLite's WAL checksum (fileformat.html#checksum_algorithm), from `seed`.

    Its loop is `s0 += w[i] + s1; s1 += w[i + 1] + s0`, modulo 2**32. Taken sixteen
    words at a time and reduced once per sixteen (additions only, so the same sums; the
    values stay under 2**46): after a crash every frame of the log is checked before
    the window can open, ~1.6 times faster so (~60 µs a 4 KiB page instead of ~95).
    """
    count = len(chunk) // 4
    words = struct.unpack(f"{'>' if big_endian else '<'}{count}I", chunk)
    s0, s1 = seed
    whole = count - count % 16
    run = iter(words[:whole])
    for a, b, c, d, e, f, g, h, i, j, k, m, n, o, p, q in zip(*(run,) * 16, strict=True):
        s0 += a + s1
        s1 += b + s0
        s0 += c + s1
        s1 += d + s0
        s0 += e + s1
        s1 += f + s0
        s0 += g + s1
        s1 += h + s0
        s0 += i + s1
        s1 += j + s0
        s0 += k + s1
        s1 += m + s0
        s0 += n + s1
        s1 += o + s0
        s0 = (s0 + p + s1) & _MASK
        s1 = (s1 + q + s0) & _MASK
    for position in range(whole, count, 2):
        s0 = (s0 + words[position] + s1) & _MASK
        s1 = (s1 + words[position + 1] + s0) & _MASK
    return s0, s1
