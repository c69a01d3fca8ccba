"""Attachment files beside the database and their rows (app/store/attachments.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.attachments import describe
from app.core.errors import StorageError
from app.core.models import Role
from app.store.attachments import AttachmentFiles, AttachmentStore, sha256_of
from app.store.database import open_database
from app.store.sessions import SessionStore
from tests.fakes.sample_files import pdf, png


def test_a_file_is_kept_under_its_sha256_once(tmp_path: Path) -> None:
    files = AttachmentFiles(tmp_path / "cairn.db")
    data = png(8, 8)
    digest = files.put(data)
    assert digest == sha256_of(data)
    assert files.path(digest) == tmp_path / "attachments" / digest[:2] / digest
    assert files.put(data) == digest
    assert files.read(digest) == data
    assert [p.name for p in files.path(digest).parent.iterdir()] == [digest]  # no temp left


def test_a_damaged_or_missing_file_is_said_in_plain_words(tmp_path: Path) -> None:
    files = AttachmentFiles(tmp_path / "cairn.db")
    digest = files.put(b"original")
    files.path(digest).write_bytes(b"changed!")
    with pytest.raises(StorageError, match="damaged"):
        files.read(digest)
    files.path(digest).unlink()
    with pytest.raises(StorageError, match="missing"):
        files.read(digest)


def test_a_full_disk_is_said_and_leaves_nothing_behind(tmp_path: Path) -> None:
    blocked = tmp_path / "attachments"
    blocked.write_text("a file where the folder should be")
    with pytest.raises(StorageError, match="could not keep a copy"):
        AttachmentFiles(tmp_path / "cairn.db").put(b"data")


def test_rows_are_kept_with_their_message_and_go_with_it(tmp_path: Path) -> None:
    database = tmp_path / "cairn.db"
    opened = open_database(database)
    store = SessionStore(opened.connection, database=opened.path)
    session = store.create_session("t", "claude-x")
    message = store.append_message(session.id, Role.USER, "see [attached: a.png, b.pdf]")
    files = [
        describe("a.png", png(30, 20), "a" * 64, len),
        describe("b.pdf", pdf(2), "b" * 64, len),
    ]
    attachments = AttachmentStore.open(database)
    try:
        attachments.add(message.id, files)
        assert attachments.for_messages([message.id, 999]) == {message.id: tuple(files)}
        store.delete_session(session.id)
        assert attachments.for_messages([message.id]) == {}
    finally:
        attachments.close()
        store.close()
