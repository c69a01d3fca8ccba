"""The API's limits on the files of one whole request, and which files a request re-sends
(issue 19 item 4).

Every file in the live tail goes with every request, so the limits the API sets on a
request hold for all of them together, not for each file:

- PDFs: at most 100 pages and 32 MB, "on the entire request payload, including any
  other content sent alongside PDFs"
  (https://platform.claude.com/docs/en/build-with-claude/pdf-support).
- Bytes: a Messages request of at most 32 MB, refused with 413 `request_too_large`
  (https://platform.claude.com/docs/en/api/errors, "Request size limits"); read here as
  32,000,000 bytes, the smaller reading of "MB".
- Images: up to 600 in a request, 100 for models with a 200k-token window; larger than
  8000×8000 px is rejected, and "if you submit more than 20 images in one API request,
  this limit is 2000x2000 px"; at most 5 MB an image as sent, base64
  (https://platform.claude.com/docs/en/build-with-claude/vision).

When the tail's files would break a limit, the oldest are left out of the request: each
message that had them carries a one-line note naming them instead
("[earlier file: report.pdf — not re-sent]"). Where the line falls moves in steps
(`STEP_SHARE` of the limits at a time), not by one file every turn: the request's start
stays the same for several turns, and is read from the prompt cache.

The bytes a request may spend on files are the 32 MB less room for everything else it
carries, judged from the model's window (`file_bytes_budget`): the same figure on every
path (the gauge, the check before sending, the request), so what the window says is not
re-sent is exactly what the request leaves out.

A file uploaded through the Files API (app/chat/uploads.py) goes as a reference to its
`file_id`: its bytes are no longer in the request's body, so no longer in its 32 MB
(a block of about `BLOCK_BYTES`), while its pages and its picture still count ("Both
limits are on the entire request payload", pdf-support, which lists the Files API among
the ways to give a PDF; a request referring to uploaded PDFs of 119 pages in all was
refused: https://github.com/anthropics/anthropic-sdk-python/issues/1098). `by_reference`
says which files go that way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from app.core.attachments import (
    MAX_IMAGE_BYTES,
    MAX_REQUEST_BYTES,
    Attachment,
    AttachmentKind,
    AttachmentRefusedError,
    base64_size,
    say_size,
)
from app.core.catalog import ModelInfo

MAX_REQUEST_PDF_PAGES = 100  # pdf-support: "Maximum pages per request"
MAX_IMAGES = 600  # vision: "up to 600 for API requests"
MAX_IMAGES_200K = 100  # vision: "(100 for models with a 200k-token context window)"
SMALL_WINDOW = 200_000
MANY_IMAGES = 20  # vision: past this many images in a request…
MAX_SIDE_WITH_MANY = 2000  # …each may be at most 2000×2000 px
MAX_IMAGE_SENT_BYTES = MAX_IMAGE_BYTES  # vision: 5 MB an image, base64 as sent
# Room kept for what is not a file: the request's framing, then up to this many bytes a
# token of its text (UTF-8 JSON, as the SDK encodes it, takes about 4) for a whole window,
# at most a million-token window's.
FRAMING_BYTES = 512 * 1024
BLOCK_BYTES = 128  # a file block's JSON around its data (type, source, media type, title)
TEXT_BYTES_PER_TOKEN = 6
MAX_TEXT_RESERVE = TEXT_BYTES_PER_TOKEN * 1_000_000
# The least `file_bytes_budget` of any model (a window of a million tokens or more).
MIN_FILE_BYTES_BUDGET = MAX_REQUEST_BYTES - FRAMING_BYTES - MAX_TEXT_RESERVE
# A request that must leave files out leaves out this share of the limits more than it
# must, so the next turns' files fit without moving the line again (the prompt cache).
STEP_SHARE = 0.25

NOTE_SUFFIX = " — not re-sent]"


class TooMuchForOneMessageError(AttachmentRefusedError):
    """A message whose files together break a limit of one request (named in its words)."""

    title = "Too many files for one message"


ByReference = Callable[[Attachment], bool]


def by_base64(_attachment: Attachment) -> bool:
    """Every file goes in the request's body (no Files API)."""
    return False


def by_file_id(_attachment: Attachment) -> bool:
    """Every file goes as a reference to its upload (the server offers the Files API)."""
    return True


