"""Rule-based facets of a stretch of conversation (DESIGN §6, step 1).

`extract_facets` reads messages and returns what a summary must not lose:
decisions, action items, open questions and entities (file names, URLs, code
identifiers, numbers with units, money, dates, e-mail addresses). It is
offline, free and deterministic: the same messages always give the same
facets, which is what `rule` mode stores and what `hybrid` mode merges into
the LLM's draft. `hard_facts` lists the verbatim strings the retention check
insists on.

Secrets never reach a summary: every message is passed through
`redact_secrets` before anything is extracted, so no fact carries one, and an
entity that touched a redacted secret is dropped. The app.secrets redactor
(for logs) cannot be imported here — core sits below it — so the patterns
for Anthropic keys, Bearer tokens and x-api-key headers are repeated here,
and kept consistent with it (the same `[redacted]` marker).

The rules, in short (precision over recall: a wrong "decision" in a summary
misleads more than a missing one):

- Text is split into sentences by line and by sentence punctuation; fenced
  code blocks are not prose: only their URLs, e-mails, file names and
  `TODO`/`FIXME` comments are taken.
- Decisions: "decided", "let's go with/use/pick…", "we'll use/go with…",
  "agreed", "settled on", "final answer/decision"…, not in a question and not
  negated ("we haven't decided").
- Action items: "TODO:"/"Action:" lines; the user's own "I'll / I will / I need
  to …" (the assistant's "I'll explain…" is narration, not a commitment);
  "you need to / you must / you'll have to …" (owned by the other role);
  "can you / could you / please … by <date>" (only with a due date);
  "<Name> will / needs to …"; "we need to / we have to …" (no owner).
  A due date ("by Friday", "before 2026-04-01", "tomorrow") is split off the task.
- Open questions: a question (ends with "?", at least three words) or a
  sentence marked open ("TBD", "not sure whether", "still need to decide"…)
  that nobody of the other role answered afterwards, or that deliberates a
  choice ("should we…", "which…", "… or …?"), unless a later decision shares a
  distinctive word with it (a name, a number, an identifier) or two other
  content words.
- Entities keep their text verbatim; repeats are merged (case-sensitive for
  identifiers, file names and URLs, case-insensitive for the rest; whitespace
  normalised), with the seqs of the messages they came from.

Bounds, so a thousand-message stretch gives a summary-sized result: at most
MAX_FACTS of each list (the most recent, kept in conversation order), at most
MAX_ENTITIES entities (the most frequent, ties to the most recent, kept in
order of first mention), MAX_SOURCE_SEQS seqs per item (the most recent), and
MAX_FACT_CHARS characters per text.

Bounded work. Extraction runs on a worker thread while the GUI thread streams
a reply; Python threads share the GIL, and one C-level regex call holds it for
as long as it runs, so no call here may run long whatever the input. Each
pattern is tried only where a literal or a character class says it can start,
a long text is read in pieces cut inside whitespace where no pattern can match
across the cut, and no pattern backtracks quadratically; the cost is linear in
the text. What is gathered is kept as plain tuples, which the garbage collector
(whose full collections hold the GIL too) stops tracking. Two limits change
what is read (the same output otherwise, checked against the plain patterns):
a run of more than MAX_WORD_CHARS characters without whitespace (a pasted blob)
is not read for entities, and a sentence of more than MAX_SENTENCE_CHARS
characters is not read for decisions, action items or questions.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Generic, Literal, NamedTuple, TypeVar

from pydantic import BaseModel, ConfigDict

from app.core.models import Message, Role
from app.core.summary import ActionItem, SourcedPoint

REDACTED = "[redacted]"

T = TypeVar("T")

MAX_FACTS = 30
MAX_ENTITIES = 50
MAX_SOURCE_SEQS = 20
MAX_FACT_CHARS = 300
MAX_ENTITY_CHARS = 200
MAX_BACKTICKED_CHARS = 80
MAX_WORD_CHARS = 4_096
MAX_SENTENCE_CHARS = 4_096

EntityKind = Literal["file", "url", "identifier", "number", "money", "date", "email"]

# The kinds the retention check keeps verbatim: all of them (money and dates are
# numbers a reader acts on; e-mails, like URLs, are addresses that must not drift).
HARD_FACT_KINDS: frozenset[str] = frozenset(
    {"file", "url", "identifier", "number", "money", "date", "email"}
)


# --- the facets ----------------------------------------------------------------


class Entity(BaseModel):
    """A hard fact, verbatim: a file name, URL, identifier, number, amount, date or e-mail."""

    model_config = ConfigDict(frozen=True)

    kind: EntityKind
    text: str
    sources: tuple[int, ...] = ()


class Facets(BaseModel):
    """Everything the rules found in a stretch of conversation (DESIGN §2 `summary.facets`).

    Decisions and open questions are `SourcedPoint`s and action items `ActionItem`s:
    the very models a summary stores (app.core.summary), with the seqs of the
    messages each came from (an action item's `owner` is a name, "user",
    "assistant", or None).
    """

    model_config = ConfigDict(frozen=True)

    decisions: tuple[SourcedPoint, ...] = ()
    action_items: tuple[ActionItem, ...] = ()
    open_questions: tuple[SourcedPoint, ...] = ()
    entities: tuple[Entity, ...] = ()

    @property
    def is_empty(self) -> bool:
        return not (self.decisions or self.action_items or self.open_questions or self.entities)


# --- bounded work ----------------------------------------------------------------

# Texts longer than this are read in pieces about this long.
_PIECE_CHARS = 4_096
# The most one regex call reads of a match that could run on (a value, a token).
_WINDOW_CHARS = 65_536

_WHITESPACE = re.compile(r"\s")
_WHITESPACE_RUN = re.compile(r"\s+")
_NON_WHITESPACE = re.compile(r"\S")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _fold(text: str) -> str:
    """`text` lower-cased at the same length, so a literal of an IGNORECASE pattern can be
    found with `str.find`: re also matches "İ" and "ı" as "i", "ſ" as "s" and the Kelvin
    sign as "k" (which `str.lower` already maps)."""
    if not text.isascii() and ("İ" in text or "ı" in text or "ſ" in text):
        text = text.replace("İ", "i").replace("ı", "i").replace("ſ", "s")
    if len(text) <= _WINDOW_CHARS:
        return text.lower()
    # Lower-casing a long text beyond ASCII is slow: in windows (the same per character).
    return "".join(
        text[start : start + _WINDOW_CHARS].lower() for start in range(0, len(text), _WINDOW_CHARS)
    )


def _positions(
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


def _word_starts(text: str, words: tuple[str, ...]) -> list[int]:
    """Where any of `words` occurs, ascending, for a pattern that begins at a word boundary
    (an occurrence inside another one, so after a letter, could not begin it): one scan."""
    return [found.start() for found in _alternation(words).finditer(text)]


def _holds_any(text: str, needles: Iterable[str]) -> bool:
    # A loop rather than any() over a generator: half the cost, on the hottest path.
    for needle in needles:  # noqa: SIM110
        if needle in text:
            return True
    return False


def _search_at(
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


def _finditer_at(
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


def _is_word(char: str) -> bool:
    """Whether re's `\\w` matches `char`."""
    return char.isalnum() or char == "_"


def _byte_classes(text: str, table: bytes) -> bytes:
    """`text` as one byte per character, translated by `table` (anything not ASCII maps
    as "?"), so a run of a character class can be found with `bytes.find`."""
    if len(text) <= _WINDOW_CHARS:
        return text.encode("ascii", "replace").translate(table)
    return b"".join(
        text[start : start + _WINDOW_CHARS].encode("ascii", "replace").translate(table)
        for start in range(0, len(text), _WINDOW_CHARS)
    )


def _class_table(members: str, member: str, other: str = " ") -> bytes:
    table = bytearray(ord(other) for _ in range(256))
    for char in members:
        table[ord(char)] = ord(member)
    return bytes(table)


def _extend_run(run: re.Pattern[str], text: str, end: int) -> int:
    """Where a run of `run` (a `[…]*` pattern) that goes on at `end` stops, read in windows."""
    size = len(text)
    while end < size:
        stop = min(size, end + _WINDOW_CHARS)
        found = run.match(text, end, stop)
        if found is None or found.end() == end:
            break
        end = found.end()
        if end < stop:
            break
    return end


