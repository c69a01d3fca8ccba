"""Backups of `cairn.db` and restoring one, with SQLite's online backup API (DESIGN §2, §9).

Backups live in a `backups/` folder beside the database:

- `cairn-YYYY-MM-DD.db`: one a day (`take_daily_backup`), the last `KEEP_DAILY`
  kept; older ones are removed only after a new one is complete.
- `cairn-before-restore-YYYYMMDD-HHMMSS.db`: the database as it was just before a
  restore. Kept always, never pruned: restores are rare, and this file is the only
  copy of what the restore replaced (it can itself be restored, to undo one).

Every copy goes through `sqlite3.Connection.backup` from a connection of its own,
a few pages per step, so the app's writes are held up only briefly. A copy is
written under a temporary name, synced, then renamed: a half-written file never
carries a backup's name. Nothing here imports Qt.
"""

from __future__ import annotations

import logging
import os
import re
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path

from app.core.errors import StorageError, UserFacingError
from app.core.platform import fsync_folder, replace_file, sqlite_uri
from app.store.backup_files import keep_files, prune_files, put_back_files
from app.store.checksums import Repair, altered_in_copy, find_altered, put_back
from app.store.database import BUSY_TIMEOUT_MS, PRIVATE, connect, run_quick_check
from app.store.errors import translate
from app.store.live_messages import LIVE_MESSAGES
from app.store.migrations import SCHEMA_VERSION, migrate, user_version

log = logging.getLogger(__name__)

FOLDER_NAME = "backups"
KEEP_DAILY = 7
# Pages copied per step (4 MiB with 4 KiB pages), each step synced and followed by a
# pause, so the copy never floods the disk the app's own commits fsync to. Measured on
# a 138 MB database with a writer committing every 10 ms: the writer's slowest commit
# went from 0.55-1.06 s (one flush at the end) to 39-49 ms (baseline 12 ms); 2.4 s.
PAGES_PER_STEP = 1024
STEP_PAUSE_SECONDS = 0.01
_DAILY = re.compile(r"^cairn-(\d{4}-\d{2}-\d{2})\.db$")
_BEFORE_RESTORE = re.compile(r"^cairn-before-restore-(\d{8}-\d{6})(?:-\d+)?\.db$")
_PARTIAL_SUFFIX = ".partial"
_CAIRN_TABLES = frozenset({"session", "message"})


class BackupRefusedError(UserFacingError):
    """The chosen backup cannot be restored; nothing was changed."""

    title = "This backup can't be restored"


@dataclass(frozen=True)
class BackupInfo:
    """One backup file.

    Attributes:
        taken_at: when it was made (a daily backup: midnight of its day, local time).
        size: bytes on disk.
        path: the file.
        before_restore: made just before a restore (kept always), not a daily one.
    """

    taken_at: datetime
    size: int
    path: Path
    before_restore: bool = False


def backup_folder(database: Path) -> Path:
    """Where the backups of `database` live."""
    return database.parent / FOLDER_NAME


def daily_name(day: date) -> str:
    return f"cairn-{day.isoformat()}.db"


def take_daily_backup(
    database: Path,
    *,
    today: date | None = None,
    cancelled: Callable[[], bool] = lambda: False,
) -> Path | None:
    """Back up `database` as today's backup, then keep only the last `KEEP_DAILY`.

    Returns the new file, or None when today's backup already exists (or it was
    cancelled). Raises `StorageError` in plain words when the folder cannot be
    written (disk full, read-only); the database itself is never touched.
    """
    day = today or date.today()
    folder = backup_folder(database)
    target = folder / daily_name(day)
    if target.exists():
        return None
    _ensure_folder(folder)
    if not copy_database(database, target, cancelled=cancelled):
        return None
    _verify_copy(target)  # before any older backup is pruned for it
    kept = keep_files(database, target)  # the attached files too: a backup restores whole
    log.info(
        "Backup %s: %d attached files copied, %d kept already, %d missing.",
        target.name,
        kept.copied,
        kept.already,
        kept.missing,
    )
    prune(folder)
    prune_files(folder, [info.path for info in list_backups(database)])
    return target


