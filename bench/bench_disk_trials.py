"""Issue 21's trials, run again: a careful user's worst day, with counts.

Run: .venv/bin/python bench/bench_disk_trials.py [--imports 300] [--skip-window]

Each trial damages real files the way a failing disk, a bad copy or a hostile file
does, then goes through the path Cairn takes (`open_database` at start, the import
and export of `cairn`, the daily backup's check, the composer of the window), and
prints what came back: how many cases, how many were noticed, how many messages were
lost, what the user was told. The yardstick is the files as written before the damage
(and, for the log, what plain SQLite reads of it), not Cairn's own idea of them.

Trials:
- the write-ahead log: one frame's header, salts or page number zeroed in the middle
  (15 cases), the log cut at a frame boundary (with and without its -shm index), a
  garbage log header; 60 messages saved only in the log, as a crash leaves them;
- the main file: its 16-byte signature overwritten, page 1 zeroed, the schema zeroed;
  200 messages, checkpointed;
- `--imports` mutated export files (structure and values, and the named cases: nesting
  of 1,000 and 5,000, integers of 2^63 and 5,000 digits, NaN, lone surrogates, a file
  cut or a byte flipped), each imported into a database holding one conversation;
- `cairn export` to an existing file, /dev/full, an empty name, a folder, a link to a
  device; `cairn search` and `cairn export` on a read-only data folder;
- the composer: a lone surrogate and a byte-order mark pasted, a 10 MB paste (time to
  the refusal in the composer of the window, offscreen);
- a 0-byte cairn.db at start;
- one bit flipped in a message's text in the database, in a backup, in both;
- the permissions of a new data folder, database, backup and export, and of an old
  folder left open to others (tightened at start).

Figures, not pass/fail. Runs as root or not (root: the read-only folder is a read-only
bind mount, as tests/fakes/read_only.py does).
"""

from __future__ import annotations

