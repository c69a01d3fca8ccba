"""Opening `cairn.db`: refuse what a newer Cairn made, set damaged files aside,
then WAL, `synchronous=FULL`, foreign keys and migrations (DESIGN §2, §7, §9).

`open_database` runs once at startup; every other thread opens its own
connection with the cheap `connect`.

The integrity check, and why it seldom runs at startup: `PRAGMA quick_check`
reads every page (653 ms on a 1 GB database), and the window should not wait
for it. A small state file beside the database, `cairn.db.state.json`, says
whether the last run ended normally:

- `open_database` marks the database "in use" before its first write;
  `mark_clean_shutdown`, called when Cairn closes normally (after the last
  connection is closed), records "closed cleanly" with the file's size,
  modification time and inode as it was left.
- At the next start the check runs before use, exactly as it always did,
  unless the record proves the file is as a clean close left it: not "in use",
  the same size, time and inode, no write-ahead log with frames beside it, and
  a check passed less than `CHECK_EVERY` (7 days) ago. (The app's start leaves the
  weekly check, when only it is due, to its check after the first paint.) A crash, a power cut, a
  lost or unreadable state file, or another program writing to the database
  all fail one of these, so they are checked; a state write that fails only
  costs a check at the next start.
- Why a file of our own rather than SQLite's evidence alone (a `-wal` with
  frames left behind): that evidence is missing when the database could not
  switch to WAL (some network folders), when the run died before its first
  write, or when the `-wal` was lost with a copied or restored file; it is
  present after a clean close that left a connection open; and SQLite has
  nowhere to record when the file was last checked, or that a check failed.
  The `-wal` is kept as a second witness.
- `check_database` runs the same check on a worker thread after the first
  paint, on a connection of its own (a read transaction: the app keeps
  writing meanwhile). Damage it finds is recorded in the state file, and
  the running app is told in plain words to quit and start again; the file is
  never swapped under it. The next `open_database` reads the record and sets
  the file aside (copied to `cairn.db.damaged-<timestamp>`, never altered)
  without checking again. `record_damage` does the same for damage a store
  operation ran into.

A database a newer Cairn made is refused before anything is written, the state
file included.
"""

from __future__ import annotations

import enum
import json
import logging
import os
import shutil
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from itertools import count
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from app.core.dates import utc_now
from app.core.errors import BugError, DatabaseTooNewError, StorageError, UserFacingError
from app.core.files import atomic_write
from app.core.paths import FOLDER_ERROR_TITLE, describe_folder_error
from app.core.platform import (
    fsync_folder,
    has_posix_permissions,
    replace_file,
    sqlite_durability_pragmas,
    sqlite_uri,
)
from app.store.errors import is_damage, translate
from app.store.migrations import SCHEMA_VERSION, migrate, user_version

if TYPE_CHECKING:
    from app.store.wal_check import WalDamage

log = logging.getLogger(__name__)

BUSY_TIMEOUT_MS = 5000
CHECK_EVERY = timedelta(days=7)
STATE_SUFFIX = ".state.json"
DAMAGE_FOUND_MESSAGE = (
    "Cairn found damage in its database. Quit and start Cairn again: it will set the "
    "damaged file aside and keep a copy."
)

_OPEN_ACTION = "open your conversations"
# Files Cairn keeps are readable by the user alone (SQLite gives -wal and -shm the mode
# of the database file); on Windows the profile's permissions do that.
PRIVATE = 0o600
_BINARY = getattr(os, "O_BINARY", 0)
_EMPTY_FILE = "the file is empty (0 bytes)"
_REPAIRED = "Cairn found damage in the record of your latest changes and repaired it"
_SQLITE_MAGIC = b"SQLite format 3\x00"
_HEADER_SIZE = 100
_USER_VERSION_OFFSET = 60  # https://www.sqlite.org/fileformat.html#the_database_header
_SIDE_FILES = ("-wal", "-shm")
_COPY_CHUNK = 1 << 20
_STATE_FORMAT = 1
_CHECK_ROWS = 5
# SQLite virtual-machine steps between looks at CheckCancel: a backstop for an
# interrupt that came too early; rare, as each look takes the GIL from the GUI thread
# (about 125 looks in a 1 GB check).
_PROGRESS_EVERY = 100_000
# One read-modify-write of a state file at a time: the worker's check result and
# the clean close may meet. One process per data folder (InstanceLock) does the rest.
_STATE_LOCK = threading.Lock()
_T = TypeVar("_T")

IntegrityCheck = Callable[[sqlite3.Connection], list[str]]
"""Runs an integrity check on a connection; returns SQLite's report (["ok"] when sound)."""


def run_quick_check(connection: sqlite3.Connection) -> list[str]:
    """`PRAGMA quick_check`: every page and b-tree read, without the index cross-checks."""
    # Its report may quote damaged bytes that are not UTF-8: read them, never fail on them.
    factory = connection.text_factory
    connection.text_factory = lambda raw: raw.decode("utf-8", "replace")
    try:
        rows = connection.execute(f"PRAGMA quick_check({_CHECK_ROWS:d})").fetchall()
    finally:
        connection.text_factory = factory
    return [str(row[0]) for row in rows]


