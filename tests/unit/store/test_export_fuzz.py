"""Hypothesis over the export format (issue 21 item 10): a real export, mutated in its
structure and its values (deep nesting, numbers past 2^63 or thousands of digits long,
damaged characters, duplicated and missing parts, cut or flipped bytes).

Whatever the file, an import is refused in plain words (never a traceback, never
"Database misuse") with the database and the attachments folder as they were, or it
imports exactly what the file says. Bounded: a few dozen examples, no deadline.
"""

from __future__ import annotations

import base64
import copy
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.attachments import Attachment, AttachmentKind
from app.core.errors import UserFacingError
from app.core.models import Role
from app.store import SessionStore, open_database
from app.store.attachments import AttachmentFiles, AttachmentStore, sha256_of
from app.store.export import (
    ExportFormat,
    ImportRefusedError,
    export_conversations,
    import_conversations,
    parse_export,
)
from tests.fakes.sample_files import png

TABLES = ("session", "message", "summary", "event", "lookup", "attachment")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, Any]]]:
    """A database to import into, and a valid export (with an attached file) to mutate."""
    folder = tmp_path_factory.mktemp("fuzz")
    source = folder / "source" / "cairn.db"
    source.parent.mkdir()
    opened = open_database(source)
    store = SessionStore(opened.connection, database=source)
    session = store.create_session("Trip to Lyon", "claude-sonnet-4-6")
    first = store.append_message(session.id, Role.USER, "The gate code is 4471 ☕")
    store.append_message(session.id, Role.ASSISTANT, "Noted: 4471.")
    picture = png(2, 2)
    AttachmentFiles(source).put(picture)
    AttachmentStore(opened.connection, database=source).add(
        first.id,
        [
            Attachment(
                sha256=sha256_of(picture),
                name="gate.png",
                media_type="image/png",
                kind=AttachmentKind.IMAGE,
                size=len(picture),
                tokens=10,
                width=2,
                height=2,
            )
        ],
    )
    path = folder / "export.json"
    export_conversations(opened.connection, path, fmt=ExportFormat.JSON, database=source)
    store.close()
    target = folder / "target" / "cairn.db"
    target.parent.mkdir()
    open_database(target).connection.close()
    yield target, json.loads(path.read_text(encoding="utf-8"))


def counts(connection: sqlite3.Connection) -> dict[str, int]:
    return {t: connection.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}


def files_in(folder: Path) -> set[str]:
    return (
        {str(path.relative_to(folder)) for path in folder.rglob("*")} if folder.exists() else set()
    )


# --- mutations ---------------------------------------------------------------------------

HOSTILE_NUMBERS = st.sampled_from([2**63, -(2**63) - 1, 2**64, -1, 0, 1.5, 1e308, -0.0])
HOSTILE_TEXTS = st.sampled_from(["", "\ud800", "a\udfffb", "\x00", "\ufeffhi", "x" * 5000])
LEAVES = st.one_of(
    st.none(), st.booleans(), st.integers(), HOSTILE_NUMBERS, st.text(max_size=20), HOSTILE_TEXTS
)
VALUES = st.recursive(
    LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)


