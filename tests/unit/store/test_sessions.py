"""SessionStore: conversations, messages, paging, recovery, and failures in plain words."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.errors import BugError, InvalidInputError, StorageError
from app.core.live_tail import TailEntry, tally_entries, tally_messages
from app.core.models import MessageStatus, Role, Usage
from app.core.tokens import count_tokens
from app.store import (
    MessageNotFoundError,
    SessionNotFoundError,
    SessionStore,
    connect,
    open_database,
)
from tests.fakes.clock import FakeClock

MODEL = "claude-sonnet-4-5"


# --- sessions ------------------------------------------------------------------


def test_create_and_get_session(store: SessionStore, clock: FakeClock) -> None:
    session = store.create_session("Trip to Lisbon", MODEL, system_prompt="Be brief.")
    assert session.title == "Trip to Lisbon"
    assert session.model == MODEL
    assert session.system_prompt == "Be brief."
    assert session.version == 0
    assert session.created_at == session.updated_at == clock.now
    assert session.created_at.tzinfo is not None
    assert store.get_session(session.id) == session


def test_get_missing_session_is_none(store: SessionStore) -> None:
    assert store.get_session("no-such-session") is None


def test_list_sessions_newest_activity_first(store: SessionStore, clock: FakeClock) -> None:
    first = store.create_session("first", MODEL)
    clock.advance()
    second = store.create_session("second", MODEL)
    clock.advance()
    third = store.create_session("third", MODEL)
    assert [s.id for s in store.list_sessions()] == [third.id, second.id, first.id]
    clock.advance()
    store.append_message(first.id, Role.USER, "back to this one")
    assert [s.id for s in store.list_sessions()] == [first.id, third.id, second.id]


def test_sessions_created_in_the_same_instant_list_newest_first(store: SessionStore) -> None:
    ids = [store.create_session(f"s{n}", MODEL).id for n in range(3)]
    assert [s.id for s in store.list_sessions()] == ids[::-1]


def test_rename_bumps_version_but_keeps_the_place_in_the_list(
    store: SessionStore, clock: FakeClock
) -> None:
    session = store.create_session("old", MODEL)
    clock.advance()
    renamed = store.rename_session(session.id, "new")
    assert renamed.title == "new"
    assert renamed.version == session.version + 1
    assert renamed.updated_at == session.updated_at
    assert store.get_session(session.id) == renamed


def test_set_session_model(store: SessionStore) -> None:
    session = store.create_session("t", MODEL)
    changed = store.set_session_model(session.id, "claude-haiku-4-5")
    assert changed.model == "claude-haiku-4-5"
    assert changed.version == 1


@pytest.mark.parametrize(
    "call",
    [
        lambda store: store.rename_session("missing", "x"),
        lambda store: store.set_session_model("missing", "x"),
        lambda store: store.delete_session("missing"),
        lambda store: store.append_message("missing", Role.USER, "hi"),
    ],
)
def test_missing_session_raises_a_lookup_error(
    store: SessionStore, call: Callable[[SessionStore], object]
) -> None:
    with pytest.raises(SessionNotFoundError) as caught:
        call(store)
    assert isinstance(caught.value, LookupError)
    assert isinstance(caught.value, BugError)


def test_delete_session_deletes_its_messages(store: SessionStore, raw: sqlite3.Connection) -> None:
    doomed = store.create_session("doomed", MODEL)
    kept = store.create_session("kept", MODEL)
    for n in range(3):
        store.append_message(doomed.id, Role.USER, f"m{n}")
    store.append_message(kept.id, Role.USER, "stay")
    store.delete_session(doomed.id)
    assert store.get_session(doomed.id) is None
    assert raw.execute(
        "SELECT count(*) FROM message WHERE session_id = ?", (doomed.id,)
    ).fetchone() == (0,)
    assert store.count_messages(kept.id) == 1


# --- messages ------------------------------------------------------------------


def test_append_assigns_seq_and_bumps_the_session(store: SessionStore, clock: FakeClock) -> None:
    session = store.create_session("t", MODEL)
    clock.advance(5)
    usage = Usage(input_tokens=12, output_tokens=34, cache_read_input_tokens=5)
    first = store.append_message(session.id, Role.USER, "hello", token_estimate=2)
    second = store.append_message(
        session.id, Role.ASSISTANT, "hi!", model=MODEL, usage=usage, token_estimate=3
    )
    assert (first.seq, second.seq) == (1, 2)
    assert first.created_at == clock.now
    updated = store.get_session(session.id)
    assert updated is not None
    assert updated.version == 2
    assert updated.updated_at == clock.now
    assert store.messages(session.id) == [first, second]
    assert store.messages(session.id)[1].usage == usage


def test_a_failed_append_leaves_nothing_behind(store: SessionStore) -> None:
    session = store.create_session("t", MODEL)
    with pytest.raises(InvalidInputError):
        store.append_message(session.id, Role.USER, "half an emoji \ud83d")
    assert store.count_messages(session.id) == 0
    after = store.get_session(session.id)
    assert after is not None and after.version == 0
    assert store.append_message(session.id, Role.USER, "whole").seq == 1


def test_a_question_and_its_reply_row_are_added_together(
    store: SessionStore, clock: FakeClock
) -> None:
    session = store.create_session("t", MODEL)
    clock.advance(5)
    question, reply = store.append_question(session.id, "hello", token_estimate=2, model=MODEL)
    assert (question.seq, reply.seq) == (1, 2)
    assert (question.role, question.status, question.token_estimate) == (
        Role.USER,
        MessageStatus.COMPLETE,
        2,
    )
    assert (reply.role, reply.status, reply.content, reply.model) == (
        Role.ASSISTANT,
        MessageStatus.STREAMING,
        "",
        MODEL,
    )
    assert store.messages(session.id) == [question, reply]
    updated = store.get_session(session.id)
    assert updated is not None and updated.version == 2 and updated.updated_at == clock.now


def test_a_failed_question_leaves_neither_row(store: SessionStore) -> None:
    session = store.create_session("t", MODEL)
    with pytest.raises(InvalidInputError):
        store.append_question(session.id, "half an emoji \ud83d", token_estimate=3, model=MODEL)
    assert store.count_messages(session.id) == 0
    with pytest.raises(SessionNotFoundError):
        store.append_question("gone", "hello", token_estimate=2, model=MODEL)


def test_seq_is_never_reused_after_deletes(store: SessionStore, raw: sqlite3.Connection) -> None:
    session = store.create_session("t", MODEL)
    for n in range(3):
        store.append_message(session.id, Role.USER, f"m{n}")
    # Deleting archived originals is a later issue's explicit user action.
    raw.execute("DELETE FROM message WHERE session_id = ? AND seq >= 2", (session.id,))
    assert store.append_message(session.id, Role.USER, "next").seq == 4


def test_seq_is_per_session(store: SessionStore) -> None:
    one = store.create_session("one", MODEL)
    two = store.create_session("two", MODEL)
    store.append_message(one.id, Role.USER, "a")
    store.append_message(one.id, Role.USER, "b")
    assert store.append_message(two.id, Role.USER, "c").seq == 1


def test_streamed_text_is_saved_without_bumping_the_version(store: SessionStore) -> None:
    session = store.create_session("t", MODEL)
    store.append_message(session.id, Role.USER, "question")
    reply = store.append_message(session.id, Role.ASSISTANT, "", status=MessageStatus.STREAMING)
    version = store.get_session(session.id).version  # type: ignore[union-attr]
    store.update_message_content(reply.id, "Once upon")
    store.update_message_content(reply.id, "Once upon a time")
    saved = store.messages(session.id)[-1]
    assert saved.content == "Once upon a time"
    assert saved.status is MessageStatus.STREAMING
    assert store.get_session(session.id).version == version  # type: ignore[union-attr]


def test_finish_message(store: SessionStore, clock: FakeClock) -> None:
    session = store.create_session("t", MODEL)
    reply = store.append_message(
        session.id, Role.ASSISTANT, "", status=MessageStatus.STREAMING, model=MODEL
    )
    clock.advance(3)
    usage = Usage(input_tokens=10, output_tokens=20)
    finished = store.finish_message(reply.id, "The end.", MessageStatus.COMPLETE, usage=usage)
    assert finished.content == "The end."
    assert finished.status is MessageStatus.COMPLETE
    assert finished.usage == usage
    assert finished.model == MODEL  # kept: None means "not reported"
    assert finished.seq == reply.seq
    assert store.messages(session.id) == [finished]
    after = store.get_session(session.id)
    assert after is not None
    assert after.version == 2
    assert after.updated_at == clock.now
    stopped = store.finish_message(reply.id, "The e", MessageStatus.STOPPED, model="other")
    assert stopped.usage == usage
    assert stopped.model == "other"


def test_finish_message_needs_a_final_status(store: SessionStore) -> None:
    session = store.create_session("t", MODEL)
    reply = store.append_message(session.id, Role.ASSISTANT, "", status=MessageStatus.STREAMING)
    with pytest.raises(ValueError, match="final status"):
        store.finish_message(reply.id, "x", MessageStatus.STREAMING)


def test_missing_message_raises_a_lookup_error(store: SessionStore) -> None:
    with pytest.raises(MessageNotFoundError):
        store.update_message_content(12345, "x")
    with pytest.raises(MessageNotFoundError):
        store.finish_message(12345, "x", MessageStatus.COMPLETE)


def test_recover_interrupted_stops_streaming_replies(store: SessionStore) -> None:
    one = store.create_session("one", MODEL)
    two = store.create_session("two", MODEL)
    done = store.append_message(one.id, Role.ASSISTANT, "complete")
    cut_one = store.append_message(one.id, Role.ASSISTANT, "", status=MessageStatus.STREAMING)
    question = store.append_message(two.id, Role.USER, "Anyone there?")
    cut_two = store.append_message(two.id, Role.ASSISTANT, "", status=MessageStatus.STREAMING)
    store.update_message_content(cut_one.id, "half a rep")
    store.update_message_content(cut_two.id, " \n\t")
    versions = [store.get_session(s.id).version for s in (one, two)]  # type: ignore[union-attr]
    assert store.recover_interrupted() == 1
    by_id = {m.id: m for m in store.messages(one.id) + store.messages(two.id)}
    assert by_id[cut_one.id].status is MessageStatus.STOPPED
    assert by_id[cut_one.id].content == "half a rep"
    assert by_id[done.id].status is MessageStatus.COMPLETE
    # Nothing had arrived: no empty reply row; the question is left to be asked again.
    assert cut_two.id not in by_id
    assert [m.id for m in store.messages(two.id)] == [question.id]
    after = [store.get_session(s.id).version for s in (one, two)]  # type: ignore[union-attr]
    assert after == [v + 1 for v in versions]
    assert store.recover_interrupted() == 0


# --- paging ------------------------------------------------------------------------


def test_messages_page_backwards_in_ascending_order(store: SessionStore) -> None:
    session = store.create_session("long", MODEL)
    for n in range(1, 26):
        store.append_message(session.id, Role.USER if n % 2 else Role.ASSISTANT, f"m{n}")
    pages = []
    before: int | None = None
    while page := store.messages(session.id, before_seq=before, limit=10):
        pages.append([m.seq for m in page])
        before = page[0].seq
    assert pages == [list(range(16, 26)), list(range(6, 16)), list(range(1, 6))]
    assert [m.seq for m in store.messages(session.id)] == list(range(1, 26))
    assert [m.seq for m in store.messages(session.id, before_seq=4)] == [1, 2, 3]
    assert store.messages(session.id, limit=0) == []
    assert store.count_messages(session.id) == 25


def test_messages_of_an_unknown_session_are_empty(store: SessionStore) -> None:
    assert store.messages("nobody") == []
    assert store.count_messages("nobody") == 0


def test_negative_limit_is_refused(store: SessionStore) -> None:
    with pytest.raises(ValueError):
        store.messages("any", limit=-1)


def test_paging_uses_the_session_seq_index(raw: sqlite3.Connection) -> None:
    plan = raw.execute(
        "EXPLAIN QUERY PLAN SELECT * FROM message WHERE session_id = ? AND seq < ? "
        "ORDER BY seq DESC LIMIT ?",
        ("s", 100, 50),
    ).fetchall()
    details = " ".join(str(row[-1]) for row in plan)
    assert "message_by_session_seq" in details
    assert "TEMP B-TREE" not in details  # no sort: the index gives the order


# --- text round-trips ------------------------------------------------------------

AWKWARD_TEXTS = [
    "nul \x00 in the middle\x00",
    "emoji 🧗‍♀️🏔️ and flags 🇵🇹",
    "right to left: שלום עולם, مرحبا بالعالم",
    "mixed \u202etext\u202c with bidi controls",
    "",
    "  leading and trailing whitespace \n\t",
    "😀" * 50_000,
    "A" * (1024 * 1024),
]


@pytest.mark.parametrize("text", AWKWARD_TEXTS, ids=range(len(AWKWARD_TEXTS)))
def test_text_round_trips_exactly(store: SessionStore, text: str) -> None:
    session = store.create_session(text, MODEL, system_prompt=text)
    message = store.append_message(session.id, Role.USER, text)
    reply = store.append_message(session.id, Role.ASSISTANT, "", status=MessageStatus.STREAMING)
    store.update_message_content(reply.id, text)
    store.finish_message(reply.id, text + text, MessageStatus.COMPLETE)
    loaded = store.messages(session.id)
    assert loaded[0] == message
    assert loaded[0].content == text
    assert loaded[1].content == text + text
    fetched = store.get_session(session.id)
    assert fetched is not None
    assert (fetched.title, fetched.system_prompt) == (text, text)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=st.text())  # every code point but lone surrogates, NUL included
def test_arbitrary_text_round_trips(store: SessionStore, text: str) -> None:
    session = store.create_session(text, MODEL)
    message = store.append_message(session.id, Role.USER, text)
    [loaded] = store.messages(session.id)
    assert loaded.content == text
    assert loaded == message
    assert store.get_session(session.id).title == text  # type: ignore[union-attr]


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    steps=st.lists(
        st.one_of(st.just("append"), st.tuples(st.just("delete"), st.integers(0, 50))),
        max_size=25,
    )
)
def test_seq_strictly_increases_under_appends_and_deletes(
    store: SessionStore, raw: sqlite3.Connection, steps: list[object]
) -> None:
    session = store.create_session("seq", MODEL)
    handed_out: list[int] = []
    for step in steps:
        if step == "append":
            handed_out.append(store.append_message(session.id, Role.USER, "x").seq)
        else:
            _, pick = step  # type: ignore[misc]
            present = [m.seq for m in store.messages(session.id)]
            if present:
                victim = present[pick % len(present)]
                raw.execute(
                    "DELETE FROM message WHERE session_id = ? AND seq = ?", (session.id, victim)
                )
    assert handed_out == sorted(set(handed_out))
    assert all(seq > 0 for seq in handed_out)
    remaining = [m.seq for m in store.messages(session.id)]
    assert remaining == sorted(remaining)
    assert set(remaining) <= set(handed_out)


# --- failures ----------------------------------------------------------------------


def test_disk_full_during_a_write_is_a_storage_error(database: Path, clock: FakeClock) -> None:
    open_database(database).connection.close()
    connection = connect(database)
    store = SessionStore(connection, database=database, clock=clock)
    try:
        session = store.create_session("t", MODEL)
        store.append_message(session.id, Role.USER, "small")
        pages = connection.execute("PRAGMA page_count").fetchone()[0]
        connection.execute(f"PRAGMA max_page_count = {pages}")
        with pytest.raises(StorageError) as caught:
            store.append_message(session.id, Role.USER, "x" * 1_000_000)
        assert "disk is full" in caught.value.message
        assert caught.value.retryable
        connection.execute("PRAGMA max_page_count = 1073741823")
        # Rolled back whole: the seq was not used up, the store still works.
        assert store.append_message(session.id, Role.USER, "after").seq == 2
        assert [m.content for m in store.messages(session.id)] == ["small", "after"]
    finally:
        store.close()


def test_writing_through_a_read_only_connection_is_a_storage_error(
    database: Path, clock: FakeClock
) -> None:
    open_database(database).connection.close()
    reader = sqlite3.connect(f"{database.as_uri()}?mode=ro", uri=True, isolation_level=None)
    store = SessionStore(reader, database=database, clock=clock)
    try:
        with pytest.raises(StorageError) as caught:
            store.create_session("t", MODEL)
        assert "isn't allowed to write" in caught.value.message
        assert str(database.parent) in caught.value.message
        assert store.list_sessions() == []
    finally:
        store.close()


def test_a_busy_database_is_a_retryable_storage_error(
    store: SessionStore, database: Path, clock: FakeClock
) -> None:
    session = store.create_session("t", MODEL)
    impatient = connect(database)
    impatient.execute("PRAGMA busy_timeout = 0")
    other = SessionStore(impatient, database=database, clock=clock)
    holder = connect(database)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(StorageError) as caught:
            other.append_message(session.id, Role.USER, "blocked")
        assert caught.value.retryable
        assert "busy" in caught.value.message
    finally:
        holder.execute("ROLLBACK")
        holder.close()
        other.close()
    assert store.count_messages(session.id) == 0


def test_using_a_store_from_another_thread_is_a_bug(store: SessionStore) -> None:
    errors: list[BaseException] = []

    def use() -> None:
        try:
            store.list_sessions()
        except BaseException as error:
            errors.append(error)

    thread = threading.Thread(target=use)
    thread.start()
    thread.join()
    assert len(errors) == 1
    assert isinstance(errors[0], BugError)


def test_a_closed_store_is_a_bug(database: Path) -> None:
    store = SessionStore(open_database(database).connection, database=database)
    store.close()
    with pytest.raises(BugError):
        store.create_session("t", MODEL)


# --- the live tail in compact form, and the trigger's memory ----------------------------

_BLANKS = st.text(alphabet=st.characters(categories=["Zs", "Zl", "Zp", "Cc"]), max_size=6)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from(list(Role)),
            st.one_of(_BLANKS, st.text(max_size=40)),
            st.sampled_from([s for s in MessageStatus if s is not MessageStatus.STREAMING]),
        ),
        min_size=1,
        max_size=12,
    )
)
def test_live_entries_agree_with_the_messages(
    store: SessionStore, rows: list[tuple[Role, str, MessageStatus]]
) -> None:
    session = store.create_session("Tail", MODEL)
    for role, text, status in rows:
        store.append_message(session.id, role, text.replace("\x00", ""), status=status)
    messages = store.live_messages(session.id)
    expected = [TailEntry.of(message, count_tokens) for message in messages]
    assert store.live_entries(session.id) == expected
    assert tally_entries(expected) == tally_messages(messages, count_tokens)


def test_live_entries_estimate_rows_without_a_count(
    store: SessionStore, raw: sqlite3.Connection
) -> None:
    session = store.create_session("Old rows", MODEL)
    message = store.append_message(session.id, Role.USER, "x" * 400)
    raw.execute("UPDATE message SET token_estimate = NULL WHERE id = ?", (message.id,))
    (entry,) = store.live_entries(session.id)
    assert entry.tokens == 100 and entry.sendable and entry.role is Role.USER


def test_messages_by_id(store: SessionStore) -> None:
    session = store.create_session("Ids", MODEL)
    first = store.append_message(session.id, Role.USER, "one")
    store.append_message(session.id, Role.ASSISTANT, "two")
    third = store.append_message(session.id, Role.USER, "three")
    assert store.messages_by_id({third.id, first.id}) == [first, third]
    assert store.messages_by_id(set()) == []


def test_the_trigger_state_is_kept_with_the_conversation(
    store: SessionStore, raw: sqlite3.Connection
) -> None:
    session = store.create_session("Trigger", MODEL)
    assert store.trigger_state(session.id) is None
    state = {"armed": False, "messages_since_trigger": 3, "at_seq": 40}
    store.set_trigger_state(session.id, state)
    assert store.trigger_state(session.id) == state
    assert store.get_session(session.id) == session, "the version does not move"
    raw.execute("UPDATE session SET trigger_state = 'not json' WHERE id = ?", (session.id,))
    assert store.trigger_state(session.id) is None, "unreadable state starts afresh"
    with pytest.raises(SessionNotFoundError):
        store.set_trigger_state("no-such-session", state)


def test_a_blank_message_counts_no_tokens(store: SessionStore) -> None:
    session = store.create_session("Blank", MODEL)
    stopped = store.append_message(
        session.id, Role.ASSISTANT, " \n\u3000", status=MessageStatus.STOPPED
    )
    assert stopped.token_estimate == 0, "never sent, so it costs nothing"
    (entry,) = store.live_entries(session.id)
    assert (entry.tokens, entry.sendable) == (0, False)


def test_migration_4_zeroes_the_estimates_of_blank_messages(tmp_path: Path) -> None:
    from app.store.migrations import MIGRATIONS, migrate

    connection = sqlite3.connect(tmp_path / "old.db", isolation_level=None)
    migrate(connection, MIGRATIONS[:3])
    connection.execute(
        "INSERT INTO session (id, title, created_at, updated_at, model) "
        "VALUES ('s', 't', '2026-01-01', '2026-01-01', 'm')"
    )
    rows = [(1, "  \n\t ", 3), (2, "Hello", 2), (3, "", None)]
    connection.executemany(
        "INSERT INTO message (session_id, seq, role, content, created_at, token_estimate) "
        "VALUES ('s', ?, 'user', ?, '2026-01-01', ?)",
        rows,
    )
    migrate(connection)
    estimates = connection.execute(
        "SELECT seq, token_estimate FROM message ORDER BY seq"
    ).fetchall()
    assert estimates == [(1, 0), (2, 2), (3, None)]
    connection.close()
