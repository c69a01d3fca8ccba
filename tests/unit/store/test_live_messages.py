"""The live tail read again: unchanged rows are the Messages read before, only the rows
changed since (stamped by migration 16's triggers) read anew."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.errors import InvalidInputError
from app.core.models import MessageStatus, Role
from app.store import SessionStore
from app.store.errors import MessageArchivedError
from app.store.live_messages import LIVE_MESSAGES
from app.store.sessions import read_live_messages, read_messages_by_id
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


def test_a_version_is_read_again_after_reads_of_other_changes(
    store: SessionStore, raw: sqlite3.Connection
) -> None:
    """A version's place ("2 / 2") is counted from rows outside the tail: it is kept to
    be read again, also after reads that found only other rows changed."""
    session = store.create_session("t", MODEL)
    store.append_message(session.id, Role.USER, "hello")
    reply = store.append_message(session.id, Role.ASSISTANT, "hi")
    new_id, _seq = store.versions.regenerate(reply.id, MODEL)
    store.finish_message(new_id, "hello there", MessageStatus.COMPLETE)
    assert store.live_messages(session.id)[-1].version_count == 2
    _assert_versions_kept(store, session.id)
    store.append_message(session.id, Role.USER, "and then?")  # read with nothing cut
    assert store.live_messages(session.id) == _as_read(raw, session.id)
    _assert_versions_kept(store, session.id)
    raw.execute("DELETE FROM message WHERE id = ?", (reply.id,))  # the shelved version
    live = store.live_messages(session.id)
    assert live == _as_read(raw, session.id)
    assert live[1].version_count == 1


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
        st.tuples(st.just("summarize"), st.integers(0, 9)),
        st.tuples(st.just("unsummarize"), st.just(0)),
        st.tuples(st.just("delete"), st.integers(0, 9)),
        st.tuples(st.just("regenerate"), st.integers(0, 9)),
        st.tuples(st.just("behind"), st.integers(0, 9), st.sampled_from(["z", "ww"])),
    ),
    max_size=30,
)


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=_STEPS)
def test_whatever_happens_the_tail_read_is_the_tail_on_disk(
    store: SessionStore, raw: sqlite3.Connection, steps: list[tuple[object, ...]]
) -> None:
    """Every way a live message changes — the store's writes and raw SQL behind its back
    (a summary covering rows and undone, a delete, a text without its checksum) — and
    the tail read again, reused where unchanged, is a fresh read's."""
    session = store.create_session("t", MODEL)
    other = store.create_session("o", MODEL)  # changes elsewhere move nothing here
    ids: list[int] = []
    summary = _summary(raw, session.id)
    for step in steps:
        kind = step[0]
        pick = ids[int(str(step[1])) % len(ids)] if ids and isinstance(step[1], int) else None
        if kind == "append":
            role = Role.USER if len(ids) % 2 == 0 else Role.ASSISTANT
            ids.append(store.append_message(session.id, role, str(step[1])).id)
            store.append_message(other.id, role, str(step[1]))
        elif pick is None:
            pass
        elif kind == "edit":
            store.update_message_content(pick, str(step[2]))
        elif kind == "pin":
            archived = raw.execute(
                "SELECT summary_id IS NOT NULL FROM message WHERE id = ?", (pick,)
            ).fetchone() == (1,)
            if archived and step[2]:  # a summary holds it: the store refuses, nothing moves
                with pytest.raises(MessageArchivedError):
                    store.set_pinned(pick, True)
            else:
                store.set_pinned(pick, bool(step[2]))
        elif kind == "archive":
            raw.execute("UPDATE message SET shelved_by = id WHERE id = ?", (pick,))
        elif kind == "summarize":
            raw.execute(  # a pinned message is never archived (a CHECK)
                "UPDATE message SET summary_id = ? WHERE id = ? AND NOT pinned", (summary, pick)
            )
        elif kind == "unsummarize":
            raw.execute("UPDATE message SET summary_id = NULL WHERE summary_id = ?", (summary,))
        elif kind == "delete":
            raw.execute("DELETE FROM message WHERE id = ?", (pick,))
            ids.remove(pick)
        elif kind == "regenerate":
            row = raw.execute(
                "SELECT role, summary_id IS NULL AND shelved_by IS NULL FROM message WHERE id = ?",
                (pick,),
            ).fetchone()
            if row == ("assistant", 1):
                # Not Claude's latest reply: refused, rolled back whole.
                with contextlib.suppress(InvalidInputError):
                    ids.append(store.versions.regenerate(pick, MODEL)[0])
        elif kind == "behind":
            raw.execute(
                "UPDATE message SET content = ?, checksum = NULL WHERE id = ?", (step[2], pick)
            )
        assert store.live_messages(session.id) == _as_read(raw, session.id)
        assert store.live_messages(other.id) == _as_read(raw, other.id)
        _assert_versions_kept(store, session.id)


def _assert_versions_kept(store: SessionStore, session_id: str) -> None:
    """The versions the tail as read keeps (to read them again: their place is counted
    from other rows) are every version in it, kept without a walk of the tail."""
    kept = LIVE_MESSAGES._tails[(store.database or Path(), session_id)]
    versions = {m.id for m in kept.by_id.values() if m.version_of is not None}
    assert sorted(kept.versions) == sorted(versions)


def _summary(raw: sqlite3.Connection, session_id: str) -> str:
    """A summary row of the conversation, for raw rows to point at."""
    raw.execute(
        "INSERT INTO summary (id, session_id, tier, first_seq, last_seq, narrative, "
        "source_tokens, summary_tokens, mode, trigger, created_at) "
        "VALUES (?, ?, 'condensed', 1, 1, 'n', 0, 0, 'rule', 'auto', '2026-01-01')",
        (f"{session_id}-summary", session_id),
    )
    return f"{session_id}-summary"


def test_only_the_rows_changed_since_are_read(store: SessionStore) -> None:
    """O(changed): a tail read again reads the rows written since, not the others."""
    session = store.create_session("t", MODEL)
    for n in range(40):
        store.append_message(session.id, Role.USER if n % 2 == 0 else Role.ASSISTANT, f"m{n}")
    store.live_messages(session.id)
    read: list[int] = []
    new = store.append_message(session.id, Role.USER, "one more")
    live = LIVE_MESSAGES.read(
        store._connection,  # the store's own connection, as it reads
        store.database or Path(),
        session.id,
        lambda connection, ids: read.extend(ids) or read_messages_by_id(connection, ids),
    )
    assert read == [new.id]
    assert live[-1] == new and len(live) == 41
