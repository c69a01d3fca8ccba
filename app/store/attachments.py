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
from collections.abc import Collection, Sequence
from pathlib import Path

from app.core.attachments import Attachment, AttachmentKind
from app.core.errors import StorageError
from app.core.files import atomic_write
from app.store.batches import in_batches
from app.store.owned import ConnectionStore
from app.store.transactions import translated_errors, write_transaction

FOLDER_NAME = "attachments"
_COLUMNS = "sha256, name, media_type, kind, size, tokens, estimated, width, height, pages"


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class AttachmentFiles:
    """The content-addressed folder of attachment bytes beside `cairn.db`."""

    def __init__(self, database: Path) -> None:
        self.folder = database.parent / FOLDER_NAME

    def path(self, sha256: str) -> Path:
        return self.folder / sha256[:2] / sha256

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
        found: dict[int, list[Attachment]] = {}
        with translated_errors("read the attached files", self.database):
            for chunk, marks in in_batches(message_ids):
                rows = self._connection.execute(
                    f"SELECT message_id, {_COLUMNS} FROM attachment "
                    f"WHERE message_id IN ({marks}) ORDER BY message_id, ordinal",
                    chunk,
                ).fetchall()
                for row in rows:
                    found.setdefault(int(row[0]), []).append(_attachment(row[1:]))
        return {message_id: tuple(files) for message_id, files in found.items()}

    def for_session(self, session_id: str) -> dict[int, tuple[int, tuple[Attachment, ...]]]:
        """Every message of a conversation that has files: its seq and its files, in order."""
        found: dict[int, tuple[int, list[Attachment]]] = {}
        with translated_errors("read the attached files", self.database):
            rows = self._connection.execute(
                f"SELECT a.message_id, m.seq, {', '.join('a.' + c for c in _COLUMNS.split(', '))} "
                "FROM attachment AS a JOIN message AS m ON m.id = a.message_id "
                "WHERE m.session_id = ? ORDER BY a.message_id, a.ordinal",
                (session_id,),
            ).fetchall()
        for row in rows:
            found.setdefault(int(row[0]), (int(row[1]), []))[1].append(_attachment(row[2:]))
        return {message_id: (seq, tuple(files)) for message_id, (seq, files) in found.items()}


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
