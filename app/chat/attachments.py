"""Attachments from the composer to the request (issue 11 item 2).

- `AttachmentPreparer` reads, checks, counts and keeps a file in a job (never on
  the loop's thread: a 20 MB PDF is read, hashed and written in the background).
- `Outgoing` is a conversation's files waiting to go with the next message: the
  gauge counts them, and they are stored with the message (rows beside it, the
  names in its text, so summaries, search and export name them).
- `attachment_blocks` turns the stored files of the live tail into the content
  blocks of the request, on the reply's thread, inside the API's limits for a whole
  request (app/core/file_limits.py): the oldest files that would break them go as a
  one-line note naming them. The gauge (`Outgoing.plan`) makes the same plan from the
  files' rows it keeps, so the window says exactly which files are not re-sent.
  Where the server offers the Files API, a file goes as a reference to its upload
  (app/chat/uploads.py), else as base64.
"""

from __future__ import annotations

import logging
import threading
from bisect import bisect_left
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.chat.runner import Job, JobRunner
from app.core.attachments import (
    Attachment,
    AttachmentRefusedError,
    content_block,
    describe,
    reference_block,
    say_size,
    with_attachment_line,
)
from app.core.catalog import ModelInfo
from app.core.errors import ApiError, RequestTooLargeError, StorageError, UserFacingError
from app.core.file_limits import (
    ByReference,
    FilePlan,
    by_base64,
    by_file_id,
    check_message,
    plan_files,
)
from app.core.live_tail import LiveTail
from app.core.models import Message, Role
from app.core.sequences import shared_start
from app.core.tokens import TokenCounter
from app.llm.provider import ChatProvider, ChatRequest
from app.store.attachments import AttachmentFiles, AttachmentStore, sha256_of
from app.store.sessions import SessionStore

if TYPE_CHECKING:
    from app.chat.state import Shared
    from app.chat.uploads import ReplyFiles

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

    def __init__(
        self,
        runner: JobRunner,
        database: Path,
        counter: TokenCounter,
        outgoing: Callable[[], Outgoing],
        model: Callable[[], str],
    ) -> None:
        """`outgoing`: the files of the conversation on screen; `model`: its model."""
        self._outgoing = outgoing
        self._database = database
        self.preparer = AttachmentPreparer(
            runner, database, counter, lambda: outgoing().provider(), model
        )
        self._files: tuple[Attachment, ...] = ()
        self._store: AttachmentStore | None = None

    def set(self, attachments: Sequence[Attachment]) -> None:
        self._files = tuple(attachments)
        self.hand_over()

    def hand_over(self) -> None:
        """Give the files to the conversation on screen (it may have changed meanwhile)."""
        self._outgoing().set(self._files)

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


# The draft's stand-in for a message id in a plan: no stored message has id 0.
DRAFT_ID = 0


class Outgoing:
    """A conversation's files waiting to go with its next message, and the files of its
    earlier messages (what the next request re-sends, or names in a note).

    Attributes:
        draft: the files attached in the composer, in order.
        earlier: the files of the conversation's stored messages that have any: by
            message id, its seq and its files (read when it opens, kept up to date).
    """

    def __init__(self, shared: Shared, changed: Callable[[], None]) -> None:
        self._shared = shared
        self._changed = changed
        self.draft: tuple[Attachment, ...] = ()
        self.earlier: dict[int, tuple[int, tuple[Attachment, ...]]] = {}

    def load(self, session_id: str) -> None:
        """Read the conversation's files' rows (in a job), then tell the gauge."""
        database = self._shared.database

        def work(_job: object) -> dict[int, tuple[int, tuple[Attachment, ...]]]:
            store = AttachmentStore.open(database)
            try:
                return store.for_session(session_id)
            finally:
                store.close()

        def done(found: dict[int, tuple[int, tuple[Attachment, ...]]]) -> None:
            self.earlier = {**found, **self.earlier}
            if found:
                self._changed()

        self._shared.runner.start(
            Job(
                "files",
                work,
                done=done,
                failed=lambda error: log.warning("Could not read the files: %s", error),
            )
        )

    def plan(self, tail: LiveTail, model: ModelInfo) -> FilePlan:
        """Which earlier files the next request (the draft's) re-sends, as `attachment_blocks`
        will decide it. A draft whose files alone break a limit is refused when sent
        (`check`); until then it counts as if it were sent without them."""
        live = sorted(
            (seq, message_id, files)
            for message_id, (seq, files) in self.earlier.items()
            if tail.holds(message_id, seq)
        )
        files = [(message_id, files) for _seq, message_id, files in live]
        if self.draft:
            files.append((DRAFT_ID, self.draft))
        if not files:  # most requests: nothing to plan (and no provider to ask, per key press)
            return FilePlan()
        count, by = self._shared.counter.count, self._by_reference()
        try:
            return plan_files(files, model, count, newest=DRAFT_ID, by_reference=by)
        except AttachmentRefusedError:
            return plan_files(files[:-1], model, count, newest=DRAFT_ID, by_reference=by)

    def check(self, model: ModelInfo) -> None:
        """Refuse, in words naming the file and the limit, a draft whose files alone break
        the API's limits on a request.

        Raises:
            AttachmentRefusedError: what to do instead.
        """
        if self.draft:
            check_message(self.draft, model, self._by_reference())

    def _by_reference(self) -> ByReference:
        """How the next request's files go: by `file_id` where the server is known to
        offer the Files API (app.chat.uploads), else as base64."""
        uploads = self._shared.uploads
        offered = uploads is not None and uploads.by_reference(self._shared.provider())
        return by_file_id if offered else by_base64

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
            self.earlier[message.id] = (message.seq, self.draft)
            self.draft = ()
        return message