def mend_texts(database: Path) -> Repair:
    """Find the texts of `database` that changed on the disk since they were written
    (their checksum no longer matches) and put each back from the newest backup holding
    it intact; mark the rest damaged. Raises `StorageError` in plain words."""
    try:
        connection = connect(database)
    except sqlite3.Error as error:
        raise translate(error, action="check your conversations", database=database) from error
    try:
        altered = find_altered(connection)
        return put_back(connection, altered, [info.path for info in list_backups(database)])
    except sqlite3.Error as error:
        raise translate(error, action="check your conversations", database=database) from error
    finally:
        connection.close()


def _verify_copy(copy: Path) -> None:
    """Read the new backup back: every page (quick_check) and every text's checksum.
    A copy that does not read back as written is removed, never kept as a backup."""
    try:
        connection = _open(copy, "ro")
        try:
            sound = run_quick_check(connection) == ["ok"]
        finally:
            connection.close()
        altered = altered_in_copy(copy) if sound else 0
    except sqlite3.Error as error:
        sound, altered = False, 0
        log.warning("Cannot read back the backup %s: %r", copy, error)
    if sound and not altered:
        return
    _remove_quietly(copy)
    log.warning("The backup %s did not read back as written (%d texts); removed.", copy, altered)
    raise StorageError(
        f"The backup Cairn just made in {copy.parent} did not read back as it was written, "
        "so it was not kept; the older backups stay. The disk may be failing: copy your "
        "conversations elsewhere (File → Export all conversations…).",
        title="Backup not made",
    )


def list_backups(database: Path) -> list[BackupInfo]:
    """Every backup of `database`, newest first (unreadable names are left out)."""
    folder = backup_folder(database)
    found: list[BackupInfo] = []
    try:
        entries = list(folder.iterdir())
    except FileNotFoundError:
        return []
    except OSError as error:
        log.warning("Cannot list the backups in %s: %r", folder, error)
        return []
    for path in entries:
        taken_at = _taken_at(path.name)
        if taken_at is None:
            continue
        try:
            size = path.stat().st_size
        except OSError:
            continue
        found.append(BackupInfo(taken_at, size, path, _BEFORE_RESTORE.match(path.name) is not None))
    found.sort(key=lambda info: (info.taken_at, info.path.name), reverse=True)
    return found


def prune(folder: Path, keep: int = KEEP_DAILY) -> list[Path]:
    """Remove daily backups beyond the newest `keep` (and leftover partial copies)."""
    daily = sorted(
        (path for path in folder.iterdir() if _DAILY.match(path.name)),
        key=lambda path: path.name,
        reverse=True,
    )
    removed: list[Path] = []
    for path in [*daily[keep:], *folder.glob(f"*{_PARTIAL_SUFFIX}")]:
        try:
            path.unlink()
            removed.append(path)
        except OSError as error:
            log.warning("Cannot remove the old backup %s: %r", path, error)
    return removed


