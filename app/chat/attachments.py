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
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
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
from app.core.errors import ApiError, StorageError, UserFacingError
from app.core.models import Message, Role
from app.core.tokens import TokenCounter
from app.llm.provider import ChatProvider, ChatRequest
from app.store.attachments import AttachmentFiles, AttachmentStore, sha256_of
from app.store.sessions import SessionStore

if TYPE_CHECKING:
    from app.chat.conversation import Shared
    from app.chat.service import ChatService

log = logging.getLogger(__name__)

# A PDF up to this size is counted by the server when attached. A larger one keeps its
# per-page estimate: the SDK encodes the request's JSON in one call that holds the GIL
# (about 6 ms a megabyte here), and attaching must not stall the window beyond a frame
# or two (bench/bench_attach.py).
MAX_COUNTED_BYTES = 4 * 1024 * 1024


class AttachmentPreparer:
    """Turns a file the user gave into an `Attachment` kept in the archive.

    A PDF's tokens cannot be counted offline: with a provider it is counted by the
    server's `count_tokens` (free; https://docs.anthropic.com/en/docs/build-with-claude/
    token-counting), else it keeps the per-page estimate, marked as one.
    """

    def __init__(
        self,
        runner: JobRunner,
        database: Path,
        counter: TokenCounter,
        provider: Callable[[], ChatProvider | None] = lambda: None,
        model: Callable[[], str] = lambda: "",
    ) -> None:
        self._runner = runner
        self.files = AttachmentFiles(database)
        self._counter = counter
        self._provider = provider
        self._model = model

    def prepare(
        self,
        name: str,
        read: Callable[[], bytes],
        done: Callable[[Attachment], None],
        failed: Callable[[UserFacingError], None],
    ) -> Job[Attachment]:
        """Read (`read` runs on the job's thread), check, count and keep one file;
        `done` or `failed` (with words to show) on the loop's thread."""
        model = self._model()
        provider = self._provider() if model else None

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
            if attachment.estimated and provider is not None and len(data) <= MAX_COUNTED_BYTES:
                attachment = _counted(attachment, data, provider, model)
            return attachment

        return self._runner.start(Job("attach", work, done=done, failed=failed))


def _counted(attachment: Attachment, data: bytes, provider: ChatProvider, model: str) -> Attachment:
    """`attachment` with the server's count of its tokens; as it was when it can't be had."""
    question: dict[str, Any] = {"type": "text", "text": "?"}
    alone = ChatRequest(model, [{"role": "user", "content": [question]}], 1)
    block = content_block(attachment, data)
    both = ChatRequest(model, [{"role": "user", "content": [block, question]}], 1)
    try:
        tokens = provider.count_tokens(both) - provider.count_tokens(alone)
    except ApiError as error:
        log.info("Could not count %s on the server (%s): estimated", attachment.name, error)
        return attachment
    if tokens <= 0:
        return attachment
    return replace(attachment, tokens=tokens, estimated=False)


class ComposerAttachments:
    """The front end's files: prepared in jobs, handed to the conversation on screen, and
    read back for the transcript.

    Attributes:
        preparer: reads, checks and keeps a file.
    """

    def __init__(self, service: ChatService, database: Path) -> None:
        self._service = service
        self._database = database
        self.preparer = AttachmentPreparer(
            service.runner,
            database,
            service.counter,
            lambda: service.current.outgoing.provider(),
            lambda: service.selected_model,
        )
        self._files: tuple[Attachment, ...] = ()
        self._store: AttachmentStore | None = None

    def set(self, attachments: Sequence[Attachment]) -> None:
        self._files = tuple(attachments)
        self.hand_over()

    def hand_over(self) -> None:
        """Give the files to the conversation on screen (it may have changed meanwhile)."""
        self._service.current.outgoing.set(self._files)

    def of(self, message_ids: Collection[int]) -> dict[int, tuple[Attachment, ...]]:
        if not message_ids:
            return {}
        if self._store is None:
            self._store = AttachmentStore.open(self._database)
        return self._store.for_messages(message_ids)

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None


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

    def provider(self) -> ChatProvider | None:
        """The provider for the current key and address (None without a key)."""
        return self._shared.provider()

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


@dataclass(frozen=True)
class AttachedFiles:
    """The live tail's files as the request sends them.

    Attributes:
        blocks: the content blocks by message id.
        guessed: some file's tokens are an offline estimate (a PDF counted per page): the
            reply's usage then says nothing reliable about the tokenizer's calibration.
    """

    blocks: dict[int, list[dict[str, Any]]]
    guessed: bool = False


def attachment_blocks(database: Path | None, tail: Sequence[Message]) -> AttachedFiles:
    """The tail's attached files, read from the archive (on a job's thread)."""
    ids = [m.id for m in tail if m.role is Role.USER and m.content.rstrip().endswith("]")]
    if database is None or not ids:
        return AttachedFiles({})
    store = AttachmentStore.open(database)
    try:
        found = store.for_messages(ids)
    finally:
        store.close()
    files = AttachmentFiles(database)
    return AttachedFiles(
        {
            message_id: [_block(files, a) for a in attachments]
            for message_id, attachments in found.items()
        },
        guessed=any(a.estimated for attachments in found.values() for a in attachments),
    )


def _block(files: AttachmentFiles, attachment: Attachment) -> dict[str, Any]:
    """The file's block; a note in its place when its kept copy is gone or damaged (the
    conversation goes on, and Claude says it cannot see the file rather than guess)."""
    try:
        return content_block(attachment, files.read(attachment.sha256))
    except StorageError as error:
        log.warning("Sending %s without its file: %s", attachment.name, error.message)
        note = f"(The attached file {attachment.name} is no longer available to Claude.)"
        return {"type": "text", "text": note}
