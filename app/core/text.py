"""Checks on text the user typed, before it is stored or sent."""

from __future__ import annotations

from app.core.errors import InvalidInputError

DEFAULT_TITLE = "New conversation"
TITLE_LENGTH = 60


def validate_message_text(text: str) -> str:
    """Return `text` unchanged if it can be stored and sent, else raise.

    NUL characters, emoji and right-to-left text round-trip exactly. Lone
    surrogates cannot be encoded as UTF-8, so neither SQLite nor the API can
    take them: those are refused with plain words rather than silently altered.
    """
    if not text.strip():
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