def sent_bytes(attachment: Attachment, by_reference: bool = False) -> int:
    """The bytes a file takes in the request: base64 for images and PDFs (4 for every 3),
    its text for a text file (a little more once escaped in JSON); a reference to an
    uploaded file, only its block."""
    if by_reference:
        return BLOCK_BYTES
    if attachment.kind is AttachmentKind.TEXT:
        return attachment.size + attachment.size // 8 + BLOCK_BYTES
    return base64_size(attachment.size) + BLOCK_BYTES


def file_bytes_budget(model: ModelInfo) -> int:
    """The bytes a request to `model` may spend on files: 32 MB less room for the rest."""
    reserve = min(TEXT_BYTES_PER_TOKEN * model.max_input_tokens, MAX_TEXT_RESERVE)
    return MAX_REQUEST_BYTES - FRAMING_BYTES - reserve


def max_images(model: ModelInfo) -> int:
    """How many images a request to `model` may carry (vision)."""
    return MAX_IMAGES_200K if model.max_input_tokens <= SMALL_WINDOW else MAX_IMAGES


def is_large_image(attachment: Attachment) -> bool:
    """An image past 2000 px on a side: refused in a request of more than 20 images."""
    return attachment.kind is AttachmentKind.IMAGE and (
        max(attachment.width, attachment.height) > MAX_SIDE_WITH_MANY
    )


def not_resent_note(names: Sequence[str]) -> str:
    """The line sent in place of files left out: "[earlier file: a.pdf — not re-sent]"."""
    label = "earlier file" if len(names) == 1 else "earlier files"
    return f"[{label}: {', '.join(names)}{NOTE_SUFFIX}"


@dataclass(frozen=True)
class _Load:
    """What a set of files takes of a request's limits."""

    pages: int = 0
    bytes: int = 0
    images: int = 0
    large_images: int = 0

    def plus(self, attachment: Attachment, by_reference: ByReference = by_base64) -> _Load:
        image = attachment.kind is AttachmentKind.IMAGE
        return _Load(
            self.pages + (attachment.pages if attachment.kind is AttachmentKind.PDF else 0),
            self.bytes + sent_bytes(attachment, by_reference(attachment)),
            self.images + int(image),
            self.large_images + int(is_large_image(attachment)),
        )

    def fits(self, model: ModelInfo, share: float = 1.0) -> bool:
        # With a picture past 2000 px among them, at most 20 pictures; else the window's.
        most = MANY_IMAGES if self.large_images else max_images(model)
        return (
            self.pages <= MAX_REQUEST_PDF_PAGES * share
            and self.bytes <= file_bytes_budget(model) * share
            and self.images <= most * share
        )


@dataclass(frozen=True)
class LeftOutFile:
    """A file of an earlier message that a request does not re-send."""

    message_id: int
    name: str
    tokens: int


@dataclass(frozen=True)
class FilePlan:
    """Which of the tail's files a request sends.

    Attributes:
        left_out: the files sent as a note instead, oldest first.
        notes: the note each message with files left out carries, by message id.
        saved_tokens: raw tokens the messages' stored estimates count for the files left
            out, less their notes': what the request costs less than the estimates say.
        places: (message id, index among its files) of each file left out.
    """

    left_out: tuple[LeftOutFile, ...] = ()
    notes: dict[int, str] = field(default_factory=dict)
    saved_tokens: int = 0
    places: frozenset[tuple[int, int]] = frozenset()

    def sends(self, message_id: int, index: int) -> bool:
        """Whether the `index`-th file of the message goes with the request."""
        return (message_id, index) not in self.places


def plan_files(
    files: Sequence[tuple[int, Sequence[Attachment]]],
    model: ModelInfo,
    count: Callable[[str], int],
    *,
    newest: int | None,
    by_reference: ByReference = by_base64,
) -> FilePlan:
    """Which files of the tail (`files`: each message's, oldest message first) a request to
    `model` sends, and which it leaves out. `newest`: the id of the message the request
    answers (the newest user message, or the draft's stand-in), None when it has no files.
    `by_reference`: whether a file goes as its `file_id` (see the module notes).

    The newest message's files always go (`check_message` refuses a message whose files
    alone break a limit, before it is sent). Older files go while the request stays
    inside every limit; from the first that would break one, every older file is left
    out, and a little more (`STEP_SHARE`) so that the line stays put for a while.

    Raises:
        AttachmentRefusedError: the newest message's files alone break a limit.
    """
    flat = [(message_id, index, a) for message_id, group in files for index, a in enumerate(group)]
    for message_id, group in files:
        if message_id == newest:
            check_message(group, model, by_reference)
    load = _Load()
    cut = 0  # flat[:cut] are left out
    for position in range(len(flat) - 1, -1, -1):
        message_id, _index, attachment = flat[position]
        then = load.plus(attachment, by_reference)
        if message_id != newest and not then.fits(model):
            cut = position + 1
            break
        load = then
    if cut == 0:
        return FilePlan()
    cut = _step_back(flat, cut, newest, model, by_reference)
    return _plan_of(flat[:cut], count)