@dataclass(frozen=True)
class OpenResult:
    """An open, migrated connection, and what to tell the user about it.

    Attributes:
        connection: autocommit (`isolation_level=None`) connection for this thread.
        path: the database file, for error messages (`SessionStore(..., database=path)`).
        notice: plain words to show once (a damaged file was set aside), or None.
        set_aside: where the damaged file was copied, when that happened.
        checked: whether the integrity check ran at open; when it did not, run
            `check_database` on a worker thread after the first paint.
        check_reason: why the check ran at open (for the log), or None.
        notice_title: the notice's title, when there is one.
        check_first: why the check must pass before anything is written (Cairn did not
            close normally), when `open_database` was asked to leave it to the caller:
            run `check_database` at once, with writes held (`transactions.hold_writes`).
    """

    connection: sqlite3.Connection
    path: Path
    notice: str | None = None
    set_aside: Path | None = None
    checked: bool = False
    check_reason: str | None = None
    notice_title: str = "Your conversations were set aside"
    check_first: str | None = None


def open_database(
    path: Path | str,
    *,
    integrity_check: IntegrityCheck = run_quick_check,
    now: datetime | None = None,
    check_after_crash_later: bool = False,
) -> OpenResult:
    """Open (creating if needed) and migrate the database at `path`.

    Raises `DatabaseTooNewError` without touching the file when a newer Cairn
    made it, and `StorageError` in plain words when the folder or file cannot be
    used. A damaged file is copied aside and a fresh database started instead.
    `integrity_check` runs only when the last run did not end cleanly, or the
    last check is old (module docstring); `now` is for tests. With
    `check_after_crash_later`, the check a crash calls for is left to the caller
    (`OpenResult.check_first`), so the window is not kept waiting for it — unless a
    migration is due: nothing is written into a file not known to be sound — and so is
    a weekly check that is due on a file closed cleanly and unchanged since (`checked`
    False: the caller's check after the first paint, as at every start).
    """
    database = Path(path)
    moment = now or utc_now()
    _ensure_folder(database.parent)
    damage = _damage_from_header(database)
    _check_writable(database)
    # Before SQLite opens the file, which would replay the log and drop what follows a break.
    wal = _keep_damaged_wal(database) if damage is None else None
    if wal is not None and wal.damaged is not None:
        damage = wal.damaged
    state = _read_state(database)
    check_reason: str | None = None
    last_check = state.last_check if state is not None else None
    if damage is None and state is not None and state.damage is not None:
        damage = _recorded_damage(database, state)
    check_first: str | None = None
    if damage is None:
        check_reason = _why_check(database, state, moment)
        if (
            check_after_crash_later
            and check_reason is not None
            and state is not None
            and state.in_use
            and _schema_version(database) == SCHEMA_VERSION
        ):
            check_first, check_reason = check_reason, None
            log.info("Checking the database %s once the window is open: %s.", database, check_first)
        elif (
            check_after_crash_later
            and check_reason is not None
            and state is not None
            and check_reason == _overdue(state, moment)
            and _schema_version(database) == SCHEMA_VERSION
        ):
            # Closed cleanly and unchanged since, no migration due: only the weekly check
            # is due, and every start runs that check after the first paint anyway
            # (`check_database`, writes going on meanwhile), so this one waits for it too:
            # ~1 s less before a 1 GB database's window (bench_startup, issue 20).
            log.info("Checking the database %s after the window opens: %s.", database, check_reason)
            check_reason = None
        if check_reason is not None:
            log.info("Checking the database %s before use: %s.", database, check_reason)
        damage = _damage_from_sqlite(database, integrity_check if check_reason else None)
        if check_reason is not None and damage is None:
            last_check = moment
    set_aside = None
    notice = None
    repaired = False
    if damage is not None:
        log.warning("The database %s is damaged (%s); setting it aside.", database, damage)
        if wal is not None and wal.damaged is not None:
            set_aside = wal.kept  # copied already, as it was found
            _remove_damaged(database, set_aside)
            notice = "Cairn set the damaged files aside and started a fresh database."
        else:
            set_aside = _set_aside(database)
            notice = (
                f"Cairn found a damaged database and set it aside as {set_aside.name} "
                f"(in {set_aside.parent}); a fresh one was started. Nothing was deleted."
            )
            if damage == _EMPTY_FILE:
                notice = (
                    "Cairn found its database file empty (0 bytes): something outside Cairn "
                    f"emptied it. It was set aside as {set_aside.name} (in {set_aside.parent}) "
                    "and a fresh one was started."
                )
                if any((database.parent / "backups").glob("cairn-*.db")):
                    notice += (
                        " Your backups are kept: File → Restore from backup… puts your "
                        "conversations back as they were."
                    )
    if not _has_content(database):
        last_check = moment  # nothing to check in a fresh database
    # Before the first write, so a crash from here on counts as an unclean shutdown.
    _update_state(database, lambda _: _State(in_use=True, last_check=last_check))
    connection = _connect(database, mode=None)
    _make_private(database)  # before the log and its index are made beside it
    try:
        # Checked again before the first write: the file may have changed since.
        _refuse_if_too_new(user_version(connection), database)
        mode = connection.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            log.warning("The database %s stays in %s journal mode (no WAL here).", database, mode)
        migrate(connection)
        if set_aside is not None and not (
            damage == _EMPTY_FILE and not _side(set_aside, "-wal").exists()
        ):
            # The log's picture first: it holds what SQLite's own reading skips.
            pictures = [wal.picture] if wal is not None and wal.picture is not None else []
            from app.store.salvage import salvage_all  # only for a damaged file (issue 20)

            report = salvage_all([*pictures, set_aside], connection)
            notice = f"{notice} {report.sentence()}"
            repaired = report.whole and damage != _EMPTY_FILE
            if repaired:
                notice = (
                    f"Cairn found a damaged database and repaired it. {report.sentence()} "
                    f"The damaged file is kept as {set_aside.name} (in {set_aside.parent})."
                )
    except (sqlite3.Error, UnicodeError) as error:
        connection.close()
        raise translate(error, action=_OPEN_ACTION, database=database) from error
    except BaseException:
        connection.close()
        raise
    finally:
        if wal is not None and wal.picture is not None:
            wal.picture.unlink(missing_ok=True)
    wal_notice = wal.notice if wal is not None else None
    return OpenResult(
        connection,
        database,
        " ".join(filter(None, (wal_notice, notice))) or None,
        set_aside,
        checked=check_reason is not None,
        check_reason=check_reason,
        notice_title=_title(set_aside, wal, repaired),
        check_first=check_first,
    )


