"""The WAL checksum (app/store/wal_check.py `_checksum`) is SQLite's: the same sums as
the loop of https://www.sqlite.org/fileformat.html#checksum_algorithm, whatever the
length, seed and byte order."""

from __future__ import annotations

import sqlite3
import struct
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from app.store.wal_check import _checksum

MASK = 0xFFFFFFFF
seeds = st.tuples(st.integers(0, MASK), st.integers(0, MASK))


def sqlite_checksum(chunk: bytes, seed: tuple[int, int], big_endian: bool) -> tuple[int, int]:
    """The documented loop, word pair by word pair."""
    words = struct.unpack(f"{'>' if big_endian else '<'}{len(chunk) // 4}I", chunk)
    s0, s1 = seed
    for position in range(0, len(words), 2):
        s0 = (s0 + words[position] + s1) & MASK
        s1 = (s1 + words[position + 1] + s0) & MASK
    return s0, s1


@given(
    st.integers(0, 300).flatmap(lambda pairs: st.binary(min_size=8 * pairs, max_size=8 * pairs)),
    seeds,
    st.booleans(),
)
def test_the_same_sums_as_sqlites_loop(chunk: bytes, seed: tuple[int, int], big: bool) -> None:
    assert _checksum(chunk, seed, big) == sqlite_checksum(chunk, seed, big)


@given(seeds, st.booleans(), st.sampled_from([8, 24, 512, 4096, 4096 + 24]))
def test_words_at_their_largest(seed: tuple[int, int], big: bool, size: int) -> None:
    # Every word 0xFFFFFFFF: the sums grow fastest between reductions.
    chunk = b"\xff" * size
    assert _checksum(chunk, seed, big) == sqlite_checksum(chunk, seed, big)


def test_a_log_sqlite_wrote(tmp_path: Path) -> None:
    # The header's checksum and every frame's running one, as SQLite stored them.
    database = tmp_path / "log.db"
    connection = sqlite3.connect(database)
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("PRAGMA wal_autocheckpoint = 0")
    connection.execute("CREATE TABLE t (x)")
    for number in range(20):
        connection.execute("INSERT INTO t VALUES (?)", (bytes([number]) * 3000,))
        connection.commit()
    data = (tmp_path / "log.db-wal").read_bytes()
    connection.close()
    magic, _version, page_size, *_rest, check1, check2 = struct.unpack(">8I", data[:32])
    big = magic & 1 == 1
    running = _checksum(data[:24], (0, 0), big)
    assert running == (check1, check2)
    frame_size = 24 + page_size
    frames = (len(data) - 32) // frame_size
    assert frames > 20
    for number in range(frames):
        start = 32 + number * frame_size
        running = _checksum(data[start : start + 8], running, big)
        running = _checksum(data[start + 24 : start + frame_size], running, big)
        assert running == struct.unpack(">2I", data[start + 16 : start + 24])