def _step_back(
    flat: Sequence[tuple[int, int, Attachment]],
    cut: int,
    newest: int | None,
    model: ModelInfo,
    by_reference: ByReference,
) -> int:
    """Where the line goes: at the first of the stable steps that leaves out at least
    `flat[:cut]`. The steps are counted from the oldest file on, each `STEP_SHARE` of the
    limits, so they stay where they are as newer files come."""
    steps = [0]
    load = _Load()
    for position, (message_id, _index, attachment) in enumerate(flat):
        if message_id == newest:
            break
        load = load.plus(attachment, by_reference)
        if not load.fits(model, STEP_SHARE):
            steps.append(position + 1)
            load = _Load()
    older = next((i for i, (mid, _x, _a) in enumerate(flat) if mid == newest), len(flat))
    return next((step for step in steps if step >= cut), older)


def _plan_of(left: Sequence[tuple[int, int, Attachment]], count: Callable[[str], int]) -> FilePlan:
    names: dict[int, list[str]] = {}
    for message_id, _index, attachment in left:
        names.setdefault(message_id, []).append(attachment.name)
    notes = {message_id: not_resent_note(group) for message_id, group in names.items()}
    saved = sum(a.tokens for _m, _i, a in left) - sum(count(note) for note in notes.values())
    return FilePlan(
        left_out=tuple(LeftOutFile(m, a.name, a.tokens) for m, _i, a in left),
        notes=notes,
        saved_tokens=max(0, saved),
        places=frozenset((m, i) for m, i, _a in left),
    )


def check_message(
    attachments: Sequence[Attachment], model: ModelInfo, by_reference: ByReference = by_base64
) -> None:
    """Refuse, naming the file and the limit, a message whose files alone break a limit
    of a request to `model` (`by_reference`: which go as their `file_id`).

    Raises:
        TooMuchForOneMessageError: in words that name the file and the limit.
    """
    load = _Load()
    for attachment in attachments:
        load = load.plus(attachment, by_reference)
        name = f"“{attachment.name}”"
        encoded = base64_size(attachment.size)
        if attachment.kind is AttachmentKind.IMAGE and encoded > MAX_IMAGE_SENT_BYTES:
            raise AttachmentRefusedError(
                f"{name} is {say_size(attachment.size)}, {say_size(encoded)} once encoded to "
                f"send; Claude takes pictures of up to {say_size(MAX_IMAGE_SENT_BYTES)} that "
                "way. Save it smaller (as JPEG, or fewer pixels) and attach it again."
            )
        if load.pages > MAX_REQUEST_PDF_PAGES:
            raise TooMuchForOneMessageError(
                f"With {name} this message has {load.pages} PDF pages; Claude reads at most "
                f"{MAX_REQUEST_PDF_PAGES} pages in one message. Send {name} in a message "
                "of its own, or split it into parts."
            )
        if load.images > max_images(model):
            raise TooMuchForOneMessageError(
                f"With {name} this message has {load.images} pictures; {model.display_name} "
                f"takes at most {max_images(model)} in one message. Send the rest in "
                "another message."
            )
        if load.bytes > file_bytes_budget(model):
            budget = say_size(file_bytes_budget(model))
            raise TooMuchForOneMessageError(
                f"With {name} the files of this message come to {say_size(load.bytes)} as "
                f"sent; one message to Claude can carry about {budget}. Send {name} in a "
                "message of its own, or make it smaller."
            )
    if load.images > MANY_IMAGES and load.large_images:
        large = next(a for a in attachments if is_large_image(a))
        raise TooMuchForOneMessageError(
            f"“{large.name}” is {large.width} × {large.height} pixels; in a message with more "
            f"than {MANY_IMAGES} pictures Claude takes each of up to {MAX_SIDE_WITH_MANY} × "
            f"{MAX_SIDE_WITH_MANY}. Make the large pictures smaller, or send at most "
            f"{MANY_IMAGES} in one message."
        )