import argparse
import base64
import copy
import io
import json
import os
import random
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.core.errors import UserFacingError  # noqa: E402
from app.core.models import Role  # noqa: E402
from app.core.paths import AppPaths  # noqa: E402
from app.store import SessionStore, open_database  # noqa: E402
from app.store.attachments import AttachmentFiles  # noqa: E402
from app.store.backup import backup_folder, mend_texts, take_daily_backup  # noqa: E402
from app.store.database import mark_clean_shutdown  # noqa: E402
from app.store.export import (  # noqa: E402
    ExportFormat,
    ImportRefusedError,
    export_conversations,
    import_conversations,
    parse_export,
)
from app.store.wal_check import FRAME_HEADER_SIZE, WAL_HEADER_SIZE, wal_damage  # noqa: E402
from tests.fakes.export_world import (  # noqa: E402
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

PAGE = 4096
SIDES = ("", "-wal", "-shm")


@dataclass
class Row:
    trial: str
    cases: int
    result: str


ROWS: list[Row] = []


def report(trial: str, cases: int, result: str) -> None:
    ROWS.append(Row(trial, cases, result))
    print(f"\n## {trial} ({cases} cases)\n{result}", flush=True)


# --- files -----------------------------------------------------------------------------


def message_text(number: int) -> str:
    return f"Message {number}: the heron count on the ridge was {number}. " * 6


def crashed_log(folder: Path, messages: int) -> Path:
    """A folder holding cairn.db, -wal, -shm as a crash leaves them: `messages` messages
    saved only in the log (the conversation itself checkpointed into the main file)."""
    database = folder / "live" / "cairn.db"
    database.parent.mkdir(parents=True)
    opened = open_database(database)
    store = SessionStore(opened.connection, database=database)
    session = store.create_session("Walk", "claude-sonnet-4-6")
    store.close()
    opened = open_database(database)
    opened.connection.execute("PRAGMA wal_autocheckpoint = 0")
    store = SessionStore(opened.connection, database=database)
    for number in range(messages):
        store.append_message(
            session.id, (Role.USER, Role.ASSISTANT)[number % 2], message_text(number)
        )
    template = folder / "template"
    template.mkdir()
    for side in SIDES:
        shutil.copyfile(f"{database}{side}", template / f"cairn.db{side}")
    store.close()
    return template


def copy_of(template: Path, into: Path) -> Path:
    into.mkdir(parents=True)
    for side in SIDES:
        source = template / f"cairn.db{side}"
        if source.exists():
            shutil.copyfile(source, into / f"cairn.db{side}")
    return into / "cairn.db"


def write_at(path: Path, offset: int, data: bytes) -> None:
    with path.open("r+b") as file:
        file.seek(offset)
        file.write(data)


def frames_in(wal: Path) -> int:
    return (wal.stat().st_size - WAL_HEADER_SIZE) // (FRAME_HEADER_SIZE + PAGE)


def frame_offset(frame: int) -> int:
    return WAL_HEADER_SIZE + frame * (FRAME_HEADER_SIZE + PAGE)


def plain_sqlite_count(database: Path) -> int:
    """What SQLite alone reads of these files (a scratch copy without the -shm, which
    SQLite rebuilds from the log it can read, as it does after a crash)."""
    scratch = Path(tempfile.mkdtemp(prefix="plain-"))
    try:
        for side in ("", "-wal"):
            if Path(f"{database}{side}").exists():
                shutil.copyfile(f"{database}{side}", scratch / f"cairn.db{side}")
        connection = sqlite3.connect(scratch / "cairn.db")
        try:
            return int(connection.execute("SELECT count(*) FROM message").fetchone()[0])
        except sqlite3.Error:
            return 0
        finally:
            connection.close()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


@dataclass
class Opened:
    messages: int
    notice: str | None
    kept: int  # files set aside beside the database


def open_and_count(database: Path) -> Opened:
    opened = open_database(database)
    try:
        found = opened.connection.execute(
            "SELECT count(*) FROM message WHERE content LIKE 'Message %'"
        ).fetchone()[0]
    finally:
        opened.connection.close()
    kept = sum(1 for path in database.parent.iterdir() if ".damaged-" in path.name)
    return Opened(int(found), opened.notice, kept)


def changes_said(notice: str | None) -> str:
    """The count of changes the notice gives ("the last 12 saved changes"), or "-"."""
    if not notice:
        return "-"
    words = notice.split()
    for index, word in enumerate(words[:-2]):
        if word == "last" and words[index + 1].isdigit():
            return words[index + 1]
        if word == "last" and words[index + 1] == "saved" and words[index + 2].startswith("change"):
            return "1"
    return "?"


# --- 1. the write-ahead log -------------------------------------------------------------


def trial_wal(work: Path) -> None:
    saved = 60
    template = crashed_log(work / "wal", saved)
    frames = frames_in(template / "cairn.db-wal")
    kinds = {
        "frame header (24 bytes)": (0, 24),
        "salts (8 bytes)": (8, 8),
        "page number and commit size": (0, 8),
    }
    lines = []
    noticed = kept = exact = whole = 0
    backs: list[int] = []
    cases = 0
    for name, (start, size) in kinds.items():
        for share in (0.2, 0.35, 0.5, 0.65, 0.8):
            cases += 1
            frame = int(frames * share)
            database = copy_of(template, work / "wal-mid" / f"{cases}")
            wal = Path(f"{database}-wal")
            write_at(wal, frame_offset(frame) + start, bytes(size))
            sqlite_alone = plain_sqlite_count(database)
            damage = wal_damage(wal, Path(f"{database}-shm"))
            result = open_and_count(database)
            noticed += result.notice is not None
            kept += result.kept > 0
            backs.append(result.messages)
            whole += result.messages == saved
            said = changes_said(result.notice)
            lost_alone = saved - sqlite_alone
            exact += damage is not None and said == str(damage.lost_transactions)
            lines.append(
                f"  {name}, frame {frame}/{frames}: SQLite alone reads {sqlite_alone}/{saved}; "
                f"Cairn: {result.messages}/{saved} back, noticed={result.notice is not None}, "
                f"copy kept={result.kept > 0}, notice says {said} changes "
                f"(SQLite alone would lose {lost_alone} messages)"
            )
    report(
        "WAL: one frame's header, salts or page number zeroed mid-log",
        cases,
        f"noticed {noticed}/{cases}; copy set aside {kept}/{cases}; all {saved} messages back in "
        f"{whole}/{cases} (min {min(backs)}); notice's count = the log's count {exact}/{cases}\n"
        + "\n".join(lines),
    )

    # Cut at a frame boundary, with the index beside it and without.
    lines = []
    noticed = kept = cases = 0
    for with_index in (True, False):
        for share in (0.25, 0.5, 0.75):
            cases += 1
            database = copy_of(template, work / "wal-cut" / f"{cases}")
            wal = Path(f"{database}-wal")
            with wal.open("r+b") as file:
                file.truncate(frame_offset(int(frames * share)))
            if not with_index:
                Path(f"{database}-shm").unlink()
            result = open_and_count(database)
            noticed += result.notice is not None
            kept += result.kept > 0
            lines.append(
                f"  cut at {share:.0%} of {frames} frames, "
                f"-shm {'kept' if with_index else 'gone'}: "
                f"{result.messages}/{saved} back, noticed={result.notice is not None}, "
                f"copy kept={result.kept > 0}, notice says {changes_said(result.notice)} changes"
            )
    report(
        "WAL truncated at a frame boundary",
        cases,
        f"noticed {noticed}/{cases}; copy set aside {kept}/{cases} (without the -shm nothing "
        "witnesses the cut: a shorter log is a valid log)\n" + "\n".join(lines),
    )

    lines = []
    noticed = whole = cases = 0
    rng = random.Random(21)
    for name, data in (
        ("bytes 7..38", bytes(range(7, 39))),
        ("zeroed", bytes(WAL_HEADER_SIZE)),
        ("random", rng.randbytes(WAL_HEADER_SIZE)),
    ):
        cases += 1
        database = copy_of(template, work / "wal-header" / f"{cases}")
        wal = Path(f"{database}-wal")
        damage = wal_damage(wal, Path(f"{database}-shm"))
        write_at(wal, 0, data)
        damage = wal_damage(wal, Path(f"{database}-shm"))
        result = open_and_count(database)
        noticed += result.notice is not None
        whole += result.messages == saved
        lines.append(
            f"  header {name}: {result.messages}/{saved} back, "
            f"noticed={result.notice is not None}, "
            f"copy kept={result.kept > 0}, notice says {changes_said(result.notice)} changes, "
            f"the log holds {damage.lost_transactions if damage else '?'} commits"
        )
    report(
        "WAL header garbage",
        cases,
        f"noticed {noticed}/{cases}; all {saved} back {whole}/{cases}\n" + "\n".join(lines),
    )


# --- 2. the main file -------------------------------------------------------------------


def trial_main_file(work: Path) -> None:
    saved = 200
    template = work / "main" / "template"
    template.mkdir(parents=True)
    database = template / "cairn.db"
    opened = open_database(database)
    store = SessionStore(opened.connection, database=database)
    for walk in range(4):
        session = store.create_session(f"Walk {walk}", "claude-sonnet-4-6")
        for number in range(saved // 4):
            store.append_message(
                session.id, (Role.USER, Role.ASSISTANT)[number % 2], message_text(number)
            )
    store.close()
    mark_clean_shutdown(database)
    state = [p for p in template.iterdir() if p.name != "cairn.db"]
    damages: dict[str, Callable[[Path], None]] = {
        "16-byte signature overwritten": lambda path: write_at(path, 0, b"Not a database!\x00"),
        "page 1 zeroed": lambda path: write_at(path, 0, bytes(PAGE)),
        "schema (page 1 after its header) zeroed": lambda path: write_at(
            path, 100, bytes(PAGE - 100)
        ),
        "signature, page size and format bytes garbage": lambda path: write_at(
            path, 0, random.Random(2).randbytes(24)
        ),
    }
    lines = []
    salvaged: list[int] = []
    noticed = 0
    for index, (name, damage) in enumerate(damages.items()):
        folder = work / "main" / str(index)
        folder.mkdir()
        shutil.copyfile(database, folder / "cairn.db")
        for extra in state:
            if extra.is_file():
                shutil.copyfile(extra, folder / extra.name)
        damage(folder / "cairn.db")
        result = open_and_count(folder / "cairn.db")
        salvaged.append(result.messages)
        noticed += result.notice is not None
        lines.append(
            f"  {name}: salvaged {result.messages}/{saved}, noticed={result.notice is not None}, "
            f"copy kept={result.kept > 0}\n    notice: {result.notice}"
        )
    summary = (
        f"salvaged {', '.join(f'{n}/{saved}' for n in salvaged)} messages; noticed "
        f"{noticed}/{len(damages)}"
    )
    report("Main file damaged at its beginning", len(damages), "\n".join([summary, *lines]))


# --- 3. imports -------------------------------------------------------------------------

HOSTILE_TEXTS_MORE = (*HOSTILE_TEXTS, "🦩" * 300)
WRITTEN_LATER_MORE = {**WRITTEN_LATER, "@infinity@": "Infinity"}


def random_value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(8 if depth < 2 else 6)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice([True, False])
    if kind == 2:
        return rng.choice([*HOSTILE_NUMBERS, rng.randint(-1000, 1000)])
    if kind in (3, 4):
        return rng.choice([*HOSTILE_TEXTS_MORE, "hello", "2026-01-01T00:00:00+00:00", "user"])
    if kind == 5:
        return rng.choice(sorted(WRITTEN_LATER_MORE))
    if kind == 6:
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(3))]
    return {rng.choice(["a", "id", "role", ""]): random_value(rng, depth + 1)}


