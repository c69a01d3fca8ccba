"""Summaries on a real disk: a schema-2 database migrates to 3 keeping everything,
and a worker thread commits a summary while the GUI thread keeps writing."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from app.core.errors import SummaryConflictError
from app.core.models import Message, MessageStatus, Role, Usage
from app.core.paths import AppPaths
from app.core.summary import (
    Summary,
    SummaryContent,
    SummaryDraft,
    SummaryMode,
    SummaryTier,
    SummaryTrigger,
)
from app.store import SCHEMA_VERSION, SessionStore, SummaryStore, open_database
from app.store.backfill import index_pending, run_backfills
from app.store.migrations import MIGRATIONS, migrate, user_version

MODEL = "claude-sonnet-4-5"
STAMP = "2025-01-01T00:00:00.000000+00:00"


@pytest.fixture
def database() -> Path:
    return AppPaths.from_environment().database


def draft_for(messages: list[Message]) -> SummaryDraft:
    return SummaryDraft(
        session_id=messages[0].session_id,
        tier=SummaryTier.CONDENSED,
        first_seq=messages[0].seq,
        last_seq=messages[-1].seq,
        message_ids=[m.id for m in messages],
        content=SummaryContent(narrative="earlier talk"),
        source_tokens=sum(m.token_estimate or 0 for m in messages),
        summary_tokens=3,
        mode=SummaryMode.RULE,
        trigger=SummaryTrigger.AUTO,
    )


def test_a_schema_2_database_migrates_keeping_everything(database: Path) -> None:
    database.parent.mkdir(parents=True)
    old = sqlite3.connect(database, isolation_level=None)
    migrate(old, MIGRATIONS[:2])
    old.executemany(
        "INSERT INTO session (id, title, created_at, updated_at, model, system_prompt, "
        "version, last_seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
            ("a", "Trip 🧭", STAMP, STAMP, MODEL, "Be brief.", 7, 5),  # seq 3 was deleted
            ("b", "Other", STAMP, STAMP, MODEL, "", 1, 1),
        ],
    )
    usage = Usage(input_tokens=9, output_tokens=4).model_dump_json()
    rows = [
        (10, "a", 1, "user", "Where to?", 3, None, None, "complete"),
        (11, "a", 2, "assistant", "Lisbon.", 2, usage, MODEL, "complete"),
        (14, "a", 4, "user", "When?", None, None, None, "complete"),
        (15, "a", 5, "assistant", "Mar", None, None, MODEL, "streaming"),
        (20, "b", 1, "user", "hi \x00 שלום", 4, None, None, "complete"),
    ]
    old.executemany(
        "INSERT INTO message (id, session_id, seq, role, content, token_estimate, usage, "
        f"model, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, '{STAMP}')",
        rows,
    )
    before = old.execute("SELECT * FROM message ORDER BY id").fetchall()
    old.close()

    result = open_database(database)
    sessions = SessionStore(result.connection, database=database)
    summaries = SummaryStore.open(database)
    try:
        connection = result.connection
        assert user_version(connection) == SCHEMA_VERSION
        found = "SELECT rowid FROM message_fts WHERE message_fts MATCH ?"
        # The messages are indexed after the first paint (app.store.backfill).
        assert index_pending(connection)
        assert run_backfills(database)
        assert connection.execute(found, ("lisbon",)).fetchall() == [(11,)]  # back-filled
        after = connection.execute(
            "SELECT id, session_id, seq, role, content, created_at, token_estimate, usage, "
            "model, status, summary_id FROM message ORDER BY id"
        ).fetchall()
        assert sorted(after) == sorted(before)
        assert connection.execute("SELECT DISTINCT pinned FROM message").fetchall() == [(0,)]
        assert connection.execute("PRAGMA foreign_key_check").fetchall() == []
        assert connection.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        indexes = {
            name
            for (name,) in connection.execute(
                "SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'message'"
            )
        }
        assert {
            "message_by_session_seq",
            "message_streaming",
            "message_live",
            "message_unestimated",
            "message_by_summary",
        } <= indexes

        session = sessions.get_session("a")
        assert session is not None and session.version == 7
        assert [m.seq for m in sessions.live_messages("a")] == [1, 2, 4, 5]
        assert sessions.messages("a")[1].usage == Usage(input_tokens=9, output_tokens=4)
        assert sessions.trigger_state("a") is None, "migration 4 adds an empty trigger state"
        assert sessions.append_message("a", Role.USER, "next").seq == 6  # never reused
        assert sessions.recover_interrupted() == 1
        assert sessions.backfill_token_estimates() == 2

        summary = summaries.commit_summary(draft_for(sessions.messages("a")[:3]))
        assert [m.seq for m in summaries.covered_messages(summary.id)] == [1, 2, 4]
        assert summaries.check_coverage("a") == []
        assert summaries.check_coverage("b") == []
    finally:
        summaries.close()
        sessions.close()


def test_a_worker_commits_while_the_gui_appends(database: Path) -> None:
    result = open_database(database)
    gui = SessionStore(result.connection, database=database)
    session = gui.create_session("busy", MODEL)
    for n in range(8):
        gui.append_message(session.id, (Role.USER, Role.ASSISTANT)[n % 2], f"m{n}")

    planned, appended = threading.Event(), threading.Event()
    outcome: list[Summary | BaseException] = []

    def worker() -> None:
        store = SummaryStore.open(database)  # its own connection, on its own thread
        try:
            draft = draft_for(store.live_messages(session.id)[:6])
            planned.set()
            appended.wait(timeout=30)
            outcome.append(store.commit_summary(draft))
        except BaseException as error:
            outcome.append(error)
        finally:
            store.close()

    thread = threading.Thread(target=worker)
    thread.start()
    try:
        assert planned.wait(timeout=30)
        late = gui.append_message(session.id, Role.USER, "sent while condensing")
        appended.set()
    finally:
        thread.join(timeout=30)
    assert not thread.is_alive()

    [summary] = outcome
    assert isinstance(summary, Summary)
    summaries = SummaryStore(result.connection, database=database)
    assert [m.seq for m in summaries.live_messages(session.id)] == [7, 8, late.seq]
    assert summaries.check_coverage(session.id) == []
    after = gui.get_session(session.id)
    assert after is not None and after.version == session.version + 8 + 1 + 1
    gui.close()


def test_a_worker_commit_conflicts_when_the_gui_pins_a_covered_message(database: Path) -> None:
    result = open_database(database)
    gui = SessionStore(result.connection, database=database)
    session = gui.create_session("busy", MODEL)
    messages = [gui.append_message(session.id, Role.USER, f"m{n}") for n in range(4)]

    planned, pinned = threading.Event(), threading.Event()
    outcome: list[object] = []

    def worker() -> None:
        store = SummaryStore.open(database)
        try:
            draft = draft_for(store.live_messages(session.id))
            planned.set()
            pinned.wait(timeout=30)
            outcome.append(store.commit_summary(draft))
        except BaseException as error:
            outcome.append(error)
        finally:
            store.close()

    thread = threading.Thread(target=worker)
    thread.start()
    try:
        assert planned.wait(timeout=30)
        gui.set_pinned(messages[2].id, True)
        pinned.set()
    finally:
        thread.join(timeout=30)

    [error] = outcome
    assert isinstance(error, SummaryConflictError)
    assert [m.status for m in gui.live_messages(session.id)] == [MessageStatus.COMPLETE] * 4
    assert all(m.summary_id is None for m in gui.messages(session.id))
    gui.close()
