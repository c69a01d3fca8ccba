"""The service's safekeeping (app/chat/backups.py): the daily backup, restore, deleting
originals, against a real SQLite file and the fake server."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import date

from app.chat.backups import BUSY_MESSAGE
from app.store.backup import backup_folder, daily_name
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.unit.chat.conftest import Chat

StartChat = Callable[..., Chat]


def titles_in(path: object) -> list[str]:
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return sorted(str(row[0]) for row in connection.execute("SELECT title FROM session"))
    finally:
        connection.close()


def started(start_chat: StartChat) -> Chat:
    """A service once its start-up backup is written."""
    chat = start_chat()
    chat.run_until(lambda: bool(chat.service.backups.list()))
    chat.run_until(lambda: chat.service.runner.running == 0)
    return chat


def test_a_backup_is_taken_after_start_up_once_a_day(start_chat: StartChat) -> None:
    chat = started(start_chat)
    folder = backup_folder(chat.paths.database)
    assert [p.name for p in folder.iterdir()] == [daily_name(date.today())]
    chat.send("Hello")
    chat.service.shutdown()

    again = start_chat()
    again.run_until(lambda: again.service.runner.running == 0)

    assert [info.path.name for info in again.service.backups.list()] == [daily_name(date.today())]
    assert not again.events.named("notice_raised")


def test_a_failed_backup_is_said_once_quietly_and_loses_nothing(start_chat: StartChat) -> None:
    first = started(start_chat)
    first.send("Keep this")
    first.service.shutdown()
    folder = backup_folder(first.paths.database)
    for path in folder.iterdir():
        path.unlink()
    folder.rmdir()
    folder.write_text("not a folder", encoding="utf-8")

    chat = start_chat()
    chat.run_until(lambda: bool(chat.events.named("notice_raised")))
    chat.service.backups.start_daily()  # tried again: not said twice
    chat.run_until(lambda: chat.service.runner.running == 0)

    notices = chat.events.named("notice_raised")
    assert len(notices) == 1
    title, text = notices[0]
    assert title == "Backup not made" and "conversations are safe" in text
    assert [m.content for m in chat.stored()][:1] == ["Keep this"]


def test_restore_round_trip(start_chat: StartChat) -> None:
    chat = started(start_chat)
    chat.send("Before the backup")
    kept = chat.service.current.state.session
    assert kept is not None
    # Today's backup was taken at start-up, before anything was said: take a fresh one.
    (today,) = chat.service.backups.list()
    today.path.unlink()
    chat.service.backups.start_daily()
    chat.run_until(lambda: chat.service.runner.running == 0)
    chat.service.new_conversation()
    chat.send("Written after the backup")
    (backup,) = chat.service.backups.list()
    chat.events.clear()

    assert chat.service.backups.restore(backup.path)
    chat.run_until(lambda: bool(chat.events.named("notice_raised")))

    (title, text), *_ = chat.events.named("notice_raised")
    assert title == "Backup restored" and "cairn-before-restore-" in text
    listed, current_id = chat.events.named("sessions_listed")[-1]
    assert [s.id for s in listed] == [kept.id] and current_id == kept.id
    assert chat.stored()[0].content == "Before the backup"
    before = next(info for info in chat.service.backups.list() if info.before_restore)
    assert len(titles_in(before.path)) == 2
    # The restored conversation goes on.
    chat.send("After the restore")
    assert chat.stored()[-2].content == "After the restore"


def test_restore_waits_for_a_reply_to_finish(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = started(start_chat)
    (backup,) = chat.service.backups.list()
    pieces = [f"word{i} " for i in range(100)]
    fake_server.add_reply("".join(pieces), chunks=pieces, chunk_delay=0.02)
    assert chat.service.send("Tell me a long story")

    assert not chat.service.backups.restore(backup.path)

    (error,) = chat.events.named("error_raised")[-1]
    assert error.message == BUSY_MESSAGE
    assert error.message.startswith("Wait for Claude's reply to finish")
    chat.idle()
    assert chat.stored()[-1].content == "".join(pieces)


def test_deleting_a_summarys_originals_then_undo_is_refused(start_chat: StartChat) -> None:
    chat = start_chat()
    for turn in range(8):
        chat.send(f"Question {turn}")
    assert chat.service.current.condensing.summarize()
    chat.idle()
    (summary,) = chat.service.current.state.summaries
    session_id = chat.service.current.state.session_id
    assert session_id is not None
    covered = summary.last_seq - summary.first_seq + 1
    assert chat.service.backups.count_originals(summary.id) == covered
    assert chat.service.backups.count_archived(session_id) == covered
    chat.events.clear()

    chat.service.backups.delete_originals(session_id, summary.id)
    chat.run_until(lambda: bool(chat.events.named("notice_raised")))

    (title, text) = chat.events.named("notice_raised")[0]
    assert title == "Original messages deleted" and f"Deleted {covered} original" in text
    assert chat.events.named("summaries_changed")[-1] == ((summary,),)
    assert chat.service.archive.originals(summary.id) == []
    assert chat.service.backups.originals_deleted_on(summary.id) is not None
    history = chat.service.summary_history()
    assert history[-1].event.kind.value == "delete_originals"
    assert history[-1].event.detail == f"{covered} messages"
    chat.service.current.condensing.undo(summary.id)
    chat.run_until(lambda: bool(chat.events.named("error_raised")))
    (error,) = chat.events.named("error_raised")[0]
    assert "nothing to put back" in error.message
    assert chat.service.current.state.summaries == [summary]
    reader = chat.summaries()
    try:
        assert reader.check_coverage(session_id) == []
    finally:
        reader.close()