def _long_runs(text: str, limit: int) -> list[tuple[int, int]]:
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
_MONTH_WORDS = _words(
    "jan january feb february mar march apr april may jun june jul july aug august sep "
    "sept september oct october nov november dec december"
)
_WEEKDAY_WORDS = _words(
    "mon monday tue tues tuesday wed wednesday thu thur thurs thursday fri friday sat "
    "saturday sun sunday"
)
_CUT_WORDS = (
    _words(
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


def _pieces(text: str) -> list[tuple[int, int]]:
    """Spans covering `text`, about _PIECE_CHARS long where it can be cut safely: every
    secret and entity pattern finds the same in the pieces as in the whole."""
    size = len(text)
    if size <= _PIECE_CHARS:
        return [(0, size)]
    # What may run on over spaces (not over a line break) from before a cut: a Windows path,
    # a quoted value. Looked for anywhere in the piece, not only near the cut: replacing a
    # secret with "[redacted]" brings what was before it closer.
    over_spaces = [
        *_positions(text, (":\\",)),
        *(quote for quote in _positions(text, "\"'") if _opens_value(text, quote)),
    ]
    over_spaces.sort()
    # A key of a fixed length (Google's, AWS's) may end inside a word: once replaced, the
    # rest of the word stands alone, so the word's every ending counts.
    word_endings = _holds_any(text, _FIXED_LENGTH_KEY_PREFIXES)
    spans: list[tuple[int, int]] = []
    start = 0
    while size - start > _PIECE_CHARS:
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
    lead = _NON_WHITESPACE.search(text, piece_start, min(size, piece_start + _PIECE_CHARS))
    if lead is None:
        # Inside a run of whitespace that began after a safe character (or the text's
        # start): no match reaches into it.
        return min(size, piece_start + _PIECE_CHARS)
    position = piece_start + _PIECE_CHARS // 2
    while position > lead.start() and text[position - 1].isspace():
        position -= 1
    while position < size:
        end = min(size, position + _PIECE_CHARS)
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
    window = _fold(text[max(0, end - 16) : end])
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
    return _API_KEY_LABEL_END.search(_fold(text[max(0, label_end - 12) : label_end])) is None


# --- secrets -------------------------------------------------------------------

_APOS = "['’]"

_PRIVATE_KEY = re.compile(
    r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
    r"(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
    re.DOTALL,
)
# `_PRIVATE_KEY` in two bounded steps: its header, then the first end line after it.
_PRIVATE_KEY_HEADER = re.compile(r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----")
_PRIVATE_KEY_END = re.compile(r"-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----")
_URL_CREDENTIALS = re.compile(r"(?<=://)([^/\s:@]+):(?!\[redacted\])[^@\s/]+@")
# Secrets recognisable by their prefix: replaced whole, whatever follows the prefix.
# One pattern each: a pattern that starts with a literal is scanned for much faster
# than one alternation of them all.
_PREFIXED_SECRETS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(pattern)
    for pattern in (
        r"sk-ant-[A-Za-z0-9_\-]+",  # Anthropic (as app.secrets.redact)
        r"sk-(?:proj-)?[A-Za-z0-9_\-]{16,}",  # OpenAI-style
        r"[sr]k_(?:live|test)_[A-Za-z0-9]{10,}",  # Stripe
        r"gh[pousr]_[A-Za-z0-9]{20,}",  # GitHub
        r"github_pat_[A-Za-z0-9_]{20,}",
        r"(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}(?![0-9A-Z])",  # AWS access key ids
        r"xox[abprs]-[A-Za-z0-9\-]{10,}",  # Slack
        r"AIza[0-9A-Za-z_\-]{35}",  # Google
        r"eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]+",  # JWT
    )
)
# For each: the literals one of which it starts with (at `shift`), and the run its end
# may go on with.
_PREFIX_RUNS = [
    re.compile(run)
    for run in (
        r"[A-Za-z0-9_\-]*",
        r"[A-Za-z0-9_\-]*",
        r"[A-Za-z0-9]*",
        r"[A-Za-z0-9]*",
        r"[A-Za-z0-9_]*",
        "",
        r"[A-Za-z0-9\-]*",
        "",
        r"[A-Za-z0-9_\-]*",
    )
]
_PREFIXES: tuple[tuple[tuple[str, ...], int], ...] = (
    (("sk-ant-",), 0),
    (("sk-",), 0),
    (("k_live_", "k_test_"), -1),
    (("gh",), 0),
    (("github_pat_",), 0),
    (("AKIA", "ASIA", "AGPA", "AIDA", "AROA"), 0),
    (("xox",), 0),
    (("AIza",), 0),
    (("eyJ",), 0),
)
_BEARER = re.compile(r"(\bBearer\s+)(?!\[redacted\])([A-Za-z0-9\-._~+/]{8,}=*)", re.IGNORECASE)
_BEARER_TOKEN_RUN = re.compile(r"[A-Za-z0-9\-._~+/]*")
_EQUALS_RUN = re.compile("=*")
# "x-api-key: abc", "{'x-api-key': 'abc'}", "x-api-key=abc" (as app.secrets.redact).
_API_KEY_HEADER = re.compile(
    r"""((?>\bx-api-key["']?\s*[:=,]\s*(?:b(?=["']))?["']?))(?!\[redacted\])[^\s"',;}\])]+""",
    re.IGNORECASE,
)
_QUERY_SECRET = re.compile(
    r"([?&](?:access_token|refresh_token|id_token|token|api_key|apikey|key|secret|"
    r"client_secret|password|passwd|sig|signature|auth)=)(?!\[redacted\])[^&\s#]+",
    re.IGNORECASE,
)
# Words that follow "password is" without being the password.
_NOT_A_PASSWORD = (
    r"(?:not|n['’]t|no|wrong|incorrect|invalid|correct|right|required|missing|empty|"
    r"blank|set|reset|changed|expired|too|the|a|an|my|your|still|now|stored|saved|"
    r"in|on|at|being|very|case|long|short|strong|weak|ok|okay|fine|same|different|"
    r"unknown|hidden|visible|optional|needed|asked|shown|sent|encrypted|hashed|"
    r"working|valid|good|bad|secure|safe|\[redacted\])\b"
)
_PASSWORD_ASSIGNMENT = re.compile(
    r"(\b(?:password|passwd|pwd|passcode|passphrase|pass\s?word|pin(?:\s?code)?)"
    r"(?:\s+(?:is|was|=|:)\s*|\s*[:=]\s*))"
    rf"(?!{_NOT_A_PASSWORD})"
    r"(?:\"[^\"\n]{1,100}\"|'[^'\n]{1,100}'|[^\s,;]+)",
    re.IGNORECASE,
)
_KEY_ASSIGNMENT = re.compile(
    r"(\b(?:api[_\- ]?key|secret(?:[_\- ]?key)?|access[_\- ]?token|auth[_\- ]?token|"
    r"refresh[_\- ]?token|client[_\- ]?secret|private[_\- ]?key|token)"
    r"[\"']?\s*[:=]\s*)(?!\[redacted\])"
    r"(?:\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|[^\s,;]+)",
    re.IGNORECASE,
)
# Folded literals every match of the pattern starts with, so it is tried only there.
_PASSWORD_LABELS = ("pass", "pwd", "pin")
_KEY_LABELS = ("api", "secret", "access", "auth", "refresh", "client", "private", "token")
_QUERY_NAMES = ("token", "key", "secret", "pass", "sig", "auth")
_LONG_TOKEN = re.compile(r"(?<![A-Za-z0-9_\-])[A-Za-z0-9_\-]{32,}(?![A-Za-z0-9_\-])")
_TOKEN_CLASSES = _class_table(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-", "a"
)
_TOKEN_OF_32 = b"a" * 32
_WORD_LIKE = re.compile(r"[A-Z]?[a-z]{3,}")
_LOWERCASE_RUN = re.compile(r"[a-z]+")
# `_char_class` of ASCII characters, as bytes: lower case, upper case, digit, other.
_CHAR_CLASSES = (
    bytes(
        ord("a")
        if chr(byte).islower()
        else ord("A")
        if chr(byte).isupper()
        else ord("0")
        if chr(byte).isdigit()
        else ord("_")
        for byte in range(128)
    )
    + b"_" * 128
)
_CLASS_RUN = re.compile(rb"a+|A+|0+|_+")
_NOT_AN_ASCII_LETTER = re.compile("[^A-Za-z]")
# How much of a long token one `_WORD_LIKE` scan reads (it may find nothing in it).
_TOKEN_WINDOW_CHARS = 16_384
_VOWELS = frozenset("aeiouy")


def _char_class(char: str) -> int:
    if char.islower():
        return 0
    if char.isupper():
        return 1
    if char.isdigit():
        return 2
    return 3


def looks_like_random_token(token: str) -> bool:
    """True for a long token that mixes upper case, lower case and digits and is not
    made of words — a generated key, not an identifier like `getUserAccountSettings2`.

    Pure hex (hashes, commit ids, UUIDs) and single-case identifiers never qualify:
    they are hard facts of a coding session far more often than secrets.
    Heuristic: a mixed-case identifier of 32+ characters with digits that reads
    as words survives; a random one of 32 characters gets through about once in
    250,000 (measured over two million), far less at 40.
    """
    if len(token) < 32:
        return False
    if not (
        any(c.isupper() for c in token)
        and any(c.islower() for c in token)
        and any(c.isdigit() for c in token)
    ):
        return False
    wordy = _wordy_letters(token)
    switches = _class_switches(token)
    reads_as_words = wordy / len(token) >= 0.8 and switches / (len(token) - 1) <= 0.4
    return not reads_as_words


def _class_switches(token: str) -> int:
    """How many neighbouring characters of `token` differ in `_char_class`: counted in
    C for ASCII (runs of one class, a window at a time), else one pair at a time."""
    if not token.isascii():
        return sum(_char_class(a) != _char_class(b) for a, b in itertools.pairwise(token))
    classes = token.encode("ascii").translate(_CHAR_CLASSES)
    switches = 0
    for start in range(0, len(classes), _WINDOW_CHARS):
        switches += _CLASS_RUN.subn(b"", classes[start : start + _WINDOW_CHARS])[1] - 1
        if start and classes[start - 1] != classes[start]:
            switches += 1
    return switches


def _wordy_letters(token: str) -> int:
    """The letters of `token` in `_WORD_LIKE` matches that hold a vowel."""
    if len(token) <= _TOKEN_WINDOW_CHARS:
        return sum(
            len(match.group())
            for match in _WORD_LIKE.finditer(token)
            if _VOWELS.intersection(match.group().lower())
        )
    # A pasted blob, read in windows: cut where a character is no letter (no match holds
    # it), else (a long stretch of letters) counted from its runs of lower case.
    cuts = [0]
    while len(token) - cuts[-1] > _TOKEN_WINDOW_CHARS:
        cut = _NOT_AN_ASCII_LETTER.search(
            token, cuts[-1] + _TOKEN_WINDOW_CHARS, cuts[-1] + 2 * _TOKEN_WINDOW_CHARS
        )
        if cut is None:
            return _wordy_letters_by_runs(token)
        cuts.append(cut.start())
    cuts.append(len(token))
    return sum(
        len(match.group())
        for start, end in itertools.pairwise(cuts)
        for match in _WORD_LIKE.finditer(token, start, end)
        if _VOWELS.intersection(match.group().lower())
    )


def _wordy_letters_by_runs(token: str) -> int:
    """`_wordy_letters` of a long token from its runs of lower case, read in windows (a
    match is such a run of three or more, with the capital before it if there is one)."""
    total = 0
    run_start, run_end, run_vowel = -1, -1, False
    for window in range(0, len(token), _WINDOW_CHARS):
        for run in _LOWERCASE_RUN.finditer(token, window, min(len(token), window + _WINDOW_CHARS)):
            if run.start() == run_end:
                run_end = run.end()
                run_vowel = run_vowel or bool(_VOWELS.intersection(run.group()))
                continue
            total += _wordy_run(token, run_start, run_end, run_vowel)
            run_start, run_end = run.span()
            run_vowel = bool(_VOWELS.intersection(run.group()))
    return total + _wordy_run(token, run_start, run_end, run_vowel)


def _wordy_run(token: str, start: int, end: int, vowel: bool) -> int:
    if end - start < 3:
        return 0
    length = end - start
    if start > 0 and "A" <= token[start - 1] <= "Z":
        length += 1
        vowel = vowel or token[start - 1].lower() in _VOWELS
    return length if vowel else 0


def _redact_bearer(match: re.Match[str]) -> str:
    token = match.group(2)
    # "the bearer instrument" is prose: a real token is long, or has a digit, a symbol
    # or a capital inside.
    if (
        len(token) >= 20
        or any(c.isdigit() or c in "-._~+/=" for c in token)
        or any(c.isupper() for c in token[1:])
    ):
        return match.group(1) + REDACTED
    return match.group()


def _extend_bearer(text: str, end: int) -> int:
    if text[end - 1] != "=":
        end = _extend_run(_BEARER_TOKEN_RUN, text, end)
    return _extend_run(_EQUALS_RUN, text, end)


def redact_secrets(text: str) -> str:
    """`text` with API keys, tokens, passwords and private keys replaced by `[redacted]`.

    Labels stay ("password: [redacted]"), so a summary can still say a password
    was shared. Ordinary prose is left alone.
    """
    if "-----BEGIN" in text:
        text = _redact_private_keys(text)
    if len(text) <= _PIECE_CHARS:
        return _redact_piece(text)
    return "".join(_redact_piece(text[start:end]) for start, end in _pieces(text))


def _redact_private_keys(text: str) -> str:
    """`_PRIVATE_KEY.sub(REDACTED, text)`, each key found by literals, not by a scan of all."""
    pieces: list[str] = []
    last = 0
    begin = text.find("-----BEGIN")
    while begin != -1:
        header = _PRIVATE_KEY_HEADER.match(text, begin)
        if header is None:
            begin = text.find("-----BEGIN", begin + 1)
            continue
        end_line = _PRIVATE_KEY_END.search(text, header.end())
        end = len(text) if end_line is None else end_line.end()
        pieces += (text[last:begin], REDACTED)
        last = end
        begin = text.find("-----BEGIN", end)
    if not pieces:
        return text
    pieces.append(text[last:])
    return "".join(pieces)


def _redact_piece(text: str) -> str:
    """`redact_secrets` of a piece: each pattern tried only where its literals are."""
    folded = _fold(text)
    if "://" in text:
        text = _sub_at(_URL_CREDENTIALS, text, _positions(text, ("://",), 3), rf"\g<1>:{REDACTED}@")
    for pattern, (needles, shift), run in zip(
        _PREFIXED_SECRETS, _PREFIXES, _PREFIX_RUNS, strict=True
    ):
        if _holds_any(text, needles):
            if len(text) <= _WINDOW_CHARS:
                text = pattern.sub(REDACTED, text)
            else:
                extend = functools.partial(_extend_run, run) if run.pattern else None
                text = _sub_at(pattern, text, _positions(text, needles, shift), REDACTED, extend)
    if "bearer" in folded:
        text = _sub_at(
            _BEARER, text, _positions(_fold(text), ("bearer",)), _redact_bearer, _extend_bearer
        )
    if "x-api-key" in folded:
        text = _sub_at(
            _API_KEY_HEADER,
            text,
            _positions(_fold(text), ("x-api-key",)),
            rf"\g<1>{REDACTED}",
            _EXTEND_HEADER_VALUE,
        )
    if "=" in text and ("?" in text or "&" in text) and _holds_any(folded, _QUERY_NAMES):
        text = _sub_at(
            _QUERY_SECRET,
            text,
            _positions(text, ("?", "&")),
            rf"\g<1>{REDACTED}",
            _EXTEND_QUERY_VALUE,
        )
    if _holds_any(folded, _PASSWORD_LABELS):
        text = _sub_at(
            _PASSWORD_ASSIGNMENT,
            text,
            _positions(_fold(text), _PASSWORD_LABELS),
            rf"\g<1>{REDACTED}",
            _EXTEND_VALUE,
        )
    if _holds_any(folded, _KEY_LABELS):
        text = _sub_at(
            _KEY_ASSIGNMENT,
            text,
            _positions(_fold(text), _KEY_LABELS),
            rf"\g<1>{REDACTED}",
            _EXTEND_VALUE,
        )
    return _redact_long_tokens(text)


# How each value's last run goes on (see `_sub_at`).
_EXTEND_VALUE = functools.partial(_extend_run, re.compile(r"[^\s,;]*"))
_EXTEND_HEADER_VALUE = functools.partial(_extend_run, re.compile(r"[^\s\"',;}\])]*"))
_EXTEND_QUERY_VALUE = functools.partial(_extend_run, re.compile(r"[^&\s#]*"))
# The patterns whose value may be quoted (group 1 is the label before it).
_QUOTED_VALUES = frozenset({_PASSWORD_ASSIGNMENT, _KEY_ASSIGNMENT})
_JWT_RUN = re.compile(r"[A-Za-z0-9_\-]*")
_URL_USER_RUN = re.compile(r"[^/\s:@]*")
_URL_PASSWORD_RUN = re.compile(r"[^@\s/]*")


def _sub_at(
    pattern: re.Pattern[str],
    text: str,
    starts: Iterable[int],
    replace: str | Callable[[re.Match[str]], str],
    extend: Callable[[str, int], int] | None = None,
) -> str:
    """`pattern.sub(replace, text)` for a pattern that can only match at `starts`.

    A match is read in a window; one that fills the window goes on with `extend` (its
    last run), so no call reads more than the window of a long value.
    """
    size = len(text)
    pieces: list[str] = []
    last = 0
    for start in starts:
        if start < last:
            continue
        stop = min(size, start + _WINDOW_CHARS)
        match = pattern.match(text, start, stop)
        if match and stop < size and pattern in _QUOTED_VALUES and match.end(1) + 256 > stop:
            # A quoted value (at most 200 characters) may run past the window's end.
            stop = min(size, match.end(1) + 256)
            match = pattern.match(text, start, stop)
        if match is None and stop < size:
            runs = _LONG_RUN_SHAPES.get(pattern)
            if runs is not None:
                # A failure may come from a run longer than the window: follow the runs.
                found = runs(text, start)
                if found is not None:
                    pieces += (text[last:start], found[1])
                    last = found[0]
                continue
            # Else only whitespace longer than the window, between a label and its
            # value, gets here with a match.
            match = pattern.match(text, start)
        if match is None:
            continue
        end = match.end()
        if end == stop < size and extend is not None:
            end = extend(text, end)
        pieces += (text[last:start], replace(match) if callable(replace) else match.expand(replace))
        last = end
    if not pieces:
        return text
    pieces.append(text[last:])
    return "".join(pieces)


def _long_jwt(text: str, start: int) -> tuple[int, str] | None:
    """A JWT (`_PREFIXED_SECRETS[8]`) at `start`, read in windows: three runs joined by
    points. (Its end, its replacement.)"""
    position = start + 3
    for shortest, point in ((8, True), (8, True), (1, False)):
        end = _extend_run(_JWT_RUN, text, position)
        if end - position < shortest or (point and not text.startswith(".", end)):
            return None
        position = end + point
    return position, REDACTED


def _long_url_credentials(text: str, start: int) -> tuple[int, str] | None:
    """`_URL_CREDENTIALS` at `start`, read in windows: "user:password@". (Its end, its
    replacement.)"""
    user_end = _extend_run(_URL_USER_RUN, text, start)
    if user_end == start or not text.startswith(":", user_end):
        return None
    if text.startswith(REDACTED, user_end + 1):
        return None
    password_end = _extend_run(_URL_PASSWORD_RUN, text, user_end + 1)
    if password_end == user_end + 1 or not text.startswith("@", password_end):
        return None
    return password_end + 1, text[start:user_end] + ":" + REDACTED + "@"


# The patterns that, tried in a window, can fail for a run longer than the window: read
# again in windows, run by run.
_LONG_RUN_SHAPES: dict[re.Pattern[str], Callable[[str, int], tuple[int, str] | None]] = {
    _PREFIXED_SECRETS[8]: _long_jwt,
    _URL_CREDENTIALS: _long_url_credentials,
}


def _redact_long_tokens(text: str) -> str:
    """`_LONG_TOKEN.sub`, keeping what does not look random: runs found with `bytes.find`."""
    if len(text) < 32:
        return text
    classes = _byte_classes(text, _TOKEN_CLASSES)
    start = classes.find(_TOKEN_OF_32)
    pieces: list[str] = []
    last = 0
    while start != -1:
        end = classes.find(b" ", start)
        if end == -1:
            end = len(text)
        if looks_like_random_token(text[start:end]):
            pieces += (text[last:start], REDACTED)
            last = end
        start = classes.find(_TOKEN_OF_32, end)
    if not pieces:
        return text
    pieces.append(text[last:])
    return "".join(pieces)


def redact_facets(facets: Facets) -> Facets:
    """`facets` with every text redacted, and every entity that held a secret dropped.

    For facets that did not come from `extract_facets` (the LLM's draft, before it
    is stored).
    """
    return Facets(
        decisions=tuple(_redacted_fact(fact) for fact in facets.decisions),
        action_items=tuple(
            item.model_copy(
                update={
                    "owner": None if item.owner is None else redact_secrets(item.owner),
                    "task": redact_secrets(item.task),
                    "due": None if item.due is None else redact_secrets(item.due),
                }
            )
            for item in facets.action_items
        ),
        open_questions=tuple(_redacted_fact(fact) for fact in facets.open_questions),
        entities=tuple(
            entity
            for entity in facets.entities
            if redact_secrets(entity.text) == entity.text and REDACTED not in entity.text
        ),
    )


def _redacted_fact(fact: SourcedPoint) -> SourcedPoint:
    return fact.model_copy(update={"text": redact_secrets(fact.text)})


# --- splitting text ------------------------------------------------------------

_LINE_MARKUP = re.compile(r"^\s*(?:#{1,6}\s+|>\s*|[-*+•]\s+|\d{1,3}[.)]\s+|\[[ xX]\]\s+)+")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]*_]*\s+(?=[\"'(\[*_`]*[A-Z0-9])")
# `_SENTENCE_END` found from its punctuation (a quick scan), the separator in group 1.
_SENTENCE_BREAK = re.compile(r"[.!?]([\"')\]*_]*\s+)(?=[\"'(\[*_`]*[A-Z0-9])")
# A character no sentence break (nor what it looks ahead at) holds: a safe window end.
_NOT_IN_BREAK = re.compile(r"[^.!?\"')\]*_(\[`\sA-Z0-9]")
_CLOSERS = frozenset("\"')]*_")
_SPACES = re.compile(r"\s+")
_CODE_TODO = re.compile(
    r"(?:#|//|--|/\*|\*|<!--)\s*(?:TODO|FIXME)\b\s*(?:\(([^)]*)\))?[:\s]\s*(.+)"
)


# A question: (text, seq, said by the user, index) and a decision: (text, index), where the
# index is the sentence's position in the whole conversation, for "later than". Plain
# tuples of strings and numbers, which the garbage collector stops tracking.
_Question = tuple[str, int, bool, int]
_Decision = tuple[str, int]


def _normalise(text: str) -> str:
    if len(text) <= _PIECE_CHARS:
        return " ".join(text.split())
    return _SPACES.sub(" ", text).strip()


def _clip(text: str, limit: int = MAX_FACT_CHARS) -> str:
    text = _normalise(text)
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0] or text[:limit]
    return cut.rstrip(" ,;:") + "…"


