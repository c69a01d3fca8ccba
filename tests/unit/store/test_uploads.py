"""Which files a server holds, by `file_id`, and which to delete (app/store/uploads.py,
migration 11): a file's uploads are marked for deletion when the last message with it
goes, whichever way it goes."""

from __future__ import annotations

from pathlib import Path

from app.core.attachments import Attachment, describe
from app.core.models import Role
from app.store.attachments import AttachmentStore, sha256_of
from app.store.database import open_database
from app.store.originals import OriginalsStore
from app.store.sessions import SessionStore
from app.store.summaries import SummaryStore
from app.store.uploads import UploadStore
from tests.fakes.clock import FakeClock
from tests.fakes.sample_files import png
from tests.unit.store.test_summaries import condensed, conversation

SERVER = "https://api.anthropic.com key:0123456789abcdef"
OTHER = "http://127.0.0.1:8765 key:fedcba9876543210"


def picture(seed: int) -> Attachment:
    data = png(8, 8 + seed)
    return describe(f"p{seed}.png", data, sha256_of(data), len)


def stores(database: Path, clock: FakeClock) -> tuple[SessionStore, AttachmentStore, UploadStore]:
    opened = open_database(database)
    sessions = SessionStore(opened.connection, database=database, clock=clock)
    return sessions, AttachmentStore.open(database), UploadStore.open(database, clock=clock)


def message_with(
    sessions: SessionStore, files: AttachmentStore, session_id: str, *a: Attachment
) -> int:
    message = sessions.append_message(session_id, Role.USER, "look")
    files.add(message.id, a)
    return message.id


def test_an_upload_is_found_per_server_until_forgotten(database: Path, clock: FakeClock) -> None:
    sessions, files, uploads = stores(database, clock)
    one = picture(1)
    session = sessions.create_session("A", "claude-sonnet-5-5")
    message_with(sessions, files, session.id, one)
    uploads.record(SERVER, one.sha256, "file_a")
    assert uploads.file_ids(SERVER, [one.sha256, picture(2).sha256]) == {one.sha256: "file_a"}
    assert uploads.file_ids(OTHER, [one.sha256]) == {}
    uploads.forget(SERVER, ["file_a"])
    assert uploads.file_ids(SERVER, [one.sha256]) == {}
    assert uploads.to_delete(SERVER) == []


def test_deleting_the_conversation_marks_only_files_no_message_has(
    database: Path, clock: FakeClock
) -> None:
    sessions, files, uploads = stores(database, clock)
    only, shared = picture(1), picture(2)
    gone = sessions.create_session("Gone", "claude-sonnet-5-5")
    kept = sessions.create_session("Kept", "claude-sonnet-5-5")
    message_with(sessions, files, gone.id, only, shared)
    message_with(sessions, files, kept.id, shared)
    uploads.record(SERVER, only.sha256, "file_only")
    uploads.record(OTHER, only.sha256, "file_only_there")
    uploads.record(SERVER, shared.sha256, "file_shared")

    sessions.delete_session(gone.id)
    assert uploads.to_delete(SERVER) == ["file_only"]
    assert uploads.to_delete(OTHER) == ["file_only_there"]
    assert uploads.file_ids(SERVER, [only.sha256, shared.sha256]) == {shared.sha256: "file_shared"}
    uploads.deleted(SERVER, ["file_only"])
    assert uploads.to_delete(SERVER) == []


def test_deleting_a_summarys_originals_marks_their_files(database: Path, clock: FakeClock) -> None:
    sessions, files, uploads = stores(database, clock)
    one = picture(1)
    session_id, messages = conversation(sessions, 6)
    files.add(messages[0].id, [one])
    uploads.record(SERVER, one.sha256, "file_a")
    summaries = SummaryStore.open(database, clock=clock)
    originals = OriginalsStore.open(database, clock=clock)
    try:
        summary = summaries.commit_summary(condensed(messages[:4]))
        assert uploads.to_delete(SERVER) == []  # archived, not deleted: still the message's
        assert originals.delete_of_summary(summary.id) == 4
    finally:
        summaries.close()
        originals.close()
    assert uploads.to_delete(SERVER) == ["file_a"]
    assert session_id


def test_a_file_attached_again_before_its_deletion_is_kept(
    database: Path, clock: FakeClock
) -> None:
    sessions, files, uploads = stores(database, clock)
    one = picture(1)
    first = sessions.create_session("A", "claude-sonnet-5-5")
    message_with(sessions, files, first.id, one)
    uploads.record(SERVER, one.sha256, "file_a")
    sessions.delete_session(first.id)
    assert uploads.to_delete(SERVER) == ["file_a"]

    second = sessions.create_session("B", "claude-sonnet-5-5")
    message_with(sessions, files, second.id, one)
    assert uploads.to_delete(SERVER) == []
    assert uploads.file_ids(SERVER, [one.sha256]) == {one.sha256: "file_a"}
    uploads.deleted(SERVER, ["file_a"])  # a deletion that raced it keeps the row
    assert uploads.file_ids(SERVER, [one.sha256]) == {one.sha256: "file_a"}


def test_an_upload_recorded_after_its_message_went_is_to_be_deleted(
    database: Path, clock: FakeClock
) -> None:
    _sessions, _files, uploads = stores(database, clock)
    uploads.record(SERVER, picture(1).sha256, "file_late")
    assert uploads.to_delete(SERVER) == ["file_late"]


def test_what_a_server_offers_is_remembered(database: Path, clock: FakeClock) -> None:
    _sessions, _files, uploads = stores(database, clock)
    assert uploads.support(SERVER) is None
    uploads.set_support(SERVER, "beta")
    uploads.set_support(OTHER, "none")
    found = uploads.support(SERVER)
    assert found is not None and found.support == "beta"
    assert found.checked_at.startswith(str(clock().year))
    other = uploads.support(OTHER)
    assert other is not None and other.support == "none"
