"""Token estimates in the store: counted once when the final text is stored, back-filled for
old rows, and the live tail read without touching the archive."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.models import MessageStatus, Role
from app.core.tokens import count_tokens
from app.store import SCHEMA_VERSION, SessionStore, connect, open_database
from app.store.migrations import MIGRATIONS, migrate, user_version

MODEL = "claude-sonnet-4-6"


@pytest.fixture
def database(tmp_path: Path) -> Path:
    return tmp_path / "data" / "cairn.db"


@pytest.fixture
def store(database: Path) -> Iterator[SessionStore]:
    result = open_database(database)
    store = SessionStore(result.connection, database=database)
    yield store
    store.close()


def test_a_message_is_counted_when_stored(store: SessionStore) -> None:
    session = store.create_session("t", MODEL)

    counted = store.append_message(session.id, Role.USER, "Where do cairns come from?")
    given = store.append_message(session.id, Role.USER, "Given", token_estimate=99)

    assert counted.token_estimate == count_tokens("Where do cairns come from?")
    assert given.token_estimate == 99
    assert [m.token_estimate for m in store.messages(session.id)] == [counted.token_estimate, 99]


def test_a_streamed_reply_is_counted_when_it_is_finished(store: SessionStore) -> None:
    session = store.create_session("t", MODEL)

    placeholder = store.append_message(
        session.id, Role.ASSISTANT, "", status=MessageStatus.STREAMING
    )
    store.update_message_content(placeholder.id, "Stones piled")
    (streaming,) = store.messages(session.id)
    finished = store.finish_message(
        placeholder.id, "Stones piled by walkers.", MessageStatus.COMPLETE
    )

    assert placeholder.token_estimate is None
    assert streaming.token_estimate is None  # the text is not final yet
    assert finished.token_estimate == count_tokens("Stones piled by walkers.")


def test_a_finished_reply_keeps_a_given_estimate(store: SessionStore) -> None:
    session = store.create_session("t", MODEL)
    placeholder = store.append_message(
        session.id, Role.ASSISTANT, "", status=MessageStatus.STREAMING
    )

    finished = store.finish_message(
        placeholder.id, "Done.", MessageStatus.STOPPED, token_estimate=7
    )

    assert finished.token_estimate == 7


def test_the_counter_can_be_chosen(database: Path) -> None:
    open_database(database).connection.close()
    store = SessionStore.open(database, token_counter=len)
    try:
        session = store.create_session("t", MODEL)
        message = store.append_message(session.id, Role.USER, "twelve chars")
    finally:
        store.close()

    assert message.token_estimate == 12


def test_backfill_counts_old_rows_in_batches(store: SessionStore, database: Path) -> None:
    session = store.create_session("t", MODEL)
    texts = [f"Old message number {n}, from before counts were kept." for n in range(7)]
    for text in texts:
        store.append_message(session.id, Role.USER, text)
    live = store.append_message(session.id, Role.ASSISTANT, "", status=MessageStatus.STREAMING)
    connection = sqlite3.connect(database)
    connection.execute("UPDATE message SET token_estimate = NULL")
    connection.commit()
    connection.close()
    asked: list[str] = []

    def counter(text: str) -> int:
        asked.append(text)
        return count_tokens(text)

    filled = store.backfill_token_estimates(counter, batch=3)

    assert filled == 7
    assert asked == texts  # the streaming reply is left for finish_message
    messages = store.messages(session.id)
    assert [m.token_estimate for m in messages[:-1]] == [count_tokens(t) for t in texts]
    assert messages[-1].id == live.id and messages[-1].token_estimate is None
    assert store.backfill_token_estimates(counter) == 0


def test_backfill_refuses_an_empty_batch(store: SessionStore) -> None:
    with pytest.raises(ValueError):
        store.backfill_token_estimates(count_tokens, batch=0)


def test_a_database_from_before_the_indexes_is_migrated_and_back_filled(database: Path) -> None:
    database.parent.mkdir(parents=True)
    old = sqlite3.connect(database, isolation_level=None)
    migrate(old, MIGRATIONS[:1])
    old.execute(
        "INSERT INTO session (id, title, created_at, updated_at, model, last_seq) "
        "VALUES ('s', 'old', '2025-01-01T00:00:00+00:00', '2025-01-01T00:00:00+00:00', ?, 2)",
        (MODEL,),
    )
    old.executemany(
        "INSERT INTO message (session_id, seq, role, content, created_at) "
        "VALUES ('s', ?, ?, ?, '2025-01-01T00:00:00+00:00')",
        [(1, "user", "An old question"), (2, "assistant", "An old answer")],
    )
    old.close()

    result = open_database(database)
    store = SessionStore(result.connection, database=database)
    try:
        assert user_version(result.connection) == SCHEMA_VERSION
        assert [m.token_estimate for m in store.messages("s")] == [None, None]
        assert store.backfill_token_estimates() == 2
        assert [m.token_estimate for m in store.messages("s")] == [
            count_tokens("An old question"),
            count_tokens("An old answer"),
        ]
    finally:
        store.close()


def test_the_live_tail_leaves_the_archive_out(store: SessionStore, database: Path) -> None:
    session = store.create_session("t", MODEL)
    for n in range(6):
        store.append_message(session.id, (Role.USER, Role.ASSISTANT)[n % 2], f"m{n}")
    connection = sqlite3.connect(database)
    connection.execute("UPDATE message SET summary_id = 'sum-1' WHERE seq <= 4")
    connection.commit()
    connection.close()

    live = store.live_messages(session.id)

    assert [m.content for m in live] == ["m4", "m5"]
    assert store.live_messages("no-such-session") == []


def test_the_live_tail_is_read_through_its_index(database: Path) -> None:
    open_database(database).connection.close()
    connection = connect(database)
    try:
        plan = " ".join(
            str(row[-1])
            for row in connection.execute(
                "EXPLAIN QUERY PLAN SELECT id FROM message "
                "WHERE session_id = ? AND summary_id IS NULL ORDER BY seq",
                ("s",),
            )
        )
        unestimated = " ".join(
            str(row[-1])
            for row in connection.execute(
                "EXPLAIN QUERY PLAN SELECT id FROM message WHERE token_estimate IS NULL "
                "AND status != 'streaming' AND id > 0 ORDER BY id LIMIT 500"
            )
        )
    finally:
        connection.close()

    assert "message_live" in plan
    assert "message_unestimated" in unestimated