def _split_blocks(content: str) -> tuple[list[str], list[str]]:
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


def _sentence_spans(lines: Sequence[str]) -> list[Span]:
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
    if end - start <= _PIECE_CHARS:
        points = [
            point
            for point in _positions(line, ".!?", start=start, end=end)
            if line[point + 1 : point + 2].isspace() or line[point + 1 : point + 2] in _CLOSERS
        ]
        for found in _finditer_at(_SENTENCE_BREAK, line, points, end):
            yield found.span(1)
        return
    position = start
    while position < end:
        stop = end
        if end - position > _PIECE_CHARS:
            neutral = _NOT_IN_BREAK.search(line, position + _PIECE_CHARS, end)
            stop = end if neutral is None else neutral.start()
        for found in _SENTENCE_BREAK.finditer(line, position, stop):
            yield found.span(1)
        position = stop


def _is_question(sentence: str) -> bool:
    return sentence.rstrip("\"')]*_ ").endswith("?")


# --- decisions -----------------------------------------------------------------

_DECISION = re.compile(
    r"\b(?:decided|decision\s*(?:is|was|:)"
    rf"|let{_APOS}?s\s+(?:go\s+with|use|pick|choose|stick\s+with|book|take|settle\s+on)"
    rf"|we(?:{_APOS}ll|\s+will|\s+shall|{_APOS}re\s+going\s+to|\s+are\s+going\s+to)\s+"
    r"(?:use|go\s+with|pick|choose|stick\s+with|adopt|switch\s+to|book|take)"
    r"|(?:we|i)\s+(?:chose|picked|opted\s+for|went\s+with|settled\s+on)"
    rf"|we(?:{_APOS}re|\s+are)\s+going\s+with"
    r"|agreed|settled\s+on|final\s+(?:answer|decision|choice|plan)|the\s+plan\s+is)\b",
    re.IGNORECASE,
)
_NEGATION = re.compile(
    rf"(?:\bnot\b|n{_APOS}t\b|\bnever\b|\bno\b|\byet\s+to\b)[\w\s,']{{0,20}}$", re.IGNORECASE
)


