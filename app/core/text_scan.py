"""Reading long text in bounded steps: the machinery redaction and extraction share.

Why bounded. These patterns do not only run in the summary process: the log filter
redacts every record on whatever thread logs it (the GUI thread too, app.secrets.redact),
and recall reads each new message and the archived messages it quotes for names,
numbers and dates on the reply's thread, while the GUI thread paints
(app.core.recall_kinds). Python threads share one lock (the GIL), and one C-level regex
call holds it for as long as it runs, so no call may run long whatever the input: a
pasted megabyte must not freeze the window. So each pattern is tried only where a
literal or a character class says it can start (`positions`, `search_at`,
`finditer_at`), a long text is read in pieces cut inside whitespace where no secret or
entity pattern can match across the cut (`cut_pieces`), a value that runs on is read a
window at a time (`extend_run`), and no pattern backtracks quadratically: the cost is
linear in the text. The same output as the plain patterns either way (tests/unit/core
check it with small pieces and windows).
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterable, Iterator

# The most characters of a backticked name (a run without whitespace after a backtick
# may not be cut there).
MAX_BACKTICKED_CHARS = 80

Span = tuple[int, int]

# Texts longer than this are read in pieces about this long.
PIECE_CHARS = 4_096
# The most one regex call reads of a match that could run on (a value, a token).
WINDOW_CHARS = 65_536

_WHITESPACE = re.compile(r"\s")
_WHITESPACE_RUN = re.compile(r"\s+")
_NON_WHITESPACE = re.compile(r"\S")


def word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


def fold(text: str) -> str:
    """`text` lower-cased at the same length, so a literal of an IGNORECASE pattern can be
    found with `str.find`: re also matches "İ" and "ı" as "i", "ſ" as "s" and the Kelvin
    sign as "k" (which `str.lower` already maps)."""
    if not text.isascii() and ("İ" in text or "ı" in text or "ſ" in text):
        text = text.replace("İ", "i").replace("ı", "i").replace("ſ", "s")
    if len(text) <= WINDOW_CHARS:
        return text.lower()
    # Lower-casing a long text beyond ASCII is slow: in windows (the same per character).
    return "".join(
        text[start : start + WINDOW_CHARS].lower() for start in range(0, len(text), WINDOW_CHARS)
    )


def positions(
    text: str, needles: Iterable[str], shift: int = 0, start: int = 0, end: int | None = None
) -> list[int]:
    """Where any of `needles` occurs in `text[start:end]` (plus `shift`), ascending."""
    if end is None:
        end = len(text)
    found: list[int] = []
    for needle in needles:
        position = text.find(needle, start, end)
        while position != -1:
            if position + shift >= 0:
                found.append(position + shift)
            position = text.find(needle, position + 1, end)
    found.sort()
    return found


@functools.cache
def _alternation(needles: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(re.escape(needle) for needle in needles))


def word_starts(text: str, words: tuple[str, ...]) -> list[int]:
    """Where any of `words` occurs, ascending, for a pattern that begins at a word boundary
    (an occurrence inside another one, so after a letter, could not begin it): one scan."""
    return [found.start() for found in _alternation(words).finditer(text)]


def holds_any(text: str, needles: Iterable[str]) -> bool:
    # A loop rather than any() over a generator: half the cost, on the hottest path.
    for needle in needles:  # noqa: SIM110
        if needle in text:
            return True
    return False


def search_at(
    pattern: re.Pattern[str], text: str, starts: Iterable[int], end: int | None = None
) -> re.Match[str] | None:
    """`pattern.search(text[:end])` for a pattern that can only match at `starts`
    (ascending): a few `match` calls instead of a scan that tries every position."""
    stop = len(text) if end is None else end
    for start in starts:
        match = pattern.match(text, start, stop)
        if match is not None:
            return match
    return None


def finditer_at(
    pattern: re.Pattern[str], text: str, starts: Iterable[int], end: int | None = None
) -> Iterator[re.Match[str]]:
    """`pattern.finditer(text[:end])` for a pattern that can only match at `starts`
    (ascending)."""
    last = 0
    stop = len(text) if end is None else end
    for start in starts:
        if start < last:
            continue
        match = pattern.match(text, start, stop)
        if match is not None:
            yield match
            last = match.end()


def is_word(char: str) -> bool:
    """Whether re's `\\w` matches `char`."""
    return char.isalnum() or char == "_"


