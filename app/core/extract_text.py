"""Splitting a message into what the facet rules read: prose lines and code lines,
sentences (by line and by sentence punctuation, list and quote markup stripped), and
short clipped texts (app.core.extract)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from app.core import text_scan as scan
from app.core.text_scan import Span, finditer_at, positions

MAX_FACT_CHARS = 300

APOS = "['’]"

_LINE_MARKUP = re.compile(r"^\s*(?:#{1,6}\s+|>\s*|[-*+•]\s+|\d{1,3}[.)]\s+|\[[ xX]\]\s+)+")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]*_]*\s+(?=[\"'(\[*_`]*[A-Z0-9])")
# `_SENTENCE_END` found from its punctuation (a quick scan), the separator in group 1.
_SENTENCE_BREAK = re.compile(r"[.!?]([\"')\]*_]*\s+)(?=[\"'(\[*_`]*[A-Z0-9])")
# A character no sentence break (nor what it looks ahead at) holds: a safe window end.
_NOT_IN_BREAK = re.compile(r"[^.!?\"')\]*_(\[`\sA-Z0-9]")
_CLOSERS = frozenset("\"')]*_")
_SPACES = re.compile(r"\s+")
CODE_TODO = re.compile(r"(?:#|//|--|/\*|\*|<!--)\s*(?:TODO|FIXME)\b\s*(?:\(([^)]*)\))?[:\s]\s*(.+)")


# A question: (text, seq, said by the user, index) and a decision: (text, index), where the
# index is the sentence's position in the whole conversation, for "later than". Plain
# tuples of strings and numbers, which the garbage collector stops tracking.
Question = tuple[str, int, bool, int]
Decision = tuple[str, int]


def normalise(text: str) -> str:
    if len(text) <= scan.PIECE_CHARS:
        return " ".join(text.split())
    return _SPACES.sub(" ", text).strip()


def clip(text: str, limit: int = MAX_FACT_CHARS) -> str:
    text = normalise(text)
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0] or text[:limit]
    return cut.rstrip(" ,;:") + "…"


def split_blocks(content: str) -> tuple[list[str], list[str]]:
    """The prose lines and the code lines (inside fences) of a message."""
    lines = content.splitlines()
    if "```" not in content and "~~~" not in content:
        return lines, []
    prose: list[str] = []
    code: list[str] = []
    in_code = False
    for line in lines:
        if line.lstrip()[:3] in ("```", "~~~"):  # ^\s*(```|~~~), without a regex call
            in_code = not in_code
            continue
        (code if in_code else prose).append(line)
    return prose, code


def sentence_spans(lines: Sequence[str]) -> list[Span]:
    """Where the sentences of `lines` are in "\\n".join(lines): line by line, markup
    (`_LINE_MARKUP`) and whitespace stripped, split by `_SENTENCE_END`, each stripped."""
    spans: list[Span] = []
    offset = 0
    for line in lines:
        start, end = _markup_stripped(line)
        if start < end:
            # The parts need no stripping: each but the last ends with its punctuation, and
            # each but the first starts after all of the whitespace of its break.
            spans += ((offset + a, offset + b) for a, b in _part_spans(line, start, end))
        offset += len(line) + 1
    return spans


def _markup_stripped(line: str) -> Span:
    """Where `_LINE_MARKUP.sub("", line).strip()` is in `line`: the pattern tried only
    where it can match."""
    rest = line.lstrip()
    start = len(line) - len(rest)
    if rest and (rest[0] in "#>-*+•[" or rest[0].isdecimal()):
        markup = _LINE_MARKUP.match(line)
        if markup is not None:
            after = line[markup.end() :]
            start = markup.end() + len(after) - len(after.lstrip())
    return start, max(start, len(line.rstrip()))


def _part_spans(line: str, start: int, end: int) -> list[Span]:
    """Where the parts of `_SENTENCE_END.split(line[start:end])` are in `line`."""
    if line.find(".", start, end) == line.find("!", start, end) == line.find("?", start, end):
        return [(start, end)]  # no sentence punctuation (all three not found)
    spans: list[Span] = []
    last = start
    for separator in _sentence_breaks(line, start, end):
        spans.append((last, separator[0]))
        last = separator[1]
    spans.append((last, end))
    return spans


def _sentence_breaks(line: str, start: int, end: int) -> Iterator[Span]:
    """The separators `_SENTENCE_END` finds in `line[start:end]`: tried at the sentence
    punctuation followed by what a break needs; a long line read in windows that end where
    no break can be."""
    if end - start <= scan.PIECE_CHARS:
        points = [
            point
            for point in positions(line, ".!?", start=start, end=end)
            if line[point + 1 : point + 2].isspace() or line[point + 1 : point + 2] in _CLOSERS
        ]
        for found in finditer_at(_SENTENCE_BREAK, line, points, end):
            yield found.span(1)
        return
    position = start
    while position < end:
        stop = end
        if end - position > scan.PIECE_CHARS:
            neutral = _NOT_IN_BREAK.search(line, position + scan.PIECE_CHARS, end)
            stop = end if neutral is None else neutral.start()
        for found in _SENTENCE_BREAK.finditer(line, position, stop):
            yield found.span(1)
        position = stop


def is_question(sentence: str) -> bool:
    return sentence.rstrip("\"')]*_ ").endswith("?")