_DECISION_VERBS = ("chose", "picked", "opted", "went", "settled")
_DECISION_STARTS = ("decided", "decision", "let", "agreed", "settled", "final")


def _is_decision(text: str, start: int, end: int, starts: Sequence[int]) -> bool:
    """Whether the sentence `text[start:end]` states a decision that is not negated:
    `_DECISION` tried at `starts` (where one of its alternatives can begin)."""
    return any(
        not _negated(text, start, match.start())
        for match in _finditer_at(_DECISION, text, starts, end)
    )


def _negated(text: str, sentence_start: int, end: int) -> bool:
    """`_NEGATION.search(text[sentence_start:end])`, reading only the end: a negation ends
    at most twenty characters before `end`, and only "yet … to" can reach further back
    (over whitespace)."""
    start = max(sentence_start, end - 28)
    while start > sentence_start and text[start - 1].isspace():
        start -= 1
    return _NEGATION.search(text, max(sentence_start, start - 3), end) is not None


# --- action items --------------------------------------------------------------

_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
    r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
)
_WEEKDAY = (
    r"(?:Mon(?:day)?|Tue(?:s(?:day)?)?|Wed(?:nesday)?|Thu(?:r(?:s(?:day)?)?)?|Fri(?:day)?|"
    r"Sat(?:urday)?|Sun(?:day)?)"
)
_ISO_DATE = r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?(?:Z|[+-]\d{2}:?\d{2})?)?"
_NUMERIC_DATE = r"\d{1,2}/\d{1,2}/(?:\d{4}|\d{2})|\d{1,2}\.\d{1,2}\.\d{4}"
_DAY_MONTH = (
    rf"(?:{_WEEKDAY},?\s+)?\d{{1,2}}(?:st|nd|rd|th)?"
    r"(?:\s?[-–]\s?\d{1,2}(?:st|nd|rd|th)?)?"
    rf"\s+(?:of\s+)?{_MONTH}"
    r"(?:\.?,?\s+\d{4})?"
)
_MONTH_DAY = rf"(?:{_WEEKDAY},?\s+)?{_MONTH}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?"
_MONTH_YEAR = rf"{_MONTH}\s+\d{{4}}"
_RELATIVE_DAY = (
    r"(?:tomorrow(?:\s+(?:morning|afternoon|evening|night))?|tonight|today|"
    r"this\s+(?:week|weekend|morning|afternoon|evening)|"
    r"(?:next|this)\s+(?:week|month|year|(?-i:" + _WEEKDAY + r"))|"
    r"(?:the\s+)?end\s+of\s+(?:the\s+)?(?:day|week|month|quarter|year)|EOD|EOW|COB)"
)
_DUE_DATE = (
    rf"(?:{_ISO_DATE}|{_NUMERIC_DATE}|(?:the\s+)?(?-i:{_DAY_MONTH})|(?-i:{_MONTH_DAY})|"
    rf"(?-i:{_WEEKDAY})(?:\s+(?:morning|afternoon|evening|night))?|{_RELATIVE_DAY}|"
    r"noon|midnight|\d{1,2}(?::\d{2})?\s?(?:am|pm))"
)
_DUE = re.compile(
    r"\b(?:(?:by|before|until|till|no\s+later\s+than|due(?:\s+(?:on|by))?|on)\s+"
    rf"{_DUE_DATE}|{_RELATIVE_DAY})(?![\w'’-])",
    re.IGNORECASE,
)
# The folded words `_DUE` can begin with.
_DUE_STARTS = (
    "by",
    "before",
    "until",
    "till",
    "no",
    "due",
    "on",
    "tomorrow",
    "tonight",
    "today",
    "this",
    "next",
    "the",
    "end",
    "eod",
    "eow",
    "cob",
)


def _search_due(text: str) -> re.Match[str] | None:
    return _search_at(_DUE, text, _word_starts(_fold(text), _DUE_STARTS))


_TODO_LINE = re.compile(
    r"^(?:TODO|FIXME|action(?:\s+items?)?|next\s+steps?)\s*(?:\(([^)]*)\))?\s*[:\-–]\s*(.+)$",
    re.IGNORECASE,
)
_OWNER_TO = re.compile(r"^(@?[A-Z][\w.\-]*)\s+(?:to|will|should|needs?\s+to)\s+(.+)$")
_FIRST_PERSON = re.compile(
    rf"\bI(?:{_APOS}ll|\s+will|\s+am\s+going\s+to|{_APOS}m\s+going\s+to|\s+need\s+to|"
    r"\s+have\s+to|\s+must|\s+still\s+need\s+to)\s+(.+)",
)
_SECOND_PERSON = re.compile(
    rf"\byou(?:{_APOS}ll\s+(?:need|have)\s+to|\s+will\s+(?:need|have)\s+to|\s+need\s+to|"
    r"\s+have\s+to|\s+must)\s+(.+)",
    re.IGNORECASE,
)
_REQUEST = re.compile(
    r"(?:\b(?:can|could|would|will)\s+you(?:\s+please)?|^please)\s+(.+)", re.IGNORECASE
)
_WE_MUST = re.compile(
    rf"\bwe(?:\s+still)?(?:\s+need\s+to|\s+have\s+to|\s+must|{_APOS}ll\s+need\s+to)\s+(.+)",
    re.IGNORECASE,
)
_NAMED = re.compile(
    r"\b([A-Z][a-z]+(?:\s[A-Z][a-z]+)?)\s+(?:will|is\s+going\s+to|needs\s+to|has\s+to)\s+"
    r"(?!(?:be|not|never|probably|likely|raise|return|throw|fail|work|happen|cause|break|"
    r"crash|load|show|appear|look|seem|run\s+out|help|also|still|just|only|always|"
    r"automatically)\b)(.+)"
)
# Capitalised words that begin "X will …" without being anyone's name.
_NOT_NAMES = _words(
    "The This That These Those It Its There Here He She They We You I Which What Who "
    "Whoever Someone Somebody Everyone Everybody Nobody Anyone Each Every Both All "
    "Nothing Something Everything Python Git Claude It'll Then Now Also And But Or So "
    "If When While After Before Once Maybe Perhaps Hopefully Otherwise Today Tomorrow "
    "My Your Our Their His Her Cairn Windows Linux"
)


def _name_starts(text: str, start: int, verbs: Sequence[int]) -> list[int]:
    """Where `_NAMED` can match in a sentence starting at `start`: at the one or two
    capitalised words ("Maria", "Anna Lee") before the whitespace before a verb."""
    starts: list[int] = []
    for verb in verbs:
        end = verb
        while end > start and text[end - 1].isspace():
            end -= 1
        if end == verb:
            continue
        name = _capitalised_word_start(text, start, end)
        if name is None:
            continue
        starts.append(name)
        if name > start and text[name - 1].isspace():
            first = _capitalised_word_start(text, start, name - 1)
            if first is not None:
                starts.append(first)
    return sorted(set(starts))


def _capitalised_word_start(text: str, lowest: int, end: int) -> int | None:
    """Where `[A-Z][a-z]+` ending at `end` starts (not before `lowest`), if it does."""
    start = end
    while start > lowest and "a" <= text[start - 1] <= "z":
        start -= 1
    if start in (end, lowest) or not "A" <= text[start - 1] <= "Z":
        return None
    return start - 1


def _other_role(role: Role) -> str:
    return "assistant" if role is Role.USER else "user"


