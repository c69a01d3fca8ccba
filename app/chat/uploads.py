"""Attached files uploaded once through the Files API, and deleted with their messages.

Every file of the live tail goes with every request. Sent as base64 inside the request,
two 60-page PDFs and 25 pictures make each turn's body 18–29 MB and 0.2–0.3 s of JSON
encoding (bench/bench_cache.py --files-only); uploaded once and referred to by its
`file_id` (https://platform.claude.com/docs/en/build-with-claude/files), the same turn
is a few kilobytes, with the same tokens and the same share read from the prompt cache.
So a file is uploaded the first time a request carries it, once per server (the API
address and the key's workspace: app/store/uploads.py), and its id is kept.

- Whether a server offers the Files API is found once (a list of one file) and
  remembered; one that does not (an Anthropic-compatible server at another address, a
  key without it) gets base64 as before. Nothing is said to the user about either:
  a file whose upload fails goes as base64 in that request, and only if that fails too
  does the user hear of it, as of any failed request.
- A server that answers 404 for a request that referred to files may have let one go
  (deleted elsewhere, or another key's workspace): the files it no longer has are
  uploaded again and the request is sent once more (`ReplyFiles.recover`); a 404 that
  is not about a file is the model's (app.chat.model_fallback).
- When the last message with a file is deleted (its conversation, or the archived
  originals that had it), its uploads are deleted on the server in the background
  (`FileUploads.purge`): never in the way of the deletion, and tried again later when
  the server cannot be reached.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import cast

from app.chat.loop import EventLoop, Timer
from app.chat.runner import Job, JobRunner
from app.core.attachments import Attachment
from app.core.errors import (
    ApiError,
    ModelNotFoundError,
    RequestStoppedError,
    StorageError,
    UserFacingError,
)
from app.llm.provider import CancelToken, ChatProvider, FilesSupport, FileStorage
from app.store.attachments import AttachmentFiles
from app.store.uploads import UploadStore

log = logging.getLogger(__name__)

# A server found without the Files API is asked again after this long (it may gain it).
RECHECK_AFTER = timedelta(days=7)
# Uploads left to delete when the server could not be reached are tried again this often.
PURGE_RETRY_SECONDS = 10 * 60.0
_OFFERS = ("ga", "beta")
_OFFERS_FILES: dict[type, bool] = {}  # whether a provider's class has the Files API


def file_storage(provider: ChatProvider | FileStorage | None) -> FileStorage | None:
    """The provider's Files API, or None when it has none (files go as base64)."""
    if provider is None:
        return None
    # Asked at each Enter (a reply's uploads): a protocol's isinstance looks up each of its
    # members on the object (`files_scope` hashes the key), so it is asked once a class.
    kind = type(provider)
    offers = _OFFERS_FILES.get(kind)
    if offers is None:
        offers = _OFFERS_FILES[kind] = isinstance(provider, FileStorage)
    return cast(FileStorage, provider) if offers else None