def edited(rng: random.Random, value: Any) -> Any:
    """`value` changed as a person editing the file might: a text rewritten, a number
    nudged, a list shortened."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value + rng.choice([-1, 1, 7])
    if isinstance(value, float):
        return round(value * 1.5, 3)
    if isinstance(value, str):
        return rng.choice([value + " (edited)", value.upper(), "Ünïcödé ☕ 𝄞 עברית", value[:3]])
    if isinstance(value, list):
        return value[:-1]
    return value


def mutate(rng: random.Random, valid: dict[str, Any]) -> bytes:
    """One to three changes at random places, then maybe the bytes cut or one flipped."""
    data = copy.deepcopy(valid)
    for _ in range(rng.randint(1, 3)):
        spots = list(places(data))[1:]
        if not spots:
            break
        *parent_path, last = rng.choice(spots)
        parent = data
        for part in parent_path:
            parent = parent[part]
        # Half of the changes are ones a person editing the file might make.
        action = rng.choice(
            [
                "replace",
                "delete",
                "duplicate",
                "later",
                "number",
                "edit",
                "edit",
                "edit",
                "delete",
                "duplicate",
            ]
        )
        if action == "edit":
            parent[last] = edited(rng, parent[last])
        elif action == "replace":
            parent[last] = random_value(rng)
        elif action == "delete":
            del parent[last]
        elif action == "duplicate" and isinstance(parent, list):
            parent.append(copy.deepcopy(parent[last]))
        elif action == "later":
            parent[last] = rng.choice(sorted(WRITTEN_LATER_MORE))
        else:
            parent[last] = rng.choice(HOSTILE_NUMBERS)
    text = json.dumps(data, ensure_ascii=rng.random() < 0.5)
    for token, written in WRITTEN_LATER_MORE.items():
        text = text.replace(f'"{token}"', written)
    raw = text.encode("utf-8", "surrogatepass")
    damage = rng.choice(["none"] * 8 + ["cut", "flip"])
    if damage == "cut":
        raw = raw[: rng.randint(0, len(raw))]
    elif damage == "flip" and raw:
        at = rng.randrange(len(raw))
        raw = raw[:at] + bytes([raw[at] ^ rng.randint(1, 255)]) + raw[at + 1 :]
    return raw


def named_cases(valid: dict[str, Any]) -> list[tuple[str, bytes]]:
    """The cases the first trial hit, written on purpose."""
    text = json.dumps(valid)
    first = valid["conversations"][0]
    cases: list[tuple[str, bytes]] = []

    def with_message_field(field: str, raw_value: str) -> bytes:
        data = copy.deepcopy(valid)
        data["conversations"][0]["messages"][0][field] = "@x@"
        return json.dumps(data).replace('"@x@"', raw_value).encode()

    cases.append(("nesting 1,000", ("[" * 1000 + "]" * 1000).encode()))
    cases.append(
        (
            "nesting 5,000 in a message",
            with_message_field("usage", '{"a":' * 5000 + "1" + "}" * 5000),
        )
    )
    cases.append(("seq 2^63", with_message_field("seq", str(2**63))))
    cases.append(
        ("token estimate -2^63-1", with_message_field("token_estimate", str(-(2**63) - 1)))
    )
    cases.append(("a 5,000-digit integer", with_message_field("seq", "7" * 5000)))
    cases.append(("NaN", with_message_field("token_estimate", "NaN")))
    cases.append(("lone surrogate", with_message_field("content", '"\\ud800"')))
    cases.append(("empty file", b""))
    cases.append(("not JSON", b"\x00\x01binary"))
    cases.append(("cut in half", text.encode()[: len(text) // 2]))
    dup = copy.deepcopy(valid)
    dup["conversations"].append(copy.deepcopy(first))
    cases.append(("the same conversation twice", json.dumps(dup).encode()))
    twin = copy.deepcopy(valid)
    twin["conversations"][0]["messages"].append(copy.deepcopy(first["messages"][0]))
    cases.append(("a message twice (same seq)", json.dumps(twin).encode()))
    bad_file = copy.deepcopy(valid)
    for attachment in bad_file["conversations"][0].get("attachments", []):
        attachment["data"] = base64.b64encode(b"other bytes").decode()
    cases.append(("an attached file whose bytes are not its sha256", json.dumps(bad_file).encode()))
    return cases


DATABASE_WORDS = ("sqlite", "misuse", "constraint", "unique", "foreign key", "database disk")


def trial_imports(work: Path, number: int) -> None:
    target, valid = export_world(work / "imports")
    rng = random.Random(2121)
    cases = named_cases(valid) + [(f"random {i}", mutate(rng, valid)) for i in range(number)]
    attachments = target.parent / "attachments"
    outcome = {"refused in words": 0, "imported exactly": 0, "imported, differs": 0}
    problems: list[str] = []
    tracebacks = leftovers = database_words = unnamed_place = changed = 0
    named_lines = []
    for name, raw in cases:
        connection = open_database(target).connection
        before, files_before = counts(connection), files_in(attachments)
        verdict = ""
        try:
            try:
                export = parse_export(raw, name="fuzz.json")
                result = import_conversations(connection, export, as_copy=True, database=target)
            except UserFacingError as error:
                outcome["refused in words"] += 1
                verdict = f"refused: {error.message[:150]}"
                lowered = error.message.lower()
                if any(word in lowered for word in DATABASE_WORDS):
                    database_words += 1
                    problems.append(f"{name}: database words: {error.message[:200]}")
                if isinstance(error, ImportRefusedError) and not error.message.startswith(
                    "fuzz.json"
                ):
                    unnamed_place += 1
                if counts(connection) != before:
                    changed += 1
                    problems.append(f"{name}: a refusal changed the database")
                if files_in(attachments) != files_before:
                    leftovers += 1
                    problems.append(f"{name}: a refusal left files behind")
            except Exception as error:  # the harness counts what the app must never do
                tracebacks += 1
                verdict = f"TRACEBACK {type(error).__name__}: {error}"[:200]
                problems.append(f"{name}: {verdict}")
            else:
                exact = imported_exactly(connection, target, export, result.session_ids)
                if has_half_character(raw):
                    exact = False  # the file held one: whatever came in was altered
                outcome["imported exactly" if exact else "imported, differs"] += 1
                verdict = "imported exactly" if exact else "imported, DIFFERS"
                if not exact:
                    problems.append(f"{name}: imported, but not what the file said")
                # Back to one conversation (and its files), so each case starts alike.
                store = SessionStore(connection, database=target)
                for session_id in result.session_ids:
                    store.delete_session(session_id)
        finally:
            connection.close()
        if not name.startswith("random"):
            named_lines.append(f"  {name}: {verdict}")
    summary = (
        ", ".join(f"{count} {what}" for what, count in outcome.items())
        + f"; {tracebacks} tracebacks; {leftovers} refusals left files behind; "
        f"{database_words} refusals in database words; {changed} refusals changed the database; "
        f"{unnamed_place} refusals without the file's name"
    )
    report(
        "Mutated import files",
        len(cases),
        summary
        + "\n"
        + "\n".join(named_lines)
        + ("\n  problems:\n    " + "\n    ".join(problems) if problems else ""),
    )


def has_half_character(raw: bytes) -> bool:
    """Whether the file, read by Python's own json (which keeps lone surrogates), holds
    a text with half a character."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):
        return False
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, str) and any(0xD800 <= ord(c) <= 0xDFFF for c in item):
            return True
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def imported_exactly(
    connection: sqlite3.Connection, target: Path, export: Any, ids: list[str]
) -> bool:
    out = target.parent / "again.json"
    export_conversations(
        connection, out, fmt=ExportFormat.JSON, session_ids=ids, database=target, replace=True
    )
    again = json.loads(out.read_text(encoding="utf-8"))["conversations"]

    for given, back in zip(export.conversations, again, strict=True):
        expected = essentials(given.model_dump(mode="json", exclude_none=False))
        got = essentials(back)
        for part in ("messages", "events", "lookups", "attachments"):
            if [said(i) for i in expected.get(part, [])] != [said(i) for i in got.get(part, [])]:
                return False
    for attachment in (a for c in export.conversations for a in c.attachments):
        if attachment.data is not None and AttachmentFiles(target).read(
            attachment.sha256
        ) != base64.b64decode(attachment.data):
            return False
    return True