def _split_due(task: str) -> tuple[str, str | None]:
    """The task without its due date, and the due date verbatim (or None)."""
    match = _search_due(task)
    if match is None:
        return _tidy_task(task), None
    due = _normalise(match.group())
    rest = task[: match.start()] + " " + task[match.end() :]
    return _tidy_task(rest), due


def _tidy_task(task: str) -> str:
    task = _normalise(task).strip(" ,;:-–")
    task = task.rstrip(".!")
    return _clip(task, MAX_FACT_CHARS)


def _could_be_a_name(words: str) -> bool:
    """False for "The …", "Testing …", "Deployment …": pronouns, gerunds, abstract nouns."""
    first = words.split()[0]
    return first not in _NOT_NAMES and not first.endswith(("ing", "tion", "ment", "ness"))


def _request_with_due(sentence: str, starts: list[int], role: Role) -> tuple[str, str] | None:
    """(owner, task) for "can you / please … by <date>" (`_REQUEST` tried at `starts`);
    without a date it is just a question."""
    request = _search_at(_REQUEST, sentence, starts)
    if request is None or _search_due(request.group(1)) is None:
        return None
    return _other_role(role), request.group(1).rstrip("?")


def _open_starts(folded: str) -> tuple[str, ...]:
    """The words `_OPEN_MARKER` can begin with in a sentence (folded), of the alternatives
    whose other words it holds."""
    starts: tuple[str, ...] = ("tbd", "tbc", "undecided", "unclear", "unresolved")
    if "question" in folded:
        starts += ("open",)
    if "decided" in folded or "determined" in folded or "confirmed" in folded:
        starts += ("to",)
    if "sure" in folded:
        starts += ("not",)
    if "decide" in folded or "figure" in folded or "work" in folded:
        starts += ("still", "need", "have")
    if "decide" in folded:
        starts += ("yet",)
    return starts


def _decision_starts(folded: str) -> tuple[str, ...]:
    """The words `_DECISION` can begin with in a sentence (folded), of the alternatives
    whose other words it holds."""
    verbs = _holds_any(folded, _DECISION_VERBS)
    starts: tuple[str, ...] = _DECISION_STARTS
    if "we" in folded and (verbs or "ll" in folded or "going" in folded):
        starts += ("we",)
    if verbs:
        starts += ("i",)
    if "plan" in folded:
        starts += ("the",)
    return starts


def _named_verbs(sentence: str) -> tuple[str, ...]:
    """The verbs `_NAMED` needs after a name ("will", "is going to", "needs to", "has to")
    that the sentence holds."""
    verbs: tuple[str, ...] = ("will",) if "will" in sentence else ()
    if "going" in sentence:
        verbs += ("is",)
    if "to" in sentence:
        verbs += ("needs", "has")
    return verbs


def _asks(folded: str) -> list[int]:
    """Where `_REQUEST` can match in a sentence (folded)."""
    asks = _positions(folded, ("can", "could", "would", "will")) if "you" in folded else []
    if folded.startswith("please"):
        asks.insert(0, 0)
    return asks


def _action_in(
    text: str, folded: str, start: int, end: int, role: Role
) -> tuple[str | None, str] | None:
    """(owner, task) when the sentence `text[start:end]` (`folded`) asks or promises that
    something be done: each pattern tried where a literal it begins with occurs."""
    if folded.startswith(_TODO_STARTS):
        todo = _TODO_LINE.match(text[start:end])
        if todo:
            owner, task = todo.group(1), todo.group(2)
            named = _OWNER_TO.match(task)
            if owner is None and named and named.group(1) not in _NOT_NAMES:
                owner, task = named.group(1).lstrip("@"), named.group(2)
            return (owner.strip() if owner else None), task
    must = "need" in folded or "have" in folded or "must" in folded
    if role is Role.USER and (must or "ll" in folded or "going" in folded):
        mine = _search_at(_FIRST_PERSON, text, _positions(text, "I", 0, start, end), end)
        if mine:
            return "user", mine.group(1)
    if must and "you" in folded:
        yours = _search_at(_SECOND_PERSON, text, _positions(folded, ("you",), start), end)
        if yours:
            return _other_role(role), yours.group(1)
    asks = _asks(folded)
    if asks:
        request = _request_with_due(text[start:end], asks, role)
        if request is not None:
            return request
    verbs = _named_verbs(text[start:end])
    if verbs:
        names = _name_starts(text, start, _positions(text, verbs, 0, start, end))
        named_match = _search_at(_NAMED, text, names, end)
        if named_match and _could_be_a_name(named_match.group(1)):
            return named_match.group(1), named_match.group(2)
    if must and "we" in folded:
        ours = _search_at(_WE_MUST, text, _positions(folded, ("we",), start), end)
        if ours:
            return None, ours.group(1)
    return None


_TODO_STARTS = ("todo", "fixme", "action", "next")


# --- open questions --------------------------------------------------------------

_OPEN_MARKER = re.compile(
    r"\b(?:open\s+questions?|TBD|TBC|to\s+be\s+(?:decided|determined|confirmed)|"
    r"not\s+sure\s+(?:whether|if|yet|about|which|what|how)|"
    r"(?:still\s+)?(?:need|have)\s+to\s+(?:decide|figure\s+out|work\s+out)|undecided|"
    r"unclear\s+(?:whether|if|how|what|which)|unresolved|"
    rf"haven{_APOS}t\s+(?:yet\s+)?(?:decided|figured\s+out)|yet\s+to\s+(?:decide|be\s+decided))\b",
    re.IGNORECASE,
)
# Folded literals one of which every open marker holds.
_OPEN_WORDS = (
    "open",
    "tbd",
    "tbc",
    "decide",
    "determined",
    "confirmed",
    "sure",
    "figure",
    "work",
    "unclear",
    "unresolved",
)
# The folded words `_OPEN_MARKER` can begin with.
_OPEN_STARTS = (
    "open",
    "tbd",
    "tbc",
    "to",
    "not",
    "still",
    "need",
    "have",
    "undecided",
    "unclear",
    "unresolved",
    "yet",
)
_DELIBERATION = re.compile(
    r"\b(?:should|shall)\s+(?:we|i)\b|\bwhich\b|\bwho\s+(?:will|should|is\s+going)\b|"
    r"\bwhen\s+(?:should|will|do|can|shall)\s+we\b|\bwhat\s+about\b|"
    r"\bhow\s+(?:should|do|shall)\s+we\b|\bor\b",
    re.IGNORECASE,
)
_DELIBERATES = ("should", "shall", "which", "who", "when", "what", "how", "or")
_TOKEN = re.compile(r"[A-Za-z0-9][\w.\-]*[A-Za-z0-9]|[A-Za-z0-9]")
_STOPWORDS = _words(
    "the and for are but not you all any can had her was one our out day get has him his "
    "how man new now old see two way who boy did its let put say she too use that with "
    "have this will your from they know want been good much some time very when come "
    "here just like long make many more only over such take than them well were what "
    "which where would could should there their these those about after again also "
    "because before being between both does doing during each into most other same so "
    "then through under until while going think sure okay yes please thanks thank need "
    "really maybe better best still book pick choose use go with we i do it"
)


def _is_marked_open(sentence: str, folded: str) -> bool:
    """`_OPEN_MARKER.search`, tried where one of its alternatives can begin."""
    if not _holds_any(folded, _OPEN_WORDS):
        return False
    return _search_at(_OPEN_MARKER, sentence, _word_starts(folded, _OPEN_STARTS)) is not None


def _content_words(sentence: str) -> tuple[set[str], set[str]]:
    """(distinctive tokens, other content words) of a sentence, lower-cased.

    Distinctive: names and identifiers — capitalised past the first word, or
    holding a digit, an underscore or a dot.
    """
    distinctive: set[str] = set()
    ordinary: set[str] = set()
    first = True
    for token in _TOKEN.findall(sentence):
        lowered = token.lower()
        if lowered in _STOPWORDS or (len(token) < 3 and not token.isdigit()):
            first = False
            continue
        if token.isalpha():
            if (token[0].isupper() and not first) or token.isupper():
                distinctive.add(lowered)
            else:
                ordinary.add(lowered)
        elif (
            (token[0].isupper() and not first)
            or token.isupper()
            or any(c.isdigit() or c in "_." for c in token)
        ):
            distinctive.add(lowered)
        else:
            ordinary.add(lowered)
        first = False
    return distinctive, ordinary


class _Resolutions:
    """Which questions a later decision settled (see `_content_words`): a shared
    distinctive word, or two shared ordinary ones. Built once, so checking every
    question costs O(its words), not O(decisions)."""

    def __init__(self, decisions: Sequence[_Decision]) -> None:
        # word -> the conversation indexes of the decisions that use it, ascending
        self._postings: dict[str, list[int]] = {}
        for text, index in decisions:
            distinctive, ordinary = _content_words(text)
            for word in distinctive | ordinary:
                self._postings.setdefault(word, []).append(index)

    def settled(self, text: str, index: int) -> bool:
        """Whether a decision after `index` settled the question `text`."""
        distinctive, ordinary = _content_words(text)
        for word in distinctive:
            postings = self._postings.get(word)
            if postings and postings[-1] > index:
                return True
        shared: dict[int, int] = {}
        for word in ordinary:
            postings = self._postings.get(word, [])
            for decision_index in postings[bisect.bisect_right(postings, index) :]:
                shared[decision_index] = shared.get(decision_index, 0) + 1
                if shared[decision_index] >= 2:
                    return True
        return False


# --- entities ------------------------------------------------------------------

_FILE_EXTENSIONS = (
    "py|pyi|pyw|ipynb|js|mjs|cjs|ts|tsx|jsx|json|jsonl|md|markdown|rst|txt|csv|tsv|xlsx|"
    "xlsm|xls|docx|doc|odt|ods|odp|pptx|ppt|pdf|png|jpe?g|gif|svg|webp|bmp|ico|tiff?|html?|"
    "css|scss|sass|less|yaml|yml|toml|ini|cfg|conf|env|sh|bash|zsh|fish|ps1|bat|cmd|sql|db|"
    "sqlite3?|zip|tar|gz|tgz|bz2|xz|7z|rar|rs|go|java|kt|kts|c|h|cc|cpp|cxx|hpp|hh|cs|rb|"
    "php|swift|mm|scala|lua|pl|pm|log|xml|lock|mp3|mp4|m4a|mov|wav|avi|mkv|flac|ogg|epub|"
    "dmg|exe|msi|deb|rpm|apk|ics|vcf|gpx|kml|whl|spec|desktop|service|qml|ui|qrc|proto|"
    "graphql|tf|vue|svelte|dart|ex|exs|erl|hs|ml|clj|r|jl|ipa|bin|iso|img|key|pem|crt|"
    "cer|csr|p12|gradle|mk|cmake|dockerfile"
)