def copy_database(
    source: Path,
    target: Path,
    *,
    cancelled: Callable[[], bool] = lambda: False,
    pages: int = PAGES_PER_STEP,
    progressed: Callable[[float], None] = lambda _share: None,
) -> bool:
    """Copy the database `source` to the new file `target` (temporary name, fsync, rename).

    Returns False when `cancelled` stopped it (no file left behind).
    """
    partial = target.with_name(target.name + _PARTIAL_SUFFIX)
    partial.unlink(missing_ok=True)
    try:
        # Created empty and private first: SQLite takes the file as it finds it.
        os.close(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE))
        reader = _open(source, "ro")
        try:
            writer = sqlite3.connect(partial, isolation_level=None)
            try:
                # In WAL mode, one read transaction across every step: the copy is of
                # one moment, and the app's writes meanwhile (to the WAL) neither wait
                # nor restart it (without it, each write restarts the copy from page 1).
                # In a rollback journal a held read would block writers: steps then.
                snapshot = str(reader.execute("PRAGMA journal_mode").fetchone()[0]) == "wal"
                if snapshot:
                    reader.execute("BEGIN")
                    reader.execute("SELECT count(*) FROM sqlite_schema").fetchone()
                # Read-write: Windows refuses to fsync a descriptor opened for reading.
                flush = os.open(partial, os.O_RDWR)
                try:
                    reader.backup(
                        writer,
                        pages=pages,
                        progress=_between_steps(cancelled, flush, progressed),
                    )
                finally:
                    os.close(flush)
                if snapshot:
                    reader.execute("COMMIT")
                # A backup is one self-contained file, whatever mode the source uses.
                writer.execute("PRAGMA journal_mode = DELETE")
            finally:
                writer.close()
        finally:
            reader.close()
        if cancelled():
            partial.unlink(missing_ok=True)
            return False
        _fsync_file(partial)
        replace_file(partial, target)
        fsync_folder(target.parent)
    except _Cancelled:
        partial.unlink(missing_ok=True)
        return False
    except (sqlite3.Error, OSError) as error:
        _remove_quietly(partial)
        raise StorageError(
            f"Cairn couldn't make a backup in {target.parent}: {_reason(error)}. "
            "Your conversations are safe; Cairn will try again next time it starts.",
            title="Backup not made",
            detail=repr(error),
        ) from error
    return True


def check_backup(path: Path) -> int:
    """Check that `path` is a readable Cairn database Cairn can open; returns its version.

    Raises `BackupRefusedError` in plain words otherwise (nothing is changed).
    """
    try:
        connection = _open(path, "ro")
    except sqlite3.Error as error:
        raise _refused("Cairn can't read this backup file.", error) from error
    try:
        version = user_version(connection)
        if version > SCHEMA_VERSION:
            raise BackupRefusedError(
                "This backup was made by a newer version of Cairn. Update Cairn to restore "
                "it. Nothing was changed.",
                detail=f"{path}: user_version {version}, this Cairn knows {SCHEMA_VERSION}",
            )
        if run_quick_check(connection) != ["ok"]:
            raise BackupRefusedError(
                "This backup is damaged, so Cairn won't restore it. Nothing was changed. "
                "Choose an older backup."
            )
        tables = {
            str(row[0])
            for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
    except sqlite3.Error as error:
        raise _refused("This file is damaged or is not a Cairn backup.", error) from error
    finally:
        connection.close()
    if version == 0 or not tables >= _CAIRN_TABLES:
        raise BackupRefusedError(
            "This file is not a Cairn backup. Nothing was changed.", detail=str(path)
        )
    return version


def restore(
    database: Path,
    backup: Path,
    *,
    now: datetime | None = None,
    progressed: Callable[[float], None] = lambda _share: None,
    cancelled: Callable[[], bool] = lambda: False,
) -> Path | None:
    """Replace the contents of the live `database` with `backup`, while Cairn runs.

    First checks the backup (`check_backup`), brings a copy of an older one up to
    this Cairn's schema (the chosen file itself is never altered), and backs the
    current database up as `cairn-before-restore-<time>.db`; then copies the
    backup over the live database with the backup API, so every open connection
    sees the restored data, and puts back the attached files it names. Returns the
    before-restore backup. Raises `BackupRefusedError` or `StorageError` in plain
    words, the database unchanged. Every job writing to the database must have stopped.

    `progressed(share)` is told how far it is (0 to 1) as it goes; `cancelled()` is
    asked between steps, and until the last one (the swap, one step) a cancel leaves
    everything as it was and returns None.
    """
    progressed(0.0)
    check_backup(backup)
    progressed(0.15)
    folder = backup_folder(database)
    _ensure_folder(folder)
    moment = (now or datetime.now(UTC)).astimezone()
    working = folder / f".restore-{moment:%Y%m%d-%H%M%S}.db"
    before: Path | None = None

    def part(start: float, size: float) -> Callable[[float], None]:
        return lambda share: progressed(start + size * share)

    try:
        if cancelled() or not copy_database(
            backup, working, cancelled=cancelled, progressed=part(0.15, 0.25)
        ):
            return None
        connection = sqlite3.connect(working, isolation_level=None)
        try:
            migrate(connection)
        finally:
            connection.close()
        progressed(0.45)
        before = _free_before_restore_name(folder, moment)
        if cancelled() or not copy_database(
            database, before, cancelled=cancelled, progressed=part(0.45, 0.35)
        ):
            return None
        if cancelled():
            _remove_quietly(before)
            return None
        progressed(0.8)
        source = _open(working, "ro")
        try:
            live = _open(database, "rw")
            try:
                # All pages in one step: the live database changes at once, never half.
                source.backup(live, pages=-1)
            finally:
                live.close()
            # Its rows' change stamps are the backup's: no tail read before is trusted.
            LIVE_MESSAGES.forget(database)
        finally:
            source.close()
    except sqlite3.Error as error:
        raise StorageError(
            f"Cairn couldn't restore the backup: {_reason(error)}. Your conversations "
            "were not changed.",
            title="Backup not restored",
            detail=repr(error),
        ) from error
    finally:
        _remove_quietly(working)
    progressed(0.95)
    files = put_back_files(database, folder)
    progressed(1.0)
    log.info(
        "Restored %s from %s (%d attached files put back); the data before is in %s.",
        database,
        backup,
        files,
        before,
    )
    return before


# --- inside --------------------------------------------------------------------------


class _Cancelled(Exception):
    pass


def _between_steps(
    cancelled: Callable[[], bool], flush: int, progressed: Callable[[float], None]
) -> Callable[[int, int, int], None]:
    def progress(_status: int, remaining: int, total: int) -> None:
        if cancelled():
            raise _Cancelled  # the backup API stops and re-raises it
        progressed(1 - remaining / total if total else 1.0)
        # Written to disk a step at a time: one flush of the whole file at the end
        # stalls the app's own commits (each one fsyncs) for half a second.
        os.fsync(flush)
        if remaining:
            # A pause, so the copy's writes do not crowd out the app's own on the disk
            # (the `sleep` argument of backup() only applies when the source is busy).
            time.sleep(STEP_PAUSE_SECONDS)

    return progress


def _open(path: Path, mode: str) -> sqlite3.Connection:
    if not path.is_file():
        raise sqlite3.OperationalError(f"{path} is missing")
    connection = sqlite3.connect(sqlite_uri(path.resolve(), mode), uri=True, isolation_level=None)
    connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS:d}")
    return connection