def _title(set_aside: Path | None, wal: _WalOutcome | None, repaired: bool) -> str:
    """The notice's title: what happened, in a few words (`repaired`: every message the
    damaged file held was recovered from it)."""
    if set_aside is not None:
        return "Damaged database repaired" if repaired else "Your conversations were set aside"
    if wal is not None and wal.notice.startswith(_REPAIRED):
        return "Damage found and repaired"
    return "Some recent changes are missing"


class CheckOutcome(enum.Enum):
    """What `check_database` concluded."""

    OK = "ok"
    DAMAGED = "damaged"
    INCOMPLETE = "incomplete"  # stopped, or the file could not be read: nothing recorded


@dataclass(frozen=True)
class CheckResult:
    """The answer of `check_database`.

    Attributes:
        outcome: sound, damaged, or not concluded.
        message: plain words for the user when damaged (`DAMAGE_FOUND_MESSAGE`), else None.
        detail: SQLite's report, or why the check could not finish; for the log.
        seconds: how long the check took.
    """

    outcome: CheckOutcome
    message: str | None = None
    detail: str | None = None
    seconds: float = 0.0

    @property
    def damaged(self) -> bool:
        return self.outcome is CheckOutcome.DAMAGED


class CheckCancel:
    """Stops a running `check_database` from another thread, e.g. when Cairn quits.

    `cancel` interrupts SQLite in the middle of the check (`sqlite3_interrupt`
    may be called from any thread); the check then ends as INCOMPLETE.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cancelled = False
        self._connection: sqlite3.Connection | None = None

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def cancel(self) -> None:
        with self._lock:
            self._cancelled = True
            if self._connection is not None:
                self._connection.interrupt()

    def _watch(self, connection: sqlite3.Connection | None) -> None:
        """Interrupt `connection` on cancel from now on (None: it is about to close)."""
        with self._lock:
            self._connection = connection
        if connection is not None:
            # An interrupt that lands before the statement starts is forgotten by
            # SQLite: the progress handler catches that case.
            connection.set_progress_handler(lambda: int(self._cancelled), _PROGRESS_EVERY)


def check_database(
    path: Path | str,
    *,
    cancel: CheckCancel | None = None,
    integrity_check: IntegrityCheck = run_quick_check,
    now: datetime | None = None,
) -> CheckResult:
    """Check the database while Cairn uses it, on the calling (worker) thread.

    Reads through a read-only connection of its own and never alters the file.
    Damage is recorded beside the database so the next `open_database` sets the
    file aside; a sound result records when it was checked. `cancel` stops it
    early, as INCOMPLETE, recording nothing.
    """
    started = time.monotonic()

    def result(outcome: CheckOutcome, detail: str | None = None) -> CheckResult:
        message = DAMAGE_FOUND_MESSAGE if outcome is CheckOutcome.DAMAGED else None
        return CheckResult(outcome, message, detail, time.monotonic() - started)

    database = Path(path)
    if cancel is not None and cancel.cancelled:
        return result(CheckOutcome.INCOMPLETE, "cancelled before it started")
    try:
        if not _has_content(database):
            return result(CheckOutcome.INCOMPLETE, f"{database} is missing or empty")
        # Only through SQLite, never by opening the file ourselves (as the start-up
        # header check does, before any connection exists): closing any descriptor of
        # the file drops every POSIX lock this process holds on it, and another
        # process (the summary process) could then checkpoint and reset the
        # write-ahead log under the app's open connections.
        damage = _damage_from_sqlite(database, integrity_check, cancel)
    except UserFacingError as error:
        # A busy, unreadable or newer file: no verdict on the data itself.
        return result(CheckOutcome.INCOMPLETE, error.detail or error.message)
    except _Stopped:
        return result(CheckOutcome.INCOMPLETE, "stopped before the end")
    if damage is not None:
        log.warning("Checking %s found damage: %s", database, damage)
        record_damage(database, damage, now=now)
        return result(CheckOutcome.DAMAGED, damage)
    moment = now or utc_now()
    _update_state(database, lambda state: replace(state or _State(), last_check=moment))
    sound = result(CheckOutcome.OK)
    log.info("Checked %s in %.2f s: no damage.", database, sound.seconds)
    return sound


def record_damage(path: Path | str, reason: str, *, now: datetime | None = None) -> None:
    """Note that the database is damaged: the next `open_database` sets it aside.

    For `check_database`, and for any SQLite error `is_damage` recognises while
    Cairn runs. The file itself is left as it is.
    """
    database = Path(path)
    identity = _identity(database)
    if identity is None:
        return
    moment = now or utc_now()
    damage = _Damage(reason=reason, found_at=moment, inode=identity.inode)
    _update_state(database, lambda state: replace(state or _State(in_use=True), damage=damage))


def mark_clean_shutdown(path: Path | str) -> None:
    """Record that Cairn closed normally, so the next start can skip the check.

    Call it when Cairn quits, after every connection to the database is closed
    (the last close checkpoints the WAL into the file) and before the instance
    lock is released. Calling it too early is safe: the file then changes after
    it was recorded, and the next start checks it. A recorded damage stays.
    """
    database = Path(path)
    identity = _identity(database)
    if identity is None:
        return
    if _wal_has_frames(database):
        log.info("A connection to %s is still open at shutdown; the next start checks.", database)
    _update_state(
        database, lambda state: replace(state or _State(), in_use=False, closed_as=identity)
    )


def checkpoint(connection: sqlite3.Connection) -> None:
    """Copy what the write-ahead log holds into the database file, without waiting for
    anyone (PASSIVE): the fewer saved changes live only in the log, the less a damaged
    or lost log can take. Called after each completed reply and summary; a checkpoint
    that cannot run now (busy, read-only) is simply left for the next one."""
    try:
        connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    except sqlite3.Error as error:
        log.debug("Passive checkpoint skipped: %s", error)


def connect(path: Path | str) -> sqlite3.Connection:
    """A further connection, for another thread, to a database `open_database` prepared.

    Cheap: no integrity check and no migration; the schema must be current.
    """
    database = Path(path)
    if not database.is_file():
        raise StorageError(
            f"Cairn's database file ({database}) is missing. Start Cairn again to create it.",
        )
    reading_only = _READ_ONLY.get(database.resolve())
    if reading_only is not None:
        return _connect_read_only(*reading_only)
    # mode=rw: a missing file is an error here, never silently a new empty database.
    connection = _connect(database, mode="rw")
    try:
        version = user_version(connection)
    except sqlite3.Error as error:
        connection.close()
        raise translate(error, action=_OPEN_ACTION, database=database) from error
    if version != SCHEMA_VERSION:
        connection.close()
        _refuse_if_too_new(version, database)
        raise BugError(f"{database} is at schema {version}; open_database() must run first")
    return connection


def _connect(database: Path, *, mode: str | None) -> sqlite3.Connection:
    """A connection with this thread's pragmas; `mode` ("rw", "ro") opens by URI."""
    try:
        if mode is None:
            connection = sqlite3.connect(database, isolation_level=None)
        else:
            connection = sqlite3.connect(_uri(database, mode), uri=True, isolation_level=None)
    except sqlite3.Error as error:
        raise translate(error, action=_OPEN_ACTION, database=database) from error
    try:
        # None of these writes to the file: a too-new database stays untouched.
        connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS:d}")
        connection.execute("PRAGMA foreign_keys = ON")
        # FULL: a durable commit costs well under a millisecond, and a user's
        # words are worth it (DESIGN §7).
        connection.execute("PRAGMA synchronous = FULL")
        for pragma in sqlite_durability_pragmas():  # macOS: to the disk, not its cache
            connection.execute(pragma)
        # What is deleted is overwritten, not left in free pages a salvage or another
        # program could read back (gone means gone); on by default in some builds only.
        connection.execute("PRAGMA secure_delete = ON")
    except sqlite3.Error as error:
        connection.close()
        raise translate(error, action=_OPEN_ACTION, database=database) from error
    return connection