# --- 4. the command line: export, and a read-only folder --------------------------------


@contextmanager
def cairn_home(home: Path) -> Iterator[None]:
    old = os.environ.get("CAIRN_HOME")
    os.environ["CAIRN_HOME"] = str(home)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("CAIRN_HOME", None)
        else:
            os.environ["CAIRN_HOME"] = old


def home_with_a_conversation(home: Path) -> AppPaths:
    with cairn_home(home):
        paths = AppPaths.from_environment()
    opened = open_database(paths.database)
    store = SessionStore(opened.connection, database=paths.database)
    session = store.create_session("Roses", "claude-sonnet-4-6")
    store.append_message(session.id, Role.USER, "When do roses want pruning?")
    store.close()
    mark_clean_shutdown(paths.database)
    return paths


def run_cli(home: Path, *argv: str) -> tuple[int, str]:
    from app.cli import main

    out, err = io.StringIO(), io.StringIO()
    with cairn_home(home):
        code = main(list(argv), out=out, err=err)
    return code, (err.getvalue() or out.getvalue()).strip().replace("\n", " ")


def trial_export(work: Path) -> None:
    home = work / "export-home"
    home_with_a_conversation(home)
    lines = []
    existing = work / "existing.json"
    existing.write_text("the user's own file\n", encoding="utf-8")
    code, said = run_cli(home, "export", str(existing))
    kept = existing.read_text(encoding="utf-8") == "the user's own file\n"
    lines.append(f"  to an existing file: exit {code}, file kept={kept}: {said}")
    code, said = run_cli(home, "export", "--force", str(existing))
    replaced = existing.read_text(encoding="utf-8").startswith("{")
    lines.append(f"  the same with --force: exit {code}, replaced={replaced}: {said}")
    if Path("/dev/full").exists():
        code, said = run_cli(home, "export", "--force", "/dev/full")
        still = stat.S_ISCHR(os.stat("/dev/full").st_mode)
        lines.append(
            f"  to /dev/full --force (uid {os.geteuid()}): exit {code}, "
            f"still a device={still}: {said}"
        )
    code, said = run_cli(home, "export", "")
    lines.append(f"  an empty name: exit {code}: {said}")
    folder = work / "a-folder"
    folder.mkdir()
    code, said = run_cli(home, "export", "--force", str(folder))
    lines.append(f"  a folder (--force): exit {code}, still a folder={folder.is_dir()}: {said}")
    link = work / "to-null.json"
    link.symlink_to("/dev/null")
    code, said = run_cli(home, "export", "--force", str(link))
    lines.append(
        f"  a link to /dev/null (--force): exit {code}, "
        f"/dev/null a device={stat.S_ISCHR(os.stat('/dev/null').st_mode)}: {said}"
    )
    fresh = work / "fresh.json"
    code, said = run_cli(home, "export", str(fresh))
    lines.append(f"  a new file: exit {code}, mode {stat.S_IMODE(fresh.stat().st_mode):o}: {said}")
    refused = sum(" exit 1" in line for line in lines)
    summary = (
        f"{refused} refused in words (existing file without --force, /dev/full, empty name, "
        f"folder, link to a device), {len(lines) - refused} written (--force; a new file, 0600); "
        "nothing clobbered"
    )
    report("cairn export never clobbers", len(lines), "\n".join([summary, *lines]))


