"""VersionRows: an edited question and a regenerated reply keep every version; only the
shown branch is read as the conversation and its live tail; summaries and versions
never meet (DESIGN §2, §3 invariant 1; issue 11)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.errors import InvalidInputError
from app.core.models import MessageStatus, Role
from app.store import SessionStore, SummaryStore, open_database
from app.store.export import ExportFormat, export_conversations, import_conversations, read_export
from app.store.versions import SUMMARIZED_TITLE
from tests.fakes.clock import FakeClock
from tests.unit.store.test_summaries import condensed

MODEL = "claude-sonnet-4-5"
EXPORT_SCHEMA = Path(__file__).resolve().parents[3] / "resources" / "export-schema.json"


@pytest.fixture
def store(database: Path, clock: FakeClock) -> Iterator[SessionStore]:
    opened = open_database(database)
    store = SessionStore(opened.connection, database=opened.path, clock=clock)
    yield store
    store.close()


def chat(store: SessionStore, *texts: str) -> tuple[str, list[int]]:
    session = store.create_session("t", MODEL)
    ids = [
        store.append_message(session.id, (Role.USER, Role.ASSISTANT)[n % 2], text).id
        for n, text in enumerate(texts)
    ]
    return session.id, ids


def shown(store: SessionStore, session_id: str) -> list[tuple[str, int, int]]:
    return [(m.content, m.version_number, m.version_count) for m in store.messages(session_id)]


def live(store: SessionStore, session_id: str) -> list[str]:
    return [m.content for m in store.live_messages(session_id)]


def test_editing_a_question_shelves_it_and_what_followed(store: SessionStore) -> None:
    session_id, ids = chat(store, "Hi", "Hello", "Plan a trip", "Lisbon?", "Thanks", "Sure")

    change = store.versions.edit(ids[2], "Plan a trip to Porto", token_estimate=6)

    assert change.shelved == tuple(ids[2:])
    assert shown(store, session_id) == [
        ("Hi", 1, 1),
        ("Hello", 1, 1),
        ("Plan a trip to Porto", 2, 2),
    ]
    assert live(store, session_id) == ["Hi", "Hello", "Plan a trip to Porto"]
    assert [e.id for e in store.live_tail(session_id).entries] == [*ids[:2], *change.shown]
    # Nothing is deleted: every version stays a row (the archive and search keep it).
    assert store.count_messages(session_id) == 7


def test_showing_an_earlier_version_brings_its_branch_back(store: SessionStore) -> None:
    session_id, ids = chat(store, "Hi", "Hello", "Plan a trip", "Lisbon?")
    edit = store.versions.edit(ids[2], "Plan a trip to Porto", token_estimate=6)
    (new_question,) = edit.shown
    reply = store.append_message(session_id, Role.ASSISTANT, "Porto it is")

    back = store.versions.show(new_question, 1)

    assert back.shelved == (new_question, reply.id)
    assert back.shown == (ids[2], ids[3])
    assert shown(store, session_id) == [
        ("Hi", 1, 1),
        ("Hello", 1, 1),
        ("Plan a trip", 1, 2),
        ("Lisbon?", 1, 1),
    ]
    forth = store.versions.show(ids[2], 2)
    assert forth.shown == (new_question, reply.id)
    assert live(store, session_id) == ["Hi", "Hello", "Plan a trip to Porto", "Porto it is"]
    assert store.versions.show(ids[2], 2).shown == ()  # already shown: nothing moves


def test_a_nested_edit_keeps_its_own_versions_inside_a_branch(store: SessionStore) -> None:
    session_id, ids = chat(store, "Q1", "A1", "Q2", "A2")
    (q2b,) = store.versions.edit(ids[2], "Q2b", token_estimate=2).shown
    a2b = store.append_message(session_id, Role.ASSISTANT, "A2b")
    (q1b,) = store.versions.edit(ids[0], "Q1b", token_estimate=2).shown

    store.versions.show(q1b, 1)  # back to the first branch, as it was last shown

    assert [c for c, _, _ in shown(store, session_id)] == ["Q1", "A1", "Q2b", "A2b"]
    store.versions.show(q2b, 1)
    assert [c for c, _, _ in shown(store, session_id)] == ["Q1", "A1", "Q2", "A2"]
    assert a2b.id not in {m.id for m in store.live_messages(session_id)}


def test_regenerating_adds_a_version_and_discarding_it_restores_the_reply(
    store: SessionStore,
) -> None:
    session_id, ids = chat(store, "Hi", "Hello")

    new_id, _seq = store.versions.regenerate(ids[1], MODEL)
    assert [(m.content, m.status) for m in store.messages(session_id)] == [
        ("Hi", MessageStatus.COMPLETE),
        ("", MessageStatus.STREAMING),
    ]
    assert store.messages_by_id({new_id})[0].version_number == 2

    assert store.versions.discard_regenerated(new_id, ids[1])
    assert shown(store, session_id) == [("Hi", 1, 1), ("Hello", 1, 1)]
    assert live(store, session_id) == ["Hi", "Hello"]


def test_a_regenerated_reply_with_text_is_not_discarded(store: SessionStore) -> None:
    session_id, ids = chat(store, "Hi", "Hello")
    new_id, _seq = store.versions.regenerate(ids[1], MODEL)
    store.finish_message(new_id, "Hey there", MessageStatus.STOPPED)

    assert not store.versions.discard_regenerated(new_id, ids[1])
    assert shown(store, session_id) == [("Hi", 1, 1), ("Hey there", 2, 2)]


def test_only_the_latest_reply_is_regenerated(store: SessionStore) -> None:
    session_id, ids = chat(store, "Hi", "Hello", "More", "Sure")
    with pytest.raises(InvalidInputError, match="latest reply"):
        store.versions.regenerate(ids[1], MODEL)
    assert live(store, session_id) == ["Hi", "Hello", "More", "Sure"]


def test_a_summarized_message_is_not_edited_and_says_why(
    store: SessionStore, database: Path, clock: FakeClock
) -> None:
    session_id, ids = chat(store, "Q1", "A1", "Q2", "A2", "Q3", "A3")
    summaries = SummaryStore.open(database, clock=clock)
    try:
        summaries.commit_summary(condensed(store.messages_by_id(set(ids[:2]))))
    finally:
        summaries.close()

    with pytest.raises(InvalidInputError) as refused:
        store.versions.edit(ids[0], "Q1 again", token_estimate=3)
    assert refused.value.title == SUMMARIZED_TITLE
    assert "Undo the summary" in refused.value.message
    store.versions.edit(ids[2], "Q2 again", token_estimate=3)  # after the summary: fine
    assert live(store, session_id) == ["Q2 again"]


def test_shelved_rows_never_block_a_later_summary(
    store: SessionStore, database: Path, clock: FakeClock
) -> None:
    session_id, ids = chat(store, "Q1", "A1", "Q2", "A2")
    (q1b,) = store.versions.edit(ids[0], "Q1b", token_estimate=2).shown
    store.append_message(session_id, Role.ASSISTANT, "A1b")
    store.append_message(session_id, Role.USER, "Q2b")
    summaries = SummaryStore.open(database, clock=clock)
    try:
        covered = store.live_messages(session_id)[:2]  # Q1b, A1b: seqs after the shelf
        summaries.commit_summary(condensed(covered))
        assert summaries.check_coverage(session_id) == []
        assert [m.content for m in summaries.live_messages(session_id)] == ["Q2b"]
    finally:
        summaries.close()
    with pytest.raises(InvalidInputError):
        store.versions.show(q1b, 1)  # the shown version is summarized now


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    steps=st.lists(
        st.tuples(
            st.sampled_from(["turn", "edit", "show", "regenerate", "summarize", "undo"]),
            st.integers(min_value=0, max_value=50),
        ),
        min_size=1,
        max_size=25,
    )
)
def test_versions_and_summaries_never_break_the_coverage_invariant(
    tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[str, int]]
) -> None:
    """Edits, regenerations, version switches, summaries and undos in any order: every
    message stays live, covered once, or shelved; the shown path is the live tail plus
    what summaries cover, in seq order (DESIGN §3 invariant 1)."""
    database = tmp_path_factory.mktemp("versions") / "cairn.db"
    opened = open_database(database)
    store = SessionStore(opened.connection, database=opened.path)
    summaries = SummaryStore.open(database)
    try:
        session_id, _ids = chat(store, "Q0", "A0")
        for kind, pick in steps:
            shown_rows = store.messages(session_id)
            live_rows = store.live_messages(session_id)
            try:
                if kind == "turn":
                    store.append_message(session_id, Role.USER, f"Q{pick}")
                    store.append_message(session_id, Role.ASSISTANT, f"A{pick}")
                elif kind == "edit":
                    users = [m for m in shown_rows if m.role is Role.USER]
                    if users:
                        target = users[pick % len(users)]
                        store.versions.edit(target.id, f"{target.content}'", token_estimate=2)
                        store.append_message(session_id, Role.ASSISTANT, f"A{pick}'")
                elif kind == "show":
                    grouped = [m for m in shown_rows if m.version_count > 1]
                    if grouped:
                        target = grouped[pick % len(grouped)]
                        store.versions.show(target.id, pick % target.version_count + 1)
                elif kind == "regenerate" and shown_rows:
                    if shown_rows[-1].role is Role.ASSISTANT:
                        new_id, _seq = store.versions.regenerate(shown_rows[-1].id, MODEL)
                        store.finish_message(new_id, f"R{pick}", MessageStatus.COMPLETE)
                elif kind == "summarize" and len(live_rows) > 2:
                    covered = live_rows[: 1 + pick % (len(live_rows) - 2)]
                    summaries.commit_summary(condensed(covered))
                elif kind == "undo":
                    active = summaries.active_summaries(session_id)
                    if active:
                        summaries.undo_summary(active[-1].id)
            except InvalidInputError as refused:
                assert refused.title in (SUMMARIZED_TITLE, "Can't regenerate this reply")
            assert summaries.check_coverage(session_id) == []
            shown_now = store.messages(session_id)
            live_now = store.live_messages(session_id)
            assert [m.id for m in shown_now if m.summary_id is None] == [m.id for m in live_now]
            seqs = [m.seq for m in shown_now]
            assert seqs == sorted(set(seqs))
            assert {e.id for e in store.live_tail(session_id).entries} == {m.id for m in live_now}
    finally:
        summaries.close()
        store.close()


def test_versions_survive_an_export_and_import(
    store: SessionStore, database: Path, tmp_path: Path
) -> None:
    session_id, ids = chat(store, "Hi", "Hello", "Plan a trip", "Lisbon?")
    store.versions.edit(ids[2], "Plan a trip to Porto", token_estimate=6)
    store.append_message(session_id, Role.ASSISTANT, "Porto it is")
    reader = open_database(database).connection
    path = tmp_path / "out.json"
    export_conversations(reader, path, fmt=ExportFormat.JSON, session_ids=[session_id])
    data = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.validate(data, json.loads(EXPORT_SCHEMA.read_text(encoding="utf-8")))
    # Only messages with versions say so; the set-aside branch names its head.
    by_seq = {m["seq"]: m for m in data["conversations"][0]["messages"]}
    assert "version_of" not in by_seq[1] and "shelved_by" not in by_seq[1]
    assert by_seq[4]["shelved_by"] == 3

    other = open_database(tmp_path / "other.db")
    copy = SessionStore(other.connection, database=other.path)
    (copy_id,) = import_conversations(other.connection, read_export(path)).session_ids
    assert shown(copy, copy_id) == shown(store, session_id)
    assert live(copy, copy_id) == ["Hi", "Hello", "Plan a trip to Porto", "Porto it is"]
    # The earlier branch comes back there too.
    copy.versions.show(copy.messages(copy_id)[2].id, 1)
    assert live(copy, copy_id) == ["Hi", "Hello", "Plan a trip", "Lisbon?"]
    markdown = tmp_path / "out.md"
    export_conversations(reader, markdown, fmt=ExportFormat.MARKDOWN)
    assert markdown.read_text(encoding="utf-8").count("(another version, not shown") == 2
    copy.close()
    reader.close()