# --- a folder Cairn may only read ------------------------------------------------------

# Databases opened read-only in this process: the file to read, and whether SQLite must
# take it as immutable (no log beside it, none can appear: nobody may write there).
_READ_ONLY: dict[Path, tuple[Path, bool]] = {}


def opened_read_only(database: Path) -> bool:
    """Whether `database` was opened read-only in this process (`open_read_only`)."""
    return database.resolve() in _READ_ONLY


def can_write(database: Path) -> bool:
    """Whether Cairn may write its database (and so its folder: the log and index)."""
    folder = database.parent
    if not os.access(folder, os.W_OK | os.X_OK):
        return False
    return not database.exists() or os.access(database, os.R_OK | os.W_OK)


def open_read_only(path: Path | str, scratch: Path) -> OpenResult:
    """Open a database in a folder Cairn may not write, for reading only.

    Nothing is written beside it, not even the state file. A database with a log
    beside it, or from an older Cairn, is read from a copy in `scratch` (brought up
    to date there); otherwise straight from the file. Every later `connect` to it in
    this process reads the same way. Raises `StorageError`, `DatabaseTooNewError`.
    """
    database = Path(path)
    if not database.is_file() or not _has_content(database):
        raise StorageError(f"There are no conversations yet in {database.parent}.")
    damage = _damage_from_header(database)
    if damage is not None:
        raise StorageError(
            f"Cairn's database ({database}) is damaged, and its folder is read-only, so "
            "Cairn can't set it aside. Open Cairn where it may write to repair it.",
            detail=damage,
        )
    source, immutable = database, not _wal_has_frames(database)
    connection = _connect_read_only(source, immutable)
    try:
        current = user_version(connection) == SCHEMA_VERSION
    except sqlite3.Error as error:
        connection.close()
        raise translate(error, action=_OPEN_ACTION, database=database) from error
    if not current or not immutable:
        connection.close()
        source, immutable = _read_only_copy(database, scratch), False
        connection = _connect_read_only(source, immutable)
    _READ_ONLY[database.resolve()] = (source, immutable)
    log.info("Reading %s read-only (%s).", database, "a copy" if source != database else "as is")
    return OpenResult(connection, database, checked=True, check_reason=None)