def trial_read_only(work: Path) -> None:
    home = work / "ro-home"
    paths = home_with_a_conversation(home)
    folder = paths.data_dir
    lines = []
    if os.geteuid() == 0:  # root writes through any chmod: a read-only bind mount
        bound = subprocess.run(
            ["mount", "-o", "bind,ro", str(folder), str(folder)], capture_output=True, check=False
        )
        if bound.returncode != 0:
            report("Read-only data folder", 0, f"  cannot make it read-only: {bound.stderr!r}")
            return
        undo = ["umount", str(folder)]
    else:
        undo = ["chmod", f"{folder.stat().st_mode & 0o777:o}", str(folder)]
        folder.chmod(0o555)
    try:
        before = sorted(p.name for p in folder.iterdir())
        code, said = run_cli(home, "search", "roses")
        lines.append(f"  cairn search roses: exit {code}: {said[:160]}")
        out = work / "ro-export.json"
        code, said = run_cli(home, "export", str(out))
        lines.append(f"  cairn export: exit {code}: {said[:160]}")
        after = sorted(p.name for p in folder.iterdir())
        lines.insert(
            0,
            f"search exit {lines[0].split('exit ')[1][0]}, export exit "
            f"{lines[1].split('exit ')[1][0]}; the folder unchanged: {before == after}",
        )
    finally:
        subprocess.run(undo, check=True)
    report("Read-only data folder: cairn search / export", 2, "\n".join(lines))


