"""The attached files of the backups: kept with them, so a backup restores whole.

A backup of `cairn.db` holds which message has which file, not the bytes; those live
in the attachments folder, and a file no message uses any more is deleted from there
(app.store.attachment_files). So each backup's files are copied, once, into
`backups/attachments/` (by sha256, as the live folder keeps them, checked against it
when copied), and kept as long as a backup names them. A restore puts back any of its
files the live folder lacks or holds damaged.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from app.core.errors import StorageError
from app.store.attachment_files import FOLDER_NAME, AttachmentFiles

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FilesKept:
    """What `keep_files` did: files copied now, files already kept, files it could not
    find intact in the live folder (named in the log)."""

    copied: int = 0
    already: int = 0
    missing: int = 0


def backup_files(backups: Path) -> AttachmentFiles:
    """The backups' own content-addressed folder of attached files."""
    return AttachmentFiles(backups / "cairn.db")  # its folder is backups/attachments


def named_in(database: Path) -> set[str]:
    """The sha256s of the files a database (a backup, read only) names."""
    try:
        connection = sqlite3.connect(f"{database.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error:
        return set()
    try:
        return {str(row[0]) for row in connection.execute("SELECT DISTINCT sha256 FROM attachment")}
    except sqlite3.Error:
        return set()
    finally:
        connection.close()


def keep_files(live_database: Path, backup: Path) -> FilesKept:
    """Copy the files `backup` names from the live attachments folder into the backups'
    own, those not there yet; each checked against its sha256 first."""
    live = AttachmentFiles(live_database)
    kept = backup_files(backup.parent)
    copied = already = missing = 0
    for digest in sorted(named_in(backup)):
        if kept.path(digest).exists():
            already += 1
            continue
        try:
            data = live.read(digest)
        except StorageError:
            missing += 1
            log.warning("The attached file %s is missing or damaged; not in the backup.", digest)
            continue
        kept.put(data, digest)
        copied += 1
    return FilesKept(copied, already, missing)


def prune_files(backups: Path, databases: Iterable[Path]) -> int:
    """Delete the backups' files no backup in `databases` names any more; how many."""
    named: set[str] = set()
    for database in databases:
        named |= named_in(database)
    folder = backups / FOLDER_NAME
    if not folder.is_dir():
        return 0
    kept = [path for path in folder.glob("??/*") if path.is_file()]
    return backup_files(backups).remove_unused((path.name for path in kept), named)


def put_back_files(live_database: Path, backups: Path) -> int:
    """After a restore: copy into the live folder each file the database names that is
    missing or damaged there, from the backups' folder; how many."""
    live = AttachmentFiles(live_database)
    kept = backup_files(backups)
    restored = 0
    for digest in named_in(live_database):
        try:
            live.read(digest)
            continue
        except StorageError:
            pass
        try:
            live.put(kept.read(digest), digest)
            restored += 1
        except StorageError as error:
            log.warning("The attached file %s could not be put back: %s", digest, error.message)
    return restored