def _connect_read_only(source: Path, immutable: bool) -> sqlite3.Connection:
    uri = _uri(source, "ro") + ("&immutable=1" if immutable else "")
    try:
        connection = sqlite3.connect(uri, uri=True, isolation_level=None)
        connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS:d}")
        connection.execute("PRAGMA query_only = ON")
    except sqlite3.Error as error:
        raise translate(error, action=_OPEN_ACTION, database=source) from error
    return connection


def _read_only_copy(database: Path, scratch: Path) -> Path:
    """A copy of the database and its log in `scratch`, up to date, for reading."""
    scratch.mkdir(parents=True, exist_ok=True, mode=0o700)
    copy = scratch / database.name
    try:
        for suffix in ("", "-wal"):
            if _side(database, suffix).exists():
                shutil.copyfile(_side(database, suffix), _side(copy, suffix))
        connection = sqlite3.connect(copy, isolation_level=None)
        try:
            _refuse_if_too_new(user_version(connection), database)
            migrate(connection)
            connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            connection.close()
    except OSError as error:
        raise _unreadable(database, error) from error
    except sqlite3.Error as error:
        raise translate(error, action=_OPEN_ACTION, database=database) from error
    return copy


def _make_private(database: Path) -> None:
    if not has_posix_permissions():
        return
    try:
        if database.stat().st_mode & 0o077:
            database.chmod(PRIVATE)
    except OSError as error:
        log.warning("Cannot make %s private: %r", database, error)


def _uri(database: Path, mode: str) -> str:
    return sqlite_uri(database.resolve(), mode)


def _ensure_folder(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise StorageError(
            describe_folder_error(error), title=FOLDER_ERROR_TITLE, detail=repr(error)
        ) from error


def _check_writable(database: Path) -> None:
    # os.access is only a first answer (it says yes to root, for one); SQLite's
    # own errors on the first write are translated as well.
    folder = database.parent
    if not os.access(folder, os.W_OK | os.X_OK):
        raise StorageError(
            f"Cairn can't write to its data folder ({folder}). Make sure the folder is "
            "not read-only and belongs to you, then start Cairn again.",
        )
    if database.exists() and not os.access(database, os.R_OK | os.W_OK):
        raise StorageError(
            f"Cairn can't write to its database file ({database}). Make sure the file "
            "is not read-only and belongs to you, then start Cairn again.",
        )


def _damage_from_header(database: Path) -> str | None:
    """Read the 100-byte header without SQLite: no lock, no -wal, no -shm created.

    Returns why the file is not a database, or None; refuses a newer schema.
    """
    try:
        if not database.exists():
            return None
        if database.stat().st_size == 0:
            # SQLite would take it for a new database; Cairn never leaves one empty.
            return _EMPTY_FILE
        with database.open("rb") as file:
            header = file.read(_HEADER_SIZE)
    except OSError as error:
        raise _unreadable(database, error) from error
    if len(header) < _HEADER_SIZE or not header.startswith(_SQLITE_MAGIC):
        return "file is not a database"
    if not _sound_header(header):
        # Its version number cannot be trusted either: damage, not a newer Cairn's file.
        return "the file's header is damaged"
    offset = _USER_VERSION_OFFSET
    _refuse_if_too_new(int.from_bytes(header[offset : offset + 4], "big"), database)
    return None


def _sound_header(header: bytes) -> bool:
    """Whether the fixed fields of the header hold what SQLite writes there
    (https://www.sqlite.org/fileformat.html#the_database_header)."""
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    return (
        512 <= page_size <= 65536
        and page_size & (page_size - 1) == 0
        and header[18] in (1, 2)
        and header[19] in (1, 2)
        and header[21:24] == b"\x40\x20\x20"
        and int.from_bytes(header[44:48], "big") <= 4  # schema format (0: nothing yet)
        and int.from_bytes(header[56:60], "big") <= 3  # text encoding (0: not yet)
        and not any(header[72:92])  # reserved: zero
    )


class _Stopped(Exception):
    """`CheckCancel.cancel` ended the check early."""


def _damage_from_sqlite(
    database: Path,
    integrity_check: IntegrityCheck | None,
    cancel: CheckCancel | None = None,
) -> str | None:
    """Ask SQLite, read-only, for the schema version and (optionally) an integrity check.

    Read-only matters: closing the last read-write connection checkpoints the
    WAL into the file, which would alter a database a newer Cairn left.
    """
    if not _has_content(database):
        return None
    connection: sqlite3.Connection | None = None
    try:
        connection = sqlite3.connect(_uri(database, "ro"), uri=True, isolation_level=None)
        connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS:d}")
        _refuse_if_too_new(user_version(connection), database)
        if integrity_check is None:
            return None
        if cancel is not None:
            cancel._watch(connection)
        results = integrity_check(connection)
    except UnicodeDecodeError as error:
        # SQLite's own message quoted damaged bytes (a broken schema): damage all the same.
        return f"the database reported damage in bytes that are not text ({error.reason})"
    except sqlite3.Error as error:
        if is_damage(error):
            return str(error)
        if cancel is not None and cancel.cancelled:
            raise _Stopped from error  # SQLITE_INTERRUPT
        raise translate(error, action=_OPEN_ACTION, database=database) from error
    finally:
        if cancel is not None:
            cancel._watch(None)
        if connection is not None:
            connection.close()
    return None if results == ["ok"] else "; ".join(results)


