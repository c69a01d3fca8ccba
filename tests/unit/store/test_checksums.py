"""Every message's text and every summary carry a checksum (app/store/checksums.py):
a text the disk altered is found, put back from the newest backup holding it intact,
or marked damaged, never shown as if it were what was written."""

from __future__ import annotations

import sqlite3
from datetime import date
from pathlib import Path

import pytest

from app.core.errors import StorageError
from app.core.models import Role
from app.store import SessionStore, open_database
from app.store.backup import mend_texts, take_daily_backup
from app.store.checksums import Repair, find_altered, text_checksum


@pytest.fixture
def database(tmp_path: Path) -> Path:
    path = tmp_path / "cairn.db"
    opened = open_database(path)
    store = SessionStore(opened.connection, database=path)
    session = store.create_session("Walk", "claude-sonnet-4-6")
    for number in range(5):
        store.append_message(session.id, Role.USER, f"The gate code is {4000 + number}.")
    store.close()
    return path


def alter_on_disk(database: Path, message_id: int, text: str) -> None:
    """What a flipped bit does: the text changes, its checksum does not."""
    connection = sqlite3.connect(database)
    connection.execute("UPDATE message SET content = ? WHERE id = ?", (text, message_id))
    connection.commit()
    connection.close()


def message(database: Path, message_id: int) -> tuple[str, bool]:
    store = SessionStore.open(database)
    try:
        (found,) = store.messages_by_id([message_id])
    finally:
        store.close()
    return found.content, found.damaged


def test_every_stored_text_carries_its_checksum(database: Path) -> None:
    connection = sqlite3.connect(database)
    rows = connection.execute("SELECT content, checksum FROM message").fetchall()
    connection.close()
    assert rows and all(checksum == text_checksum(content) for content, checksum in rows)


def test_an_altered_text_is_put_back_from_the_newest_backup(database: Path) -> None:
    take_daily_backup(database, today=date(2026, 3, 1))
    alter_on_disk(database, 3, "The gate code is 4003.".replace("3.", "8."))

    repair = mend_texts(database)

    assert repair == Repair(restored=1, marked=0, backups=("cairn-2026-03-01.db",))
    assert message(database, 3) == ("The gate code is 4002.", False)
    sentence = repair.sentence()
    assert sentence is not None and "put back as written, from the backup" in sentence


def test_an_altered_text_no_backup_holds_is_marked_never_silently_shown(database: Path) -> None:
    alter_on_disk(database, 2, "The gate code is 9999.")

    repair = mend_texts(database)

    assert repair.marked == 1 and repair.restored == 0
    assert message(database, 2) == ("The gate code is 9999.", True)
    sentence = repair.sentence()
    assert sentence is not None and "marked “damaged”" in sentence
    assert mend_texts(database) == Repair(), "counted once, not at every check"


def test_a_text_written_again_is_no_longer_damaged(database: Path) -> None:
    alter_on_disk(database, 2, "garbled")
    mend_texts(database)
    store = SessionStore.open(database)
    try:
        store.update_message_content(2, "Written again.")
    finally:
        store.close()
    assert message(database, 2) == ("Written again.", False)


def test_rows_without_a_checksum_get_one_and_are_not_altered(database: Path) -> None:
    connection = sqlite3.connect(database)
    connection.execute("UPDATE message SET checksum = NULL WHERE id = 1")
    connection.commit()
    altered = find_altered(connection)
    (checksum,) = connection.execute("SELECT checksum FROM message WHERE id = 1").fetchone()
    connection.close()
    assert altered.count == 0 and altered.unchecked == 1
    assert checksum is not None


def test_a_backup_is_read_back_before_it_is_kept(database: Path) -> None:
    """A copy that does not read back as written is never kept (nor prunes an older one)."""
    alter_on_disk(database, 4, "not what was written")  # not mended first

    with pytest.raises(StorageError, match="did not read back as it was written"):
        take_daily_backup(database, today=date(2026, 3, 2))
    assert not list((database.parent / "backups").glob("cairn-*.db"))
