"""Export conversations to JSON (complete) or Markdown (readable), and import JSON back.

The JSON format is documented in docs/export-format.md and described by
resources/export-schema.json. It mirrors the database rows: a conversation, every
message (archived ones included), every summary in every state, its audit trail
and the archive searches Claude ran for its replies (app.store.export_lookups);
never the API key, which is never in the database. Message row ids are
not exported: nothing outside the message table refers to them (summaries cite
messages by seq), so an import gives them new ones.

Writes are atomic (a temporary file in the same folder, fsync, `os.replace`) and
streamed conversation by conversation, inside one read transaction so an export
of everything is one consistent snapshot while the window keeps writing.

An import validates the whole file first (`read_export`), then writes it in one
transaction: anything wrong and nothing is written, with the reason in plain words.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import logging
import os
import shutil
import sqlite3
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import chain
from pathlib import Path
from typing import IO, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from app import __version__
from app.core.catalog import model_name
from app.core.dates import stamp
from app.core.errors import StorageError
from app.core.models import Usage
from app.core.summary import SummaryContent
from app.core.thinking import thought_for
from app.store.attachments import AttachmentFiles, Staging, move_in, sha256_of
from app.store.checksums import summary_checksum, text_checksum
from app.store.export_file import (
    AlreadyImportedError as AlreadyImportedError,
)
from app.store.export_file import (
    ExportError,
    atomic_export,
    export_target,
)
from app.store.export_file import (
    ExportFormat as ExportFormat,
)
from app.store.export_file import (
    ImportRefusedError as ImportRefusedError,
)
from app.store.export_lookups import (
    LOOKUPS_QUERY,
    insert_lookups,
    lookup_problems,
    lookups_by_reply,
    markdown_lookup_line,
)
from app.store.export_reader import ExportReadError, read_json
from app.store.transactions import translated_errors, write_transaction

FORMAT_NAME = "cairn-export"
FORMAT_VERSION = 1
# An import reads the whole file into memory to check it before writing anything:
# beyond these it would take more memory than most computers have to spare.
MAX_IMPORT_BYTES = 2 * 1024**3
MAX_IMPORT_CONVERSATIONS = 100_000

COPY_SUFFIX = " (copy)"
# Where the audit trail of a deleted conversation goes when it is imported again.
PAST_LIFE = "deleted:"


# --- the format, as pydantic models ------------------------------------------------

log = logging.getLogger(__name__)

_STRICT = ConfigDict(extra="forbid", frozen=True, strict=True)


def _check_timestamp(value: str) -> str:
    """A date and time ISO 8601 can read; kept as written, so a round trip is exact."""
    try:
        datetime.fromisoformat(value)
    except ValueError as error:
        raise ValueError(f"{value!r} is not a date and time") from error
    return value


class SessionRecord(BaseModel):
    """The conversation's row."""

    model_config = _STRICT

    id: str = Field(min_length=1)
    title: str
    created_at: str
    updated_at: str
    model: str
    system_prompt: str = ""
    version: int = Field(default=0, ge=0)
    last_seq: int = Field(ge=0)
    trigger_state: dict[str, Any] | None = None

    _dates = field_validator("created_at", "updated_at")(_check_timestamp)


