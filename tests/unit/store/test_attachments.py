"""Attachment files beside the database and their rows (app/store/attachments.py)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import jsonschema
import pytest

from app.core.attachments import describe
from app.core.errors import StorageError
from app.core.models import Role
from app.store.attachments import AttachmentFiles, AttachmentStore, sha256_of
from app.store.database import open_database
from app.store.export import (
    ExportFormat,
    ImportRefusedError,
    export_conversations,
    import_conversations,
    read_export,
)
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
    blocked.write_text("a file where the folder should be", encoding="utf-8")
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


def test_export_names_the_files_and_import_keeps_them(tmp_path: Path) -> None:
    database = tmp_path / "cairn.db"
    opened = open_database(database)
    store = SessionStore(opened.connection, database=opened.path)
    session = store.create_session("Photos", "claude-x")
    message = store.append_message(session.id, Role.USER, "Look\n\n[attached: cat.png]")
    picture = describe("cat.png", png(30, 20), sha256_of(png(30, 20)), len)
    attachments = AttachmentStore.open(database)
    try:
        attachments.add(message.id, [picture])
    finally:
        attachments.close()

    target = tmp_path / "export.json"
    export_conversations(opened.connection, target, fmt=ExportFormat.JSON)
    exported = json.loads(target.read_text(encoding="utf-8"))
    schema = json.loads(
        (Path(__file__).parents[3] / "resources" / "export-schema.json").read_text(encoding="utf-8")
    )
    jsonschema.Draft202012Validator(schema).validate(exported)
    record = exported["conversations"][0]
    assert record["attachments"] == [
        {
            "message_seq": 1,
            "ordinal": 1,
            "name": "cat.png",
            "media_type": "image/png",
            "kind": "image",
            "size": picture.size,
            "sha256": picture.sha256,
            "tokens": picture.tokens,
            "estimated": False,
            "width": 30,
            "height": 20,
            "pages": 0,
            "file": f"attachments/{picture.sha256[:2]}/{picture.sha256}",
        }
    ]
    markdown = tmp_path / "export.md"
    export_conversations(opened.connection, markdown, fmt=ExportFormat.MARKDOWN)
    assert "[attached: cat.png]" in markdown.read_text(encoding="utf-8")

    imported = import_conversations(opened.connection, read_export(target), as_copy=True)
    (copy_id,) = imported.session_ids
    (copied,) = store.messages(copy_id)
    again = AttachmentStore.open(database)
    try:
        assert again.for_messages([copied.id]) == {copied.id: (picture,)}
    finally:
        again.close()
        store.close()


def test_the_export_carries_the_files_to_another_computer(tmp_path: Path) -> None:
    database = tmp_path / "here" / "cairn.db"
    database.parent.mkdir()
    opened = open_database(database)
    store = SessionStore(opened.connection, database=opened.path)
    session = store.create_session("Photos", "claude-x")
    message = store.append_message(session.id, Role.USER, "Look\n\n[attached: cat.png]")
    data = png(30, 20)
    picture = describe("cat.png", data, AttachmentFiles(database).put(data), len)
    attachments = AttachmentStore.open(database)
    try:
        attachments.add(message.id, [picture])
    finally:
        attachments.close()
    target = tmp_path / "export.json"
    export_conversations(opened.connection, target, fmt=ExportFormat.JSON, database=database)
    store.close()
    exported = json.loads(target.read_text(encoding="utf-8"))
    schema = json.loads(
        (Path(__file__).parents[3] / "resources" / "export-schema.json").read_text(encoding="utf-8")
    )
    jsonschema.Draft202012Validator(schema).validate(exported)
    (record,) = exported["conversations"][0]["attachments"]
    assert base64.b64decode(record["data"]) == data

    elsewhere = tmp_path / "there" / "cairn.db"
    elsewhere.parent.mkdir()
    other = open_database(elsewhere)
    import_conversations(other.connection, read_export(target), database=elsewhere)
    assert AttachmentFiles(elsewhere).read(picture.sha256) == data

    record["data"] = base64.b64encode(png(31, 20)).decode()
    target.write_text(json.dumps(exported), encoding="utf-8")
    with pytest.raises(ImportRefusedError, match="does not match its sha256"):
        read_export(target)
    other.connection.close()
