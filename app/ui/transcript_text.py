"""Very long plain text cut into display blocks, and the way back to the original.

A text view lays out one paragraph at a time, and only the paragraphs on
screen; a megabyte pasted as a single line is one paragraph, and laying it
out freezes the window for most of a second. So the display copy of the text
is cut into blocks of at most `LONG_LINE_CHARS` characters (at a space where
there is one). The cuts are for the eyes only: every display position maps
back to the original text, so what the user copies is exactly what was sent.

Pure Python (no Qt), so it is tested on its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

LONG_LINE_CHARS: Final = 4000

# Characters a Qt text document would take as the end of a paragraph. They
# are shown as a same-length stand-in, so display blocks stay in step with
# the original lines.
_PARAGRAPH_BREAKERS: Final = str.maketrans(
    {"\r": "\u240d", "\u2029": "\u00b6", "\ufdd0": "\ufffd", "\ufdd1": "\ufffd"}
)


@dataclass(frozen=True, slots=True)
class DisplayText:
    """The text as shown, one display block per line of `text` (blocks joined by "\\n").

    Attributes:
        text: the display text.
        block_starts: for each display block, where it starts in the original.
    """

    text: str
    block_starts: tuple[int, ...]

    def source_offset(self, block: int, offset_in_block: int) -> int:
        """The original offset of a position given as (display block, offset in it)."""
        return self.block_starts[block] + offset_in_block


def display_text(source: str, limit: int = LONG_LINE_CHARS, *, offset: int = 0) -> DisplayText:
    """Cut `source`'s lines into display blocks of at most `limit` characters.

    `offset` is added to every block start, for when `source` is the tail of
    a longer text.
    """
    blocks: list[str] = []
    starts: list[int] = []
    position = 0
    lines = source.split("\n")
    for number, line in enumerate(lines):
        # "\r\n" ends a line as "\n" does; a "\r" not followed by "\n" is text.
        crlf = line.endswith("\r") and number < len(lines) - 1
        content = line[:-1] if crlf else line
        for chunk_start, chunk_end in _chunks(content, limit):
            starts.append(offset + position + chunk_start)
            blocks.append(content[chunk_start:chunk_end].translate(_PARAGRAPH_BREAKERS))
        position += len(line) + 1
    return DisplayText("\n".join(blocks), tuple(starts))


def _chunks(line: str, limit: int) -> list[tuple[int, int]]:
    """(start, end) pieces of `line`, each at most `limit` long, cut after a space if possible."""
    if len(line) <= limit:
        return [(0, len(line))]
    pieces = []
    start = 0
    while len(line) - start > limit:
        window_end = start + limit
        space = line.rfind(" ", start + limit // 2, window_end)
        end = space + 1 if space >= 0 else window_end
        pieces.append((start, end))
        start = end
    pieces.append((start, len(line)))
    return pieces


def utf16_to_index(text: str, utf16_offset: int) -> int:
    """The Python index in `text` of a position Qt counts in UTF-16 code units."""
    if text.isascii():
        return utf16_offset
    encoded = text.encode("utf-16-le", "surrogatepass")[: 2 * utf16_offset]
    return len(encoded.decode("utf-16-le", "surrogatepass"))
