"""Export to JSON and Markdown, import back in one transaction, and every refusal."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from app.core.catalog import model_name
from app.core.errors import UserFacingError
from app.core.lookup import Lookup, LookupHit, recalled_lookup
from app.core.models import MessageStatus
from app.core.summary import (
    EventKind,
    EventOutcome,
    SourcedPoint,
    SummaryContent,
    SummaryDraft,
    SummaryEvent,
    SummaryMode,
    SummaryTier,
    SummaryTrigger,
)
from app.store import SessionStore, SummaryStore, open_database
from app.store.export import (
    MAX_IMPORT_CONVERSATIONS,
    AlreadyImportedError,
    AttachmentRecord,
    ConversationRecord,
    EventRecord,
    ExportError,
    ExportFile,
    ExportFormat,
    ImportRefusedError,
    LookupHitRecord,
    LookupRecord,
    MessageRecord,
    SessionRecord,
    SummaryRecord,
    export_conversations,
    import_conversations,
    parse_export,
    read_export,
)
from app.store.lookups import LookupStore
from tests.fakes.clock import FakeClock

MODEL = "claude-sonnet-4-5"
TABLES = ("session", "message", "summary", "event", "lookup")


def _open(path: Path) -> sqlite3.Connection:
    return open_database(path).connection


@pytest.fixture
def connection(database: Path) -> Iterator[sqlite3.Connection]:
    connection = _open(database)
    yield connection
    connection.close()


def _counts(connection: sqlite3.Connection) -> dict[str, int]:
    return {t: connection.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}


def _draft(session_id: str, tier: SummaryTier, first: int, last: int, **ids: Any) -> SummaryDraft:
    return SummaryDraft(
        session_id=session_id,
        tier=tier,
        first_seq=first,
        last_seq=last,
        content=SummaryContent(
            narrative=f"Talked about {first}–{last} «ünïcode» 🌲",
            key_points=[SourcedPoint(text="The code is 4471", sources=[first])],
            entities=["4471"],
        ),
        source_tokens=100,
        summary_tokens=20,
        mode=SummaryMode.LLM,
        model=MODEL,
        trigger=SummaryTrigger.AUTO,
        depth=2 if tier is SummaryTier.COMPRESSED else 1,
        **ids,
    )


@pytest.fixture
def filled(database: Path, clock: FakeClock, connection: sqlite3.Connection) -> str:
    """A conversation with a compressed chain, an undone summary, a pin and events."""
    sessions = SessionStore(connection, database=database, clock=clock)
    summaries = SummaryStore.open(database, clock=clock)
    session = sessions.create_session("Trip to Lyon", MODEL, system_prompt="Be brief.")
    messages = []
    for index in range(10):
        clock.advance(60)
        role = "user" if index % 2 == 0 else "assistant"
        messages.append(sessions.append_message(session.id, role, f"Message {index + 1} ☕"))
    first = summaries.commit_summary(
        _draft(session.id, SummaryTier.CONDENSED, 1, 2, message_ids=[m.id for m in messages[:2]])
    )
    second = summaries.commit_summary(
        _draft(session.id, SummaryTier.CONDENSED, 3, 4, message_ids=[m.id for m in messages[2:4]])
    )
    summaries.commit_summary(
        _draft(session.id, SummaryTier.COMPRESSED, 1, 4, summary_ids=[first.id, second.id])
    )
    undone = summaries.commit_summary(
        _draft(session.id, SummaryTier.CONDENSED, 5, 6, message_ids=[m.id for m in messages[4:6]])
    )
    summaries.undo_summary(undone.id)
    sessions.set_pinned(messages[8].id, True)
    # Claude declined the last reply, and the API said why (stop_details).
    sessions.finish_message(
        messages[9].id, "Message 10 ☕", MessageStatus.DECLINED, refusal="It could enable harm."
    )
    sessions.set_trigger_state(session.id, {"memory": {"armed": True}, "seq": 7})
    summaries.record_event(
        SummaryEvent(
            session_id=session.id,
            kind=EventKind.SUMMARIZE,
            outcome=EventOutcome.OK,
            summary_id=first.id,
            ratio_before=0.81,
            ratio_after=0.4,
            duration_ms=12.5,
        )
    )
    summaries.close()
    lookups = LookupStore.open(database, clock=clock)
    found = (
        LookupHit(1, "user", clock(), "Message 1 ☕ — «gate» AX-7731"),
        LookupHit(4, "summary", clock(), "Talked about 3–4", conversation="Moving house"),
    )
    lookups.add(Lookup(messages[5].id, 1, "gate *code*", found, clock()))
    lookups.add(Lookup(messages[5].id, 2, "lunch menu", (), clock()))
    lookups.close()
    return session.id


def _export(connection: sqlite3.Connection, path: Path, **kwargs: Any) -> dict[str, Any]:
    export_conversations(connection, path, fmt=ExportFormat.JSON, **kwargs)
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def test_json_export_is_complete(
    connection: sqlite3.Connection, filled: str, tmp_path: Path
) -> None:
    data = _export(connection, tmp_path / "out.json", session_ids=[filled])
    assert data["format"] == "cairn-export"
    assert data["version"] == 1
    (conversation,) = data["conversations"]
    session = conversation["session"]
    assert session["title"] == "Trip to Lyon"
    assert session["system_prompt"] == "Be brief."
    assert session["trigger_state"] == {"memory": {"armed": True}, "seq": 7}
    assert [m["seq"] for m in conversation["messages"]] == list(range(1, 11))
    assert sum(1 for m in conversation["messages"] if m["summary_id"]) == 4  # archived kept
    assert [m["pinned"] for m in conversation["messages"]].count(True) == 1
    declined = conversation["messages"][-1]
    assert (declined["status"], declined["refusal"]) == ("declined", "It could enable harm.")
    assert all("refusal" not in m for m in conversation["messages"][:-1])
    states = sorted(s["state"] for s in conversation["summaries"])
    assert states == ["active", "superseded", "superseded", "undone"]
    assert conversation["events"][-1]["ratio_before"] == 0.81
    first, second = conversation["lookups"]
    assert (first["message_seq"], first["ordinal"], first["query"]) == (6, 1, "gate *code*")
    assert [hit["seq"] for hit in first["results"]] == [1, 4]
    assert first["results"][0]["text"] == "Message 1 ☕ — «gate» AX-7731"
    assert first["results"][1]["conversation"] == "Moving house"
    assert (second["ordinal"], second["results"]) == (2, [])
    no_fields = json.dumps(data).lower().replace("key_points", "").replace("search_keys", "")
    assert "key" not in no_fields


def test_round_trip_is_identical(
    connection: sqlite3.Connection, filled: str, tmp_path: Path
) -> None:
    first = _export(connection, tmp_path / "first.json")
    other = _open(tmp_path / "other.db")
    imported = import_conversations(other, read_export(tmp_path / "first.json"))
    assert imported.session_ids == [filled]
    second = _export(other, tmp_path / "second.json")
    assert second["conversations"] == first["conversations"]
    # What the app reads back is sound: the coverage invariant holds.
    summaries = SummaryStore.open(tmp_path / "other.db")
    assert summaries.check_coverage(filled) == []
    summaries.close()
    other.close()


def test_markdown_is_readable(connection: sqlite3.Connection, filled: str, tmp_path: Path) -> None:
    path = tmp_path / "out.md"
    result = export_conversations(connection, path, fmt=ExportFormat.MARKDOWN)
    text = path.read_text(encoding="utf-8")
    assert result.conversations == 1
    assert "## Trip to Lyon" in text
    # The model as people know it, never its raw id (issue 23).
    assert f"Model: {model_name(MODEL)}." in text and MODEL not in text
    assert "### You, " in text and "### Claude, " in text
    assert "(archived original, kept in a summary)" in text
    assert "> **Summary of messages 1–4**" in text
    assert "(merged into a later summary)" in text and "(undone)" in text
    assert "Message 10 ☕\n\n*(Claude declined to answer: It could enable harm.)*" in text
    # The reply that searched the archive says so, in one line, before its text.
    # It names the other conversations it quoted.
    looked = (
        "_Looked in earlier messages: 2 found (also in “Moving house”) — searched for "
        "“gate \\*code\\*”, “lunch menu”._"
    )
    assert text.count("Looked in earlier messages") == 1
    assert text.index(looked) < text.index("Message 6 ☕")
    # The summary sits before the first message it covers.
    assert text.index("Summary of messages 1–4") < text.index("Message 1 ☕")


def test_lookups_come_back_on_import(
    connection: sqlite3.Connection, filled: str, tmp_path: Path
) -> None:
    before = LookupStore(connection)
    reply = next(m for m in SessionStore(connection).messages(filled) if m.seq == 6)
    stored = before.for_messages([reply.id])[reply.id]
    _export(connection, tmp_path / "out.json")
    other = _open(tmp_path / "other.db")
    (copy_id,) = import_conversations(other, read_export(tmp_path / "out.json")).session_ids
    (imported,) = [m for m in SessionStore(other).messages(copy_id) if m.seq == 6]
    found = LookupStore(other).for_messages([imported.id])[imported.id]
    assert found == tuple(
        Lookup(imported.id, lookup.ordinal, lookup.query, lookup.hits, lookup.created_at)
        for lookup in stored
    )
    other.close()


def test_a_file_from_before_lookups_imports(
    connection: sqlite3.Connection, filled: str, tmp_path: Path
) -> None:
    data = _valid(connection, tmp_path)
    conversation = _renamed(data["conversations"][0], "older")
    del conversation["lookups"]
    data["conversations"] = [conversation]
    (older,) = import_conversations(connection, parse_export(json.dumps(data).encode())).titles
    assert older == "Trip to Lyon"


def test_unknown_conversation_is_refused(connection: sqlite3.Connection, tmp_path: Path) -> None:
    with pytest.raises(ExportError, match="no conversation with the id nope"):
        export_conversations(
            connection, tmp_path / "x.json", fmt=ExportFormat.JSON, session_ids=["nope"]
        )
    assert not (tmp_path / "x.json").exists()


def test_failed_write_keeps_the_old_file(
    connection: sqlite3.Connection, filled: str, tmp_path: Path
) -> None:
    target = tmp_path / "missing-folder" / "x.json"
    with pytest.raises(ExportError, match="couldn't write"):
        export_conversations(connection, target, fmt=ExportFormat.JSON)
    existing = tmp_path / "old.json"
    existing.write_text("old", encoding="utf-8")
    connection.execute("DROP TABLE event")  # the export fails midway
    with pytest.raises(UserFacingError):
        export_conversations(connection, existing, fmt=ExportFormat.JSON)
    assert existing.read_text(encoding="utf-8") == "old"
    assert not list(tmp_path.glob(".old.json*"))  # no temporary file left behind


def test_duplicate_is_refused_unless_as_copy(
    connection: sqlite3.Connection, filled: str, tmp_path: Path
) -> None:
    data = _export(connection, tmp_path / "x.json")
    before = _counts(connection)
    with pytest.raises(AlreadyImportedError, match="“Trip to Lyon” is already in Cairn"):
        import_conversations(connection, read_export(tmp_path / "x.json"))
    assert _counts(connection) == before
    result = import_conversations(connection, read_export(tmp_path / "x.json"), as_copy=True)
    assert result.titles == ["Trip to Lyon (copy)"]
    (copy_id,) = result.session_ids
    assert copy_id != filled
    assert _counts(connection) == {t: 2 * n for t, n in before.items()}
    copy = export_conversations(
        connection, tmp_path / "y.json", fmt=ExportFormat.JSON, session_ids=[copy_id]
    )
    assert copy.conversations == 1
    copied = json.loads((tmp_path / "y.json").read_text(encoding="utf-8"))["conversations"][0]
    original = data["conversations"][0]
    old_ids = {s["id"] for s in original["summaries"]}
    assert not old_ids & {s["id"] for s in copied["summaries"]}
    assert not old_ids & {m["summary_id"] for m in copied["messages"]}
    assert [m["content"] for m in copied["messages"]] == [
        m["content"] for m in original["messages"]
    ]
    summaries = SummaryStore.open(tmp_path / "cairn.db")
    assert summaries.check_coverage(copy_id) == []
    summaries.close()


def _valid(connection: sqlite3.Connection, tmp_path: Path) -> dict[str, Any]:
    return _export(connection, tmp_path / "valid.json")


def _renamed(conversation: dict[str, Any], prefix: str) -> dict[str, Any]:
    """A copy of `conversation` under new ids, so it is not a duplicate."""
    copy: dict[str, Any] = json.loads(json.dumps(conversation))
    copy["session"]["id"] = prefix
    for summary in copy["summaries"]:
        summary["id"] = f"{prefix}-{summary['id']}"
        if summary["parent_id"]:
            summary["parent_id"] = f"{prefix}-{summary['parent_id']}"
    for message in copy["messages"]:
        if message["summary_id"]:
            message["summary_id"] = f"{prefix}-{message['summary_id']}"
    return copy


def _bad_files(data: dict[str, Any]) -> list[tuple[str, bytes, str]]:
    """(what, the bytes, a phrase the message must contain)."""
    whole = json.dumps(data).encode()

    def changed(change: Any) -> bytes:
        copy = json.loads(whole)
        change(copy)
        return json.dumps(copy).encode()

    conversation = "conversations"
    return [
        ("truncated", whole[: len(whole) // 2], "cut short"),
        ("not json", b"hello, world", "not a Cairn export"),
        ("binary", b"\xff\xfe\x00garbage", "not a text file"),
        ("foreign", b'{"name": "something else"}', "not a Cairn export"),
        ("a list", b"[1, 2, 3]", "not a Cairn export"),
        ("newer", changed(lambda d: d.update(version=2)), "newer Cairn"),
        ("no version", changed(lambda d: d.pop("version")), "which format"),
        (
            "bad role",
            changed(lambda d: d[conversation][0]["messages"][0].update(role="bot")),
            "role",
        ),
        (
            "bad date",
            changed(lambda d: d[conversation][0]["messages"][0].update(created_at="soon")),
            "date",
        ),
        (
            "extra field",
            changed(lambda d: d[conversation][0]["session"].update(colour="red")),
            "colour",
        ),
        (
            "dup seq",
            changed(lambda d: d[conversation][0]["messages"][1].update(seq=1)),
            "same number",
        ),
        (
            "seq beyond",
            changed(lambda d: d[conversation][0]["summaries"][0].update(last_seq=99)),
            "never had",
        ),
        (
            "lost summary",
            changed(lambda d: d[conversation][0]["messages"][0].update(summary_id="x")),
            "does not have",
        ),
        ("twice", changed(lambda d: d[conversation].append(d[conversation][0])), "twice"),
        (
            "bad facets",
            changed(lambda d: d[conversation][0]["summaries"][0].update(facets={"entities": 3})),
            "unreadable",
        ),
        (
            "search on a question",
            changed(lambda d: d[conversation][0]["lookups"][0].update(message_seq=1)),
            "not one of Claude's replies",
        ),
        (
            "search numbered twice",
            changed(lambda d: d[conversation][0]["lookups"][1].update(ordinal=1)),
            "two archive searches numbered 1",
        ),
        (
            "excerpt without text",
            changed(lambda d: d[conversation][0]["lookups"][0]["results"][0].pop("text")),
            "text",
        ),
        (
            "bad usage",
            changed(
                lambda d: d[conversation][0]["messages"][1].update(usage={"input_tokens": "many"})
            ),
            "usage",
        ),
    ]


def test_every_bad_import_writes_nothing(
    connection: sqlite3.Connection, filled: str, tmp_path: Path
) -> None:
    data = _valid(connection, tmp_path)
    conversation = _renamed(data["conversations"][0], "another")  # only its faults
    data["conversations"] = [conversation]
    before = _counts(connection)
    for what, raw, phrase in _bad_files(data):
        path = tmp_path / f"{what}.json"
        path.write_bytes(raw)
        with pytest.raises(ImportRefusedError) as caught:
            import_conversations(connection, read_export(path))
        assert phrase in caught.value.message, (what, caught.value.message)
        assert _counts(connection) == before, what
    path = tmp_path / "fine.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    import_conversations(connection, read_export(path))
    conversation["session"]["id"] = "a-third-id"  # its summaries are now in Cairn already
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(AlreadyImportedError, match="already in Cairn"):
        import_conversations(connection, read_export(path))
    assert _counts(connection)["session"] == before["session"] + 1


def test_too_many_conversations_is_refused() -> None:
    raw = json.dumps(
        {
            "format": "cairn-export",
            "version": 1,
            "conversations": [{}] * (MAX_IMPORT_CONVERSATIONS + 1),
        }
    ).encode()
    with pytest.raises(ImportRefusedError, match="at most 100,000"):
        parse_export(raw)


def test_too_large_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import app.store.export as export

    monkeypatch.setattr(export, "MAX_IMPORT_BYTES", 10)
    path = tmp_path / "big.json"
    path.write_text('{"format": "cairn-export"}', encoding="utf-8")
    with pytest.raises(ImportRefusedError, match="too large"):
        read_export(path)


def test_missing_file_is_said_plainly(tmp_path: Path) -> None:
    with pytest.raises(ImportRefusedError, match="couldn't read"):
        read_export(tmp_path / "nothing.json")


def test_a_failing_conversation_rolls_back_the_others(
    connection: sqlite3.Connection, filled: str, tmp_path: Path
) -> None:
    data = _valid(connection, tmp_path)
    fresh = _renamed(data["conversations"][0], "new")
    data["conversations"] = [fresh, data["conversations"][0]]  # second one already exists
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    before = _counts(connection)
    with pytest.raises(AlreadyImportedError):
        import_conversations(connection, read_export(path))
    assert _counts(connection) == before


# --- export → import → export over random conversations --------------------------------

_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)
_START = datetime(2025, 1, 1, tzinfo=UTC)


def _stamp(draw: st.DrawFn) -> str:
    return (_START + timedelta(seconds=draw(st.integers(0, 10**8)))).isoformat()


@st.composite
def conversations(draw: st.DrawFn, index: int) -> dict[str, Any]:
    seqs = sorted(draw(st.sets(st.integers(1, 30), max_size=12)))
    last_seq = (seqs[-1] if seqs else 0) + draw(st.integers(0, 3))
    messages = [
        {
            "seq": seq,
            "role": draw(st.sampled_from(["user", "assistant"])),
            "content": draw(_TEXT),
            "created_at": _stamp(draw),
            "token_estimate": draw(st.none() | st.integers(0, 10**6)),
            "usage": draw(
                st.none() | st.fixed_dictionaries({"input_tokens": st.integers(0, 10**6)})
            ),
            "model": draw(st.none() | st.just(MODEL)),
            "status": draw(st.sampled_from([status.value for status in MessageStatus])),
            "summary_id": None,
            "pinned": False,
        }
        for seq in seqs
    ]
    summaries: list[dict[str, Any]] = []

    def summary(tier: str, first: int, last: int, state: str) -> dict[str, Any]:
        record = {
            "id": f"s{index}-{len(summaries)}",
            "tier": tier,
            "parent_id": None,
            "depth": 2 if tier == "compressed" else 1,
            "first_seq": first,
            "last_seq": last,
            "narrative": draw(_TEXT),
            "key_points": [{"text": draw(_TEXT), "sources": [first]}],
            "facets": {"entities": [draw(_TEXT)], "decisions": []},
            "source_tokens": draw(st.integers(0, 1000)),
            "summary_tokens": draw(st.integers(0, 1000)),
            "mode": draw(st.sampled_from(["llm", "hybrid", "rule"])),
            "model": draw(st.none() | st.just(MODEL)),
            "trigger": draw(st.sampled_from(["auto", "manual", "emergency"])),
            "instructions": draw(st.none() | _TEXT),
            "state": state,
            "created_at": _stamp(draw),
        }
        summaries.append(record)
        return record

    chunk_at = 0
    condensed: list[dict[str, Any]] = []
    while chunk_at < len(messages):
        size = draw(st.integers(1, 3))
        chunk = messages[chunk_at : chunk_at + size]
        chunk_at += size
        kind = draw(st.sampled_from(["live", "condensed", "undone"]))
        if kind == "live":
            for message in chunk:
                message["pinned"] = draw(st.booleans())
            continue
        made = summary(
            "condensed",
            chunk[0]["seq"],
            chunk[-1]["seq"],
            "active" if kind == "condensed" else "undone",
        )
        if kind == "condensed":
            condensed.append(made)
            for message in chunk:
                message["summary_id"] = made["id"]
    if len(condensed) >= 2 and draw(st.booleans()):
        folded = condensed[: draw(st.integers(2, len(condensed)))]
        parent = summary("compressed", folded[0]["first_seq"], folded[-1]["last_seq"], "active")
        for child in folded:
            child["state"], child["parent_id"] = "superseded", parent["id"]
    ids = [s["id"] for s in summaries]
    events = sorted(
        (
            {
                "kind": draw(st.sampled_from(["summarize", "undo", "delete_originals"])),
                "outcome": draw(st.sampled_from(["ok", "fallback", "failed", "partial"])),
                "summary_id": draw(st.none() | st.sampled_from(ids)) if ids else None,
                "reason": draw(_TEXT),
                "ratio_before": draw(st.none() | st.floats(0, 2, allow_nan=False)),
                "ratio_after": None,
                "tokens_before": draw(st.none() | st.integers(0, 10**6)),
                "tokens_after": None,
                "duration_ms": draw(st.none() | st.floats(0, 10**5, allow_nan=False)),
                "error_class": draw(st.none() | st.just("RateLimitedError")),
                "detail": draw(st.none() | _TEXT),
                "created_at": _stamp(draw),
            }
            for _ in range(draw(st.integers(0, 3)))
        ),
        key=lambda e: e["created_at"],
    )
    lookups = [
        {
            "message_seq": message["seq"],
            "ordinal": ordinal,
            "query": draw(_TEXT),
            "results": [
                {
                    "seq": draw(st.integers(0, 40)),
                    "author": draw(st.sampled_from(["user", "assistant", "summary"])),
                    "created_at": _stamp(draw),
                    "text": draw(_TEXT),
                    "conversation": draw(st.just("") | _TEXT),
                }
                for _ in range(draw(st.integers(0, 2)))
            ],
            "created_at": _stamp(draw),
        }
        for message in messages
        if message["role"] == "assistant"
        for ordinal in range(1, draw(st.integers(1, 3)))
    ]
    created = _stamp(draw)
    return {
        "session": {
            "id": f"c{index}-{draw(st.uuids())}",
            "title": draw(_TEXT),
            "created_at": created,
            "updated_at": created,
            "model": MODEL,
            "system_prompt": draw(_TEXT),
            "version": draw(st.integers(0, 50)),
            "last_seq": last_seq,
            "trigger_state": draw(st.none() | st.just({"seq": last_seq, "memory": {"x": 1}})),
        },
        "messages": messages,
        "summaries": sorted(
            summaries, key=lambda s: (s["first_seq"], s["depth"], s["created_at"], s["id"])
        ),
        "events": events,
        "lookups": lookups,
    }


@st.composite
def exports(draw: st.DrawFn) -> dict[str, Any]:
    count = draw(st.integers(1, 3))
    items = [draw(conversations(index)) for index in range(count)]
    return {
        "format": "cairn-export",
        "version": 1,
        "exported_at": _START.isoformat(),
        "app_version": "0.1.0",
        "conversations": items,
    }


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=exports())
def test_export_import_export_is_identical(
    tmp_path_factory: pytest.TempPathFactory, data: dict[str, Any]
) -> None:
    folder = tmp_path_factory.mktemp("round")
    first = _open(folder / "first.db")
    import_conversations(first, parse_export(json.dumps(data).encode()))
    exported = _export(first, folder / "one.json")
    by_id = {c["session"]["id"]: c for c in data["conversations"]}
    assert {c["session"]["id"]: c for c in exported["conversations"]} == by_id
    second = _open(folder / "second.db")
    import_conversations(second, read_export(folder / "one.json"))
    again = _export(second, folder / "two.json")
    assert again["conversations"] == exported["conversations"]
    first.close()
    second.close()


# --- the schema and the document -------------------------------------------------------

ROOT = Path(__file__).resolve().parents[3]
SCHEMA: dict[str, Any] = json.loads(
    (ROOT / "resources" / "export-schema.json").read_text(encoding="utf-8")
)
MODELS: dict[str, type[BaseModel]] = {
    "session": SessionRecord,
    "message": MessageRecord,
    "summary": SummaryRecord,
    "event": EventRecord,
    "lookup": LookupRecord,
    "lookup_hit": LookupHitRecord,
    "attachment": AttachmentRecord,
    "conversation": ConversationRecord,
}


def test_schema_is_valid_draft_2020_12() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_a_real_export_matches_the_schema(
    connection: sqlite3.Connection, filled: str, tmp_path: Path
) -> None:
    path = tmp_path / "out.json"
    export_conversations(connection, path, fmt=ExportFormat.JSON)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["conversations"][0]["summaries"], "the export should hold summaries"
    assert data["conversations"][0]["lookups"], "the export should hold archive searches"
    jsonschema.Draft202012Validator(SCHEMA).validate(data)


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.update(version=2),
        lambda d: d.update(format="other"),
        lambda d: d["conversations"][0]["messages"][0].update(role="bot"),
        lambda d: d["conversations"][0]["session"].update(api_key="sk-ant-…"),
    ],
)
def test_the_schema_refuses_what_import_refuses(
    connection: sqlite3.Connection, filled: str, tmp_path: Path, change: Any
) -> None:
    path = tmp_path / "out.json"
    export_conversations(connection, path, fmt=ExportFormat.JSON)
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    assert not jsonschema.Draft202012Validator(SCHEMA).is_valid(data)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_schema_and_models_name_the_same_fields(name: str) -> None:
    assert set(SCHEMA["$defs"][name]["properties"]) == set(MODELS[name].model_fields)


def test_the_document_names_every_field() -> None:
    text = (ROOT / "docs" / "export-format.md").read_text(encoding="utf-8")
    fields = set(ExportFile.model_fields)
    for model in MODELS.values():
        fields |= set(model.model_fields)
    missing = sorted(field for field in fields if f"`{field}`" not in text)
    assert missing == []


def test_a_hit_from_another_conversation_is_exported_by_its_title(
    connection: sqlite3.Connection, filled: str, tmp_path: Path
) -> None:
    # Cairn keeps the other conversation's id with the hit, to open it there; the export
    # names it by its title (its schema has no ids of other conversations).
    (results,) = connection.execute("SELECT results_json FROM lookup WHERE ordinal = 1").fetchone()
    hits = json.loads(results)
    hits[1]["session_id"] = "another-conversation"
    connection.execute("UPDATE lookup SET results_json = ? WHERE ordinal = 1", (json.dumps(hits),))
    data = _export(connection, tmp_path / "out.json", session_ids=[filled])
    (conversation,) = data["conversations"]
    hit = conversation["lookups"][0]["results"][1]
    assert hit["conversation"] == "Moving house" and "session_id" not in hit


def test_recall_quotes_from_other_conversations_are_listed_and_come_back(
    connection: sqlite3.Connection, filled: str, tmp_path: Path
) -> None:
    reply = next(m for m in SessionStore(connection).messages(filled) if m.seq == 8)
    quoted = (
        LookupHit(3, "user", reply.created_at, "The ferry leaves at 7:40", conversation="Trip"),
        LookupHit(9, "assistant", reply.created_at, "Pack the *red* bag", conversation="Packing"),
    )
    LookupStore(connection).add(recalled_lookup(reply.id, quoted, reply.created_at))
    path = tmp_path / "out.md"
    export_conversations(connection, path, fmt=ExportFormat.MARKDOWN)
    text = path.read_text(encoding="utf-8")
    named = "_Quoted 2 messages from your other conversations (“Trip”, “Packing”)._"
    assert text.index(named) < text.index("Message 8 ☕")

    _export(connection, tmp_path / "out.json")
    other = _open(tmp_path / "other.db")
    (copy_id,) = import_conversations(other, read_export(tmp_path / "out.json")).session_ids
    (imported,) = [m for m in SessionStore(other).messages(copy_id) if m.seq == 8]
    (found,) = LookupStore(other).for_messages([imported.id])[imported.id]
    assert found.automatic and found.hits == quoted
    other.close()