# --- 5. a 0-byte database, flipped bits, permissions -------------------------------------


def trial_empty_database(work: Path) -> None:
    folder = work / "empty"
    folder.mkdir()
    (folder / "cairn.db").write_bytes(b"")
    opened = open_database(folder / "cairn.db")
    opened.connection.close()
    kept = [p.name for p in folder.iterdir() if ".damaged-" in p.name]
    report(
        "A 0-byte cairn.db at start",
        1,
        f"noticed={opened.notice is not None}, set aside ({len(kept)} copy), "
        f"title '{opened.notice_title}'\n  {kept}\n"
        f"  notice: {opened.notice}",
    )


def flip_bit_in_text(path: Path, text: str) -> bool:
    """Flip one bit of the first occurrence of `text`'s bytes in the file (the main file:
    checkpointed first)."""
    data = bytearray(path.read_bytes())
    at = data.find(text.encode())
    if at < 0:
        return False
    data[at + 5] ^= 0x04
    path.write_bytes(bytes(data))
    return True


def trial_flipped_bits(work: Path) -> None:
    lines = []
    for case in ("database", "backup", "both"):
        folder = work / "flip" / case
        folder.mkdir(parents=True)
        database = folder / "cairn.db"
        opened = open_database(database)
        store = SessionStore(opened.connection, database=database)
        session = store.create_session("Walk", "claude-sonnet-4-6")
        for number in range(50):
            store.append_message(
                session.id,
                Role.USER,
                f"Unique text number {number:03d}: the gate code is {4000 + number}.",
            )
        store.close()
        mark_clean_shutdown(database)
        take_daily_backup(database, today=date.today() - timedelta(days=1))
        (backup,) = backup_folder(database).glob("cairn-*.db")
        victim = "Unique text number 017"
        if case in ("database", "both"):
            flip_bit_in_text(database, victim)
        if case in ("backup", "both"):
            flip_bit_in_text(backup, victim)
        if case == "backup":
            # Found when that backup is restored (its texts are checked after the swap);
            # the nightly backup reads back its own new copy before keeping it.
            from app.store.backup import restore

            restore(database, backup)
        repair = mend_texts(database)
        connection = sqlite3.connect(database)
        content, damaged = connection.execute(
            "SELECT content, damaged FROM message WHERE seq = 18"
        ).fetchone()
        connection.close()
        lines.append(
            f"  bit flipped in the {case}: found {repair.found}, put back {repair.restored}, "
            f"marked damaged {repair.marked}; the text now "
            f"{'as written' if content.startswith(victim) else 'ALTERED'}"
            f"{' (marked on screen)' if damaged else ''}\n    said: {repair.sentence()}"
        )
    written = sum("the text now as written" in line for line in lines)
    marked = sum("(marked on screen)" in line for line in lines)
    found = sum(": found 1," in line for line in lines)
    summary = (
        f"found {found}/3; put back as written {written}/3; marked damaged on screen "
        f"{marked}/3 (where no backup held the text intact)"
    )
    report("One bit flipped in a message's text", 3, "\n".join([summary, *lines]))


