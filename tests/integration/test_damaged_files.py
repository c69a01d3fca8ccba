"""Damaged files on disk: a write-ahead log with a break in it, and a damaged database
set aside and salvaged (app/store/wal_check.py, app/store/salvage.py). Real files,
damaged byte by byte the way a failing disk or a bad copy does."""

from __future__ import annotations

import shutil
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from app.core.lookup import Lookup
from app.core.models import Role
from app.store import SessionStore, open_database
from app.store.database import mark_clean_shutdown
from app.store.lookups import LookupStore
from app.store.salvage import SalvageReport, salvage
from app.store.wal_check import FRAME_HEADER_SIZE, WAL_HEADER_SIZE, wal_damage

PAGE = 4096


def fill(database: Path, sessions: int, messages_each: int, *, checkpoint: bool = True) -> Path:
    """A database of `sessions` conversations; with `checkpoint=False` the files are
    copied while the connection is still open (as a crash leaves them), WAL and all."""
    opened = open_database(database)
    if not checkpoint:
        opened.connection.execute("PRAGMA wal_autocheckpoint = 0")
    store = SessionStore(opened.connection, database=database)
    for number in range(sessions):
        session = store.create_session(f"Walk {number}", "claude-sonnet-4-6")
        for index in range(messages_each):
            role = (Role.USER, Role.ASSISTANT)[index % 2]
            store.append_message(session.id, role, f"Message {index} of walk {number}. " * 20)
    if checkpoint:
        store.close()
        mark_clean_shutdown(database)
        return database
    crashed = database.parent / "crashed" / database.name
    crashed.parent.mkdir()
    for suffix in ("", "-wal", "-shm"):
        shutil.copyfile(f"{database}{suffix}", f"{crashed}{suffix}")
    store.close()
    return crashed


def count_messages(database: Path) -> int:
    opened = open_database(database)
    try:
        return int(opened.connection.execute("SELECT count(*) FROM message").fetchone()[0])
    finally:
        opened.connection.close()


def flip_byte(path: Path, offset: int) -> None:
    with path.open("r+b") as file:
        file.seek(offset)
        byte = file.read(1)
        file.seek(offset)
        file.write(bytes([byte[0] ^ 0xFF]))


def frame_data_offset(frame: int) -> int:
    return WAL_HEADER_SIZE + frame * (FRAME_HEADER_SIZE + PAGE) + FRAME_HEADER_SIZE + 100


# --- the write-ahead log ---------------------------------------------------------------


def test_an_intact_log_is_replayed_whole(tmp_path: Path) -> None:
    crashed = fill(tmp_path / "cairn.db", 1, 40, checkpoint=False)

    assert wal_damage(Path(f"{crashed}-wal")) is None
    opened = open_database(crashed)
    total = opened.connection.execute("SELECT count(*) FROM message").fetchone()[0]
    opened.connection.close()

    assert opened.notice is None
    assert total == 40


def test_a_break_in_the_log_is_found_copied_aside_and_said(tmp_path: Path) -> None:
    crashed = fill(tmp_path / "cairn.db", 1, 40, checkpoint=False)
    wal = Path(f"{crashed}-wal")
    flip_byte(wal, frame_data_offset(10))

    damage = wal_damage(wal)
    assert damage is not None and damage.lost_transactions > 0
    damaged_log = wal.read_bytes()
    opened = open_database(crashed)
    opened.connection.close()

    assert opened.notice is not None
    assert "damage in the record of your latest changes" in opened.notice
    assert f"the last {damage.lost_transactions} saved changes" in opened.notice
    (kept,) = crashed.parent.glob("cairn.db.damaged-*-wal")
    assert kept.read_bytes() == damaged_log, "the log is kept exactly as it was found"
    assert Path(str(kept).removesuffix("-wal")).exists(), "with the file it belongs to"


def frame_header_offset(frame: int) -> int:
    return WAL_HEADER_SIZE + frame * (FRAME_HEADER_SIZE + PAGE)


def zero(path: Path, offset: int, size: int) -> None:
    with path.open("r+b") as file:
        file.seek(offset)
        file.write(bytes(size))


def frames_in(wal: Path) -> int:
    return (wal.stat().st_size - WAL_HEADER_SIZE) // (FRAME_HEADER_SIZE + PAGE)