@dataclass(frozen=True)
class AttachedFiles:
    """The live tail's files as the request sends them.

    Attributes:
        blocks: the content blocks by message id (a file left out: a note in its place).
        guessed: some file's tokens are an offline estimate (a PDF counted per page): the
            reply's usage then says nothing reliable about the tokenizer's calibration.
        plan: which files are re-sent, which are named in a note instead.
        sent: the files the request carries.
        references: the `file_id` of each file sent as a reference to its upload (by
            sha256); the others go as base64.
    """

    blocks: dict[int, list[dict[str, Any]]]
    guessed: bool = False
    plan: FilePlan = field(default_factory=FilePlan)
    sent: tuple[Attachment, ...] = ()
    references: dict[str, str] = field(default_factory=dict)


def carrying_files(tail: Sequence[Message]) -> list[int]:
    """The ids of the user's messages of `tail` that may have files attached: a message
    sent with files ends with their line ("[attached: a.pdf]"). Give it to
    `attachment_blocks` (none: it reads nothing). Only the messages a tail scanned lately
    did not start with are looked at (`_CarryingScans`)."""
    return _SCANS.scan(tail)


def _carrying(messages: Sequence[Message]) -> list[int]:
    """The positions in `messages` of the user's messages that end with a bracket."""
    user = Role.USER
    return [at for at, m in enumerate(messages) if m.role is user and _ends_with_bracket(m.content)]


class _CarryingScans:
    """`carrying_files` of the last tails scanned, so a request's scan looks only at the
    messages after the start it shares with one of them (a turn: the question and its
    reply), not at the whole live tail again (~0.6 ms a request at 1,172 messages).

    A `Message` is frozen and the store hands back the very same object for a row that did
    not change (app.store.live_messages), so a message met again by identity is the one
    scanned; a changed one (an edit) is a new object, and the scan goes on from there. The
    shared start is found by identity in C. Thread-safe (every reply's worker asks); a
    tail is held while remembered, so no other object can take a message's id meanwhile.
    """

    _KEPT_TAILS = 4

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # Each tail scanned lately, and the positions in it of the messages carrying files.
        self._tails: list[tuple[tuple[Message, ...], list[int]]] = []

    def scan(self, tail: Sequence[Message]) -> list[int]:
        messages = tuple(tail)
        with self._lock:
            known = [*self._tails]
        best: tuple[tuple[Message, ...], list[int]] | None = None
        shared = 0
        for scanned in known:
            length = shared_start(scanned[0], messages)
            if length > shared:
                best, shared = scanned, length
        kept = [] if best is None else best[1][: bisect_left(best[1], shared)]
        found = [*kept, *(shared + at for at in _carrying(messages[shared:]))]
        with self._lock:
            # A tail that starts with all of `best` takes its place (one a conversation).
            superseded = best if best is not None and shared == len(best[0]) else None
            self._tails = [
                (messages, found),
                *(scanned for scanned in self._tails if scanned is not superseded),
            ][: self._KEPT_TAILS]
        return [messages[at].id for at in found]


_SCANS = _CarryingScans()


def _ends_with_bracket(text: str) -> bool:
    """`text.rstrip().endswith("]")` without copying a text that ends in no white space
    (nearly all: the scan ran over ~0.6 MB of text a request at 155k live tokens)."""
    if text.endswith("]"):
        return True
    return text[-1:].isspace() and text.rstrip().endswith("]")


