"""A valid export to mutate, and what a check of an import needs, shared by the export
fuzz (tests/unit/store/test_export_fuzz.py) and the trials bench
(bench/bench_disk_trials.py)."""

from __future__ import annotations

import copy
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from app.core.attachments import Attachment, AttachmentKind
from app.core.models import Role
from app.store import SessionStore, open_database
from app.store.attachments import AttachmentFiles, AttachmentStore, sha256_of
from app.store.export import ExportFormat, export_conversations
from tests.fakes.sample_files import png

TABLES = ("session", "message", "summary", "event", "lookup", "attachment")
HOSTILE_NUMBERS = (2**63, -(2**63) - 1, 2**64, -1, 0, 1.5, 1e308, -0.0)
HOSTILE_TEXTS = ("", "\ud800", "a\udfffb", "\x00", "\ufeffhi", "x" * 5000)
# Written into the bytes after json.dumps, which cannot write them itself.
WRITTEN_LATER = {
    "@deep-40@": "[" * 40 + "1" + "]" * 40,
    "@deep-1000@": "[" * 1000 + "1" + "]" * 1000,
    "@deep-5000@": "{" + '"a":{' * 5000 + "}" * 5001,
    "@digits-5000@": "7" * 5000,
    "@nan@": "NaN",
}


def export_world(folder: Path) -> tuple[Path, dict[str, Any]]:
    """A database to import into (under `folder`/target), and a valid export of one
    conversation with an attached picture, as parsed JSON."""
    source = folder / "source" / "cairn.db"
    source.parent.mkdir(parents=True)
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
    return target, json.loads(path.read_text(encoding="utf-8"))


def counts(connection: sqlite3.Connection) -> dict[str, int]:
    return {t: connection.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}


def files_in(folder: Path) -> set[str]:
    return (
        {str(path.relative_to(folder)) for path in folder.rglob("*")} if folder.exists() else set()
    )


def places(data: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every place in `data`, as the keys and indexes leading to it."""
    yield path
    if isinstance(data, dict):
        for key, value in data.items():
            yield from places(value, (*path, key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield from places(value, (*path, index))


def said(item: dict[str, Any]) -> dict[str, Any]:
    """A record's fields that carry something (the export leaves out empty thinking and
    None; summary ids are new under a copy)."""
    return {
        key: value
        for key, value in item.items()
        if key != "summary_id" and value is not None and (key, value) != ("thinking", "")
    }


def essentials(conversation: dict[str, Any]) -> dict[str, Any]:
    """What an import must keep exactly, the bytes of a file aside: where they lie
    (`file`) and whether the export carried them (`data`: absent when the file was
    missing at export; imported as a record, and exported again with its bytes when the
    store holds them already). The bytes themselves are checked apart."""
    kept = copy.deepcopy(conversation)
    for attachment in kept.get("attachments", []):
        attachment.pop("file", None)
        attachment.pop("data", None)
    return kept
