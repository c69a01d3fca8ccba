"""The fake server's Files API: a file uploaded once, then referred to by its `file_id`.

As the documentation defines it (read 2026-12-02):
- The guide, https://platform.claude.com/docs/en/build-with-claude/files: upload with
  `POST /v1/files` (multipart/form-data, the file in a `file` part), refer to it in an
  image or document block as `{"type": "file", "file_id": …}`, list, read the metadata
  of, and delete files. "Files are scoped to the workspace of the API key": another
  workspace's key does not find them. Its "Error handling": "File not found (404)",
  "Invalid file type (400)" (a file whose type does not match its block: file_blocks.py),
  "Invalid filename (400)" (1–255 characters, none of < > : " | ? * \\ / or control
  characters), "File too large (413)", "Storage limit exceeded (403)". Files persist
  until deleted; an uploaded file is not downloadable (only files skills or the code
  execution tool create are).
- The API reference (https://platform.claude.com/docs/en/api/files/upload, …/list,
  …/retrieve_metadata, …/delete; the SDK's `FileMetadata`, `DeletedFile` and
  `SyncPageCursor`, which are the wire contract): metadata `{id, type: "file", filename,
  mime_type, size_bytes, created_at, downloadable}`; a list `{data, next_page}`, newest
  first, `limit` 1–1000 (default 20), `page` the cursor; a deletion `{id, type:
  "file_deleted"}`.
- Request size: the Files API takes up to 500 MB a request
  (https://platform.claude.com/docs/en/api/errors, "Request size limits"; read as
  500,000,000 bytes, the stricter reading), against 32 MB for Messages.
- The header: in beta the Files API needed `anthropic-beta: files-api-2025-04-14` on its
  own calls and on a Messages request that refers to a file
  (https://docs.claude.com/en/api/files-create, and the guide's examples of the time); it
  is generally available now, without the header (the SDK's `client.files`; the SDK's
  v1.2.0 notes, 2026-08-27: "drop dated beta header pins"). `mode` says which of them a
  fake server is: "ga", "beta" (refuses a call without the header), or "off" (an
  Anthropic-compatible server without the Files API: no such routes, no `file` source).
"""

from __future__ import annotations

import email.parser
import email.policy
import itertools
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from tests.fakes.file_blocks import FileBlockError, Resolve

FILES_PATH = "/v1/files"
FILES_BETA = "files-api-2025-04-14"
MAX_UPLOAD_BYTES = 500_000_000
MAX_FILENAME = 255
_FORBIDDEN_IN_FILENAME = frozenset('<>:"|?*\\/') | {chr(code) for code in range(32)}
_SNIFFED = (
    (b"%PDF-", "application/pdf"),
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)

FilesMode = Literal["ga", "beta", "off"]