class FileUploads:
    """Which servers offer the Files API, uploads for a reply, and deleting the uploads no
    message has any more. One for the service; `by_reference` and `purge` on the loop's
    thread, `for_reply`'s `ReplyFiles` on the reply's.
    """

    def __init__(
        self,
        database: Path,
        runner: JobRunner,
        loop: EventLoop,
        provider: Callable[[], ChatProvider | None],
        *,
        found: Callable[[], None] = lambda: None,
    ) -> None:
        """`found`: told (on the loop's thread) when a purge found out whether the server
        offers the Files API, which changes what the gauge plans."""
        self._database = database
        self._found = found
        self._runner = runner
        self._loop = loop
        self._provider = provider
        self._lock = threading.Lock()
        self._support: dict[str, FilesSupport] = {}  # by `files_scope`, once found
        self._purging: Job[bool] | None = None
        self._retry: Timer | None = None

    def by_reference(self, provider: ChatProvider | FileStorage | None) -> bool:
        """Whether the next request's files go by `file_id` (the server is known to
        offer the Files API): what the gauge plans with."""
        storage = file_storage(provider)
        if storage is None:
            return False
        with self._lock:
            return self._support.get(storage.files_scope) in _OFFERS

    def for_reply(self, provider: ChatProvider, cancel: CancelToken) -> ReplyFiles | None:
        """The uploads of one reply's requests; None when the provider has no Files API."""
        storage = file_storage(provider)
        return None if storage is None else ReplyFiles(self, storage, self._database, cancel)

    def support(
        self, storage: FileStorage, store: UploadStore, cancel: CancelToken | None = None
    ) -> FilesSupport | None:
        """Whether `storage`'s server offers the Files API: remembered, else asked (and
        remembered). None: it could not be told now (offline). Any thread."""
        scope = storage.files_scope
        with self._lock:
            known = self._support.get(scope)
        if known is not None:
            return known
        stored = store.support(scope)
        fresh = stored is not None and (
            stored.support in _OFFERS
            or datetime.fromisoformat(stored.checked_at) > datetime.now(UTC) - RECHECK_AFTER
        )
        if stored is not None and fresh:
            storage.use_files_support(stored.support)
            found: FilesSupport | None = stored.support
        else:
            found = storage.files_support(cancel=cancel)
            if found is not None:
                store.set_support(scope, found)
                log.info("Files API at this server: %s", found)
        if found is not None:
            with self._lock:
                self._support[scope] = found
        return found

    def not_offered(self, storage: FileStorage, store: UploadStore) -> None:
        """The server refused an upload as one without the Files API does: base64 from now."""
        storage.use_files_support("none")
        store.set_support(storage.files_scope, "none")
        with self._lock:
            self._support[storage.files_scope] = "none"

    def purge(self) -> None:
        """Delete on the server, in the background, the uploads no message has any more
        (of the current server); those it cannot reach now are tried again later."""
        storage = file_storage(self._provider())
        if storage is None or self._purging is not None:
            return
        if self._retry is not None:
            self._retry.cancel()
            self._retry = None
        database = self._database
        cancel = CancelToken()  # quitting stops a deletion at once: the rest waits for next time

        def work(_job: Job[bool]) -> bool:
            store = UploadStore.open(database)
            try:
                return self._delete_unused(storage, store, cancel)
            finally:
                store.close()

        known = self.by_reference(storage)

        def done(finished: bool) -> None:
            self._purging = None
            if self.by_reference(storage) != known:
                self._found()
            if not finished:
                self._retry = self._loop.call_later(PURGE_RETRY_SECONDS, self.purge)

        def failed(error: UserFacingError) -> None:
            log.warning("Could not delete uploaded files: %s (%s)", error.message, error.detail)
            done(False)

        job: Job[bool] = Job(
            "delete-uploads", work, done=done, failed=failed, on_cancel=cancel.cancel
        )
        self._purging = job
        self._runner.start(job)

    def _delete_unused(self, storage: FileStorage, store: UploadStore, cancel: CancelToken) -> bool:
        """Delete what `store` says is unused on `storage`'s server; False when some are left
        (the server could not be reached)."""
        support = self.support(storage, store, cancel)
        if support is None:
            return False  # offline: later
        if support not in _OFFERS:
            return True  # nothing was uploaded there, nor can be deleted
        scope = storage.files_scope
        while not cancel.cancelled and (file_ids := store.to_delete(scope)):
            deleted: list[str] = []
            try:
                for file_id in file_ids:
                    if cancel.cancelled:
                        break
                    storage.delete_file(file_id, cancel=cancel)
                    deleted.append(file_id)
            except ApiError as error:
                log.info("Could not delete an uploaded file now: %s", error.detail or error)
                return False
            finally:
                store.deleted(scope, deleted)
        return not cancel.cancelled


class ReplyFiles:
    """One reply's uploads: the `file_id` of each file its requests send, uploading the
    files the server does not have yet. On the reply's thread."""

    def __init__(
        self, uploads: FileUploads, storage: FileStorage, database: Path, cancel: CancelToken
    ) -> None:
        self._uploads = uploads
        self._storage = storage
        self._database = database
        self._cancel = cancel
        self._recovered = False

    def offered(self) -> bool:
        """Whether the server offers the Files API (found once, then remembered)."""
        store = UploadStore.open(self._database)
        try:
            return self._uploads.support(self._storage, store, self._cancel) in _OFFERS
        finally:
            store.close()

    def references(self, attachments: Sequence[Attachment]) -> dict[str, str]:
        """The `file_id` of each of `attachments` (by sha256), uploading those the server
        does not have yet. A file that cannot be uploaded has none: it goes as base64."""
        scope = self._storage.files_scope
        wanted = {a.sha256: a for a in attachments}
        store = UploadStore.open(self._database)
        try:
            found = store.file_ids(scope, wanted)
            files = AttachmentFiles(self._database)
            for sha256, attachment in wanted.items():
                if sha256 in found or self._cancel.cancelled:
                    continue
                file_id = self._upload(attachment, files, store)
                if file_id is None:
                    continue
                store.record(scope, sha256, file_id)
                found[sha256] = file_id
        finally:
            store.close()
        return found

    def _upload(
        self, attachment: Attachment, files: AttachmentFiles, store: UploadStore
    ) -> str | None:
        try:
            data = files.read(attachment.sha256)
        except StorageError:
            return None  # its block becomes a note (app.chat.attachments)
        try:
            return self._storage.upload_file(
                attachment.name, data, attachment.media_type, cancel=self._cancel
            )
        except RequestStoppedError:
            return None
        except ApiError as error:
            log.info("Sending %s as base64: its upload failed (%s)", attachment.name, error.detail)
            if isinstance(error, ModelNotFoundError):  # the route is gone: no Files API now
                self._uploads.not_offered(self._storage, store)
            return None

    def recover(self, used: Mapping[str, str]) -> bool:
        """After a 404: forget the files of `used` (sha256 → file_id) the server no longer
        has, so the next request uploads them again. True when there were any (once a
        reply: a second 404 is the model's)."""
        if self._recovered or not used:
            return False
        self._recovered = True
        gone = [
            file_id
            for file_id in used.values()
            if self._storage.file_exists(file_id, cancel=self._cancel) is False
        ]
        if gone:
            log.info("The server no longer has %d uploaded file(s): uploading again", len(gone))
            store = UploadStore.open(self._database)
            try:
                store.forget(self._storage.files_scope, gone)
            finally:
                store.close()
        return bool(gone)