@pytest.mark.parametrize(
    ("what", "start", "size"),
    [("the header", 0, FRAME_HEADER_SIZE), ("the salts", 8, 8), ("the checksums", 16, 8)],
)
def test_a_frame_broken_in_the_middle_is_counted_and_read_back(
    tmp_path: Path, what: str, start: int, size: int
) -> None:
    """SQLite would stop at the broken frame and drop every change after it; the log's
    later frames and the index's page numbers give them all back."""
    crashed = fill(tmp_path / "cairn.db", 1, 40, checkpoint=False)
    wal = Path(f"{crashed}-wal")
    zero(wal, frame_header_offset(frames_in(wal) // 3) + start, size)

    damage = wal_damage(wal, Path(f"{crashed}-shm"))
    assert damage is not None, what
    assert damage.exact
    opened = open_database(crashed)
    total = opened.connection.execute("SELECT count(*) FROM message").fetchone()[0]
    opened.connection.close()

    assert total == 40, "every saved message is back"
    assert opened.notice is not None
    assert "repaired it" in opened.notice
    assert f"the last {damage.lost_transactions} saved changes" in opened.notice
    (kept,) = crashed.parent.glob("cairn.db.damaged-*-wal")
    assert Path(str(kept).removesuffix("-wal") + "-shm").exists(), "the index is kept too"


def test_the_count_of_lost_changes_is_exact(tmp_path: Path) -> None:
    """What the notice counts is what SQLite alone would have lost: one change a message."""
    crashed = fill(tmp_path / "cairn.db", 1, 30, checkpoint=False)
    wal = Path(f"{crashed}-wal")
    zero(wal, frame_header_offset(frames_in(wal) // 2), FRAME_HEADER_SIZE)
    damage = wal_damage(wal, Path(f"{crashed}-shm"))
    copy = tmp_path / "plain" / "cairn.db"
    copy.parent.mkdir()
    for suffix in ("", "-wal"):
        shutil.copyfile(f"{crashed}{suffix}", f"{copy}{suffix}")
    connection = sqlite3.connect(copy)
    seen = connection.execute("SELECT count(*) FROM message").fetchone()[0]
    connection.close()

    assert damage is not None and damage.exact
    assert damage.lost_transactions == 30 - seen


def test_a_log_cut_short_is_noticed_through_its_index(tmp_path: Path) -> None:
    crashed = fill(tmp_path / "cairn.db", 1, 30, checkpoint=False)
    wal = Path(f"{crashed}-wal")
    with wal.open("r+b") as file:
        file.truncate(frame_header_offset(frames_in(wal) // 2))

    damage = wal_damage(wal, Path(f"{crashed}-shm"))
    opened = open_database(crashed)
    total = opened.connection.execute("SELECT count(*) FROM message").fetchone()[0]
    opened.connection.close()

    assert damage is not None and damage.missing_frames > 0
    assert damage.lost_transactions == 30 - total, "one change a message: the least is exact"
    assert opened.notice is not None
    assert f"at least the last {30 - total} saved changes" in opened.notice
    assert list(crashed.parent.glob("cairn.db.damaged-*-wal")), "a copy is kept"


def test_a_log_with_a_garbage_header_is_read_back_whole(tmp_path: Path) -> None:
    crashed = fill(tmp_path / "cairn.db", 1, 20, checkpoint=False)
    wal = Path(f"{crashed}-wal")
    with wal.open("r+b") as file:
        file.write(bytes(range(7, 39)))

    damage = wal_damage(wal, Path(f"{crashed}-shm"))
    opened = open_database(crashed)
    total = opened.connection.execute("SELECT count(*) FROM message").fetchone()[0]
    opened.connection.close()

    # Every change since the log began: the schema's, the conversation, its messages.
    assert damage is not None and damage.exact and damage.lost_transactions > 20
    assert total == 20
    assert opened.notice is not None
    assert f"the last {damage.lost_transactions} saved changes" in opened.notice


def test_a_log_beyond_repair_is_salvaged_row_by_row(tmp_path: Path) -> None:
    """A broken frame without the index: its page is unknown, so the log's picture
    misses one change; it is set aside and salvaged instead, nothing silently dropped."""
    crashed = fill(tmp_path / "cairn.db", 1, 40, checkpoint=False)
    Path(f"{crashed}-shm").unlink()
    wal = Path(f"{crashed}-wal")
    zero(wal, frame_header_offset(frames_in(wal) // 3), FRAME_HEADER_SIZE)

    damage = wal_damage(wal)
    opened = open_database(crashed)
    total = opened.connection.execute("SELECT count(*) FROM message").fetchone()[0]
    opened.connection.close()

    assert damage is not None and damage.unplaced == 1 and not damage.exact
    assert opened.notice is not None
    assert total >= 39, "at most the one message of the unplaced frame"
    said = (
        f"at least the last {damage.lost_transactions} saved changes could not be read",
        "read back from it as far as it could be",
    )
    assert any(words in opened.notice for words in said)


def test_a_torn_last_frame_is_not_damage(tmp_path: Path) -> None:
    """A write that never completed was never committed: SQLite rightly ignores it. (The
    index is updated only once the commit is written and synced, so it is left out.)"""
    crashed = fill(tmp_path / "cairn.db", 1, 10, checkpoint=False)
    Path(f"{crashed}-shm").unlink()
    wal = Path(f"{crashed}-wal")
    size = wal.stat().st_size
    flip_byte(wal, size - 10)

    assert wal_damage(wal) is None
    opened = open_database(crashed)
    opened.connection.close()
    assert opened.notice is None


def test_a_damaged_last_commit_the_index_counted_is_damage(tmp_path: Path) -> None:
    crashed = fill(tmp_path / "cairn.db", 1, 10, checkpoint=False)
    wal = Path(f"{crashed}-wal")
    flip_byte(wal, wal.stat().st_size - 10)

    damage = wal_damage(wal, Path(f"{crashed}-shm"))
    opened = open_database(crashed)
    opened.connection.close()

    assert damage is not None and damage.lost_transactions == 1
    assert opened.notice is not None
    assert "at least the last 1 saved change could not be read and is missing" in opened.notice


def test_a_log_whose_header_is_damaged_is_damage(tmp_path: Path) -> None:
    crashed = fill(tmp_path / "cairn.db", 1, 10, checkpoint=False)
    wal = Path(f"{crashed}-wal")
    flip_byte(wal, 20)  # salt-2: the header checksum no longer matches

    damage = wal_damage(wal)
    assert damage is not None and damage.lost_transactions >= 10


# --- salvage ---------------------------------------------------------------------------


def damage_pages(database: Path, first_page: int, count: int) -> None:
    with database.open("r+b") as file:
        file.seek(first_page * PAGE)
        file.write(b"\x00" * PAGE * count)


def salvaged(database: Path) -> tuple[str, int]:
    opened = open_database(database)
    total = opened.connection.execute("SELECT count(*) FROM message").fetchone()[0]
    opened.connection.close()
    assert opened.set_aside is not None and opened.set_aside.exists(), "the copy is kept"
    assert opened.notice is not None
    return opened.notice, int(total)


@pytest.mark.parametrize("page_from_end", [3, 8])
def test_a_damaged_page_costs_its_rows_not_the_rest(tmp_path: Path, page_from_end: int) -> None:
    database = fill(tmp_path / "cairn.db", 4, 50)
    pages = database.stat().st_size // PAGE
    damage_pages(database, pages - page_from_end, 1)

    notice, recovered = salvaged(database)

    assert "set it aside" in notice or "repaired it" in notice  # repaired: all came back
    assert f"Recovered {recovered:,} of " in notice
    assert 100 < recovered <= 200


def test_a_truncated_database_gives_back_what_it_still_holds(tmp_path: Path) -> None:
    database = fill(tmp_path / "cairn.db", 4, 50)
    with database.open("r+b") as file:
        file.truncate(database.stat().st_size - 4 * PAGE)

    notice, recovered = salvaged(database)

    assert f"Recovered {recovered:,}" in notice
    assert recovered > 0


def test_a_recovered_conversation_opens_with_its_messages_in_order(tmp_path: Path) -> None:
    database = fill(tmp_path / "cairn.db", 2, 30)
    pages = database.stat().st_size // PAGE
    damage_pages(database, pages - 3, 1)

    salvaged(database)
    store = SessionStore.open(database)
    try:
        for session in store.list_sessions():
            seqs = [m.seq for m in store.messages(session.id)]
            assert seqs == sorted(seqs)
            assert store.live_messages(session.id), "recovered messages are live"
    finally:
        store.close()


def test_the_report_says_what_it_knows() -> None:
    assert (
        SalvageReport(12, 195, 200, summaries_kept=False).sentence()
        == "Recovered 195 of 200 messages in 12 conversations from the damaged copy."
    )
    assert SalvageReport(1, 5, None, summaries_kept=False).sentence() == (
        "Recovered 5 messages in 1 conversation from the damaged copy."
    )
    assert SalvageReport(0, 0, None, summaries_kept=False).sentence() == (
        "No conversation could be read from it; the copy is kept as it was."
    )
    assert SalvageReport(4, 0, 200, summaries_kept=False).sentence() == (
        "Recovered 4 conversations, but none of their 200 messages could be read; "
        "the copy is kept as it was."
    )
    assert SalvageReport(1, 0, None, summaries_kept=False).sentence() == (
        "Recovered 1 conversation, but none of its messages could be read; "
        "the copy is kept as it was."
    )


def test_what_belongs_to_a_message_comes_back_with_it(tmp_path: Path) -> None:
    # Salvage copies every readable row; here nothing is damaged, so everything must come
    # back: the searches Claude ran for a reply, a message's file, and the versions.
    database = fill(tmp_path / "cairn.db", 1, 6)
    opened = open_database(database)
    store = SessionStore(opened.connection, database=database)
    (session,) = store.list_sessions()
    messages = store.messages(session.id)
    LookupStore(opened.connection).add(
        Lookup(messages[1].id, 1, "gate code", (), datetime(2026, 3, 5, tzinfo=UTC))
    )
    opened.connection.execute(
        "INSERT INTO attachment (message_id, ordinal, sha256, name, media_type, kind, size, "
        "tokens) VALUES (?, 1, ?, 'plan.pdf', 'application/pdf', 'pdf', 10, 5)",
        (messages[0].id, "a" * 64),
    )
    store.versions.edit(messages[2].id, "Plan a trip to Porto", token_estimate=6)
    live_before = [m.content for m in store.live_messages(session.id)]
    store.close()

    fresh = open_database(tmp_path / "fresh.db")
    report = salvage(database, fresh.connection)
    connection = fresh.connection

    assert report.messages == 7
    assert connection.execute("SELECT query FROM lookup").fetchall() == [("gate code",)]
    assert connection.execute("SELECT name FROM attachment").fetchall() == [("plan.pdf",)]
    copy = SessionStore(connection, database=tmp_path / "fresh.db")
    assert [m.content for m in copy.live_messages(session.id)] == live_before
    copy.close()


# --- a damaged beginning ----------------------------------------------------------------


def schema_pages(database: Path) -> list[int]:
    """The pages of sqlite_schema (page 1 and its children), 0-based."""
    connection = sqlite3.connect(database)
    try:
        rows = connection.execute(
            "SELECT pageno FROM dbstat WHERE name = 'sqlite_schema'"
        ).fetchall()
    finally:
        connection.close()
    return sorted(int(row[0]) - 1 for row in rows)


@pytest.mark.parametrize(
    "damage",
    ["signature", "page size", "signature and page size", "page 1", "the schema"],
)
def test_a_damaged_beginning_is_rebuilt_and_its_rows_read(tmp_path: Path, damage: str) -> None:
    database = fill(tmp_path / "cairn.db", 4, 50)
    if damage == "the schema":
        for page in schema_pages(database):
            damage_pages(database, page, 1)
    with database.open("r+b") as file:
        if "signature" in damage:
            file.write(b"\x00" * 16)
        if "page size" in damage:
            file.seek(16)
            file.write(b"\x00\x00")
        if damage == "page 1":
            file.write(b"\x00" * PAGE)

    notice, recovered = salvaged(database)

    assert recovered == 200, damage
    assert f"Recovered {recovered:,}" in notice
    if damage in ("signature", "page size", "signature and page size"):
        assert "was rebuilt from the rest of it" in notice
    store = SessionStore.open(database)
    try:
        sessions = store.list_sessions()
        assert len(sessions) == 4
        for session in sessions:
            texts = [message.content for message in store.messages(session.id)]
            assert len(texts) == 50 and texts[0].startswith("Message 0 of walk")
    finally:
        store.close()


def test_a_deleted_conversation_stays_deleted_when_pages_are_read(tmp_path: Path) -> None:
    database = fill(tmp_path / "cairn.db", 3, 20)
    store = SessionStore.open(database)
    gone = next(s for s in store.list_sessions() if s.title == "Walk 1")
    store.delete_session(gone.id)
    store.close()
    mark_clean_shutdown(database)
    damage_pages(database, 0, 1)

    salvaged(database)
    store = SessionStore.open(database)
    try:
        titles = sorted(session.title for session in store.list_sessions())
    finally:
        store.close()
    assert "Walk 1" not in titles
    assert "Recovered conversation" not in titles
