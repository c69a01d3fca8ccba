"""Entities, verbatim: file names, URLs, e-mail addresses, code identifiers, numbers
with units, money and dates, each found by a quick finder that gives the same spans as
its plain pattern (app.core.extract)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Literal

from app.core import text_scan as scan
from app.core.extract_text import normalise
from app.core.redaction import REDACTED
from app.core.text_scan import (
    MAX_BACKTICKED_CHARS,
    Span,
    byte_classes,
    cut_pieces,
    holds_any,
    is_word,
    long_runs,
    positions,
)

MAX_ENTITY_CHARS = 200
MAX_WORD_CHARS = 4_096

EntityKind = Literal["file", "url", "identifier", "number", "money", "date", "email"]

_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
    r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
)
WEEKDAY = (
    r"(?:Mon(?:day)?|Tue(?:s(?:day)?)?|Wed(?:nesday)?|Thu(?:r(?:s(?:day)?)?)?|Fri(?:day)?|"
    r"Sat(?:urday)?|Sun(?:day)?)"
)
ISO_DATE = r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?(?:Z|[+-]\d{2}:?\d{2})?)?"
NUMERIC_DATE = r"\d{1,2}/\d{1,2}/(?:\d{4}|\d{2})|\d{1,2}\.\d{1,2}\.\d{4}"
DAY_MONTH = (
    rf"(?:{WEEKDAY},?\s+)?\d{{1,2}}(?:st|nd|rd|th)?"
    r"(?:\s?[-–]\s?\d{1,2}(?:st|nd|rd|th)?)?"
    rf"\s+(?:of\s+)?{_MONTH}"
    r"(?:\.?,?\s+\d{4})?"
)
MONTH_DAY = rf"(?:{WEEKDAY},?\s+)?{_MONTH}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?"
_MONTH_YEAR = rf"{_MONTH}\s+\d{{4}}"

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
    rf"\b(?:{ISO_DATE}|{NUMERIC_DATE}|{DAY_MONTH}|{MONTH_DAY}|{_MONTH_YEAR})(?![\w])"
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


def find_urls(text: str) -> Iterator[Span]:
    if "http" in text or "www." in text:
        yield from _matches_at(_URL, text, positions(text, ("http", "www.")))


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
                before = position > 0 and is_word(text[position - 1])
                if before != is_word(text[position]):
                    match = _EMAIL.match(text, position)
                    if match is not None:
                        yield match.span()
                        last = match.end()
                    break
        at = text.find("@", max(at + 1, last))


def find_files(text: str) -> Iterator[Span]:
    if ":\\" in text:  # a Windows path may hold spaces
        yield from (match.span() for match in _FILE.finditer(text))
        return
    # Otherwise a file name holds no space, and a "/" or a "." before an extension: read
    # only the stretches between spaces around those.
    features = positions(text, "/")
    if "." in text:
        features += (point.start() for point in _EXTENSION_POINT.finditer(text))
        features.sort()
    yield from _in_stretches(_FILE, text, features)


def _stretches(text: str, features: Sequence[int]) -> Iterator[Span]:
    """The stretches between spaces that hold `features` (ascending), each once."""
    end = 0
    for feature in features:
        if feature < end:
            continue
        start = text.rfind(" ", 0, feature) + 1
        end = text.find(" ", feature)
        if end == -1:
            end = len(text)
        yield start, end


def _in_stretches(pattern: re.Pattern[str], text: str, features: Sequence[int]) -> Iterator[Span]:
    """The spans of `pattern.finditer(text)` for a pattern whose matches hold no space and
    one of `features`: read between the spaces around each feature."""
    for start, end in _stretches(text, features):
        yield from (match.span() for match in pattern.finditer(text, start, end))


def find_money(text: str) -> Iterator[Span]:
    """`_MONEY.finditer`, tried only at currency symbols and at the amounts before a
    currency's code or name (not at every number: a number is money only next to one)."""
    if not holds_any(text, _CURRENCY_MARKS):
        return
    starts: list[int] = []
    for symbol in "$€£¥₹":
        if symbol in text:
            for position in positions(text, (symbol,)):
                starts.append(position)
                if symbol == "$":
                    starts += (position - 1, position - 2)
    for word in _CURRENCY_WORDS:
        if word in text:
            for position in positions(text, (word,)):
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


def find_dates(text: str) -> Iterator[Span]:
    return _scan(_DATE_SCAN, text)


def find_numbers(text: str) -> Iterator[Span]:
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
    features = positions(text, ("_", "()"))
    if "." in text:
        features += (point.start() for point in _POINT_BEFORE_NAME.finditer(text))
    camel = byte_classes(text, _CAMEL_CLASSES)
    position = camel.find(b"aA")
    while position != -1:
        features.append(position)
        position = camel.find(b"aA", position + 1)
    if not features:
        return
    features.sort()
    for start, end in _stretches(text, features):
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
PROSE_PATTERNS: tuple[tuple[EntityKind, re.Pattern[str]], ...] = (
    ("url", _URL),
    ("email", _EMAIL),
    ("file", _FILE),
    ("money", _MONEY),
    ("date", _DATE),
    ("number", _NUMBER),
    ("identifier", _BACKTICKED),
    ("identifier", _IDENTIFIER),
)
CODE_PATTERNS = PROSE_PATTERNS[:3]
CASE_SENSITIVE_KINDS = frozenset({"identifier", "file", "url"})
# What finds each pattern's matches: the same spans as its `finditer`, quicker.
_FINDERS: dict[re.Pattern[str], Callable[[str], Iterator[Span]]] = {
    _URL: find_urls,
    _EMAIL: _find_emails,
    _FILE: find_files,
    _MONEY: find_money,
    _DATE: find_dates,
    _NUMBER: find_numbers,
    _BACKTICKED: _find_backticked,
    _IDENTIFIER: _find_identifiers,
}


def find_entities(
    text: str, patterns: Sequence[tuple[EntityKind, re.Pattern[str]]]
) -> Iterator[tuple[EntityKind, str]]:
    """Every entity of `text`, in the order of `_entities_in` over the whole, read in
    pieces and without the runs longer than MAX_WORD_CHARS."""
    if len(text) <= scan.PIECE_CHARS:
        yield from _entities_in(text, patterns)
        return
    by_pattern: list[list[tuple[EntityKind, str]]] = [[] for _ in patterns]
    start = 0
    for run_start, run_end in [*long_runs(text, MAX_WORD_CHARS), (len(text), len(text))]:
        segment = text[start:run_start]
        for piece_start, piece_end in cut_pieces(segment):
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
    classes = byte_classes(text, _ENTITY_CLASSES)
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
                value = normalise(value)
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
        return digits and (b"$" in classes or b"?" in classes or holds_any(text, _CURRENCY_WORDS))
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