def _has_content(database: Path) -> bool:
    """Whether there is anything to check (SQLite treats an empty file as a new database)."""
    try:
        return database.stat().st_size > 0
    except FileNotFoundError:
        return False
    except OSError as error:
        raise _unreadable(database, error) from error


# --- the state file beside the database ------------------------------------------------


@dataclass(frozen=True)
class _Identity:
    """The database file as the last clean close left it."""

    inode: int
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class _Damage:
    reason: str
    found_at: datetime
    inode: int  # so a file put in its place since is checked, not set aside


@dataclass(frozen=True)
class _State:
    in_use: bool = False
    closed_as: _Identity | None = None
    last_check: datetime | None = None
    damage: _Damage | None = None


def _state_path(database: Path) -> Path:
    return database.with_name(database.name + STATE_SUFFIX)


def _identity(database: Path) -> _Identity | None:
    try:
        info = database.stat()
    except OSError:
        return None
    return _Identity(info.st_ino, info.st_size, info.st_mtime_ns)


def _wal_has_frames(database: Path) -> bool:
    # A WAL holds a 32-byte header before its first frame (https://www.sqlite.org/walformat.html).
    try:
        return _side(database, "-wal").stat().st_size > 32
    except OSError:
        return False


def _why_check(database: Path, state: _State | None, now: datetime) -> str | None:
    """Why the database must be checked before use, or None when the record vouches for it."""
    if not _has_content(database):
        return None
    if state is None:
        return "Cairn has no record of how it last closed"
    if state.in_use:
        return "Cairn did not close normally last time"
    if state.closed_as is None:
        return "Cairn has no record of a normal close"
    if state.closed_as != _identity(database):
        return "the file changed since Cairn last closed"
    if _wal_has_frames(database):
        return "a write-ahead log was left beside the file"
    if state.last_check is None:
        return "it has not been checked yet"
    if state.last_check > now + timedelta(days=1):
        return "the clock moved back since the last check"
    return _overdue(state, now)


def _overdue(state: _State, now: datetime) -> str | None:
    """Why the weekly check is due (the record vouching for the file otherwise)."""
    if state.last_check is not None and now - state.last_check > CHECK_EVERY:
        return f"the last check was {(now - state.last_check).days} days ago"
    return None


def _schema_version(database: Path) -> int | None:
    """The file's schema version, read-only (None when SQLite cannot say)."""
    try:
        connection = sqlite3.connect(_uri(database, "ro"), uri=True, isolation_level=None)
    except sqlite3.Error:
        return None
    try:
        return user_version(connection)
    except sqlite3.Error:
        return None
    finally:
        connection.close()


def _recorded_damage(database: Path, state: _State) -> str | None:
    """The damage a check recorded, if it is about the file now in place."""
    damage = state.damage
    identity = _identity(database)
    if damage is None or identity is None or identity.inode != damage.inode:
        return None
    log.info("A check on %s found damage on %s.", database, damage.found_at.isoformat())
    return f"found while Cairn ran ({damage.reason})"


def _read_state(database: Path) -> _State | None:
    """The record beside `database`; None when missing or unreadable (then: check)."""
    path = _state_path(database)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeError) as error:
        log.info("Cannot read %s (%r); the database will be checked.", path, error)
        return None
    try:
        return _state_from_json(json.loads(text))
    except (ValueError, TypeError, KeyError) as error:
        log.info("Cannot understand %s (%r); the database will be checked.", path, error)
        return None


def _update_state(database: Path, change: Callable[[_State | None], _State]) -> None:
    """Read, change and write the record atomically; a failed write is only logged.

    Losing a write is safe: the record then no longer matches the file, and the
    next start checks it. A record the change leaves as it is is not written again
    (a start after a crash finds it "in use" already: no two fsyncs before the
    window paints, issue 20).
    """
    with _STATE_LOCK:
        before = _read_state(database)
        state = change(before)
        if state == before:
            return
        path = _state_path(database)
        try:
            atomic_write(path, json.dumps(_state_to_json(state), indent=1))
        except OSError as error:
            log.warning("Cannot write %s (%r); the next start checks the database.", path, error)