_Trie = dict[str, "_Trie"]


def _trie(words: Iterable[str]) -> str:
    """An alternation matching exactly `words`, as a trie: re tries one branch per first
    letter instead of every word in turn (the same matches: at most one extension can be
    followed by a character that is not part of a name)."""
    tree: _Trie = {}
    for word in words:
        node = tree
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def emit(node: _Trie) -> str:
        branches = [re.escape(char) + emit(child) for char, child in sorted(node.items()) if char]
        if "" in node:
            branches.insert(0, "")
        if len(branches) == 1:
            return branches[0]
        return "(?:" + "|".join(branches) + ")"

    return emit(tree)


def _extension_words(alternatives: str) -> list[str]:
    words: list[str] = []
    for alternative in alternatives.split("|"):
        if alternative.endswith("?"):  # tiff? html? sqlite3?
            words += (alternative[:-2], alternative[:-1])
        elif "?" in alternative:  # jpe?g
            optional = alternative.index("?") - 1
            words += (
                alternative[:optional] + alternative[optional + 2 :],
                alternative.replace("?", ""),
            )
        else:
            words.append(alternative)
    return words


# A point before a name `_FILE` takes for an extension (the whole name, then no hyphen).
_EXTENSION_POINT = re.compile(rf"\.(?i:{_trie(_extension_words(_FILE_EXTENSIONS))})(?![\w\-])")
_URL = re.compile(r"\b(?:https?://|www\.)[^\s<>\"'`\[\]()]+")
_EMAIL = re.compile(r"\b[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}\b")
_EMAIL_DOMAIN = re.compile(r"[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}\b")
_EMAIL_LOCAL = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._%+-")
_FILE = re.compile(
    r"(?<![\w/.\-@])"
    r"(?:[A-Za-z]:\\(?:[\w .\-]+\\)*[\w.\-]+"  # C:\Users\me\file.txt
    # report_v2.xlsx, src/app/main.py, .env
    rf"|(?:~|\.{{1,2}})?/?(?:[\w.\-]+/)*[\w\-]?[\w.\-]*\.(?i:{_trie(_extension_words(_FILE_EXTENSIONS))})(?![\w\-])"
    r"|(?:~|\.{1,2})?/(?:[\w.\-]+/)+[\w.\-]*"  # /etc/nginx/, ~/notes/2026/
    r"|[A-Za-z_][\w\-]*/(?:[\w.\-]+/)+)"  # app/core/ (not 05/03/)
)
_AMOUNT = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_MONEY = re.compile(
    r"(?:US\$|A\$|C\$|[$€£¥₹])\s?"
    rf"(?:{_AMOUNT})(?:\s?(?:k|K|m|M|bn|million|billion|thousand)\b)?"
    rf"|\b(?:{_AMOUNT})\s?(?:k|K|m|M|bn)?\s?"
    r"(?:USD|EUR|GBP|JPY|CHF|CAD|AUD|CNY|INR|SEK|NOK|DKK|dollars?|euros?|pounds?|yen|cents?)\b"
    rf"|\b(?:{_AMOUNT})\s?€"
)
_CURRENCY_WORDS = (
    "USD",
    "EUR",
    "GBP",
    "JPY",
    "CHF",
    "CAD",
    "AUD",
    "CNY",
    "INR",
    "SEK",
    "NOK",
    "DKK",
    "dollar",
    "euro",
    "pound",
    "yen",
    "cent",
    "€",
)
# What every amount holds: a currency symbol or a currency's code or name.
_CURRENCY_MARKS = ("$", "£", "¥", "₹", *_CURRENCY_WORDS)
_DATE = re.compile(
    rf"\b(?:{_ISO_DATE}|{_NUMERIC_DATE}|{_DAY_MONTH}|{_MONTH_DAY}|{_MONTH_YEAR})(?![\w])"
)
_UNITS = (
    r"%|percent|per\s?cent|kg|mg|µg|g|lbs?|oz|km/h|km|cm|mm|µm|nm|m/s|mph|mi|miles?|ft|"
    r"feet|inch(?:es)?|yd|ms|µs|ns|sec|secs|seconds?|mins?|minutes?|hrs?|hours?|days?|"
    r"weeks?|months?|years?|yrs?|KiB|MiB|GiB|TiB|KB|kB|MB|GB|TB|PB|bytes?|bits?|"
    r"Kbps|Mbps|Gbps|px|pt|rem|em|dpi|°C|°F|°|kWh|Wh|kW|MW|W|mAh|mA|mV|V|kHz|MHz|GHz|Hz|"
    r"fps|rpm|ml|mL|cl|dl|l|gal|litres?|liters?|metres?|meters?|"
    r"tokens?|req/s|rps|qps|users?|people|persons|guests?|"
    r"nights?|adults?|children|kids|rooms?|seats?|tickets?|pages?|words?|lines?|rows?|"
    r"items?|steps?|cores?|threads?|GPUs?|CPUs?|messages?|calories|kcal|x|×|s|h|m"
)
# The same units as a trie (at most one of them can be followed by what `(?![\w/])` allows),
# and "per cent", which holds a space.
_UNIT_WORDS = (
    "% percent percent kg mg µg g lb lbs oz km/h km cm mm µm nm m/s mph mi mile miles ft feet "
    "inch inches yd ms µs ns sec secs second seconds min mins minute minutes hr hrs hour hours "
    "day days week weeks month months year years yr yrs KiB MiB GiB TiB KB kB MB GB TB PB "
    "byte bytes bit bits Kbps Mbps Gbps px pt rem em dpi °C °F ° kWh Wh kW MW W mAh mA mV V "
    "kHz MHz GHz Hz fps rpm ml mL cl dl l gal litre litres liter liters metre metres meter meters "
    "token tokens req/s rps qps user users people "
    "persons guest guests night nights adult adults children kids room rooms seat seats ticket "
    "tickets page pages word words line lines row rows item items step steps core cores thread "
    "threads GPU GPUs CPU CPUs message messages calories kcal x × s h m"
)
_UNITS_TRIE = rf"per\s?cent|{_trie(set(_UNIT_WORDS.split()))}"
_NUMBER_WITH_UNIT = (
    rf"[-+]?\d+(?:[.,]\d+)*(?:\s?[kKM](?=\s?(?:tokens?|users?|people|messages?|rows?)\b))?"
    rf"\s?(?:{_UNITS})(?![\w/])"
)
_NUMBER_OTHER = (
    r"v\d+(?:\.\d+)+(?:-[\w.]+)?|\d+\.\d+\.\d+(?:\.\d+)?(?:-[\w.]+)?"  # versions, IPs
    r"|\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d{4,}(?:\.\d+)?"  # large figures
)
_NUMBER = re.compile(rf"(?<![\w.])(?:{_NUMBER_WITH_UNIT}|{_NUMBER_OTHER})(?![\w])")
# `_NUMBER`, its digits possessive (a unit cannot follow a digit, a comma or a point, so
# giving digits back never helps), and without its first alternative.
_NUMBER_WITH_UNIT_FAST = _NUMBER_WITH_UNIT.replace(
    r"\d+(?:[.,]\d+)*", r"\d++(?:[.,]\d++)*+"
).replace(_UNITS, _UNITS_TRIE)
_NUMBER_FAST = re.compile(rf"(?<![\w.])(?:{_NUMBER_WITH_UNIT_FAST}|{_NUMBER_OTHER})(?![\w])")
_NUMBER_NO_UNIT = re.compile(rf"(?<![\w.])(?:{_NUMBER_OTHER})(?![\w])")
_NUMBER_CHAIN = re.compile(r"\d++(?:[.,]\d++)*+")
_NUMBER_UNIT_AFTER = re.compile(
    rf"(?:\s?[kKM](?=\s?(?:tokens?|users?|people|messages?|rows?)\b))?\s?(?:{_UNITS_TRIE})(?![\w/])"
)
_NUMBER_START = re.compile(r"(?<![\w.])[-+v\d]")
# Eight or more numbers joined by commas and points (a CSV row): from each of them
# `_NUMBER` would read to the end of the row.
_LONG_NUMBER_CHAIN = re.compile(r",\d+(?:[.,]\d+){7}")
_BACKTICKED = re.compile(rf"`([^`\n]{{1,{MAX_BACKTICKED_CHARS}}})`")
_IDENTIFIER_CALL = r"[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*\(\)"  # calls: main(), os.replace()
_IDENTIFIER_OTHER = (
    r"[a-z_]\w*(?:\.[a-z_]\w*){2,}"  # dotted paths: app.core.models
    r"|_*[A-Za-z][A-Za-z0-9]*(?:_+[A-Za-z0-9]+)+_*"  # snake_case, CONSTANT_CASE
    r"|__[a-z]\w*__"  # __init__
    r"|[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+"  # camelCase
    r"|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+[A-Za-z0-9]*"  # PascalCase
)
_IDENTIFIER = re.compile(rf"(?<![\w$@])(?:{_IDENTIFIER_CALL}|{_IDENTIFIER_OTHER})(?![\w])")
_IDENTIFIER_NO_CALL = re.compile(rf"(?<![\w$@])(?:{_IDENTIFIER_OTHER})(?![\w])")
# A stretch an identifier cannot cross: word characters, a point before a name, and "()"
# where a call can end (not before a word character).
_IDENTIFIER_STRETCH = re.compile(r"(?:\w|\.(?=[A-Za-z_]))+(?:\(\)(?!\w))?")
_LOWER_OR_DIGIT = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
# For camelCase and PascalCase: a lower-case letter or digit ("a") before a capital ("A").
_CAMEL_CLASSES = bytes(
    ord("A") if "A" <= chr(byte) <= "Z" else ord("a") if chr(byte) in _LOWER_OR_DIGIT else 32
    for byte in range(256)
)
_TRAILING_URL_PUNCTUATION = ".,;:!?*_'\""