class MessageRecord(BaseModel):
    model_config = _STRICT

    seq: int = Field(gt=0)
    role: Literal["user", "assistant"]
    content: str
    created_at: str
    token_estimate: int | None = Field(default=None, ge=0)
    usage: dict[str, Any] | None = None
    model: str | None = None
    status: Literal[
        "complete", "streaming", "stopped", "error", "cut_off", "paused", "declined"
    ] = "complete"
    summary_id: str | None = None
    pinned: bool = False
    # Versions (app.store.versions), by number: this message's first version; and, for
    # a message set aside, the version heading its set-aside branch. Absent: none.
    version_of: int | None = Field(default=None, gt=0)
    shelved_by: int | None = Field(default=None, gt=0)
    # The thinking shown above a reply, and how long it took (absent: none).
    thinking: str = ""
    thinking_seconds: float | None = Field(default=None, ge=0)
    # Why Claude declined the reply, as the API explained it (absent: none).
    refusal: str | None = None

    _dates = field_validator("created_at")(_check_timestamp)

    @field_validator("usage")
    @classmethod
    def _usage(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is not None:
            Usage.model_validate(value)
        return value


class SummaryRecord(BaseModel):
    model_config = _STRICT

    id: str = Field(min_length=1)
    tier: Literal["condensed", "compressed"]
    parent_id: str | None = None
    depth: int = Field(default=1, ge=1)
    first_seq: int = Field(gt=0)
    last_seq: int = Field(gt=0)
    narrative: str
    key_points: list[dict[str, Any]] = Field(default_factory=list)
    facets: dict[str, Any] = Field(default_factory=dict)
    source_tokens: int = Field(ge=0)
    summary_tokens: int = Field(ge=0)
    mode: Literal["llm", "hybrid", "rule"]
    model: str | None = None
    trigger: Literal["auto", "manual", "emergency"]
    instructions: str | None = None
    state: Literal["active", "superseded", "undone"] = "active"
    created_at: str

    _dates = field_validator("created_at")(_check_timestamp)

    def content_problem(self) -> str | None:
        """Why Cairn could not read this summary's content, or None."""
        try:
            SummaryContent.model_validate(
                {"narrative": self.narrative, "key_points": self.key_points, **self.facets}
            )
        except ValidationError as error:
            return _first_problem(error)
        return None


class EventRecord(BaseModel):
    model_config = _STRICT

    kind: Literal["summarize", "undo", "delete_originals"]
    outcome: Literal["ok", "fallback", "failed", "aborted", "conflict", "partial"]
    summary_id: str | None = None
    reason: str = ""
    ratio_before: float | None = None
    ratio_after: float | None = None
    tokens_before: int | None = None
    tokens_after: int | None = None
    duration_ms: float | None = None
    error_class: str | None = None
    detail: str | None = None
    created_at: str

    _dates = field_validator("created_at")(_check_timestamp)


class LookupHitRecord(BaseModel):
    """One excerpt an archive search returned (app.core.lookup.LookupHit), as Claude read it."""

    model_config = _STRICT

    seq: int = Field(ge=0)
    author: str
    created_at: str
    text: str
    conversation: str = ""

    _dates = field_validator("created_at")(_check_timestamp)


class LookupRecord(BaseModel):
    """One archive search Claude ran while writing reply `message_seq` (app.store.lookups)."""

    model_config = _STRICT

    message_seq: int = Field(gt=0)
    ordinal: int = Field(ge=0)  # 0: recall's quotes from other conversations (RECALLED)
    query: str
    results: list[LookupHitRecord] = Field(default_factory=list)
    created_at: str

    _dates = field_validator("created_at")(_check_timestamp)


class AttachmentRecord(BaseModel):
    """A file of a message; `file` is where its bytes are, relative to the folder of the
    exported cairn.db (they are not in the export: it names them)."""

    model_config = _STRICT

    message_seq: int = Field(gt=0)
    ordinal: int = Field(gt=0)
    name: str
    media_type: str
    kind: Literal["image", "pdf", "text"]
    size: int = Field(ge=0)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    tokens: int = Field(ge=0)
    estimated: bool = False
    width: int = Field(default=0, ge=0)
    height: int = Field(default=0, ge=0)
    pages: int = Field(default=0, ge=0)
    file: str = ""
    # The file itself, base64: an export moved to another computer keeps it. Absent
    # when Cairn could not read it at export time (missing or damaged).
    data: str | None = None

    @field_validator("data")
    @classmethod
    def _data(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                base64.b64decode(value, validate=True)
            except binascii.Error as error:
                raise ValueError("the file's content is not base64") from error
        return value

    def content(self) -> bytes | None:
        """The file's bytes, when the export holds them."""
        return base64.b64decode(self.data) if self.data is not None else None


class ConversationRecord(BaseModel):
    """One conversation with everything it holds."""

    model_config = _STRICT

    session: SessionRecord
    messages: list[MessageRecord] = Field(default_factory=list)
    summaries: list[SummaryRecord] = Field(default_factory=list)
    events: list[EventRecord] = Field(default_factory=list)
    # Absent from files made before Cairn kept them: none.
    lookups: list[LookupRecord] = Field(default_factory=list)
    attachments: list[AttachmentRecord] = Field(default_factory=list)

    def problems(self) -> list[str]:
        """What does not add up inside this conversation (empty when it is sound)."""
        problems: list[str] = []
        session = self.session
        seqs = [message.seq for message in self.messages]
        if len(set(seqs)) != len(seqs):
            problems.append("two messages have the same number")
        if seqs and max(seqs) > session.last_seq:
            problems.append("a message has a number higher than the conversation ever reached")
        summaries = {summary.id: summary for summary in self.summaries}
        if len(summaries) != len(self.summaries):
            problems.append("two summaries have the same id")
        for summary in self.summaries:
            problems.extend(_summary_problems(summary, summaries, session.last_seq))
        for message in self.messages:
            if message.summary_id is None:
                continue
            covering = summaries.get(message.summary_id)
            if covering is None:
                problems.append(f"message {message.seq} is in a summary the file does not have")
            elif not covering.first_seq <= message.seq <= covering.last_seq:
                problems.append(f"message {message.seq} is outside the summary it is in")
            if message.pinned:
                problems.append(f"message {message.seq} is pinned and in a summary at once")
        for message in self.messages:
            if {message.version_of, message.shelved_by} - {None, *seqs}:
                problems.append(f"message {message.seq} is a version of a message not in the file")
        replies = (message.seq for message in self.messages if message.role == "assistant")
        problems.extend(lookup_problems(self.lookups, replies))
        known = set(seqs)
        if any(a.message_seq not in known for a in self.attachments):
            problems.append("a file is attached to a message the file does not have")
        places = [(a.message_seq, a.ordinal) for a in self.attachments]
        if len(set(places)) != len(places):
            problems.append("a message has two attached files in the same place")
        for attachment in self.attachments:
            content = attachment.content()
            if content is not None and sha256_of(content) != attachment.sha256:
                problems.append(f"the content of {attachment.name} does not match its sha256")
        return problems


class ExportFile(BaseModel):
    """A whole export file."""

    model_config = _STRICT

    format: Literal["cairn-export"]
    version: Literal[1]
    exported_at: str
    app_version: str
    conversations: list[ConversationRecord] = Field(max_length=MAX_IMPORT_CONVERSATIONS)

    _dates = field_validator("exported_at")(_check_timestamp)


def _summary_problems(
    summary: SummaryRecord, summaries: dict[str, SummaryRecord], last_seq: int
) -> list[str]:
    name = f"the summary of messages {summary.first_seq}–{summary.last_seq}"
    problems = []
    if summary.last_seq < summary.first_seq:
        problems.append(f"{name} ends before it starts")
    if summary.last_seq > last_seq:
        problems.append(f"{name} covers messages the conversation never had")
    if (summary.state == "superseded") != (summary.parent_id is not None):
        problems.append(f"{name} is merged into another summary, but not marked so")
    if summary.parent_id is not None:
        parent = summaries.get(summary.parent_id)
        if parent is None:
            problems.append(f"{name} was merged into a summary the file does not have")
        elif parent.tier != "compressed" or parent.id == summary.id:
            problems.append(f"{name} was merged into something that is not a merged summary")
    content = summary.content_problem()
    if content is not None:
        problems.append(f"{name} has unreadable content ({content})")
    return problems


# --- exporting -----------------------------------------------------------------------

_SESSION_COLUMNS = (
    "id, title, created_at, updated_at, model, system_prompt, version, last_seq, trigger_state"
)
_MESSAGE_COLUMNS = (
    "seq, role, content, created_at, token_estimate, usage, model, status, summary_id, pinned, "
    "thinking, thinking_seconds, refusal"
)
_SUMMARY_COLUMNS = (
    "id, tier, parent_id, depth, first_seq, last_seq, narrative, key_points, facets, "
    "source_tokens, summary_tokens, mode, model, trigger, instructions, state, created_at"
)
_EVENT_COLUMNS = (
    "kind, outcome, summary_id, reason, ratio_before, ratio_after, tokens_before, "
    "tokens_after, duration_ms, error_class, detail, created_at"
)
_ATTACHMENT_COLUMNS = (
    "a.name, a.media_type, a.kind, a.size, a.sha256, a.tokens, a.estimated, a.width, "
    "a.height, a.pages"
)
_JSON_COLUMNS = {"trigger_state", "usage", "key_points", "facets", "results"}


@dataclass(frozen=True)
class ExportResult:
    """What an export wrote: `conversations` conversations into `path` (`size` bytes)."""

    path: Path
    conversations: int
    size: int


def export_conversations(
    connection: sqlite3.Connection,
    destination: Path | str,
    *,
    fmt: ExportFormat,
    session_ids: Sequence[str] | None = None,
    database: Path | None = None,
    now: datetime | None = None,
    replace: bool = False,
) -> ExportResult:
    """Write the conversations `session_ids` (None: all, oldest first) to `destination`.

    Raises `ExportExistsError` when the file exists and `replace` is False, and
    `ExportError` when a conversation is not there or the file cannot be written
    (app.store.export_file: only ordinary files); the destination is then left as it
    was. `StorageError` when the database cannot be read.
    """
    target = export_target(destination, replace=replace)
    moment = (now or datetime.now(UTC)).isoformat()
    with translated_errors("read your conversations", database):
        connection.execute("BEGIN")  # one snapshot for the whole export (WAL: no lock held)
        try:
            ids = _session_ids(connection, session_ids)
            with atomic_export(target, replace=replace) as stream:
                if fmt is ExportFormat.JSON:
                    files = AttachmentFiles(database) if database is not None else None
                    _write_json(connection, ids, stream, moment, files)
                else:
                    _write_markdown(connection, ids, stream, moment)
        finally:
            connection.execute("COMMIT")
    return ExportResult(target, len(ids), target.stat().st_size)


def conversation_record(connection: sqlite3.Connection, session_id: str) -> dict[str, Any]:
    """One conversation as the JSON export holds it (plain dicts and lists)."""
    (session,) = _rows(connection, "session", session_id)
    record: dict[str, Any] = {"session": session}
    for part in _PARTS:
        record[part] = list(_rows(connection, part, session_id))
        if not record[part] and part in _OPTIONAL_PARTS:
            del record[part]
    return record


_QUERIES = {
    "session": f"SELECT {_SESSION_COLUMNS} FROM session WHERE id = ?",
    "messages": f"SELECT {_MESSAGE_COLUMNS}, "
    "(SELECT v.seq FROM message AS v WHERE v.id = message.version_of) AS version_of, "
    "(SELECT s.seq FROM message AS s WHERE s.id = message.shelved_by) AS shelved_by "
    "FROM message WHERE session_id = ? ORDER BY seq",
    "summaries": f"SELECT {_SUMMARY_COLUMNS} FROM summary WHERE session_id = ? "
    "ORDER BY first_seq, depth, created_at, id",
    "events": f"SELECT {_EVENT_COLUMNS} FROM event WHERE session_id = ? ORDER BY created_at, id",
    "lookups": LOOKUPS_QUERY,
    # The files' names and where they are kept (app/store/attachments.py), not their bytes.
    "attachments": f"SELECT m.seq AS message_seq, a.ordinal, {_ATTACHMENT_COLUMNS}, "
    "'attachments/' || substr(a.sha256, 1, 2) || '/' || a.sha256 AS file "
    "FROM attachment AS a JOIN message AS m ON m.id = a.message_id "
    "WHERE m.session_id = ? ORDER BY m.seq, a.ordinal",
}
_PARTS = ("messages", "summaries", "events", "lookups", "attachments")
_OPTIONAL_PARTS = frozenset({"attachments"})


def _session_ids(connection: sqlite3.Connection, wanted: Sequence[str] | None) -> list[str]:
    if wanted is None:
        rows = connection.execute("SELECT id FROM session ORDER BY created_at, id").fetchall()
        return [str(row[0]) for row in rows]
    for session_id in wanted:
        if connection.execute("SELECT 1 FROM session WHERE id = ?", (session_id,)).fetchone():
            continue
        raise ExportError(f"There is no conversation with the id {session_id} in Cairn.")
    return list(wanted)


_VERSION_LINKS = frozenset({"version_of", "shelved_by"})
_THINKING_COLUMNS = frozenset({"thinking", "thinking_seconds", "refusal"})


def _rows(connection: sqlite3.Connection, part: str, session_id: str) -> Iterator[dict[str, Any]]:
    """The rows of one part of a conversation, one at a time, as the export holds them."""
    cursor = connection.execute(_QUERIES[part], (session_id,))
    names = [column[0] for column in cursor.description]
    for row in cursor:
        record = dict(zip(names, row, strict=True))
        for name in _JSON_COLUMNS & record.keys():
            if record[name] is not None:
                record[name] = json.loads(record[name])
        for flag in ("pinned", "estimated") & record.keys():
            record[flag] = bool(record[flag])
        for link in _VERSION_LINKS & record.keys():
            if record[link] is None:
                del record[link]  # only a message with versions says so
        for name in _THINKING_COLUMNS & record.keys():
            if not record[name]:
                del record[name]  # only a reply Claude thought about (or declined) says so
        for hit in record.get("results") or ():
            hit.pop("session_id", None)  # the other conversation is named by its title
        yield record


def _dumps(value: Any) -> str:
    # No indent: json's C encoder only runs without one (3x faster on a large export).
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def _write_json(
    connection: sqlite3.Connection,
    ids: list[str],
    stream: IO[str],
    moment: str,
    files: AttachmentFiles | None = None,
) -> None:
    """One record per line (a message, a summary, an event), streamed row by row."""
    header = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "exported_at": moment,
        "app_version": __version__,
    }
    stream.write(_dumps(header)[:-1] + ',\n "conversations": [')
    for index, session_id in enumerate(ids):
        (session,) = _rows(connection, "session", session_id)
        stream.write(("," if index else "") + '\n  {"session": ' + _dumps(session))
        for part in _PARTS:
            rows = _rows(connection, part, session_id)
            first = next(rows, None)
            if first is None and part in _OPTIONAL_PARTS:
                continue  # a conversation without files reads as before files existed
            stream.write(f',\n   "{part}": [')
            for number, row in enumerate(rows if first is None else chain([first], rows)):
                if part == "attachments" and files is not None:
                    _with_content(row, files)
                stream.write(("," if number else "") + "\n    " + _dumps(row))
            stream.write("]")
        stream.write("}")
    stream.write("\n ]}\n")


def _with_content(row: dict[str, Any], files: AttachmentFiles) -> None:
    """Put the attached file's bytes in its record (base64), when they can be read."""
    try:
        row["data"] = base64.b64encode(files.read(row["sha256"])).decode("ascii")
    except StorageError as error:
        log.warning("An attached file is not in the export: %s", error.message)


_AUTHOR = {"user": "You", "assistant": "Claude"}


def _when(text: str) -> str:
    """A stored time as the reader's local time: "2026-03-05 14:05"."""
    return stamp(datetime.fromisoformat(text))


def _quote(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.splitlines() or [""])


def _write_markdown(
    connection: sqlite3.Connection, ids: list[str], stream: IO[str], moment: str
) -> None:
    stream.write(f"# Conversations exported from Cairn\n\nExported {_when(moment)}.\n")
    for session_id in ids:
        record = conversation_record(connection, session_id)
        for chunk in markdown_conversation(record):
            stream.write(chunk)


def markdown_conversation(record: dict[str, Any]) -> Iterator[str]:
    """One conversation as readable Markdown, in pieces: title, dates, then each
    message with author and date; each summary sits as a quoted block before the
    first message it covers; archived originals are marked."""
    session = record["session"]
    yield f"\n\n## {session['title'] or 'Untitled conversation'}\n\n"
    yield (
        f"Started {_when(session['created_at'])}, last changed {_when(session['updated_at'])}. "
        f"Model: {model_name(session['model'])}.\n"
    )
    if session["system_prompt"]:
        yield f"\nInstructions for Claude:\n\n{_quote(session['system_prompt'])}\n"
    summaries = sorted(record["summaries"], key=lambda s: (s["first_seq"], -s["depth"]))
    pending = list(summaries)
    lookups = lookups_by_reply(record.get("lookups", ()))
    for message in record["messages"]:
        while pending and pending[0]["first_seq"] <= message["seq"]:
            yield _markdown_summary(pending.pop(0))
        archived = " (archived original, kept in a summary)" if message["summary_id"] else ""
        pinned = " (pinned)" if message["pinned"] else ""
        if "shelved_by" in message:
            pinned += " (another version, not shown in the conversation)"
        searched = lookups.get(message["seq"])
        looked = f"\n\n{markdown_lookup_line(searched)}" if searched else ""
        thought = _markdown_thinking(message.get("thinking"), message.get("thinking_seconds"))
        declined = _markdown_refusal(message)
        yield (
            f"\n### {_AUTHOR[message['role']]}, {_when(message['created_at'])}{archived}{pinned}"
            f"{looked}{thought}\n\n{message['content']}{declined}\n"
        )
    for summary in pending:
        yield _markdown_summary(summary)


def _markdown_refusal(message: dict[str, Any]) -> str:
    """A declined reply says so, with the API's explanation when it gave one."""
    if message.get("status") != "declined":
        return ""
    why = message.get("refusal")
    said = f": {why.strip()}" if isinstance(why, str) and why.strip() else "."
    return f"\n\n*(Claude declined to answer{said})*"


def _markdown_thinking(thinking: object, seconds: object) -> str:
    """A reply's thinking as a quoted block headed "Thought for N s" (none: "")."""
    if not isinstance(thinking, str) or not thinking.strip():
        return ""
    heading = thought_for(seconds if isinstance(seconds, int | float) else None)
    return f"\n\n{_quote(heading + chr(10) + chr(10) + thinking)}"


_SUMMARY_STATE = {
    "active": "",
    "superseded": " (merged into a later summary)",
    "undone": " (undone)",
}


def _markdown_summary(summary: dict[str, Any]) -> str:
    first, last = summary["first_seq"], summary["last_seq"]
    covers = f"message {first}" if first == last else f"messages {first}–{last}"
    lines = [f"**Summary of {covers}**{_SUMMARY_STATE[summary['state']]}", "", summary["narrative"]]
    points = [point.get("text", "") for point in summary["key_points"]]
    if points:
        lines += ["", *(f"- {point}" for point in points)]
    return "\n" + _quote("\n".join(lines)) + "\n"


# --- importing ---------------------------------------------------------------------


@dataclass(frozen=True)
class ImportResult:
    """What an import added: the new conversations' ids and titles, in file order."""

    session_ids: list[str]
    titles: list[str]


def read_export(source: Path | str) -> ExportFile:
    """Read and check an export file, as a stream with limits (app.store.export_reader);
    writes nothing. Raises `ImportRefusedError` in plain words, naming the place."""
    path = Path(source)
    try:
        with path.open("rb") as stream:
            size = os.fstat(stream.fileno()).st_size
            if size > MAX_IMPORT_BYTES:
                raise ImportRefusedError(
                    f"{path.name} is too large to import ({size / 1024**3:.1f} GB; "
                    f"the limit is {MAX_IMPORT_BYTES // 1024**3} GB). Export fewer "
                    "conversations per file and import them one file at a time."
                )
            return _checked(_read(stream, path.name), path.name)
    except OSError as error:
        raise ImportRefusedError(
            f"Cairn couldn't read {path}: {error.strerror or error}.", detail=repr(error)
        ) from error


def parse_export(raw: bytes, *, name: str = "This file") -> ExportFile:
    """Check the bytes of an export file; raises `ImportRefusedError` saying what is wrong."""
    return _checked(_read(io.BytesIO(raw), name), name)


def _read(stream: IO[bytes], name: str) -> Any:
    head = stream.read(512)
    stream.seek(0)
    try:
        return read_json(stream)
    except ExportReadError as error:
        where = f" (at {error.place})" if error.place else ""
        ours = head.lstrip().startswith(b"{") and FORMAT_NAME.encode() in head
        if ours and error.cut_short:
            message = (
                f"{name} is a Cairn export that is cut short, so it can't be read. It may "
                "not have been copied completely; export it again."
            )
        elif ours:
            message = f"{name} is a Cairn export that is damaged: {error.problem}{where}."
        else:
            message = f"{name} is not a Cairn export: {error.problem}{where}."
        raise ImportRefusedError(message, detail=repr(error)) from error


def _checked(data: Any, name: str) -> ExportFile:
    if not isinstance(data, dict) or data.get("format") != FORMAT_NAME:
        raise ImportRefusedError(
            f"{name} is not a Cairn export. Choose a file made by Cairn's Export, in JSON."
        )
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise ImportRefusedError(f"{name} is damaged: it does not say which format it uses.")
    if version > FORMAT_VERSION:
        raise ImportRefusedError(
            f"{name} was made by a newer Cairn (export format {version}; this Cairn reads "
            f"format {FORMAT_VERSION}). Update Cairn, then import it again."
        )
    conversations = data.get("conversations")
    if isinstance(conversations, list) and len(conversations) > MAX_IMPORT_CONVERSATIONS:
        raise ImportRefusedError(
            f"{name} holds {len(conversations):,} conversations; Cairn imports at most "
            f"{MAX_IMPORT_CONVERSATIONS:,} at a time. Split the export into smaller files."
        )
    try:
        export = ExportFile.model_validate(data)
    except ValidationError as error:
        raise ImportRefusedError(
            f"{name} is damaged and can't be imported: {_first_problem(error)}.",
            detail=str(error),
        ) from error
    ids = [conversation.session.id for conversation in export.conversations]
    if len(set(ids)) != len(ids):
        raise ImportRefusedError(f"{name} is damaged: it holds the same conversation twice.")
    summary_ids = [s.id for conversation in export.conversations for s in conversation.summaries]
    if len(set(summary_ids)) != len(summary_ids):
        raise ImportRefusedError(f"{name} is damaged: two summaries have the same id.")
    for conversation in export.conversations:
        problems = conversation.problems()
        if problems:
            raise ImportRefusedError(
                f"{name} is damaged and can't be imported: in the conversation "
                f"“{conversation.session.title}”, {problems[0]}.",
                detail="; ".join(problems),
            )
    return export


def _first_problem(error: ValidationError) -> str:
    first = error.errors()[0]
    # Positions counted from 1, as the reader counts them (app/store/export_reader.py).
    where = " → ".join(str(part + 1 if isinstance(part, int) else part) for part in first["loc"])
    return f"{where}: {first['msg']}" if where else str(first["msg"])


def import_conversations(
    connection: sqlite3.Connection,
    export: ExportFile,
    *,
    as_copy: bool = False,
    database: Path | None = None,
    new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
) -> ImportResult:
    """Add every conversation of `export` in one transaction: all of them or none.

    A conversation whose id is already in Cairn is refused (`AlreadyImportedError`)
    unless `as_copy`, which imports every conversation under new ids with
    " (copy)" after its title.
    """
    ids: list[str] = []
    titles: list[str] = []
    # The files wait in a folder of their own until the rows naming them are committed:
    # a refused or failed import leaves nothing behind.
    files = AttachmentFiles(database) if database is not None else None
    staging = None
    if files is not None:
        _finish_earlier_imports(connection, files)
        staging = files.staging()
    try:
        if staging is not None:
            _stage_files(export, staging)
        _insert_all(connection, export, as_copy, database, new_id, ids, titles)
    except BaseException:
        if staging is not None:
            staging.discard()
        raise
    if staging is not None:
        staging.commit()
    return ImportResult(ids, titles)


def _insert_all(
    connection: sqlite3.Connection,
    export: ExportFile,
    as_copy: bool,
    database: Path | None,
    new_id: Callable[[], str],
    ids: list[str],
    titles: list[str],
) -> None:
    with write_transaction(connection, "import the conversations", database) as cursor:
        if not as_copy:
            present = [
                conversation.session.title
                for conversation in export.conversations
                if cursor.execute(
                    "SELECT 1 FROM session WHERE id = ?", (conversation.session.id,)
                ).fetchone()
            ]
            if present:
                listed = ", ".join(f"“{title}”" for title in present[:3])
                more = f" and {len(present) - 3} more" if len(present) > 3 else ""
                raise AlreadyImportedError(
                    f"{listed}{more} {'is' if len(present) == 1 else 'are'} already in Cairn. "
                    "Import as a copy to add them again under new names.",
                    titles=present,
                )
            clash = cursor.execute(
                "SELECT count(*) FROM summary WHERE id IN (SELECT value FROM json_each(?))",
                (json.dumps([s.id for c in export.conversations for s in c.summaries]),),
            ).fetchone()[0]
            if clash:
                raise AlreadyImportedError(
                    "Some summaries in this file are already in Cairn, in another "
                    "conversation. Import as a copy to add the conversations under new names.",
                    titles=[],
                )
        # Summaries point at each other (parent_id) in either order; checked at COMMIT.
        cursor.execute("PRAGMA defer_foreign_keys = ON")
        if not as_copy:
            # A conversation deleted here before comes back with the file's own log: the
            # trail of its past life (its deletion last) stays, under a name of its own.
            cursor.executemany(
                "UPDATE event SET session_id = ? || session_id WHERE session_id = ?",
                [(PAST_LIFE, c.session.id) for c in export.conversations],
            )
        for conversation in export.conversations:
            session_id, title = _insert(cursor, conversation, as_copy=as_copy, new_id=new_id)
            ids.append(session_id)
            titles.append(title)


def _stage_files(export: ExportFile, staging: Staging) -> None:
    """Stage the attached files the export holds (each checked against its sha256 when
    the file was read); `StorageError` when the disk refuses, before any row is written."""
    for conversation in export.conversations:
        for attachment in conversation.attachments:
            content = attachment.content()
            if content is not None:
                staging.put(content, attachment.sha256)


def _finish_earlier_imports(connection: sqlite3.Connection, files: AttachmentFiles) -> None:
    """Files an earlier import staged and never moved: in place if a row names them (it
    committed, then Cairn stopped), else removed (it never committed)."""
    leftovers = files.staged_leftovers()
    if not leftovers:
        return
    named = {
        str(row[0])
        for row in connection.execute(
            "SELECT DISTINCT sha256 FROM attachment WHERE sha256 IN "
            "(SELECT value FROM json_each(?))",
            (json.dumps([path.name for path in leftovers]),),
        )
    }
    move_in(files, [path for path in leftovers if path.name in named])
    for folder in {path.parent for path in leftovers}:
        shutil.rmtree(folder, ignore_errors=True)


def _json(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False)


def _insert(
    cursor: sqlite3.Cursor,
    conversation: ConversationRecord,
    *,
    as_copy: bool,
    new_id: Callable[[], str],
) -> tuple[str, str]:
    session = conversation.session
    summary_ids = {summary.id: summary.id for summary in conversation.summaries}
    session_id, title = session.id, session.title
    if as_copy:
        session_id, title = new_id(), session.title + COPY_SUFFIX
        summary_ids = {old: new_id() for old in summary_ids}

    def summary_id(old: str | None) -> str | None:
        return None if old is None else summary_ids.get(old, old)

    cursor.execute(
        f"INSERT INTO session ({_SESSION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            session_id,
            title,
            session.created_at,
            session.updated_at,
            session.model,
            session.system_prompt,
            session.version,
            session.last_seq,
            _json(session.trigger_state),
        ),
    )
    cursor.executemany(
        f"INSERT INTO summary (session_id, {_SUMMARY_COLUMNS}, checksum) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                session_id,
                summary_id(s.id),
                s.tier,
                summary_id(s.parent_id),
                s.depth,
                s.first_seq,
                s.last_seq,
                s.narrative,
                _json(s.key_points),
                _json(s.facets),
                s.source_tokens,
                s.summary_tokens,
                s.mode,
                s.model,
                s.trigger,
                s.instructions,
                s.state,
                s.created_at,
                summary_checksum(s.narrative, _json(s.key_points) or "[]", _json(s.facets) or "{}"),
            )
            for s in conversation.summaries
        ],
    )
    cursor.executemany(
        f"INSERT INTO message (session_id, {_MESSAGE_COLUMNS}, checksum) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                session_id,
                m.seq,
                m.role,
                m.content,
                m.created_at,
                m.token_estimate,
                _json(m.usage),
                m.model,
                m.status,
                summary_id(m.summary_id),
                int(m.pinned),
                m.thinking,
                m.thinking_seconds,
                m.refusal,
                text_checksum(m.content),
            )
            for m in conversation.messages
        ],
    )
    cursor.executemany(
        "UPDATE message SET "
        "version_of = (SELECT v.id FROM message AS v WHERE v.session_id = ?1 AND v.seq = ?2), "
        "shelved_by = (SELECT s.id FROM message AS s WHERE s.session_id = ?1 AND s.seq = ?3) "
        "WHERE session_id = ?1 AND seq = ?4",
        [
            (session_id, m.version_of, m.shelved_by, m.seq)
            for m in conversation.messages
            if m.version_of is not None or m.shelved_by is not None
        ],
    )
    cursor.executemany(
        f"INSERT INTO event (session_id, {_EVENT_COLUMNS}) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                session_id,
                e.kind,
                e.outcome,
                summary_id(e.summary_id),
                e.reason,
                e.ratio_before,
                e.ratio_after,
                e.tokens_before,
                e.tokens_after,
                e.duration_ms,
                e.error_class,
                e.detail,
                e.created_at,
            )
            for e in conversation.events
        ],
    )
    insert_lookups(cursor, session_id, conversation.lookups)
    cursor.executemany(
        "INSERT INTO attachment (message_id, ordinal, "
        f"{_ATTACHMENT_COLUMNS.replace('a.', '')}) "
        "SELECT id, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? FROM message WHERE session_id = ? AND seq = ?",
        [
            (
                a.ordinal,
                a.name,
                a.media_type,
                a.kind,
                a.size,
                a.sha256,
                a.tokens,
                int(a.estimated),
                a.width,
                a.height,
                a.pages,
                session_id,
                a.message_seq,
            )
            for a in conversation.attachments
        ],
    )
    return session_id, title
