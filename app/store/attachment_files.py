"""The bytes of attached files, kept beside `cairn.db` under their sha256 (DESIGN §2).

"attachments/ab/ab12…": the same picture attached twice is kept once, and a file the
user moves or deletes afterwards is never lost. A file is written (temp file, fsync,
rename) when it is attached, before its message is sent; an import's files wait in a
staging folder until its rows are committed; a file no message uses any more is
deleted with the last message that used it (`forget_files`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import sqlite3
import uuid
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path

from app.core.errors import StorageError
from app.core.files import atomic_write
from app.core.platform import replace_file

log = logging.getLogger(__name__)

FOLDER_NAME = "attachments"
# Where an import puts the files it brings until its rows are committed.
STAGING_PREFIX = ".incoming-"


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class AttachmentFiles:
    """The content-addressed folder of attachment bytes beside `cairn.db`."""

    def __init__(self, database: Path) -> None:
        self.folder = database.parent / FOLDER_NAME

    def path(self, sha256: str) -> Path:
        return self.folder / sha256[:2] / sha256

    def staging(self) -> Staging:
        """A folder of its own (inside this one, so a move is a rename) for the files of
        an import, moved in only after its rows are committed (`Staging.commit`)."""
        return Staging(self, self.folder / f"{STAGING_PREFIX}{uuid.uuid4().hex}")

    def staged_leftovers(self) -> list[Path]:
        """Files an import staged and never moved in (Cairn stopped between its commit
        and the move, or during its refusal)."""
        try:
            folders = [path for path in self.folder.glob(f"{STAGING_PREFIX}*") if path.is_dir()]
        except OSError:
            return []
        return [file for folder in folders for file in folder.iterdir() if file.is_file()]

    def remove_unused(self, sha256s: Iterable[str], used: Collection[str]) -> int:
        """Delete the kept files among `sha256s` that no message uses (`used`); how many."""
        removed = 0
        for digest in set(sha256s) - set(used):
            try:
                self.path(digest).unlink()
                removed += 1
            except FileNotFoundError:
                continue
            except OSError as error:
                log.warning("Cannot delete the attached file %s: %r", digest, error)
        return removed

    def put(self, data: bytes, sha256: str | None = None) -> str:
        """Keep `data` (once, whatever it is called); returns its sha256.

        Raises:
            StorageError: the disk did not take it (full, read-only), in plain words.
        """
        digest = sha256 if sha256 is not None else sha256_of(data)
        target = self.path(digest)
        if target.exists() and target.stat().st_size == len(data):
            return digest
        try:
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            target.parent.mkdir(exist_ok=True, mode=0o700)
            atomic_write(target, data)
        except OSError as error:
            raise StorageError(
                f"Cairn could not keep a copy of the file in {self.folder} ({error.strerror}). "
                "Free some disk space and attach it again.",
                title="Can't keep the file",
                detail=repr(error),
            ) from error
        return digest

    def read(self, sha256: str) -> bytes:
        """The bytes kept under `sha256`, checked against it.

        Raises:
            StorageError: the file is missing or damaged.
        """
        try:
            data = self.path(sha256).read_bytes()
        except OSError as error:
            raise StorageError(
                f"An attached file is missing from {self.folder}. The message can't be "
                "sent with it; attach the file again in a new message.",
                title="An attached file is missing",
                detail=repr(error),
            ) from error
        if sha256_of(data) != sha256:
            raise StorageError(
                f"An attached file in {self.folder} is damaged. Attach the file again "
                "in a new message.",
                title="An attached file is damaged",
            )
        return data


def files_of(cursor: sqlite3.Cursor, messages_sql: str, parameters: Sequence[object]) -> set[str]:
    """The sha256s of the files attached to the messages `messages_sql` selects (ids)."""
    return {
        str(row[0])
        for row in cursor.execute(
            f"SELECT DISTINCT sha256 FROM attachment WHERE message_id IN ({messages_sql})",
            parameters,
        )
    }


def forget_files(connection: sqlite3.Connection, database: Path | None, sha256s: set[str]) -> None:
    """After messages were deleted (committed): delete the kept files among `sha256s`
    that no message uses any more. Gone means gone; the backups keep their own copies."""
    if database is None or not sha256s:
        return
    try:
        used = {
            str(row[0])
            for row in connection.execute(
                "SELECT DISTINCT sha256 FROM attachment WHERE sha256 IN "
                "(SELECT value FROM json_each(?))",
                (json.dumps(sorted(sha256s)),),
            )
        }
    except sqlite3.Error as error:
        log.warning("Cannot tell which attached files are still used: %r", error)
        return
    removed = AttachmentFiles(database).remove_unused(sha256s, used)
    if removed:
        log.info("Deleted %d attached files no message uses any more.", removed)


class Staging:
    """The files of one import, waiting in a folder of their own for its commit."""

    def __init__(self, files: AttachmentFiles, folder: Path) -> None:
        self._files = files
        self.folder = folder

    def put(self, data: bytes, sha256: str) -> None:
        """Keep `data` here until `commit`; `StorageError` in plain words when the disk
        refuses."""
        if self._files.path(sha256).exists():
            return  # already kept: nothing to move in
        try:
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            atomic_write(self.folder / sha256, data)
        except OSError as error:
            raise StorageError(
                f"Cairn could not keep a copy of an attached file in {self._files.folder} "
                f"({error.strerror}). Free some disk space and import again.",
                title="Can't keep the file",
                detail=repr(error),
            ) from error

    def commit(self) -> None:
        """Move every staged file into place (after the import's rows are committed)."""
        move_in(self._files, self.folder.glob("*"))
        self.discard()

    def discard(self) -> None:
        """Remove the staged files (the import was refused or failed)."""
        shutil.rmtree(self.folder, ignore_errors=True)


def move_in(files: AttachmentFiles, staged: Iterable[Path]) -> None:
    """Move staged files into their places under their names (their sha256)."""
    for source in staged:
        target = files.path(source.name)
        try:
            target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            if target.exists() and target.stat().st_size == source.stat().st_size:
                source.unlink()
            else:
                replace_file(source, target)
        except OSError as error:
            log.warning("Cannot move the imported file %s into place: %r", source, error)