def _state_to_json(state: _State) -> dict[str, Any]:
    closed = state.closed_as
    damage = state.damage
    return {
        "format": _STATE_FORMAT,
        "in_use": state.in_use,
        "closed_as": None
        if closed is None
        else {"inode": closed.inode, "size": closed.size, "mtime_ns": closed.mtime_ns},
        "last_check": None if state.last_check is None else state.last_check.isoformat(),
        "damage": None
        if damage is None
        else {
            "reason": damage.reason,
            "found_at": damage.found_at.isoformat(),
            "inode": damage.inode,
        },
    }


def _state_from_json(data: Any) -> _State:
    if not isinstance(data, dict) or data.get("format") != _STATE_FORMAT:
        raise ValueError("not a Cairn database state, or another format")
    closed = data["closed_as"]
    damage = data["damage"]
    last_check = data["last_check"]
    return _State(
        in_use=_typed(data["in_use"], bool),
        closed_as=None
        if closed is None
        else _Identity(
            _typed(closed["inode"], int),
            _typed(closed["size"], int),
            _typed(closed["mtime_ns"], int),
        ),
        last_check=None if last_check is None else _aware(_typed(last_check, str)),
        damage=None
        if damage is None
        else _Damage(
            reason=_typed(damage["reason"], str),
            found_at=_aware(_typed(damage["found_at"], str)),
            inode=_typed(damage["inode"], int),
        ),
    )


def _typed(value: object, kind: type[_T]) -> _T:
    if not isinstance(value, kind):
        raise TypeError(f"expected {kind.__name__}, got {value!r}")
    return value


def _aware(text: str) -> datetime:
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        raise ValueError(f"a time without its zone: {text!r}")
    return moment


def _refuse_if_too_new(version: int, database: Path) -> None:
    if version > SCHEMA_VERSION:
        raise DatabaseTooNewError(
            "Your conversations were saved by a newer version of Cairn. Please update "
            "Cairn to open them; nothing was changed.",
            detail=f"{database}: user_version {version}, this Cairn knows {SCHEMA_VERSION}",
        )


def _set_aside(database: Path) -> Path:
    """Copy the damaged file (and its -wal/-shm) to a new name, then remove it.

    Copies first and fsyncs them, so the original is never lost: a failure
    before the removal leaves everything where it was.
    """
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    target = _free_name(database, stamp)
    pairs = [(database, target)] + [
        (_side(database, suffix), _side(target, suffix))
        for suffix in _SIDE_FILES
        if _side(database, suffix).exists()
    ]
    try:
        for source, copy in pairs:
            _copy_durably(source, copy)
        fsync_folder(database.parent)
    except OSError as error:
        raise StorageError(
            f"Cairn found a damaged database ({database}) but could not copy it aside: "
            f"{error.strerror or error}. Nothing was changed. Free some space on the disk, "
            "then start Cairn again.",
            detail=repr(error),
        ) from error
    # The WAL goes first: a stale -wal beside a fresh database must never be replayed.
    _remove_damaged(database, target)
    return target


@dataclass(frozen=True)
class _WalOutcome:
    """What `_keep_damaged_wal` did: the words to say, and what is left to salvage.

    Attributes:
        notice: plain words for the user.
        kept: the copy of the files as they were (database, -wal, -shm).
        damaged: why the database must be set aside after all (the log's picture of it
            is not sound), or None.
        picture: the database as the whole log describes it, to salvage from, when
            `damaged`; a scratch file removed after use.
    """

    notice: str
    kept: Path
    damaged: str | None = None
    picture: Path | None = None


def _remove_damaged(database: Path, kept: Path) -> None:
    """Remove the damaged files once `kept` holds their copy (the log first)."""
    try:
        for suffix in (*_SIDE_FILES, ""):
            _side(database, suffix).unlink(missing_ok=True)
    except OSError as error:
        raise StorageError(
            f"Cairn found a damaged database ({database}) and copied it to {kept.name}, "
            f"but could not remove the damaged file: {error.strerror or error}. Close other "
            "programs that may use it, then start Cairn again.",
            detail=repr(error),
        ) from error


