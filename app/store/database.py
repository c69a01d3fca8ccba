"""Opening `cairn.db`: refuse what a newer Cairn made, set damaged files aside,
then WAL, `synchronous=FULL`, foreign keys and migrations (DESIGN §2, §7, §9).

`open_database` runs once at startup (it checks the whole file); every other
thread opens its own connection with the cheap `connect`.
"""

from __future__ import annotations

import logging
import os
import shutil
import sqlite3
import sys
from dataclasses import dataclass
from datetime import datetime
from itertools import count
from pathlib import Path

from app.core.errors import BugError, DatabaseTooNewError, StorageError
from app.store.errors import is_damage, translate
from app.store.migrations import SCHEMA_VERSION, migrate, user_version

log = logging.getLogger(__name__)

BUSY_TIMEOUT_MS = 5000

_OPEN_ACTION = "open your conversations"
_SQLITE_MAGIC = b"SQLite format 3\x00"
_HEADER_SIZE = 100
_USER_VERSION_OFFSET = 60  # https://www.sqlite.org/fileformat.html#the_database_header
_SIDE_FILES = ("-wal", "-shm")
_COPY_CHUNK = 1 << 20


@dataclass(frozen=True)
class OpenResult:
    """An open, migrated connection, and what to tell the user about it.

    Attributes:
        connection: autocommit (`isolation_level=None`) connection for this thread.
        path: the database file, for error messages (`SessionStore(..., database=path)`).
        notice: plain words to show once (a damaged file was set aside), or None.
        set_aside: where the damaged file was copied, when that happened.
    """

    connection: sqlite3.Connection
    path: Path
    notice: str | None = None
    set_aside: Path | None = None


def open_database(path: Path | str) -> OpenResult:
    """Open (creating if needed) and migrate the database at `path`.

    Raises `DatabaseTooNewError` without touching the file when a newer Cairn
    made it, and `StorageError` in plain words when the folder or file cannot be
    used. A damaged file is copied aside and a fresh database started instead.
    """
    database = Path(path)
    _ensure_folder(database.parent)
    damage = _damage_from_header(database)
    _check_writable(database)
    if damage is None:
        damage = _damage_from_sqlite(database)
    set_aside = None
    notice = None
    if damage is not None:
        log.warning("The database %s is damaged (%s); setting it aside.", database, damage)
        set_aside = _set_aside(database)
        notice = (
            f"Cairn found a damaged database and set it aside as {set_aside.name} "
            f"(in {set_aside.parent}); a fresh one was started. Nothing was deleted."
        )
    connection = _connect(database, mode=None)
    try:
        # Checked again before the first write: the file may have changed since.
        _refuse_if_too_new(user_version(connection), database)
        mode = connection.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            log.warning("The database %s stays in %s journal mode (no WAL here).", database, mode)
        migrate(connection)
    except (sqlite3.Error, UnicodeError) as error:
        connection.close()
        raise translate(error, action=_OPEN_ACTION, database=database) from error
    except BaseException:
        connection.close()
        raise
    return OpenResult(connection, database, notice, set_aside)


def connect(path: Path | str) -> sqlite3.Connection:
    """A further connection, for another thread, to a database `open_database` prepared.

    Cheap: no integrity check and no migration; the schema must be current.
    """
    database = Path(path)
    if not database.is_file():
        raise StorageError(
            f"Cairn's database file ({database}) is missing. Start Cairn again to create it.",
        )
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
    except sqlite3.Error as error:
        connection.close()
        raise translate(error, action=_OPEN_ACTION, database=database) from error
    return connection


def _uri(database: Path, mode: str) -> str:
    # as_uri() percent-encodes '?', '#' and '%', which would otherwise cut the path.
    return f"{database.resolve().as_uri()}?mode={mode}"


def _ensure_folder(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise StorageError(
            f"Cairn can't create its data folder ({folder}): {error.strerror or error}. "
            "Check that this place exists and that you may write there, or choose "
            "another data folder.",
            detail=repr(error),
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
        if not database.exists() or database.stat().st_size == 0:
            return None  # SQLite treats an empty file as an empty database
        with database.open("rb") as file:
            header = file.read(_HEADER_SIZE)
    except OSError as error:
        raise StorageError(
            f"Cairn can't read its database file ({database}): {error.strerror or error}. "
            "Check that the file belongs to you, then start Cairn again.",
            detail=repr(error),
        ) from error
    if len(header) < _HEADER_SIZE or not header.startswith(_SQLITE_MAGIC):
        return "file is not a database"
    offset = _USER_VERSION_OFFSET
    _refuse_if_too_new(int.from_bytes(header[offset : offset + 4], "big"), database)
    return None


def _damage_from_sqlite(database: Path) -> str | None:
    """Ask SQLite, read-only, for the schema version and a quick check.

    Read-only matters: closing the last read-write connection checkpoints the
    WAL into the file, which would alter a database a newer Cairn left.
    """
    if not database.exists() or database.stat().st_size == 0:
        return None
    connection: sqlite3.Connection | None = None
    try:
        connection = sqlite3.connect(_uri(database, "ro"), uri=True, isolation_level=None)
        connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS:d}")
        _refuse_if_too_new(user_version(connection), database)
        rows = connection.execute("PRAGMA quick_check").fetchmany(5)
    except sqlite3.Error as error:
        if is_damage(error):
            return str(error)
        raise translate(error, action=_OPEN_ACTION, database=database) from error
    finally:
        if connection is not None:
            connection.close()
    results = [str(row[0]) for row in rows]
    return None if results == ["ok"] else "; ".join(results)


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
        _fsync_folder(database.parent)
    except OSError as error:
        raise StorageError(
            f"Cairn found a damaged database ({database}) but could not copy it aside: "
            f"{error.strerror or error}. Nothing was changed. Free some space on the disk, "
            "then start Cairn again.",
            detail=repr(error),
        ) from error
    try:
        # The WAL goes first: a stale -wal beside a fresh database must never be replayed.
        for suffix in (*_SIDE_FILES, ""):
            _side(database, suffix).unlink(missing_ok=True)
    except OSError as error:
        raise StorageError(
            f"Cairn found a damaged database ({database}) and copied it to {target.name}, "
            f"but could not remove the damaged file: {error.strerror or error}. Close other "
            "programs that may use it, then start Cairn again.",
            detail=repr(error),
        ) from error
    return target


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
    # "xb": never overwrite an existing file, not even an older damaged copy.
    with source.open("rb") as reader, copy.open("xb") as writer:
        shutil.copyfileobj(reader, writer, _COPY_CHUNK)
        writer.flush()
        os.fsync(writer.fileno())


def _fsync_folder(folder: Path) -> None:
    """Make the new names durable before the old file goes (POSIX only)."""
    if sys.platform == "win32":
        return
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
