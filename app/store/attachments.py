"""Keeping the files of a message (table `attachment`, migration 9; DESIGN §2).

The bytes are kept in a folder beside the database, each file under its sha256
("attachments/ab/ab12…"), so the same picture attached twice is kept once and a
file the user moves or deletes afterwards is never lost. A file is written (temp
file, fsync, rename: a crash leaves the old state or the new, never half a file)
when it is attached, before its message is sent; the rows that say which message
has which file are written when the message is stored.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import uuid
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path

from app.core.attachments import Attachment, AttachmentKind
from app.core.errors import StorageError
from app.core.settings import atomic_write_bytes
from app.store.owned import ConnectionStore
from app.store.transactions import translated_errors, write_transaction

log = logging.getLogger(__name__)

FOLDER_NAME = "attachments"
# Where an import puts the files it brings until its rows are committed.
STAGING_PREFIX = ".incoming-"
# Ids per query (as app.store.lookups): a page of a transcript is never this long.
_IDS_PER_QUERY = 500
_COLUMNS = "sha256, name, media_type, kind, size, tokens, estimated, width, height, pages"


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
            atomic_write_bytes(target, data)
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
            atomic_write_bytes(self.folder / sha256, data)
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
                os.replace(source, target)
        except OSError as error:
            log.warning("Cannot move the imported file %s into place: %r", source, error)


class AttachmentStore(ConnectionStore):
    """Saves and reads which message has which files, for one thread."""

    def add(self, message_id: int, attachments: Sequence[Attachment]) -> None:
        """Record the files of a stored message, in the order they were attached."""
        if not attachments:
            return
        rows = [
            (
                message_id,
                ordinal,
                a.sha256,
                a.name,
                a.media_type,
                a.kind.value,
                a.size,
                a.tokens,
                int(a.estimated),
                a.width,
                a.height,
                a.pages,
            )
            for ordinal, a in enumerate(attachments, start=1)
        ]
        with write_transaction(self._connection, "save the attached files", self.database) as cur:
            cur.executemany(
                f"INSERT INTO attachment (message_id, ordinal, {_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )

    def for_messages(self, message_ids: Collection[int]) -> dict[int, tuple[Attachment, ...]]:
        """The files of these messages, in order; messages without any left out."""
        ids = sorted(set(message_ids))
        found: dict[int, list[Attachment]] = {}
        with translated_errors("read the attached files", self.database):
            for start in range(0, len(ids), _IDS_PER_QUERY):
                chunk = ids[start : start + _IDS_PER_QUERY]
                marks = ", ".join("?" * len(chunk))
                rows = self._connection.execute(
                    f"SELECT message_id, {_COLUMNS} FROM attachment "
                    f"WHERE message_id IN ({marks}) ORDER BY message_id, ordinal",
                    chunk,
                ).fetchall()
                for row in rows:
                    found.setdefault(int(row[0]), []).append(_attachment(row[1:]))
        return {message_id: tuple(files) for message_id, files in found.items()}


def _attachment(row: Sequence[object]) -> Attachment:
    sha256, name, media_type, kind, size, tokens, estimated, width, height, pages = row
    return Attachment(
        sha256=str(sha256),
        name=str(name),
        media_type=str(media_type),
        kind=AttachmentKind(str(kind)),
        size=int(str(size)),
        tokens=int(str(tokens)),
        estimated=bool(estimated),
        width=int(str(width)),
        height=int(str(height)),
        pages=int(str(pages)),
    )
