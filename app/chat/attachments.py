"""Attachments from the composer to the request (issue 11 item 2).

- `AttachmentPreparer` reads, checks, counts and keeps a file in a job (never on
  the loop's thread: a 20 MB PDF is read, hashed and written in the background).
- `Outgoing` is a conversation's files waiting to go with the next message: the
  gauge counts them, and they are stored with the message (rows beside it, the
  names in its text, so summaries, search and export name them).
- `attachment_blocks` turns the stored files of the live tail into the content
  blocks of the request, on the reply's thread.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.chat.runner import Job, JobRunner
from app.core.attachments import (
    Attachment,
    AttachmentRefusedError,
    content_block,
    describe,
    with_attachment_line,
)
from app.core.errors import UserFacingError
from app.core.models import Message, Role
from app.core.tokens import TokenCounter
from app.store.attachments import AttachmentFiles, AttachmentStore, sha256_of
from app.store.sessions import SessionStore

if TYPE_CHECKING:
    from app.chat.conversation import Shared

log = logging.getLogger(__name__)


class AttachmentPreparer:
    """Turns a file the user gave into an `Attachment` kept in the archive."""

    def __init__(self, runner: JobRunner, database: Path, counter: TokenCounter) -> None:
        self._runner = runner
        self.files = AttachmentFiles(database)
        self._counter = counter

    def prepare(
        self,
        name: str,
        read: Callable[[], bytes],
        done: Callable[[Attachment], None],
        failed: Callable[[UserFacingError], None],
    ) -> Job[Attachment]:
        """Read (`read` runs on the job's thread), check, count and keep one file;
        `done` or `failed` (with words to show) on the loop's thread."""

        def work(_job: object) -> Attachment:
            try:
                data = read()
            except OSError as error:
                raise AttachmentRefusedError(
                    f"“{Path(name).name}” could not be read ({error.strerror or error})."
                ) from error
            digest = sha256_of(data)
            attachment = describe(name, data, digest, self._counter.count)
            self.files.put(data, digest)  # kept before the message that carries it is sent
            return attachment

        return self._runner.start(Job("attach", work, done=done, failed=failed))


class Outgoing:
    """A conversation's files waiting to go with its next message.

    Attributes:
        draft: the files attached in the composer, in order.
    """

    def __init__(self, shared: Shared, changed: Callable[[], None]) -> None:
        self._shared = shared
        self._changed = changed
        self.draft: tuple[Attachment, ...] = ()

    def set(self, attachments: Sequence[Attachment]) -> None:
        """The composer's files now (the gauge counts them with the draft)."""
        if tuple(attachments) != self.draft:
            self.draft = tuple(attachments)
            self._changed()

    def text(self, typed: str) -> str:
        """The message as it will be stored: the typed text and the files' names."""
        return with_attachment_line(typed, self.draft)

    def tokens(self, text: str) -> int:
        """The message's tokens: its text, and each file as the API will count it."""
        return self._shared.counter.count(text) + sum(a.tokens for a in self.draft)

    def draft_tokens(self, text: str) -> int | None:
        """The draft's tokens for the gauge when files are attached; None: count the text."""
        return self.tokens(text) if self.draft and text.strip() else None

    def store(self, store: SessionStore, session_id: str, text: str, tokens: int) -> Message:
        """Store the user's message with its files (the files were kept when attached)."""
        message = store.append_message(session_id, Role.USER, text, token_estimate=tokens)
        if self.draft:
            files = AttachmentStore.open(self._shared.database)
            try:
                files.add(message.id, self.draft)
            finally:
                files.close()
            self.draft = ()
        return message


def attachment_blocks(database: Path | None, tail: Sequence[Message]) -> dict[int, list[Any]]:
    """The content blocks of the tail's attached files, by message id (on a job's thread).

    Raises:
        StorageError: a file is missing or damaged (the message can't go as it was).
    """
    ids = [m.id for m in tail if m.role is Role.USER and m.content.rstrip().endswith("]")]
    if database is None or not ids:
        return {}
    store = AttachmentStore.open(database)
    try:
        found = store.for_messages(ids)
    finally:
        store.close()
    files = AttachmentFiles(database)
    return {
        message_id: [content_block(a, files.read(a.sha256)) for a in attachments]
        for message_id, attachments in found.items()
    }