def _first_char_scan(pattern: re.Pattern[str], first: str) -> re.Pattern[str]:
    """`pattern` (in group 1) behind a character class of what it can start with: re scans
    for such a class quickly and tries the pattern only there."""
    return re.compile(rf"(?-i:[{first}])(?<=(?=({pattern.pattern}))(?s:.))", pattern.flags)


_NUMBER_SCAN = _first_char_scan(_NUMBER_FAST, r"\-+v\d")
# A date begins with a digit, a weekday's or a month's name.
_DATE_SCAN = _first_char_scan(_DATE, r"\dJFMASONDTW")


Span = tuple[int, int]


def _matches_at(pattern: re.Pattern[str], text: str, starts: Iterable[int]) -> Iterator[Span]:
    """The spans of `pattern.finditer(text)` for a pattern that can only match at `starts`."""
    last = 0
    for start in starts:
        if start < last:
            continue
        match = pattern.match(text, start)
        if match is not None:
            yield match.span()
            last = match.end()


def _scan(scan: re.Pattern[str], text: str) -> Iterator[Span]:
    """The spans of the pattern in group 1 of `scan` (see `_first_char_scan`)."""
    position = 0
    while True:
        found = scan.search(text, position)
        if found is None:
            return
        yield found.span(1)
        position = found.end(1)


def _find_urls(text: str) -> Iterator[Span]:
    if "http" in text or "www." in text:
        yield from _matches_at(_URL, text, _positions(text, ("http", "www.")))


def _find_emails(text: str) -> Iterator[Span]:
    """`_EMAIL.finditer` from each "@": the address is the run before it (from its first
    word boundary) if a domain follows; read once, not from every boundary in the run."""
    last = 0
    at = text.find("@")
    while at != -1:
        if at > last and text[at - 1] in _EMAIL_LOCAL and _EMAIL_DOMAIN.match(text, at + 1):
            start = at - 1
            while start > last and text[start - 1] in _EMAIL_LOCAL:
                start -= 1
            for position in range(start, at):
                before = position > 0 and _is_word(text[position - 1])
                if before != _is_word(text[position]):
                    match = _EMAIL.match(text, position)
                    if match is not None:
                        yield match.span()
                        last = match.end()
                    break
        at = text.find("@", max(at + 1, last))


def _find_files(text: str) -> Iterator[Span]:
    if ":\\" in text:  # a Windows path may hold spaces
        yield from (match.span() for match in _FILE.finditer(text))
        return
    # Otherwise a file name holds no space, and a "/" or a "." before an extension: read
    # only the stretches between spaces around those.
    features = _positions(text, "/")
    if "." in text:
        features += (point.start() for point in _EXTENSION_POINT.finditer(text))
        features.sort()
    yield from _in_stretches(_FILE, text, features)


def _in_stretches(pattern: re.Pattern[str], text: str, features: Sequence[int]) -> Iterator[Span]:
    """The spans of `pattern.finditer(text)` for a pattern whose matches hold no space and
    one of `features`: read between the spaces around each feature."""
    end = 0
    for feature in features:
        if feature < end:
            continue
        start = text.rfind(" ", 0, feature) + 1
        end = text.find(" ", feature)
        if end == -1:
            end = len(text)
        yield from (match.span() for match in pattern.finditer(text, start, end))


def _find_money(text: str) -> Iterator[Span]:
    """`_MONEY.finditer`, tried only at currency symbols and at the amounts before a
    currency's code or name (not at every number: a number is money only next to one)."""
    if not _holds_any(text, _CURRENCY_MARKS):
        return
    starts: list[int] = []
    for symbol in "$€£¥₹":
        if symbol in text:
            for position in _positions(text, (symbol,)):
                starts.append(position)
                if symbol == "$":
                    starts += (position - 1, position - 2)
    for word in _CURRENCY_WORDS:
        if word in text:
            for position in _positions(text, (word,)):
                starts += _amount_before(text, position)
    if not starts:
        return
    starts.sort()
    yield from _matches_at(_MONEY, text, (start for start in starts if start >= 0))


def _amount_before(text: str, position: int) -> list[int]:
    """The digits an amount may start at when it ends within four characters (a space,
    "k", "bn") before `position`."""
    end = position
    while end > max(0, position - 5) and not text[end - 1].isdecimal():
        end -= 1
    if end == 0 or not text[end - 1].isdecimal():
        return []
    start = end
    while start > 0 and (text[start - 1].isdecimal() or text[start - 1] in ".,"):
        start -= 1
    return [index for index in range(start, end) if text[index].isdecimal()]


def _find_dates(text: str) -> Iterator[Span]:
    return _scan(_DATE_SCAN, text)


def _find_numbers(text: str) -> Iterator[Span]:
    if _LONG_NUMBER_CHAIN.search(text) is None:
        yield from _scan(_NUMBER_SCAN, text)
        return
    # Numbers joined by commas: whether a unit follows is the same from each of them,
    # so it is read once per chain.
    last = 0
    chain_start, chain_end, unit_after = -1, -1, False
    for start_match in _NUMBER_START.finditer(text):
        start = start_match.start()
        if start < last:
            continue
        digits = start + 1 if text[start] in "-+" else start
        if text[start] == "v" or not text[digits : digits + 1].isdecimal():
            match = _NUMBER.match(text, start)
        else:
            if not chain_start <= digits < chain_end:
                chain = _NUMBER_CHAIN.match(text, digits)
                assert chain is not None
                chain_start, chain_end = chain.span()
                unit_after = _NUMBER_UNIT_AFTER.match(text, chain_end) is not None
            match = (_NUMBER_FAST if unit_after else _NUMBER_NO_UNIT).match(text, start)
        if match is not None:
            yield match.span()
            last = match.end()


def _find_backticked(text: str) -> Iterator[Span]:
    if "`" in text:
        yield from (match.span() for match in _BACKTICKED.finditer(text))


def _find_identifiers(text: str) -> Iterator[Span]:
    """`_IDENTIFIER.finditer`, read only around what an identifier holds ("_", "()", a
    point before a name, a lower-case letter or digit before a capital), one stretch at a
    time (a call is tried only in a stretch that ends with "()")."""
    features = _positions(text, ("_", "()"))
    if "." in text:
        features += (point.start() for point in _POINT_BEFORE_NAME.finditer(text))
    camel = _byte_classes(text, _CAMEL_CLASSES)
    position = camel.find(b"aA")
    while position != -1:
        features.append(position)
        position = camel.find(b"aA", position + 1)
    if not features:
        return
    features.sort()
    end = 0
    for feature in features:
        if feature < end:
            continue
        start = text.rfind(" ", 0, feature) + 1
        end = text.find(" ", feature)
        if end == -1:
            end = len(text)
        if text.find("()", start, end) == -1:
            # No call here: the rest needs no stretches (and reads each once).
            yield from (match.span() for match in _IDENTIFIER_NO_CALL.finditer(text, start, end))
            continue
        for stretch in _IDENTIFIER_STRETCH.finditer(text, start, end):
            pattern = _IDENTIFIER if stretch.group().endswith("()") else _IDENTIFIER_NO_CALL
            yield from (match.span() for match in pattern.finditer(text, *stretch.span()))


_POINT_BEFORE_NAME = re.compile(r"\.[A-Za-z_]")

# In prose every kind is looked for; in code blocks only these (identifiers there are
# too many to be facts, and numbers there are mostly literals).
_PROSE_PATTERNS: tuple[tuple[EntityKind, re.Pattern[str]], ...] = (
    ("url", _URL),
    ("email", _EMAIL),
    ("file", _FILE),
    ("money", _MONEY),
    ("date", _DATE),
    ("number", _NUMBER),
    ("identifier", _BACKTICKED),
    ("identifier", _IDENTIFIER),
)
_CODE_PATTERNS = _PROSE_PATTERNS[:3]
_CASE_SENSITIVE_KINDS = frozenset({"identifier", "file", "url"})
# What finds each pattern's matches: the same spans as its `finditer`, quicker.
_FINDERS: dict[re.Pattern[str], Callable[[str], Iterator[Span]]] = {
    _URL: _find_urls,
    _EMAIL: _find_emails,
    _FILE: _find_files,
    _MONEY: _find_money,
    _DATE: _find_dates,
    _NUMBER: _find_numbers,
    _BACKTICKED: _find_backticked,
    _IDENTIFIER: _find_identifiers,
}


def _entities(
    text: str, patterns: Sequence[tuple[EntityKind, re.Pattern[str]]]
) -> Iterator[tuple[EntityKind, str]]:
    """Every entity of `text`, in the order of `_entities_in` over the whole, read in
    pieces and without the runs longer than MAX_WORD_CHARS."""
    if len(text) <= _PIECE_CHARS:
        yield from _entities_in(text, patterns)
        return
    by_pattern: list[list[tuple[EntityKind, str]]] = [[] for _ in patterns]
    start = 0
    for run_start, run_end in [*_long_runs(text, MAX_WORD_CHARS), (len(text), len(text))]:
        segment = text[start:run_start]
        for piece_start, piece_end in _pieces(segment):
            for index, found in _entities_by_pattern(segment[piece_start:piece_end], patterns):
                by_pattern[index].append(found)
        start = run_end
    for entities in by_pattern:
        yield from entities


def _entities_in(
    text: str, patterns: Sequence[tuple[EntityKind, re.Pattern[str]]]
) -> Iterator[tuple[EntityKind, str]]:
    """Every entity of `text`; each pattern sees the text with earlier finds blanked out,
    so a URL's path is not also a file name, nor a date's year a number."""
    for _, found in _entities_by_pattern(text, patterns):
        yield found


def _entities_by_pattern(
    text: str, patterns: Sequence[tuple[EntityKind, re.Pattern[str]]]
) -> list[tuple[int, tuple[EntityKind, str]]]:
    entities: list[tuple[int, tuple[EntityKind, str]]] = []
    classes = _byte_classes(text, _ENTITY_CLASSES)
    for index, (kind, pattern) in enumerate(patterns):
        if not _may_hold(pattern, text, classes):
            continue
        found: list[tuple[int, int]] = []
        backticked = pattern is _BACKTICKED
        for start, end in _FINDERS[pattern](text):
            value = text[start + 1 : end - 1] if backticked else text[start:end]
            if kind == "url":
                value = value.rstrip(_TRAILING_URL_PUNCTUATION)
            if " " in value or not value.isprintable():  # else no whitespace to normalise
                value = _normalise(value)
            if backticked:
                value = value.strip()
            # Cut short by a redaction ("…?token=[redacted]"): half a fact is no fact.
            touches_secret = "[redacted" in value or text.startswith(REDACTED, end)
            if not value or touches_secret or _BLANK in value:
                continue
            if len(value) > MAX_ENTITY_CHARS:
                continue
            found.append((start, end))
            entities.append((index, (kind, value)))
        if found:
            text = _blank(text, found)
    return entities


