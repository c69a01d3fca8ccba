"""Backups keep the attached files too (issue 21 item 9): a restore brings back a
conversation whose files were deleted since, and files no backup names are pruned."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from app.core.attachments import describe
from app.core.models import Role
from app.store.attachments import AttachmentFiles, AttachmentStore, sha256_of
from app.store.backup import list_backups, restore, take_daily_backup
from app.store.backup_files import backup_files
from app.store.database import mark_clean_shutdown, open_database
from app.store.sessions import SessionStore
from tests.fakes.sample_files import png


def conversation_with_a_picture(database: Path, picture: bytes) -> str:
    opened = open_database(database)
    store = SessionStore(opened.connection, database=database)
    session = store.create_session("Holiday", "claude-x")
    message = store.append_message(session.id, Role.USER, "our tent")
    digest = AttachmentFiles(database).put(picture)
    attachments = AttachmentStore.open(database)
    attachments.add(message.id, [describe("tent.png", picture, digest, len)])
    attachments.close()
    store.close()
    mark_clean_shutdown(database)
    return session.id


def test_a_restore_brings_back_the_files_deleted_since(tmp_path: Path) -> None:
    database = tmp_path / "cairn.db"
    picture = png(6, 6)
    session_id = conversation_with_a_picture(database, picture)
    backup = take_daily_backup(database, today=date(2026, 3, 1))
    assert backup is not None
    assert backup_files(backup.parent).read(sha256_of(picture)) == picture

    store = SessionStore.open(database)
    store.delete_session(session_id)
    store.close()
    assert not AttachmentFiles(database).path(sha256_of(picture)).exists()

    shares: list[float] = []
    assert restore(database, backup, progressed=shares.append) is not None

    assert AttachmentFiles(database).read(sha256_of(picture)) == picture
    assert shares[0] == 0.0 and shares[-1] == 1.0 and shares == sorted(shares)


def test_files_no_backup_names_are_pruned(tmp_path: Path) -> None:
    database = tmp_path / "cairn.db"
    picture = png(7, 7)
    session_id = conversation_with_a_picture(database, picture)
    first = take_daily_backup(database, today=date(2026, 3, 1))
    assert first is not None
    store = SessionStore.open(database)
    store.delete_session(session_id)
    store.close()
    for day in range(2, 10):  # a week of backups without it: the first is pruned
        take_daily_backup(database, today=date(2026, 3, day))

    assert first not in [info.path for info in list_backups(database)]
    assert not backup_files(first.parent).path(sha256_of(picture)).exists()


def test_a_cancelled_restore_leaves_everything_as_it_was(tmp_path: Path) -> None:
    database = tmp_path / "cairn.db"
    conversation_with_a_picture(database, png(3, 3))
    backup = take_daily_backup(database, today=date(2026, 3, 1))
    assert backup is not None
    before = database.read_bytes()
    calls = [0]

    def cancel_after_a_few() -> bool:
        calls[0] += 1
        return calls[0] > 2

    assert restore(database, backup, cancelled=cancel_after_a_few) is None
    assert database.read_bytes() == before
    assert [info.path for info in list_backups(database)] == [backup]
    assert not list(backup.parent.glob(".restore-*"))
