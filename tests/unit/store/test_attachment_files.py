"""Gone means gone (issue 21 item 9): deleting a conversation, or its archived
originals, deletes the attached files no other message uses; the log of a deleted
conversation does not come back with an import of it."""

from __future__ import annotations

from pathlib import Path

from app.core.attachments import describe
from app.core.models import Role
from app.core.summary import SummaryContent, SummaryDraft, SummaryMode, SummaryTier
from app.core.summary import SummaryTrigger as Trigger
from app.store.attachments import AttachmentFiles, AttachmentStore, sha256_of
from app.store.database import open_database
from app.store.export import ExportFormat, export_conversations, import_conversations, read_export
from app.store.originals import OriginalsStore
from app.store.sessions import SessionStore
from app.store.summaries import SummaryStore
from tests.fakes.sample_files import png


def attach(database: Path, store: SessionStore, session_id: str, picture: bytes) -> int:
    digest = AttachmentFiles(database).put(picture)
    message = store.append_message(session_id, Role.USER, "see the picture")
    attachments = AttachmentStore.open(database)
    try:
        attachments.add(message.id, [describe("p.png", picture, digest, len)])
    finally:
        attachments.close()
    return message.id


def test_deleting_a_conversation_deletes_the_files_only_it_used(tmp_path: Path) -> None:
    database = tmp_path / "cairn.db"
    store = SessionStore(open_database(database).connection, database=database)
    mine, shared = png(3, 3, (1, 2, 3)), png(4, 4, (9, 9, 9))
    gone = store.create_session("Gone", "claude-x")
    kept = store.create_session("Kept", "claude-x")
    attach(database, store, gone.id, mine)
    attach(database, store, gone.id, shared)
    attach(database, store, kept.id, shared)
    files = AttachmentFiles(database)

    store.delete_session(gone.id)
    store.close()

    assert not files.path(sha256_of(mine)).exists(), "no other message used it"
    assert files.read(sha256_of(shared)) == shared, "another conversation still uses it"


def test_deleting_archived_originals_deletes_their_files(tmp_path: Path) -> None:
    database = tmp_path / "cairn.db"
    store = SessionStore(open_database(database).connection, database=database)
    session = store.create_session("Walk", "claude-x")
    picture = png(5, 5)
    first = attach(database, store, session.id, picture)
    second = store.append_message(session.id, Role.ASSISTANT, "a heron")
    summaries = SummaryStore.open(database)
    summary = summaries.commit_summary(
        SummaryDraft(
            session_id=session.id,
            tier=SummaryTier.CONDENSED,
            first_seq=1,
            last_seq=2,
            content=SummaryContent(narrative="A heron in a picture."),
            source_tokens=10,
            summary_tokens=5,
            mode=SummaryMode.RULE,
            trigger=Trigger.MANUAL,
            message_ids=[first, second.id],
        )
    )
    summaries.close()
    originals = OriginalsStore.open(database)
    try:
        assert originals.delete_of_summary(summary.id) == 2
    finally:
        originals.close()
        store.close()
    assert not AttachmentFiles(database).path(sha256_of(picture)).exists()


def test_a_deleted_conversations_log_does_not_come_back_with_an_import(tmp_path: Path) -> None:
    database = tmp_path / "cairn.db"
    opened = open_database(database)
    store = SessionStore(opened.connection, database=database)
    session = store.create_session("Roses", "claude-x")
    store.append_message(session.id, Role.USER, "Prune in March?")
    export = tmp_path / "roses.json"
    export_conversations(opened.connection, export, fmt=ExportFormat.JSON, database=database)
    summaries = SummaryStore.open(database)
    events_before = summaries.events(session.id)

    store.delete_session(session.id)
    import_conversations(opened.connection, read_export(export), database=database)

    assert summaries.events(session.id) == events_before, "only the file's own log"
    assert summaries.check_coverage(session.id) == []
    past = summaries.events(f"deleted:{session.id}")
    assert [event.reason for event in past][-1] == "conversation deleted", "the trail stays"
    summaries.close()
    store.close()
