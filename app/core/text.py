"""Checks on text the user typed, before it is stored or sent."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from app.core.errors import InvalidInputError

DEFAULT_TITLE = "New conversation"
TITLE_LENGTH = 60


def validate_message_text(text: str) -> str:
    """Return `text` unchanged if it can be stored and sent, else raise.

    NUL characters, emoji and right-to-left text round-trip exactly. Lone
    surrogates cannot be encoded as UTF-8, so neither SQLite nor the API can
    take them: those are refused with plain words rather than silently altered.
    A message of nothing but spaces, NULs and other control or format characters
    is refused as an empty one: there is nothing in it to read.
    """
    if not has_visible_text(text):
        raise InvalidInputError("Type a message first.")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise InvalidInputError(
            "Your message contains a damaged character (often half of an emoji that "
            f"was cut when copying, at position {error.start + 1}). "
            "Delete it and send again.",
        ) from None
    return text


# Unicode categories with nothing to read: control (NUL, BEL, ESC…), format
# (zero-width space, byte-order mark…), separators; and unassigned/surrogate code points.
_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Cn", "Zs", "Zl", "Zp"})


def has_visible_text(text: str) -> bool:
    """Whether `text` holds anything but whitespace and control or format characters."""
    return any(
        not char.isspace() and unicodedata.category(char) not in _INVISIBLE_CATEGORIES
        for char in text
    )


# What the message box takes: beyond these a text box relays out for seconds at each key
# (measured: a 10 MB paste froze the window 16 s), and no model reads that much in one
# message. A longer text goes as an attached file.
MAX_COMPOSER_CHARACTERS = 1_000_000
MAX_COMPOSER_LINE = 100_000
BYTE_ORDER_MARK = "\ufeff"


def paste_problem(text: str, already: int) -> str | None:
    """Why `text` cannot be pasted into a message box holding `already` characters, in
    plain words, or None. Looks at each character at most once, and only when pasted."""
    total = already + len(text)
    attach = "Attach it as a text file instead (the paperclip), or paste a part of it."
    if total > MAX_COMPOSER_CHARACTERS:
        return (
            f"This text is too long to paste into a message ({len(text):,} characters; a "
            f"message holds up to {MAX_COMPOSER_CHARACTERS:,}). Nothing was pasted. {attach}"
        )
    longest = max((len(line) for line in text.splitlines()), default=0)
    if longest > MAX_COMPOSER_LINE:
        return (
            f"This text has a line of {longest:,} characters, too long for the message box "
            f"(up to {MAX_COMPOSER_LINE:,} on one line). Nothing was pasted. {attach}"
        )
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return (
            "The pasted text contains a damaged character (often half of an emoji that was "
            f"cut when copying, at position {error.start + 1}). Nothing was pasted: copy the "
            "text again, or paste it without that character."
        )
    return None


def _unified_line_breaks(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def restore_pasted_line_breaks(typed: str, pasted: Sequence[str]) -> str:
    """`typed` with each pasted text put back exactly as it was pasted.

    A text box turns the Windows line breaks of a paste ("\r\n") into "\n"; the
    message must be stored and sent as the user pasted it. Each pasted text found
    unchanged (its line breaks aside) in `typed` is put back as it was; a paste
    the user has since edited keeps the box's line breaks.
    """
    for original in pasted:
        shown = _unified_line_breaks(original)
        if shown != original and shown in typed:
            typed = typed.replace(shown, original, 1)
    return typed


def title_from_first_message(text: str) -> str:
    """A conversation title taken from the first line of its first message."""
    first_line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    first_line = first_line.replace("\x00", "")
    if not first_line:
        return DEFAULT_TITLE
    if len(first_line) <= TITLE_LENGTH:
        return first_line
    cut = first_line[:TITLE_LENGTH].rsplit(" ", 1)[0] or first_line[:TITLE_LENGTH]
    return cut.rstrip(" ,.;:") + "…"
