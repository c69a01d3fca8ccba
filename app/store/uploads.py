"""Which attached files a server holds already, by `file_id` (table `upload`, migration 11).

A file is uploaded once per server it goes to (the Files API:
https://platform.claude.com/docs/en/build-with-claude/files) and then referred to by its
id in every request instead of being re-sent. A server is the API address and a
fingerprint of the key (`AnthropicProvider.files_scope`): files are "scoped to the
workspace of the API key", so another key may not see them. Rows are keyed on the file's
sha256, as its bytes are kept (app/store/attachments.py): the same picture in two
messages is uploaded once.

When the last message with a file is deleted (its conversation, or the archived originals
that had it), a trigger marks its uploads `deleting`; `app.chat.uploads` deletes them on
the server in the background and then here (`deleted`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Literal, cast

from app.store.batches import in_batches
from app.store.owned import ConnectionStore
from app.store.sessions import _stamp
from app.store.transactions import translated_errors, write_transaction

Support = Literal["ga", "beta", "none"]
_SUPPORT: tuple[Support, ...] = ("ga", "beta", "none")


@dataclass(frozen=True)
class ServerSupport:
    """Whether a server offers the Files API, as found, and when."""

    support: Support
    checked_at: str


class UploadStore(ConnectionStore):
    """Reads and records uploads, for one thread."""

    def file_ids(self, server: str, sha256s: Collection[str]) -> dict[str, str]:
        """The `file_id` on `server` of each of these files that has one (sha256 → id)."""
        found: dict[str, str] = {}
        with translated_errors("read the uploaded files", self.database):
            for chunk, marks in in_batches(sha256s):
                rows = self._connection.execute(
                    f"SELECT sha256, file_id FROM upload WHERE server = ? AND state = 'live' "
                    f"AND sha256 IN ({marks})",
                    (server, *chunk),
                ).fetchall()
                found.update((str(sha256), str(file_id)) for sha256, file_id in rows)
        return found

    def record(self, server: str, sha256: str, file_id: str) -> None:
        """`file_id` holds the file `sha256` on `server` now. A file no message has any
        more (deleted while it was uploading) is recorded for deletion straight away."""
        with write_transaction(self._connection, "record an uploaded file", self.database) as cur:
            cur.execute(
                "INSERT OR REPLACE INTO upload (server, sha256, file_id, uploaded_at, state) "
                "VALUES (?, ?, ?, ?, CASE WHEN EXISTS "
                "(SELECT 1 FROM attachment WHERE sha256 = ?) THEN 'live' ELSE 'deleting' END)",
                (server, sha256, file_id, _stamp(self._clock()), sha256),
            )

    def forget(self, server: str, file_ids: Collection[str]) -> None:
        """The server no longer has these files (it answered 404): upload them again."""
        if not file_ids:
            return
        with write_transaction(self._connection, "forget an uploaded file", self.database) as cur:
            cur.executemany(
                "DELETE FROM upload WHERE server = ? AND file_id = ?",
                [(server, file_id) for file_id in file_ids],
            )

    def to_delete(self, server: str, limit: int = 100) -> list[str]:
        """Ids of files on `server` that no message has any more, oldest upload first."""
        with translated_errors("read the uploaded files", self.database):
            rows = self._connection.execute(
                "SELECT file_id FROM upload WHERE server = ? AND state = 'deleting' "
                "ORDER BY uploaded_at LIMIT ?",
                (server, limit),
            ).fetchall()
        return [str(row[0]) for row in rows]

    def deleted(self, server: str, file_ids: Sequence[str]) -> None:
        """The server let these files go. A file attached again meanwhile (state `live`
        again) keeps its row: its next request finds it gone and uploads it anew."""
        if not file_ids:
            return
        with write_transaction(self._connection, "forget deleted uploads", self.database) as cur:
            cur.executemany(
                "DELETE FROM upload WHERE server = ? AND file_id = ? AND state = 'deleting'",
                [(server, file_id) for file_id in file_ids],
            )

    def support(self, server: str) -> ServerSupport | None:
        """What was found about `server`'s Files API, or None when it was never asked."""
        with translated_errors("read the uploaded files", self.database):
            row = self._connection.execute(
                "SELECT support, checked_at FROM upload_server WHERE server = ?", (server,)
            ).fetchone()
        if row is None or row[0] not in _SUPPORT:
            return None
        return ServerSupport(cast(Support, row[0]), str(row[1]))

    def set_support(self, server: str, support: Support) -> None:
        """Remember whether `server` offers the Files API."""
        with write_transaction(self._connection, "remember the server", self.database) as cur:
            cur.execute(
                "INSERT OR REPLACE INTO upload_server (server, support, checked_at) "
                "VALUES (?, ?, ?)",
                (server, support, _stamp(self._clock())),
            )