def places(data: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(data, dict):
        for key, value in data.items():
            yield from places(value, (*path, key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield from places(value, (*path, index))


# Written into the bytes after json.dumps, which cannot write them itself.
WRITTEN_LATER = {
    "@deep-40@": "[" * 40 + "1" + "]" * 40,
    "@deep-1000@": "[" * 1000 + "1" + "]" * 1000,
    "@deep-5000@": "{" + '"a":{' * 5000 + "}" * 5001,
    "@digits-5000@": "7" * 5000,
    "@nan@": "NaN",
}


@st.composite
def mutated(draw: st.DrawFn, valid: dict[str, Any]) -> bytes:
    data = copy.deepcopy(valid)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(list(places(data))[1:]))
        *parent_path, last = path
        parent = data
        for part in parent_path:
            parent = parent[part]
        action = draw(st.sampled_from(["replace", "delete", "duplicate", "later", "number"]))
        if action == "replace":
            parent[last] = draw(VALUES)
        elif action == "delete":
            del parent[last]
        elif action == "duplicate" and isinstance(parent, list):
            parent.append(copy.deepcopy(parent[last]))
        elif action == "later":
            parent[last] = draw(st.sampled_from(sorted(WRITTEN_LATER)))
        else:
            parent[last] = draw(HOSTILE_NUMBERS)
    text = json.dumps(data, ensure_ascii=draw(st.booleans()))
    for token, written in WRITTEN_LATER.items():
        text = text.replace(f'"{token}"', written)
    raw = text.encode("utf-8", "surrogatepass")
    damage = draw(st.sampled_from(["none", "none", "cut", "flip"]))
    if damage == "cut":
        raw = raw[: draw(st.integers(0, len(raw)))]
    elif damage == "flip" and raw:
        at = draw(st.integers(0, len(raw) - 1))
        raw = raw[:at] + bytes([raw[at] ^ draw(st.integers(1, 255))]) + raw[at + 1 :]
    return raw


def said(item: dict[str, Any]) -> dict[str, Any]:
    """A record's fields that carry something (the export leaves out empty thinking and
    None; summary ids are new under a copy)."""
    return {
        key: value
        for key, value in item.items()
        if key != "summary_id" and value is not None and (key, value) != ("thinking", "")
    }


def essentials(conversation: dict[str, Any]) -> dict[str, Any]:
    """What an import must keep exactly (where the bytes of a file lie aside)."""
    kept = copy.deepcopy(conversation)
    for attachment in kept.get("attachments", []):
        attachment.pop("file", None)
    return kept


@pytest.fixture(scope="module")
def valid(world: tuple[Path, dict[str, Any]]) -> dict[str, Any]:
    return world[1]


@settings(
    max_examples=int(__import__("os").environ.get("FUZZ_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_an_import_is_refused_in_words_or_exact(
    world: tuple[Path, dict[str, Any]], valid: dict[str, Any], data: st.DataObject
) -> None:
    target, _ = world
    raw = data.draw(mutated(valid))
    attachments = target.parent / "attachments"
    connection = open_database(target).connection
    try:
        before, files_before = counts(connection), files_in(attachments)
        try:
            export = parse_export(raw, name="fuzz.json")
            result = import_conversations(connection, export, as_copy=True, database=target)
        except ImportRefusedError as error:
            assert error.message.startswith("fuzz.json "), error.message
            assert "Traceback" not in error.message
            assert counts(connection) == before, "a refusal changes nothing"
            assert files_in(attachments) == files_before, "a refusal leaves nothing behind"
            return
        except UserFacingError as error:  # the disk said no: said in words, nothing written
            assert "misuse" not in error.message.lower(), error.message
            assert counts(connection) == before
            assert files_in(attachments) == files_before
            return
        # Imported: exactly what the file said, files and all.
        out = target.parent / "again.json"
        export_conversations(
            connection,
            out,
            fmt=ExportFormat.JSON,
            session_ids=result.session_ids,
            database=target,
            replace=True,
        )
        again = json.loads(out.read_text(encoding="utf-8"))["conversations"]
        for given_one, back in zip(export.conversations, again, strict=True):
            expected = essentials(given_one.model_dump(mode="json", exclude_none=False))
            got = essentials(back)
            for part in ("messages", "events", "lookups", "attachments"):
                left = [said(item) for item in expected.get(part, [])]
                right = [said(item) for item in got.get(part, [])]
                assert left == right, part
        for attachment in (a for c in export.conversations for a in c.attachments):
            if attachment.data is not None:
                kept = AttachmentFiles(target).read(attachment.sha256)
                assert kept == base64.b64decode(attachment.data)
    finally:
        connection.close()