def attachment_blocks(
    database: Path | None,
    tail: Sequence[Message],
    model: ModelInfo,
    count: Callable[[str], int],
    uploads: ReplyFiles | None = None,
    carrying: Sequence[int] | None = None,
) -> AttachedFiles:
    """The tail's attached files, read from the archive (on a job's thread), inside the
    API's limits on a whole request (`plan_files`): each as a reference to its upload
    where `uploads` has the server's Files API (uploading it the first time), else base64.
    `carrying`: `carrying_files(tail)`, when the caller has it already (one scan, not two).

    Raises:
        AttachmentRefusedError: the newest message's files alone break a limit (a model
            with a smaller window was chosen since it was sent, say).
    """
    ids = carrying_files(tail) if carrying is None else carrying
    if database is None or not ids:
        return AttachedFiles({})
    users = [m for m in tail if m.role is Role.USER]
    store = AttachmentStore.open(database)
    try:
        found = store.for_messages(ids)
    finally:
        store.close()
    ordered = [(m.id, found[m.id]) for m in tail if m.id in found]
    newest = users[-1].id if users else None
    references: dict[str, str] = {}
    by_reference = uploads is not None and uploads.offered()
    plan = plan_files(
        ordered,
        model,
        count,
        newest=newest,
        by_reference=by_file_id if by_reference else by_base64,
    )
    if uploads is not None and by_reference:
        references = uploads.references(_sent(ordered, plan))
        if any(a.sha256 not in references for a in _sent(ordered, plan)):
            # An upload failed: that file goes as base64, which may leave more out.
            plan = plan_files(
                ordered, model, count, newest=newest, by_reference=lambda a: a.sha256 in references
            )
    files = AttachmentFiles(database)
    blocks: dict[int, list[dict[str, Any]]] = {}
    for message_id, attachments in ordered:
        kept = [a for index, a in enumerate(attachments) if plan.sends(message_id, index)]
        blocks[message_id] = [_block(files, a, references.get(a.sha256)) for a in kept]
        if message_id in plan.notes:
            blocks[message_id].append({"type": "text", "text": plan.notes[message_id]})
    sent = _sent(ordered, plan)
    return AttachedFiles(
        blocks,
        guessed=any(a.estimated for a in sent),
        plan=plan,
        sent=tuple(sent),
        references={a.sha256: references[a.sha256] for a in sent if a.sha256 in references},
    )


def _sent(ordered: Sequence[tuple[int, Sequence[Attachment]]], plan: FilePlan) -> list[Attachment]:
    """The files `plan` sends, in order."""
    return [
        a
        for message_id, attachments in ordered
        for index, a in enumerate(attachments)
        if plan.sends(message_id, index)
    ]


def explain_too_large(error: UserFacingError, files: AttachedFiles | None) -> UserFacingError:
    """A 413 `request_too_large` (over 32 MB: https://platform.claude.com/docs/en/api/errors)
    for a request that carried files says which file is the largest: condensing earlier
    messages cannot make a message's own files smaller."""
    if not isinstance(error, RequestTooLargeError) or files is None or not files.sent:
        return error
    if "type=request_too_large" not in (error.detail or ""):
        return error  # a context overflow said as a 400: condensing does help there
    in_body = [a for a in files.sent if a.sha256 not in files.references]
    if not in_body:
        return error  # every file went by reference: none of them made the body large
    largest = max(in_body, key=lambda a: a.size)
    return RequestTooLargeError(
        f"“{largest.name}” ({say_size(largest.size)}) is too large to send with the rest of "
        "this conversation: Claude takes at most 32 MB in one request, files included. "
        f"Send a smaller copy of “{largest.name}” (fewer pages, or a smaller picture), or "
        "start a new conversation for it.",
        detail=error.detail,
    )


def _block(files: AttachmentFiles, attachment: Attachment, file_id: str | None) -> dict[str, Any]:
    """The file's block: a reference to its upload (`file_id`), else its bytes; a note in
    its place when its kept copy is gone or damaged (the conversation goes on, and Claude
    says it cannot see the file rather than guess)."""
    if file_id is not None:
        return reference_block(attachment, file_id)
    try:
        return content_block(attachment, files.read(attachment.sha256))
    except StorageError as error:
        log.warning("Sending %s without its file: %s", attachment.name, error.message)
        note = f"(The attached file {attachment.name} is no longer available to Claude.)"
        return {"type": "text", "text": note}