# Characters by what the entity patterns need: a digit ("0"; and "?" for any character
# beyond ASCII, which may be a digit or a currency sign), a letter ("a", "A"), or one of
# the marks below; anything else is a space.
_ENTITY_CLASSES = bytes(
    ord("0")
    if "0" <= chr(byte) <= "9"
    else ord("a")
    if "a" <= chr(byte) <= "z"
    else ord("A")
    if "A" <= chr(byte) <= "Z"
    else byte
    if chr(byte) in "?_/.@`$():\\"
    else 32
    for byte in range(256)
)


def _may_hold(pattern: re.Pattern[str], text: str, classes: bytes) -> bool:
    """Whether `pattern` can match in `text` at all, by what each kind needs (`classes`:
    `text` as `_ENTITY_CLASSES`)."""
    if pattern is _URL:
        return "http" in text or "www." in text
    if pattern is _EMAIL:
        return b"@" in classes
    if pattern is _FILE:
        return b"/" in classes or b"." in classes or b":\\" in classes
    digits = b"0" in classes or b"?" in classes
    if pattern is _MONEY:
        return digits and (b"$" in classes or b"?" in classes or _holds_any(text, _CURRENCY_WORDS))
    if pattern is _DATE or pattern is _NUMBER:
        return digits
    if pattern is _BACKTICKED:
        return b"`" in classes
    return (
        b"_" in classes
        or b"()" in classes
        or b"." in classes
        or b"aA" in classes
        or b"0A" in classes
    )


# What replaces a found entity: neither space nor word, so no later pattern reaches across.
_BLANK = "\x00"


def _blank(text: str, spans: Sequence[tuple[int, int]]) -> str:
    pieces: list[str] = []
    last = 0
    for start, end in spans:
        pieces.append(text[last:start])
        pieces.append(_BLANK * (end - start))
        last = end
    pieces.append(text[last:])
    return "".join(pieces)


# --- gathering -------------------------------------------------------------------


class _Found(NamedTuple, Generic[T]):
    """One fact gathered: its value, where and how often it was seen, and the seqs of the
    most recent messages it came from."""

    value: T
    first: int
    last: int
    times: int
    source_seqs: tuple[int, ...]


class _Gatherer(Generic[T]):
    """Collects facts under a de-duplication key, remembering order and frequency.

    The first wording seen is the one kept. Each fact is a plain tuple of strings and
    numbers, which the garbage collector stops tracking: thousands of them must not make
    its full collections (which hold the GIL) longer.
    """

    def __init__(self) -> None:
        # key -> (value, first index, last index, times seen, the largest seqs, ascending)
        self.items: dict[tuple[str, ...], tuple[T, int, int, int, tuple[int, ...]]] = {}

    def add(self, key: tuple[str, ...], value: T, index: int, seq: int) -> None:
        found = self.items.get(key)
        if found is None:
            self.items[key] = (value, index, index, 1, (seq,))
            return
        seqs = found[4]
        if seq not in seqs and (len(seqs) < MAX_SOURCE_SEQS or seq > seqs[0]):
            at = bisect.bisect(seqs, seq)
            seqs = (*seqs[:at], seq, *seqs[at:])[-MAX_SOURCE_SEQS:]
        self.items[key] = (found[0], found[1], index, found[3] + 1, seqs)

    def most_recent(self, limit: int) -> list[_Found[T]]:
        """Up to `limit` items, the most recently seen, in order of first mention."""
        chosen = sorted(self.items.values(), key=lambda found: found[2])[-limit:]
        return [_Found(*found) for found in sorted(chosen, key=lambda found: found[1])]

    def most_frequent(self, limit: int) -> list[_Found[T]]:
        """Up to `limit` items, the most frequent (ties: most recent), in order of first mention."""
        chosen = sorted(self.items.values(), key=lambda found: (-found[3], -found[2]))
        return [_Found(*found) for found in sorted(chosen[:limit], key=lambda found: found[1])]


def _fact_key(text: str) -> tuple[str, ...]:
    return (_normalise(text).casefold().rstrip(".!?"),)


def extract_facets(messages: Sequence[Message]) -> Facets:
    """The rule-based facets of `messages` (oldest first); see the module notes."""
    decisions: _Gatherer[str] = _Gatherer()
    actions: _Gatherer[tuple[str | None, str, str | None]] = _Gatherer()
    entities: _Gatherer[tuple[EntityKind, str]] = _Gatherer()
    questions: list[_Question] = []
    decision_sentences: list[_Decision] = []
    last_index_of_role: dict[Role, int] = {}
    index = 0

    for message in messages:
        content = redact_secrets(message.content)
        if not content or content.isspace():
            continue
        prose, code = _split_blocks(content)
        for line in code:
            todo = _CODE_TODO.search(line) if "TODO" in line or "FIXME" in line else None
            if todo:
                owner = todo.group(1).strip() if todo.group(1) else None
                _add_action(actions, (owner, todo.group(2).rstrip(" */->")), index, message.seq)
        text = "\n".join(prose)
        by_user = message.role is Role.USER
        spans = _sentence_spans(prose)
        folded = _fold(text) if spans else ""
        for start, end in spans:
            index += 1
            if end - start > MAX_SENTENCE_CHARS:
                continue
            sentence_text = text[start:end]
            sentence_folded = folded[start:end]
            if _is_question(sentence_text):
                # "Can you … by Friday?" asks for work rather than an answer.
                asks = _asks(sentence_folded)
                request = _request_with_due(sentence_text, asks, message.role) if asks else None
                if request is not None:
                    _add_action(actions, request, index, message.seq)
                elif len(sentence_text.split()) >= 3:
                    questions.append((sentence_text, message.seq, by_user, index))
                continue
            if _holds_any(sentence_folded, _OPEN_WORDS):
                opens = _positions(sentence_folded, _open_starts(sentence_folded), start)
                if _search_at(_OPEN_MARKER, text, opens, end):
                    questions.append((sentence_text, message.seq, by_user, index))
                    continue
            decides = _positions(sentence_folded, _decision_starts(sentence_folded), start)
            if decides and _is_decision(text, start, end, decides):
                decisions.add(_fact_key(sentence_text), _clip(sentence_text), index, message.seq)
                decision_sentences.append((sentence_text, index))
            action = _action_in(text, sentence_folded, start, end, message.role)
            if action is not None:
                _add_action(actions, action, index, message.seq)
        for kind, value in _entities(text, _PROSE_PATTERNS):
            entities.add(_entity_key(kind, value), (kind, value), index, message.seq)
        if code:
            for kind, value in _entities("\n".join(code), _CODE_PATTERNS):
                entities.add(_entity_key(kind, value), (kind, value), index, message.seq)
        index += 1
        last_index_of_role[message.role] = index

    open_questions: _Gatherer[str] = _Gatherer()
    resolutions = _Resolutions(decision_sentences)
    for text, seq, by_user, index in questions:
        if _is_open(text, by_user, index, last_index_of_role, resolutions):
            open_questions.add(_fact_key(text), _clip(text), index, seq)

    return Facets(
        decisions=_facts(decisions),
        action_items=tuple(
            ActionItem(
                owner=found.value[0],
                task=found.value[1],
                due=found.value[2],
                sources=list(found.source_seqs),
            )
            for found in actions.most_recent(MAX_FACTS)
        ),
        open_questions=_facts(open_questions),
        entities=tuple(
            Entity(kind=found.value[0], text=found.value[1], sources=found.source_seqs)
            for found in entities.most_frequent(MAX_ENTITIES)
        ),
    )


def _add_action(
    actions: _Gatherer[tuple[str | None, str, str | None]],
    action: tuple[str | None, str],
    index: int,
    seq: int,
) -> None:
    owner, raw_task = action
    task, due = _split_due(raw_task)
    if task:
        actions.add(_action_key(owner, task, due), (owner, task, due), index, seq)


def _is_open(
    text: str,
    by_user: bool,
    index: int,
    last_index_of_role: dict[Role, int],
    resolutions: _Resolutions,
) -> bool:
    other = Role.ASSISTANT if by_user else Role.USER
    answered = last_index_of_role.get(other, -1) > index
    folded = _fold(text)
    marked = _is_marked_open(text, folded)
    deliberates = _search_at(_DELIBERATION, text, _word_starts(folded, _DELIBERATES)) is not None
    if answered and not (marked or deliberates):
        return False
    return not resolutions.settled(text, index)


def _action_key(owner: str | None, task: str, due: str | None) -> tuple[str, ...]:
    return ((owner or "").casefold(), *_fact_key(task), (due or "").casefold())


def _entity_key(kind: str, value: str) -> tuple[str, ...]:
    return (kind, value if kind in _CASE_SENSITIVE_KINDS else value.casefold())


def _facts(gatherer: _Gatherer[str]) -> tuple[SourcedPoint, ...]:
    return tuple(
        SourcedPoint(text=found.value, sources=list(found.source_seqs))
        for found in gatherer.most_recent(MAX_FACTS)
    )


def hard_facts(facets: Facets) -> set[str]:
    """The verbatim strings a summary must keep (identifiers, numbers, dates, URLs,
    file names, amounts, e-mails): the retention check adds any the LLM's draft lacks."""
    return {entity.text for entity in facets.entities if entity.kind in HARD_FACT_KINDS}


# What `entity_spans` can look for, and how each is found (as `extract_facets` finds it).
SpannedKind = Literal["file", "url", "number", "money", "date"]
_SPAN_FINDERS: dict[SpannedKind, Callable[[str], Iterator[Span]]] = {
    "file": _find_files,
    "url": _find_urls,
    "number": _find_numbers,
    "money": _find_money,
    "date": _find_dates,
}


def entity_spans(text: str, kind: SpannedKind) -> Iterator[Span]:
    """Where `text` holds entities of `kind`, in order, as `extract_facets` finds them
    (without its redaction and de-duplication): for a caller that needs only where."""
    return _SPAN_FINDERS[kind](text)