def _keep_damaged_wal(database: Path) -> _WalOutcome | None:
    """When the write-ahead log is damaged, copy the database, -wal and -shm aside
    before SQLite reads them, then read back what SQLite would skip.

    The log's frames are applied to the database in a scratch file (`rebuild`); when
    that picture passes SQLite's integrity check it becomes the database, and nothing
    the log held is lost. Otherwise the caller sets the database aside and salvages
    from the picture and the copy, row by row. Returns None when the log is sound.
    """
    if not database.exists():
        return None
    from app.store.wal_check import wal_damage  # not for a first start (issue 20)

    wal, shm = _side(database, "-wal"), _side(database, "-shm")
    try:
        damage = wal_damage(wal, shm)
    except OSError as error:
        raise _unreadable(database, error) from error
    if damage is None:
        return None
    log.warning(
        "The write-ahead log of %s is damaged (%s): %s%d saved changes SQLite would skip.",
        database,
        damage.reason,
        "" if damage.exact else "at least ",
        damage.lost_transactions,
    )
    target = _free_name(database, datetime.now().strftime("%Y%m%d-%H%M%S"))
    try:
        for suffix in ("", *_SIDE_FILES):
            if _side(database, suffix).exists():
                _copy_durably(_side(database, suffix), _side(target, suffix))
        fsync_folder(database.parent)
    except OSError as error:
        raise StorageError(
            f"Cairn found damage in the record of your latest changes ({database.name}-wal) "
            f"but could not keep a copy of it: {error.strerror or error}. Nothing was "
            "changed. Free some space on the disk, then start Cairn again.",
            detail=repr(error),
        ) from error
    kept = f"A copy of the files as they were is kept as {target.name} (in {target.parent})."
    count = _changes(damage.lost_transactions, exact=damage.exact)
    lead = _REPAIRED.split(" and")[0]
    if not damage.placements:
        are = "is" if damage.lost_transactions == 1 else "are"
        return _WalOutcome(f"{lead}: {count} could not be read and {are} missing. {kept}", target)
    picture = _rebuilt(database, wal, damage)
    if picture is None:
        return _WalOutcome(
            f"{lead}: {count} could not be read by the database itself. {kept}",
            target,
            damaged="the write-ahead log is damaged and cannot be rebuilt",
        )
    problem = _picture_problem(picture)
    if problem is not None:
        log.warning("The database rebuilt from its log is not sound: %s", problem)
        return _WalOutcome(
            f"{lead}: {count} could not be read by the database itself. {kept}",
            target,
            damaged=f"the write-ahead log is damaged ({problem})",
            picture=picture,
        )
    try:
        for suffix in _SIDE_FILES:  # the log goes first: it must never be replayed again
            _side(database, suffix).unlink(missing_ok=True)
        replace_file(picture, database)
        fsync_folder(database.parent)
    except OSError as error:
        picture.unlink(missing_ok=True)
        raise StorageError(
            f"Cairn found damage in the record of your latest changes and repaired it, but "
            f"could not put the repaired file in place: {error.strerror or error}. A copy "
            f"of the files as they were is kept as {target.name}. Start Cairn again.",
            detail=repr(error),
        ) from error
    read_back = damage.lost_transactions - damage.cut_transactions
    repaired = (
        f"{lead} and repaired it: {_changes(read_back, exact=True)} the database "
        "would have skipped were read back from it."
    )
    if not damage.exact and not damage.cut_transactions:
        repaired = (
            f"{lead} and repaired it: what the database would have skipped was read back "
            "from it as far as it could be."
        )
    missing = ""
    if damage.cut_transactions:
        missing = (
            f" But {_changes(damage.cut_transactions, exact=False)} were cut off its end "
            "and are missing."
        )
    return _WalOutcome(f"{repaired}{missing} {kept}", target)


def _changes(count: int, *, exact: bool) -> str:
    """ "the last 3 saved changes", "at least the last 30 saved changes"."""
    noun = "saved change" if count == 1 else "saved changes"
    return f"{'' if exact else 'at least '}the last {count:,} {noun}"


def _rebuilt(database: Path, wal: Path, damage: WalDamage) -> Path | None:
    """The database as the whole log describes it, in a scratch file beside it."""
    from app.store.wal_check import rebuild

    picture = database.with_name(f".{database.name}.rebuilt-{os.getpid()}")
    try:
        picture.unlink(missing_ok=True)
        rebuild(database, wal, damage, picture)
    except OSError as error:
        log.warning("Cannot rebuild %s from its log: %r", database, error)
        picture.unlink(missing_ok=True)
        return None
    return picture


def _picture_problem(picture: Path) -> str | None:
    """Why the rebuilt database cannot be used as it is (a full integrity check), or None."""
    try:
        # immutable: a scratch file no one else opens; no -shm or -wal beside it.
        uri = f"{_uri(picture, 'ro')}&immutable=1"
        connection = sqlite3.connect(uri, uri=True, isolation_level=None)
    except sqlite3.Error as error:
        return str(error)
    try:
        version = user_version(connection)
        if version > SCHEMA_VERSION:
            return f"user_version {version}"
        rows = [str(row[0]) for row in connection.execute("PRAGMA integrity_check(5)")]
    except (sqlite3.Error, UnicodeError) as error:
        return str(error)
    finally:
        connection.close()
    return None if rows == ["ok"] else "; ".join(rows)


def _side(database: Path, suffix: str) -> Path:
    return database.with_name(database.name + suffix)


def _free_name(database: Path, stamp: str) -> Path:
    for number in count(1):
        name = f"{database.name}.damaged-{stamp}" + (f"-{number}" if number > 1 else "")
        candidate = database.with_name(name)
        if not any(_side(candidate, suffix).exists() for suffix in ("", *_SIDE_FILES)):
            return candidate
    raise AssertionError("unreachable")  # pragma: no cover


def _copy_durably(source: Path, copy: Path) -> None:
    # O_EXCL: never overwrite an existing file, not even an older damaged copy; 0600:
    # a copy of the conversations is as private as they are.
    descriptor = os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _BINARY, PRIVATE)
    with source.open("rb") as reader, os.fdopen(descriptor, "wb") as writer:
        shutil.copyfileobj(reader, writer, _COPY_CHUNK)
        writer.flush()
        os.fsync(writer.fileno())


def _unreadable(database: Path, error: OSError) -> StorageError:
    return StorageError(
        f"Cairn can't read its database file ({database}): {error.strerror or error}. "
        "Check that the file belongs to you, then start Cairn again.",
        detail=repr(error),
    )