def mode(path: Path) -> str:
    return f"{stat.S_IMODE(path.stat().st_mode):o}"


def trial_permissions(work: Path) -> None:
    old_umask = os.umask(0o022)
    try:
        home = work / "perm-home"
        with cairn_home(home):
            paths = AppPaths.from_environment()
        paths.ensure()
        opened = open_database(paths.database)
        SessionStore(opened.connection, database=paths.database).create_session(
            "Roses", "claude-sonnet-4-6"
        )
        opened.connection.close()
        take_daily_backup(paths.database)
        (backup,) = backup_folder(paths.database).glob("cairn-*.db")
        wal = Path(f"{paths.database}-wal")
        lines = [
            f"  new (umask 022): data folder {mode(paths.data_dir)}, "
            f"cairn.db {mode(paths.database)}, -wal {mode(wal) if wal.exists() else 'gone'}, "
            f"backups folder {mode(backup.parent)}, backup {mode(backup)}, "
            f"log folder {mode(paths.log_dir)}"
        ]
        paths.data_dir.chmod(0o755)
        paths.database.chmod(0o644)
        backup.chmod(0o644)
        tightened = paths.make_private()
        lines.append(
            f"  an old folder left 0755/0644: tightened at start {tightened} (folders, files) -> "
            f"data folder {mode(paths.data_dir)}, cairn.db {mode(paths.database)}, "
            f"backup {mode(backup)}"
        )
    finally:
        os.umask(old_umask)
    summary = lines[0].strip() + "; an old 0755/0644 folder tightened at start"
    report("Who can read the conversations", 2, "\n".join([summary, *lines]))