def byte_classes(text: str, table: bytes) -> bytes:
    """`text` as one byte per character, translated by `table` (anything not ASCII maps
    as "?"), so a run of a character class can be found with `bytes.find`."""
    if len(text) <= WINDOW_CHARS:
        return text.encode("ascii", "replace").translate(table)
    return b"".join(
        text[start : start + WINDOW_CHARS].encode("ascii", "replace").translate(table)
        for start in range(0, len(text), WINDOW_CHARS)
    )


def class_table(members: str, member: str, other: str = " ") -> bytes:
    table = bytearray(ord(other) for _ in range(256))
    for char in members:
        table[ord(char)] = ord(member)
    return bytes(table)


def extend_run(run: re.Pattern[str], text: str, end: int) -> int:
    """Where a run of `run` (a `[…]*` pattern) that goes on at `end` stops, read in windows."""
    size = len(text)
    while end < size:
        stop = min(size, end + WINDOW_CHARS)
        found = run.match(text, end, stop)
        if found is None or found.end() == end:
            break
        end = found.end()
        if end < stop:
            break
    return end


def long_runs(text: str, limit: int) -> list[tuple[int, int]]:
    """Spans of the runs without whitespace longer than `limit`, found in short steps."""
    size = len(text)
    if size <= limit:
        return []
    step = max(1, limit // 4)
    runs: list[tuple[int, int]] = []
    position = 0
    while position < size:
        end = min(size, position + step)
        if _WHITESPACE.search(text, position, end) is not None:
            position = end
            continue
        start = _run_start(text, position, step)
        stop = _run_stop(text, end, step)
        if stop - start > limit:
            runs.append((start, stop))
        position = stop
    return runs


def _run_start(text: str, position: int, step: int) -> int:
    while position > 0:
        start = max(0, position - step)
        last: re.Match[str] | None = None
        for found in _WHITESPACE.finditer(text, start, position):
            last = found
        if last is not None:
            return last.end()
        position = start
    return 0


def _run_stop(text: str, position: int, step: int) -> int:
    size = len(text)
    while position < size:
        found = _WHITESPACE.search(text, position, min(size, position + step))
        if found is not None:
            return found.start()
        position += step
    return size


# Where whitespace may go on a match, by the character before it: words (folded) after
# which a secret's value, an amount's currency or a date's next part can follow, and
# characters that can.
_MONTH_WORDS = word_set(
    "jan january feb february mar march apr april may jun june jul july aug august sep "
    "sept september oct october nov november dec december"
)
_WEEKDAY_WORDS = word_set(
    "mon monday tue tues tuesday wed wednesday thu thur thurs thursday fri friday sat "
    "saturday sun sunday"
)
_CUT_WORDS = (
    word_set(
        "bearer key apikey secret secretkey token accesstoken authtoken refreshtoken "
        "clientsecret privatekey api access auth refresh client private password passwd pwd "
        "passcode passphrase pass word pin pincode code is was k m bn of st nd rd th"
    )
    | _MONTH_WORDS
    | _WEEKDAY_WORDS
)
_FIXED_LENGTH_KEY_PREFIXES = ("AIza", "AKIA", "ASIA", "AGPA", "AIDA", "AROA")
_UNSAFE_BEFORE_SPACE = frozenset(":=\"'-–$€£¥₹\\`")
_API_KEY_LABEL_END = re.compile(r"x-api-key[\"']?\s*\Z")


def cut_pieces(text: str) -> list[tuple[int, int]]:
    """Spans covering `text`, about PIECE_CHARS long where it can be cut safely: every
    secret and entity pattern finds the same in the pieces as in the whole."""
    size = len(text)
    if size <= PIECE_CHARS:
        return [(0, size)]
    # What may run on over spaces (not over a line break) from before a cut: a Windows path,
    # a quoted value. Looked for anywhere in the piece, not only near the cut: replacing a
    # secret with "[redacted]" brings what was before it closer.
    over_spaces = [
        *positions(text, (":\\",)),
        *(quote for quote in positions(text, "\"'") if _opens_value(text, quote)),
    ]
    over_spaces.sort()
    # A key of a fixed length (Google's, AWS's) may end inside a word: once replaced, the
    # rest of the word stands alone, so the word's every ending counts.
    word_endings = holds_any(text, _FIXED_LENGTH_KEY_PREFIXES)
    spans: list[tuple[int, int]] = []
    start = 0
    while size - start > PIECE_CHARS:
        cut = _next_cut(text, start, over_spaces, word_endings)
        if cut is None:
            break
        spans.append((start, cut))
        start = cut
    spans.append((start, size))
    return spans


def _next_cut(
    text: str, piece_start: int, over_spaces: list[int], word_endings: bool
) -> int | None:
    size = len(text)
    lead = _NON_WHITESPACE.search(text, piece_start, min(size, piece_start + PIECE_CHARS))
    if lead is None:
        # Inside a run of whitespace that began after a safe character (or the text's
        # start): no match reaches into it.
        return min(size, piece_start + PIECE_CHARS)
    position = piece_start + PIECE_CHARS // 2
    while position > lead.start() and text[position - 1].isspace():
        position -= 1
    while position < size:
        end = min(size, position + PIECE_CHARS)
        for run in _WHITESPACE_RUN.finditer(text, position, end):
            start, stop = run.span()
            known_stop = stop if stop < end or end == size else None
            if start > piece_start and _is_safe_cut(
                text, start, stop, known_stop, piece_start, over_spaces, word_endings
            ):
                return start
        position = end
    return None


def _is_safe_cut(
    text: str,
    start: int,
    seen: int,
    stop: int | None,
    piece_start: int,
    over_spaces: list[int],
    word_endings: bool,
) -> bool:
    """Whether no secret or entity pattern can match across the whitespace run at `start`
    (seen up to `seen`; ending at `stop`, None when not known yet), judged by the characters
    around it (`word_endings`: by every ending of the word before it)."""
    before = text[start - 1]
    if before.isspace():
        return False
    if stop == len(text):
        return True
    if text.find("\n", start, seen) == -1 and not _spaces_may_end(
        text, start, piece_start, over_spaces
    ):
        return False
    if before.isdigit():
        return stop is not None and _digit_may_end(text, start, stop)
    if before == ",":
        return stop is not None and _comma_may_end(text, start, stop)
    if before.isalpha():
        word = _word_before(text, start)
        if word_endings:
            return not any(word[at:] in _CUT_WORDS for at in range(len(word)))
        return word not in _CUT_WORDS
    if before == ".":
        return _word_before(text, start - 1) not in _MONTH_WORDS
    return before not in _UNSAFE_BEFORE_SPACE


def _spaces_may_end(text: str, start: int, piece_start: int, over_spaces: list[int]) -> bool:
    """Whether spaces (no newline) at `start` end every match: a backticked name, a quoted
    value or a Windows path (`over_spaces`: where those begin) may hold spaces."""
    if text.find("`", max(0, start - MAX_BACKTICKED_CHARS - 1), start) != -1:
        return False
    index = bisect.bisect_left(over_spaces, piece_start)
    return index == len(over_spaces) or over_spaces[index] >= start


def _opens_value(text: str, quote: int) -> bool:
    """Whether the quote at `quote` may open a password's or a key's quoted value."""
    before = quote - 1
    while before >= 0 and text[before].isspace():
        before -= 1
    if before < 0:
        return False
    return text[before] in ":=" or _word_before(text, before + 1) in ("is", "was")


def _word_before(text: str, end: int) -> str:
    """The ASCII letters (folded) that end at `end`."""
    window = fold(text[max(0, end - 16) : end])
    start = len(window)
    while start > 0 and "a" <= window[start - 1] <= "z":
        start -= 1
    return window[start:]


def _digit_may_end(text: str, start: int, stop: int) -> bool:
    """After a digit: a unit, a currency, a month, a year or a time may follow."""
    after = text[stop]
    if not after.isascii() or after.isalpha() or after in "%-":
        return False
    if after.isdigit():
        year = text[stop : stop + 4]
        if len(year) == 4 and year.isdecimal():
            return False
        if text[start:stop] == " " and re.match(r"\d\d:", text[stop : stop + 3]):
            return False
    return True


def _comma_may_end(text: str, start: int, stop: int) -> bool:
    """After a comma: a year ("March 5, 2026"), a date after a weekday, an x-api-key value."""
    after = text[stop]
    if not after.isascii() or after.isalpha():
        return False
    year = text[stop : stop + 4]
    if len(year) == 4 and year.isdecimal():
        return False
    if _word_before(text, start - 1) in _WEEKDAY_WORDS:
        return False
    label_end = start - 1
    while label_end > 0 and text[label_end - 1].isspace():
        label_end -= 1
    return _API_KEY_LABEL_END.search(fold(text[max(0, label_end - 12) : label_end])) is None