class FilesApiError(Exception):
    """An error answer: its HTTP status, and the message of its `error` body."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class StoredFile:
    id: str
    workspace: str
    filename: str
    mime_type: str
    data: bytes
    created_at: datetime

    def metadata(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "file",
            "filename": self.filename,
            "mime_type": self.mime_type,
            "size_bytes": len(self.data),
            "created_at": self.created_at.isoformat().replace("+00:00", "Z"),
            "downloadable": False,
        }


class FakeFiles:
    """The files of a fake server, by workspace.

    Attributes:
        mode: "ga", "beta" or "off" (see the module notes).
        workspaces: the workspace of each API key; a key not named is in "default".
        storage_limit: the bytes a workspace may keep (None: no limit), past which an
            upload is refused with 403 ("Storage limit exceeded").
        uploads, deletions: every file uploaded and every id deleted, in order.
    """

    def __init__(self) -> None:
        self.mode: FilesMode = "ga"
        self.workspaces: dict[str, str] = {}
        self.storage_limit: int | None = None
        self.uploads: list[StoredFile] = []
        self.deletions: list[str] = []
        self._files: dict[str, StoredFile] = {}
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._created = datetime(2026, 12, 1, tzinfo=UTC)

    # -- what tests look at and do

    def stored(self, workspace: str = "default") -> list[StoredFile]:
        """The files a workspace holds now, oldest first."""
        with self._lock:
            return [f for f in self._files.values() if f.workspace == workspace]

    def lose(self, file_id: str) -> None:
        """Let a file go behind the client's back (deleted elsewhere, say)."""
        with self._lock:
            self._files.pop(file_id, None)

    # -- the messages side

    def resolver(self, key: str | None, headers: Mapping[str, str]) -> Resolve:
        """How a Messages request from `key` finds the files it refers to (file_blocks.Resolve)."""

        def resolve(file_id: str) -> tuple[str, bytes]:
            if self.mode == "off":
                raise FileBlockError("source.type: Input should be 'base64' or 'text'")
            if self.mode == "beta" and not has_beta(headers):
                raise FileBlockError(
                    "source.type: a `file` source needs the beta header "
                    f"`anthropic-beta: {FILES_BETA}`"
                )
            with self._lock:
                found = self._files.get(file_id)
            if found is None or found.workspace != self.workspace_of(key):
                raise FileBlockError(f"File not found: {file_id}", status=404)
            return found.mime_type, found.data

        return resolve

    def lookup(self, file_id: str) -> tuple[str, bytes] | None:
        """A file by id whatever its workspace (counting tokens of a request already checked)."""
        with self._lock:
            found = self._files.get(file_id)
        return None if found is None else (found.mime_type, found.data)

    def workspace_of(self, key: str | None) -> str:
        return self.workspaces.get(key or "", "default")

    # -- the routes (on the server's handler threads)

    def handles(self, method: str, path: str) -> bool:
        """Whether a request is a Files API call (in mode "off" there are none)."""
        if self.mode == "off":
            return False
        return path == FILES_PATH or path.startswith(FILES_PATH + "/")

    def serve(
        self,
        method: str,
        path: str,
        query: Mapping[str, list[str]],
        headers: Mapping[str, str],
        raw: bytes,
        key: str | None,
    ) -> tuple[int, dict[str, Any]]:
        """Answer a Files API call: (status, JSON body). Raises FilesApiError."""
        if self.mode == "beta" and not has_beta(headers):
            raise FilesApiError(
                400, f"The Files API needs the beta header `anthropic-beta: {FILES_BETA}`."
            )
        workspace = self.workspace_of(key)
        if path == FILES_PATH and method == "POST":
            return 200, self._upload(headers, raw, workspace).metadata()
        if path == FILES_PATH and method == "GET":
            return 200, self._list(query, workspace)
        file_id, _, rest = path[len(FILES_PATH) + 1 :].partition("/")
        found = self._find(file_id, workspace)
        if method == "GET" and rest == "":
            return 200, found.metadata()
        if method == "DELETE" and rest == "":
            with self._lock:
                self._files.pop(file_id, None)
                self.deletions.append(file_id)
            return 200, {"id": file_id, "type": "file_deleted"}
        if method == "GET" and rest == "content":
            raise FilesApiError(400, f"File {file_id} is not downloadable.")
        raise FilesApiError(404, f"{method} {path} not found.")

    def _find(self, file_id: str, workspace: str) -> StoredFile:
        with self._lock:
            found = self._files.get(file_id)
        if found is None or found.workspace != workspace:
            raise FilesApiError(404, f"File not found: {file_id}")
        return found

    def _upload(self, headers: Mapping[str, str], raw: bytes, workspace: str) -> StoredFile:
        if len(raw) > MAX_UPLOAD_BYTES:
            raise FilesApiError(413, "File exceeds the maximum size of 500 MB.")
        filename, mime_type, data = _file_part(headers.get("content-type", ""), raw)
        if not 1 <= len(filename) <= MAX_FILENAME or set(filename) & _FORBIDDEN_IN_FILENAME:
            raise FilesApiError(400, f"Invalid filename: {filename!r}")
        with self._lock:
            used = sum(len(f.data) for f in self._files.values() if f.workspace == workspace)
            if self.storage_limit is not None and used + len(data) > self.storage_limit:
                raise FilesApiError(403, "Your organization has reached its storage limit.")
            number = next(self._ids)
            stored = StoredFile(
                id=f"file_fake{number:020d}",
                workspace=workspace,
                filename=filename,
                mime_type=mime_type,
                data=data,
                created_at=self._created + timedelta(seconds=number),
            )
            self._files[stored.id] = stored
            self.uploads.append(stored)
        return stored

    def _list(self, query: Mapping[str, list[str]], workspace: str) -> dict[str, Any]:
        try:
            limit = int(query.get("limit", ["20"])[0])
        except ValueError:
            raise FilesApiError(400, "limit: Input should be a valid integer") from None
        if not 1 <= limit <= 1000:
            raise FilesApiError(400, "limit: Input should be between 1 and 1000")
        with self._lock:
            newest_first = sorted(
                (f for f in self._files.values() if f.workspace == workspace),
                key=lambda f: f.created_at,
                reverse=True,
            )
        start = 0
        page = query.get("page", [None])[0]
        if page is not None:
            ids = [f.id for f in newest_first]
            start = ids.index(page[len("page_") :]) + 1 if page[len("page_") :] in ids else 0
        chosen = newest_first[start : start + limit]
        more = start + limit < len(newest_first)
        return {
            "data": [f.metadata() for f in chosen],
            "next_page": f"page_{chosen[-1].id}" if more and chosen else None,
        }


def has_beta(headers: Mapping[str, str]) -> bool:
    """Whether the request names the Files API beta in its `anthropic-beta` header."""
    named = headers.get("anthropic-beta", "")
    return FILES_BETA in {value.strip() for value in named.split(",")}


def _file_part(content_type: str, raw: bytes) -> tuple[str, str, bytes]:
    """The `file` part of a multipart/form-data body: its filename, type and bytes."""
    if not content_type.startswith("multipart/form-data"):
        raise FilesApiError(400, "The request must be multipart/form-data with a `file` part.")
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        b"Content-Type: " + content_type.encode("latin-1") + b"\r\n\r\n" + raw
    )
    for part in message.iter_parts():
        if part.get_param("name", header="content-disposition") != "file":
            continue
        data = part.get_payload(decode=True)
        if not isinstance(data, bytes):
            break
        filename = str(part.get_filename() or "")
        mime_type = part.get_content_type()
        if mime_type == "application/octet-stream":  # not said: found from the bytes
            mime_type = next((t for magic, t in _SNIFFED if data.startswith(magic)), mime_type)
        return filename, mime_type, data
    raise FilesApiError(400, "file: Field required")
