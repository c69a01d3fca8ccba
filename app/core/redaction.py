"""Secrets out of text: API keys, tokens, passwords and private keys become `[redacted]`.

One redactor for everything a person or Claude may read back: extraction runs every
message through `redact_secrets` before reading it, so no summary or fact carries a
secret (DESIGN §6), and the log filter (app.secrets.redact) runs every record through
it, after the literal keys the key store registered. Labels stay ("password:
[redacted]"), so a summary can still say a password was shared; ordinary prose is left
alone. Each pattern is tried only where its literals are, a piece at a time
(app.core.text_scan says why).
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Iterable

from app.core import text_scan as scan
from app.core.text_scan import (
    byte_classes,
    class_table,
    cut_pieces,
    extend_run,
    fold,
    holds_any,
    positions,
)

REDACTED = "[redacted]"

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
    r"[\"']?\s*[:=]\s*)(?![\"']?\[redacted\])"  # a value redacted already, quoted or not
    r"(?:\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|[^\s,;]+)",
    re.IGNORECASE,
)
# Folded literals every match of the pattern starts with, so it is tried only there.
_PASSWORD_LABELS = ("pass", "pwd", "pin")
_KEY_LABELS = ("api", "secret", "access", "auth", "refresh", "client", "private", "token")
_QUERY_NAMES = ("token", "key", "secret", "pass", "sig", "auth")
_LONG_TOKEN = re.compile(r"(?<![A-Za-z0-9_\-])[A-Za-z0-9_\-]{32,}(?![A-Za-z0-9_\-])")
_TOKEN_CLASSES = class_table(
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
    for start in range(0, len(classes), scan.WINDOW_CHARS):
        switches += _CLASS_RUN.subn(b"", classes[start : start + scan.WINDOW_CHARS])[1] - 1
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
    for window in range(0, len(token), scan.WINDOW_CHARS):
        for run in _LOWERCASE_RUN.finditer(
            token, window, min(len(token), window + scan.WINDOW_CHARS)
        ):
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
        end = extend_run(_BEARER_TOKEN_RUN, text, end)
    return extend_run(_EQUALS_RUN, text, end)


def redact_secrets(text: str) -> str:
    """`text` with API keys, tokens, passwords and private keys replaced by `[redacted]`.

    Labels stay ("password: [redacted]"), so a summary can still say a password
    was shared. Ordinary prose is left alone.
    """
    if "-----BEGIN" in text:
        text = _redact_private_keys(text)
    if len(text) <= scan.PIECE_CHARS:
        return _redact_piece(text)
    return "".join(_redact_piece(text[start:end]) for start, end in cut_pieces(text))


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
    folded = fold(text)
    if "://" in text:
        text = _sub_at(_URL_CREDENTIALS, text, positions(text, ("://",), 3), rf"\g<1>:{REDACTED}@")
    for pattern, (needles, shift), run in zip(
        _PREFIXED_SECRETS, _PREFIXES, _PREFIX_RUNS, strict=True
    ):
        if holds_any(text, needles):
            if len(text) <= scan.WINDOW_CHARS:
                text = pattern.sub(REDACTED, text)
            else:
                extend = functools.partial(extend_run, run) if run.pattern else None
                text = _sub_at(pattern, text, positions(text, needles, shift), REDACTED, extend)
    if "bearer" in folded:
        text = _sub_at(
            _BEARER, text, positions(fold(text), ("bearer",)), _redact_bearer, _extend_bearer
        )
    if "x-api-key" in folded:
        text = _sub_at(
            _API_KEY_HEADER,
            text,
            positions(fold(text), ("x-api-key",)),
            rf"\g<1>{REDACTED}",
            _EXTEND_HEADER_VALUE,
        )
    if "=" in text and ("?" in text or "&" in text) and holds_any(folded, _QUERY_NAMES):
        text = _sub_at(
            _QUERY_SECRET,
            text,
            positions(text, ("?", "&")),
            rf"\g<1>{REDACTED}",
            _EXTEND_QUERY_VALUE,
        )
    for assignment, labels in (
        (_PASSWORD_ASSIGNMENT, _PASSWORD_LABELS),
        (_KEY_ASSIGNMENT, _KEY_LABELS),
    ):
        if holds_any(folded, labels):
            text = _sub_at(
                assignment,
                text,
                positions(fold(text), labels),
                rf"\g<1>{REDACTED}",
                _EXTEND_VALUE,
            )
    return _redact_long_tokens(text)


# How each value's last run goes on (see `_sub_at`).
_EXTEND_VALUE = functools.partial(extend_run, re.compile(r"[^\s,;]*"))
_EXTEND_HEADER_VALUE = functools.partial(extend_run, re.compile(r"[^\s\"',;}\])]*"))
_EXTEND_QUERY_VALUE = functools.partial(extend_run, re.compile(r"[^&\s#]*"))
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
        stop = min(size, start + scan.WINDOW_CHARS)
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
        end = extend_run(_JWT_RUN, text, position)
        if end - position < shortest or (point and not text.startswith(".", end)):
            return None
        position = end + point
    return position, REDACTED


def _long_url_credentials(text: str, start: int) -> tuple[int, str] | None:
    """`_URL_CREDENTIALS` at `start`, read in windows: "user:password@". (Its end, its
    replacement.)"""
    user_end = extend_run(_URL_USER_RUN, text, start)
    if user_end == start or not text.startswith(":", user_end):
        return None
    if text.startswith(REDACTED, user_end + 1):
        return None
    password_end = extend_run(_URL_PASSWORD_RUN, text, user_end + 1)
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
    classes = byte_classes(text, _TOKEN_CLASSES)
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
