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
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.errors import UserFacingError
from app.store import open_database
from app.store.attachments import AttachmentFiles
from app.store.export import (
    ExportFormat,
    ImportRefusedError,
    export_conversations,
    import_conversations,
    parse_export,
)
from tests.fakes.export_world import (
    HOSTILE_NUMBERS,
    HOSTILE_TEXTS,
    WRITTEN_LATER,
    counts,
    essentials,
    export_world,
    files_in,
    places,
    said,
)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """A database to import into, and a valid export (with an attached file) to mutate."""
    return export_world(tmp_path_factory.mktemp("fuzz"))


# --- mutations ---------------------------------------------------------------------------

NUMBERS = st.sampled_from(HOSTILE_NUMBERS)
LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    NUMBERS,
    st.text(max_size=20),
    st.sampled_from(HOSTILE_TEXTS),
)
VALUES = st.recursive(
    LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)


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
            parent[last] = draw(NUMBERS)
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
        for back in (a for c in again for a in c.get("attachments", [])):
            # A file whose bytes the export lacked (missing when it was made) is kept as a
            # record; exported again with its bytes only when the store holds them already.
            if back.get("data") is not None:
                assert hashlib.sha256(base64.b64decode(back["data"])).hexdigest() == back["sha256"]
    finally:
        connection.close()
