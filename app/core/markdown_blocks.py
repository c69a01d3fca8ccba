"""Split a message's Markdown into prose and fenced-code segments.

The transcript renders prose with Qt's Markdown importer but shows each fenced
code block as its own widget (monospace, horizontally scrollable, with a Copy
button), so the text has to be cut at the fences first. This module is pure
Python — no Qt — so it can be property-tested on its own.

The rules follow CommonMark's fenced code blocks, loosened where chat replies
need it: a fence may be indented by any amount (models often nest code in list
items), and a fence that is never closed runs to the end of the text, which is
exactly what a reply looks like while it is still streaming.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

# An opening fence: indentation, three or more backticks or tildes, an info string.
_OPENING_FENCE = re.compile(r"(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^\r\n]*)")


_LINES = re.compile(r"[^\n]*\n|[^\n]+")


class SegmentKind(StrEnum):
    PROSE = "prose"
    CODE = "code"


@dataclass(frozen=True, slots=True)
class Segment:
    """One piece of a message.

    Attributes:
        kind: prose (rendered as Markdown) or code (a fenced block).
        source: the exact slice of the message text, fences included, so that
            joining every segment's source gives the message back unchanged.
        code: for a code block, the lines between the fences without the
            fence's indentation and without the final line break.
        language: for a code block, the first word of the fence's info string.
        closed: False for a code block whose closing fence has not arrived
            (yet); always True for prose.
    """

    kind: SegmentKind
    source: str
    code: str = ""
    language: str = ""
    closed: bool = True


def split_segments(text: str) -> list[Segment]:
    """Cut `text` into prose and fenced-code segments, in order.

    Prose segments are never empty; consecutive prose lines are merged into
    one segment. The split is loss-free: ``"".join(s.source for s in
    split_segments(text)) == text`` for every string.
    """
    segments: list[Segment] = []
    # Markdown ends lines at "\n" (with an optional "\r"), not at every
    # character str.splitlines() knows.
    lines = _LINES.findall(text)
    prose_start = 0  # character offset where the current prose run began
    offset = 0
    index = 0
    while index < len(lines):
        line = lines[index]
        opening = _match_opening_fence(line)
        if opening is None:
            offset += len(line)
            index += 1
            continue
        indent, fence, info = opening
        if offset > prose_start:
            segments.append(Segment(SegmentKind.PROSE, text[prose_start:offset]))
        block_start = offset
        offset += len(line)
        index += 1
        body: list[str] = []
        closed = False
        while index < len(lines):
            line = lines[index]
            offset += len(line)
            index += 1
            if _is_closing_fence(line, fence):
                closed = True
                break
            body.append(_strip_indent(line, len(indent)))
        code = "".join(body)
        if code.endswith("\n"):
            code = code[:-1]
            if code.endswith("\r"):
                code = code[:-1]
        segments.append(
            Segment(
                SegmentKind.CODE,
                text[block_start:offset],
                code=code,
                language=info.split()[0] if info.split() else "",
                closed=closed,
            ),
        )
        prose_start = offset
    if offset > prose_start:
        segments.append(Segment(SegmentKind.PROSE, text[prose_start:offset]))
    return segments


def _match_opening_fence(line: str) -> tuple[str, str, str] | None:
    """(indentation, fence, info string) if `line` opens a code block."""
    match = _OPENING_FENCE.fullmatch(line.rstrip("\r\n"))
    if match is None:
        return None
    fence = match["fence"]
    info = match["info"].strip()
    # "```x```" on one line is inline code, not a fence (CommonMark forbids
    # backticks in a backtick fence's info string).
    if fence[0] == "`" and "`" in info:
        return None
    return match["indent"], fence, info


def _is_closing_fence(line: str, fence: str) -> bool:
    """True if `line` closes a block opened by `fence`: same character, at least as long."""
    stripped = line.strip(" \t\r\n")
    return (
        len(stripped) >= len(fence)
        and stripped[0] == fence[0]
        and stripped == fence[0] * len(stripped)
    )


def _strip_indent(line: str, width: int) -> str:
    """Remove up to `width` leading spaces, the indentation of the opening fence."""
    removed = 0
    while removed < width and removed < len(line) and line[removed] == " ":
        removed += 1
    return line[removed:]


# A line that continues a list, a quote or a table, or defines a link target
# used elsewhere: prose must not be cut just before one.
_CONTINUES_BLOCK = re.compile(r"(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)|>|\||\[[^\]]*\]:")
PROSE_PIECE_CHARS: Final = 8000


def split_prose(text: str, target: int = PROSE_PIECE_CHARS) -> list[str]:
    """Cut long Markdown prose into pieces of about `target` characters or more.

    Cuts fall only where Markdown starts afresh — before an unindented line
    that follows a blank line and does not continue a list, quote or table —
    so each piece renders as it would have inside the whole. Short prose
    stays in one piece (text can be selected across it). The cuts depend only
    on the text before them, so a streaming reply keeps its earlier pieces.
    ``"".join(split_prose(text)) == text``.
    """
    if len(text) <= target:
        return [text]
    pieces: list[str] = []
    piece_start = 0
    offset = 0
    previous_blank = False
    for line in _LINES.findall(text):
        if (
            previous_blank
            and offset - piece_start >= target
            and line[:1] not in (" ", "\t", "\r", "\n")
            and not _CONTINUES_BLOCK.match(line)
        ):
            pieces.append(text[piece_start:offset])
            piece_start = offset
        previous_blank = not line.strip()
        offset += len(line)
    pieces.append(text[piece_start:])
    return pieces


# What a line's start may still grow into, while its end has not arrived: a list
# marker ("1" of "1. "), or a link target's label ("[a" of "[a]: /url").
_MAY_YET_CONTINUE_BLOCK = re.compile(r"[-*+]|\d{1,9}[.)]?|\[[^\]]*\]?")


def last_fresh_start(text: str, start: int = 0) -> int:
    """Where the last line of `text` after `start` begins at which Markdown starts afresh
    (as `split_prose` may cut: after a blank line, unindented, continuing no list, quote
    or table), or `start` if there is none. `start` must begin a line.

    Everything before such a line renders as it would on its own, so a streaming reply
    need re-render only what follows (once the line's start can no longer become a
    list item). A blank line holds only spaces and tabs, as CommonMark says.
    """
    found = start
    previous_blank = False
    for match in _LINES.finditer(text, start):
        line = match.group()
        if (
            previous_blank
            and line[:1] not in (" ", "\t", "\r", "\n")
            and not _CONTINUES_BLOCK.match(line)
            and (line.endswith("\n") or not _MAY_YET_CONTINUE_BLOCK.fullmatch(line))
        ):
            found = match.start()
        previous_blank = not line.strip(" \t\r\n")
    return found


class GrowingTextSplitter:
    """`split_segments` and then `split_prose` of a text that grows (a streaming reply),
    redoing only its end.

    Lines split one by one, each by itself and the state before it (in prose, or in a code
    block opened by some fence); every line but the last is whole. So when text is added,
    splitting resumes at the last line if it is prose, or at the code block it is in, and
    what comes before is kept; so are a grown prose segment's pieces but its last two (each
    cut depends only on the text before it and its own whole line). Splitting all of a long
    reply thirty times a second would cost milliseconds of Python.
    """

    def __init__(self, target: int = PROSE_PIECE_CHARS) -> None:
        self._target = target
        self._text = ""
        self._parts: list[tuple[Segment, list[str]]] = []
        self._starts: list[int] = []  # where each part's segment starts in the text

    def split(self, text: str) -> list[tuple[Segment, list[str]]]:
        """Each segment of `text` and, for prose, its pieces (as `split_prose` cuts them)."""
        keep, run_start, resume = self._resume_point(text)
        segments = split_segments(text[resume:])
        if run_start < resume:
            # The prose before the resume point and any prose right after it are one run.
            head = text[run_start:resume]
            if segments and segments[0].kind is SegmentKind.PROSE:
                segments[0] = Segment(SegmentKind.PROSE, head + segments[0].source)
            else:
                segments.insert(0, Segment(SegmentKind.PROSE, head))
        old_parts, old_starts = self._parts[keep:], self._starts[keep:]
        parts, starts = self._parts[:keep], self._starts[:keep]
        offset = run_start
        for segment in segments:
            pieces: list[str] = []
            if segment.kind is SegmentKind.PROSE:
                pieces = self._split_prose(segment, offset, old_parts, old_starts)
            parts.append((segment, pieces))
            starts.append(offset)
            offset += len(segment.source)
        self._text, self._parts, self._starts = text, parts, starts
        return list(parts)

    def reset(self) -> None:
        """Forget the last text (it will not grow any more)."""
        self._text, self._parts, self._starts = "", [], []

    def _resume_point(self, text: str) -> tuple[int, int, int]:
        """(parts kept whole, where the run split again starts, where splitting resumes)."""
        if not self._parts or not text.startswith(self._text):
            return 0, 0, 0
        keep = len(self._parts) - 1
        last, _ = self._parts[keep]
        last_start = self._starts[keep]
        if last.kind is SegmentKind.PROSE:
            return keep, last_start, max(last_start, self._text.rfind("\n") + 1)
        # In a code block: split it again from its fence, whose line may have been
        # unfinished; if it turns out not to be a fence, it joins the prose before it.
        if keep and self._parts[keep - 1][0].kind is SegmentKind.PROSE:
            return keep - 1, self._starts[keep - 1], last_start
        return keep, last_start, last_start

    def _split_prose(
        self,
        segment: Segment,
        offset: int,
        old_parts: list[tuple[Segment, list[str]]],
        old_starts: list[int],
    ) -> list[str]:
        """The pieces of a prose segment, reusing those of the prose it grew from."""
        for (old, old_pieces), old_offset in zip(old_parts, old_starts, strict=True):
            if (
                old_offset == offset
                and old.kind is SegmentKind.PROSE
                and segment.source.startswith(old.source)
            ):
                kept = old_pieces[:-2]
                start = sum(len(piece) for piece in kept)
                return kept + split_prose(segment.source[start:], self._target)
        return split_prose(segment.source, self._target)
