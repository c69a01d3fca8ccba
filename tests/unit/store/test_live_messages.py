"""The live tail read again: unchanged rows are the Messages read before, the rest read anew."""

from __future__ import annotations

import sqlite3

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.models import MessageStatus, Role
from app.store import SessionStore
from app.store.sessions import read_live_messages
from tests.fakes.clock import FakeClock

MODEL = "claude-sonnet-4-5"


def _as_read(raw: sqlite3.Connection, session_id: str) -> list[object]:
    return list(read_live_messages(raw, session_id))


def test_an_unchanged_message_is_the_message_read_before(store: SessionStore) -> None:
    session = store.create_session("t", MODEL)
    store.append_message(session.id, Role.USER, "hello")
    store.append_message(session.id, Role.ASSISTANT, "hi")
    first = store.live_messages(session.id)
    again = store.live_messages(session.id)
    assert [a is b for a, b in zip(first, again, strict=True)] == [True, True]


def test_a_change_to_a_message_is_read(store: SessionStore, raw: sqlite3.Connection) -> None:
    session = store.create_session("t", MODEL)
    question = store.append_message(session.id, Role.USER, "hello")
    reply = store.append_message(session.id, Role.ASSISTANT, "", status=MessageStatus.STREAMING)
    store.live_messages(session.id)
    store.update_message_content(reply.id, "hi the")
    assert store.live_messages(session.id) == _as_read(raw, session.id)
    store.finish_message(reply.id, "hi there", MessageStatus.COMPLETE, thinking="hmm")
    assert store.live_messages(session.id) == _as_read(raw, session.id)
    store.set_pinned(question.id, True)
    after = store.live_messages(session.id)
    assert after == _as_read(raw, session.id)
    assert after[0].pinned and after[1].content == "hi there" and after[1].thinking == "hmm"


def test_a_new_version_is_counted_in_every_version(
    store: SessionStore, raw: sqlite3.Connection
) -> None:
    session = store.create_session("t", MODEL)
    store.append_message(session.id, Role.USER, "hello")
    reply = store.append_message(session.id, Role.ASSISTANT, "hi")
    store.live_messages(session.id)
    store.versions.regenerate(reply.id, MODEL)
    assert store.live_messages(session.id) == _as_read(raw, session.id)


def test_a_row_whose_id_is_taken_again_is_read(
    store: SessionStore, raw: sqlite3.Connection, clock: FakeClock
) -> None:
    """SQLite gives a deleted row's id to the next row (no AUTOINCREMENT)."""
    session = store.create_session("t", MODEL)
    store.append_message(session.id, Role.USER, "hello")
    empty = store.append_message(session.id, Role.ASSISTANT, "", status=MessageStatus.STREAMING)
    store.live_messages(session.id)
    raw.execute("DELETE FROM message WHERE id = ?", (empty.id,))
    clock.advance(1)
    taken = store.append_message(session.id, Role.ASSISTANT, "a real answer")
    assert taken.id == empty.id
    assert store.live_messages(session.id) == _as_read(raw, session.id)


def test_a_text_written_behind_the_stores_back_without_its_checksum_is_not_trusted(
    store: SessionStore, raw: sqlite3.Connection
) -> None:
    session = store.create_session("t", MODEL)
    store.append_message(session.id, Role.USER, "hello")
    store.live_messages(session.id)
    raw.execute("UPDATE message SET content = 'other', checksum = NULL")
    assert store.live_messages(session.id)[0].content == "other"


_STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.sampled_from(["a", "b", "ça"])),
        st.tuples(st.just("edit"), st.integers(0, 9), st.sampled_from(["x", "yy", ""])),
        st.tuples(st.just("pin"), st.integers(0, 9), st.booleans()),
        st.tuples(st.just("archive"), st.integers(0, 9)),
        st.tuples(st.just("read"), st.just(0)),
    ),
    max_size=25,
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=_STEPS)
def test_whatever_happens_the_tail_read_is_the_tail_on_disk(
    store: SessionStore, raw: sqlite3.Connection, steps: list[tuple[object, ...]]
) -> None:
    session = store.create_session("t", MODEL)
    ids: list[int] = []
    for step in steps:
        kind = step[0]
        if kind == "append":
            role = Role.USER if len(ids) % 2 == 0 else Role.ASSISTANT
            ids.append(store.append_message(session.id, role, str(step[1])).id)
        elif ids and kind == "edit":
            store.update_message_content(ids[int(str(step[1])) % len(ids)], str(step[2]))
        elif ids and kind == "pin":
            store.set_pinned(ids[int(str(step[1])) % len(ids)], bool(step[2]))
        elif ids and kind == "archive":
            # a summary covering it, as far as the tail is concerned
            raw.execute(
                "UPDATE message SET shelved_by = id WHERE id = ?",
                (ids[int(str(step[1])) % len(ids)],),
            )
        assert store.live_messages(session.id) == _as_read(raw, session.id)