def _taken_at(name: str) -> datetime | None:
    try:
        if daily := _DAILY.match(name):
            return datetime.strptime(daily.group(1), "%Y-%m-%d").astimezone()
        if before := _BEFORE_RESTORE.match(name):
            return datetime.strptime(before.group(1), "%Y%m%d-%H%M%S").astimezone()
    except ValueError:
        return None
    return None


def _free_before_restore_name(folder: Path, moment: datetime) -> Path:
    stem = f"cairn-before-restore-{moment:%Y%m%d-%H%M%S}"
    candidate = folder / f"{stem}.db"
    number = 1
    while candidate.exists():
        number += 1
        candidate = folder / f"{stem}-{number}.db"
    return candidate


def _ensure_folder(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as error:
        raise StorageError(
            f"Cairn couldn't create its backup folder ({folder}): {_reason(error)}. "
            "Your conversations are safe.",
            title="Backup not made",
            detail=repr(error),
        ) from error


def _refused(words: str, error: sqlite3.Error) -> BackupRefusedError:
    return BackupRefusedError(f"{words} Nothing was changed.", detail=repr(error))


def _reason(error: BaseException) -> str:
    if isinstance(error, OSError) and error.strerror:
        return error.strerror.lower()
    text = str(error)
    if "full" in text:
        return "the disk is full"
    return "the file could not be written"


def _fsync_file(path: Path) -> None:
    with path.open("rb+") as file:
        os.fsync(file.fileno())


def _remove_quietly(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError as error:
        log.warning("Cannot remove %s: %r", path, error)