# --- 6. the composer (offscreen) --------------------------------------------------------


def trial_composer() -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QByteArray, QMimeData
    from PySide6.QtWidgets import QApplication

    from app.core.text import MAX_COMPOSER_CHARACTERS
    from app.ui.composer import Composer

    app = QApplication.instance() or QApplication(["bench"])
    lines = []

    def paste(box: Composer, raw: bytes) -> float:
        mime = QMimeData()
        mime.setData("text/plain;charset=utf-8", QByteArray(raw))
        began = time.perf_counter()
        box.editor.insertFromMimeData(mime)
        app.processEvents()
        return time.perf_counter() - began

    for name, raw in (
        ("a lone surrogate (half an emoji)", b"half an emoji: \xed\xa0\xbd here"),
        ("a leading byte-order mark", b"\xef\xbb\xbfGate code 4471"),
        ("text with emoji, Hebrew, tabs, CRLF", "Ünïcödé ☕ 𝄞 עברית\ttab\r\nline".encode()),
    ):
        box = Composer()
        box.show()
        paste(box, raw)
        note = box.note.text() if box.note.isVisible() else "(no note)"
        lines.append(f"  {name}: the box holds {box.text()!r}; note: {note}")
        box.close()
    times = []
    text = (
        "2026-11-28 10:00:00 INFO a line of a log file, 0123456789 abcdef\n" * (10_000_000 // 64)
    ).encode()
    for _ in range(3):
        box = Composer()
        box.show()
        times.append(paste(box, text))
        lines.append(
            f"  a {len(text) / 1e6:.1f} MB paste: {times[-1] * 1e3:.0f} ms to the refusal; "
            f"the box holds {len(box.text())} characters; note: {box.note.text()[:120]}"
        )
        box.close()
    summary = (
        "lone surrogate refused with a note, BOM left out with a note, other text exact; "
        f"10 MB paste refused in {min(times) * 1e3:.0f}-{max(times) * 1e3:.0f} ms (widget, "
        "offscreen; the real window: bench/bench_paste.py)"
    )
    # The largest paste taken: just under the limit, in lines of a log.
    line = "2026-11-28 10:00:00 INFO a line of a log file, 0123456789 abcdef\n"
    accepted = (line * (MAX_COMPOSER_CHARACTERS // len(line) - 1)).encode()
    box = Composer()
    box.show()
    took = paste(box, accepted)
    lines.append(
        f"  a {len(accepted) / 1e6:.2f} MB paste (under the limit): {took * 1e3:.0f} ms until "
        f"taken; the box holds {len(box.text()):,} characters"
    )
    box.close()
    summary += f"; {len(accepted) / 1e6:.2f} MB accepted in {took * 1e3:.0f} ms"
    report(
        "The composer: what was typed is sent as typed or refused in words",
        len(lines),
        "\n".join([summary, *lines]),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--imports", type=int, default=300)
    parser.add_argument("--skip-window", action="store_true")
    parser.add_argument("--only", help="run only the trials whose name holds this word")
    args = parser.parse_args()
    print(f"# Issue 21 trials — load average {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="cairn-trials-") as scratch:
        work = Path(scratch)
        trials: list[tuple[str, Callable[[], None]]] = [
            ("wal", lambda: trial_wal(work)),
            ("main", lambda: trial_main_file(work)),
            ("imports", lambda: trial_imports(work, args.imports)),
            ("export", lambda: trial_export(work)),
            ("read-only", lambda: trial_read_only(work)),
            ("empty", lambda: trial_empty_database(work)),
            ("flipped", lambda: trial_flipped_bits(work)),
            ("permissions", lambda: trial_permissions(work)),
        ]
        if not args.skip_window:
            trials.append(("composer", trial_composer))
        for name, trial in trials:
            if args.only is None or args.only in name:
                trial()
    print("\n| trial | cases | result |\n|---|---|---|")
    for row in ROWS:
        print(f"| {row.trial} | {row.cases} | {row.result.splitlines()[0]} |")


if __name__ == "__main__":
    main()
