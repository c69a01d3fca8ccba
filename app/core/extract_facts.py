"""The fact ledger's rules: people's names, codes and ids, clock times, and the ledger of a
stretch of messages (issue 12; DESIGN §2 `fact`, §3).

`extract_facets` (app.core.extract) already finds amounts, numbers with units, dates, file
names, URLs, e-mails and identifiers; it does not know names, letter-and-digit codes
(`AX-7731` gave only `7731`) or clock times. This module adds those three, and
`ledger_facts` turns both into `LedgerFact`s — kind, verbatim value, the message it was
first said in, and that message's day — de-duplicated, oldest first.

Precision over recall, as in `extract`: a wrong "name" in the ledger costs tokens of
every later request. So:

- A name is one to three capitalised words after a title ("Dr. Okafor", "Frau Keller",
  "Mme Durand", "Sra. Ortega") or a naming verb ("called Priya", "heißt Jonas",
  "s'appelle Claire", "se llama Lucía"); or two or three capitalised words in a row
  ("Maria Schneider", "Jean-Luc Picard") that do not start a sentence, follow no
  article (German capitalises every noun: "die Deutsche Bahn" is not a person) and hold
  no common word (months, weekdays, pronouns, greetings); or one capitalised word after
  "with / ask / tell / thanks" and their German, French and Spanish twins ("mit Jonas",
  "avec Claire", "con Lucía") that does not look like a German noun. A capitalised word
  that starts a sentence is never taken on its own.
- A code holds a letter and a digit, joined or with "-", "_", "/", "#" ("AX-7731",
  "INV-2024-0042", "B12C", "PO#4471"), is taken whole, and has a capital letter or a
  joiner; ordinals ("3rd", "2e"), numbers with units ("10kg", "5GB"), times ("14h30")
  and versions ("v1.2") are not codes.
- A clock time is "14:30", "9:05 am", "2 pm", "2pm", "14h30", "14h", "14.30 Uhr",
  "14 Uhr", "18 h" (minutes 00–59, hours 0–23, or 1–12 with am/pm).

Secrets are redacted before anything is read (`redact_secrets`), as in `extract`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from datetime import date, datetime

from app.core.extract import Facets, extract_facets
from app.core.extract_scout import lowered_for_scouts, scouted
from app.core.models import Message, Role
from app.core.redaction import REDACTED, redact_secrets
from app.core.summary import FactKind, LedgerFact, unique_facts

# A stretch gives at most this many ledger entries of each new kind (the first said).
MAX_FACTS_PER_KIND = 40
MAX_VALUE_CHARS = 120


def _word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_UPPER = "A-ZÀ-ÖØ-ÞĀ-ſ"
_LOWER = "a-zß-öø-ÿ"
# A capitalised word: "Maria", "O'Brien", "Jean-Luc", "Núñez".
_CAP_WORD = rf"[{_UPPER}][{_LOWER}]+(?:['’-][{_UPPER}]?[{_LOWER}]+)*"
_PARTICLE = r"(?:van der|van den|von der|van|von|de la|de los|del|de|da|di|du|le|la|ten|ter)"
_FULL_NAME = rf"{_CAP_WORD}(?:\s+(?:{_PARTICLE}\s+)?{_CAP_WORD}){{1,2}}"
_TITLES = (
    r"Mr|Mrs|Ms|Miss|Dr|Prof|Herrn|Herr|Frau|Hr|Fr|Mme|Mlle|M|Sr|Sra|Srta|Don|Doña|Dña|Señor|Señora"
)
_TITLED = re.compile(
    rf"\b(?:{_TITLES})\.?\s+({_CAP_WORD}(?:\s+{_CAP_WORD}){{0,2}})(?![\w'’-])(?!\.\w)"
)
_NAMING = re.compile(
    rf"(?:\b(?:named|called|name is|heißt|heisst|namens|s['’]appelle|nommée?|"
    rf"se llama|llamad[oa]|me llamo)\s+)({_CAP_WORD}(?:\s+{_CAP_WORD}){{0,2}})(?![\w'’-])(?!\.\w)"
)
_RUN = re.compile(rf"(?<![\w'’-]){_FULL_NAME}(?![\w'’-])")
_CUE_SINGLE = re.compile(
    rf"\b(?i:with|ask|asked|tell|told|thanks|thank|cc|ping|call|mit|avec|con|chez|"
    rf"para|pour|für|fragen?|demander?|preguntar?(?:le)?)\s+({_CAP_WORD})(?![\w'’-])(?!\s+[{_UPPER}])"
)
_ARTICLES = _word_set(
    "the a an this that der die das den dem des ein eine einen einem einer eines le la les "
    "l un une du des el los las un una unos unas al"
)
# Capitalised words that are not names (in any of the four languages), folded.
_NOT_NAME_WORDS = _word_set(
    """
    i i'm i'll i've i'd you we they he she it my our your their his her its me us them
    ich du er sie es wir ihr mein meine unser unsere je tu il elle nous vous ils elles
    yo tú él ella nosotros vosotros ellos ellas usted ustedes
    hi hello hey dear thanks thank yes no ok okay please sorry good great sure well
    hallo liebe lieber danke bitte ja nein gut bonjour salut merci oui non bien cher chère
    hola gracias sí bueno buenas querido querida
    january february march april may june july august september october november december
    januar februar märz mai juni juli oktober dezember janvier février mars avril juin
    juillet août septembre octobre novembre décembre enero febrero marzo abril mayo junio
    julio agosto septiembre octubre noviembre diciembre
    monday tuesday wednesday thursday friday saturday sunday montag dienstag mittwoch
    donnerstag freitag samstag sonntag lundi mardi mercredi jeudi vendredi samedi dimanche
    lunes martes miércoles jueves viernes sábado domingo
    today tomorrow yesterday heute morgen gestern aujourd'hui demain hier hoy mañana ayer
    the a an and or but if then so also this that these those there here what which who
    when where why how not all any some every each next last new old first final
    der die das und oder aber le la les et ou mais el la los las y o pero
    claude cairn anthropic api url pdf json csv html http https ok
    """
)
# German nouns end like this far more often than first names do ("mit Freunden").
_GERMAN_NOUN_ENDINGS = (
    "ung", "heit", "keit", "schaft", "tion", "ität", "ismus", "chen", "lein", "ment", "nis",
    "tum", "ern", "en",
)  # fmt: skip

_CODE = re.compile(
    r"(?<![\w\-/#.@])(?=[\w\-/#]*[A-Za-z])(?=[\w\-/#]*\d)"
    r"[A-Za-z0-9]+(?:[\-_/#][A-Za-z0-9]+)*(?![\w\-/#@]|\.\w)"
)
_ORDINAL = re.compile(r"\d+(?:st|nd|rd|th|e|er|re|ème|eme|º|ª|o|a|te|ten)", re.IGNORECASE)
_WITH_UNIT = re.compile(
    r"[\d.,]+(?:k|m|g|kg|mg|km|cm|mm|ml|l|gb|mb|kb|tb|ghz|mhz|hz|kw|kwh|w|v|mah|px|pt|"
    r"fps|ms|s|h|min|hrs?|x|am|pm|p|i|k)",
    re.IGNORECASE,
)
_VERSION = re.compile(r"v\d+(?:[._]\d+)*", re.IGNORECASE)
_TIME_LIKE = re.compile(r"\d{1,2}h\d{0,2}", re.IGNORECASE)

_TIME = re.compile(
    r"(?<![\w:.])(?:"
    r"(?:[01]?\d|2[0-3]):[0-5]\d(?::[0-5]\d)?(?:\s?(?:[ap]m|[ap]\.m\.|Uhr|h)(?!\w))?"
    r"|(?:1[0-2]|0?[1-9])(?:[:.][0-5]\d)?\s?(?:[ap]m|[ap]\.m\.)(?!\w)"
    r"|(?:[01]?\d|2[0-3])h(?:[0-5]\d)?(?!\w)"
    r"|(?:[01]?\d|2[0-3])(?:[.:][0-5]\d)?\s(?:Uhr|h)(?!\w)"
    r")(?![:\d])",
    re.IGNORECASE,
)
# Where a clock time may start (`scouted`): a digit or two, then what follows one in each
# of `_TIME`'s forms — ":", ".", a space, "h", "am"/"pm" (a digit, not every character).
_TIME_SCOUT = re.compile(r"\d\d?[:.\shHaApP]")
_DIGITS = re.compile(r"\d+")
_SENTENCE_START = re.compile(r"(?:^|[.!?…:;]\s+|\n\s*[-*•>#\d.)\s]*|[\"“«¿¡(]\s*)$")

# Where a match of `_TITLED`, `_NAMING`, `_RUN` or `_CUE_SINGLE` may start: each pattern
# less the assertion it starts with (`\b`, a look-behind) — so that the regex engine
# skips to the characters a match can start with instead of trying every position — and
# `_CUE_SINGLE`'s words in lower case, looked for in the text lowered (`scouted`). A
# candidate the scout finds is then matched by the pattern itself: the same matches, at
# a third of the cost (a "who" question's 60 candidates cost ~7 ms of recall, issue 20).
# (Each scout is its pattern with that assertion taken off: tests/unit/core/test_extract_facts.py.)
_TITLED_SCOUT = re.compile(_TITLED.pattern.removeprefix(r"\b"))
_NAMING_SCOUT = re.compile(_NAMING.pattern.replace(r"(?:\b(?:", "(?:(?:", 1))
_RUN_SCOUT = re.compile(_RUN.pattern.removeprefix(r"(?<![\w'’-])"))
# A piece of each of `_NAMING`'s words (case as written): a text holding none of them
# has no match of it (most texts: ~10 µs of a 900-character text's ~40 were its search).
_NAMING_PIECES = ("name", "called", "hei", "appelle", "nomm", "llam")
_CUE_SCOUT = re.compile(
    r"(?:with|ask|asked|tell|told|thanks|thank|cc|ping|call|mit|avec|con|chez|"
    r"para|pour|für|fragen?|demander?|preguntar?(?:le)?)\s"
)


def find_names(text: str) -> list[str]:
    """People's (and places') names in `text`, verbatim, in order, without repeats."""
    found: list[tuple[int, str]] = []
    taken: list[tuple[int, int]] = []

    def add(start: int, end: int, value: str) -> None:
        if any(start < stop and begin < end for begin, stop in taken):
            return
        taken.append((start, end))
        found.append((start, value))

    for pattern, scout in ((_TITLED, _TITLED_SCOUT), (_NAMING, _NAMING_SCOUT)):
        if pattern is _NAMING and not any(piece in text for piece in _NAMING_PIECES):
            continue
        for match in scouted(pattern, scout, text):
            words = _strip_common(match.group(1).split())
            if words:
                start = match.start(0)
                value = match.group(0) if pattern is _TITLED else " ".join(words)
                if pattern is _TITLED:
                    value = value[: match.start(1) - start] + " ".join(words)
                add(start, match.end(1), _normal_space(value))
    for match in scouted(_RUN, _RUN_SCOUT, text):
        words = match.group(0).split()
        start = match.start()
        if _starts_sentence(text, start):
            # "Maria Schneider sends…": a first word could be any word; take the rest.
            first = words[0]
            words = words[1:]
            start += len(first) + 1
            if len([w for w in words if w[0].isupper()]) < 2:
                continue
        if _after_article(text, start):
            continue
        if any(word.casefold() in _NOT_NAME_WORDS for word in words):
            continue
        add(start, match.end(), _normal_space(" ".join(words)))
    lowered = lowered_for_scouts(text)
    cues = (
        _CUE_SINGLE.finditer(text)
        if lowered is None
        else scouted(_CUE_SINGLE, _CUE_SCOUT, text, lowered)
    )
    for match in cues:
        word = match.group(1)
        folded = word.casefold()
        if folded in _NOT_NAME_WORDS or folded.endswith(_GERMAN_NOUN_ENDINGS):
            continue
        add(match.start(1), match.end(1), word)
    return _unique(value for _, value in sorted(found))


def find_codes(text: str) -> list[str]:
    """Letter-and-digit codes and ids in `text`, whole ("AX-7731"), in order, no repeats."""
    codes: list[str] = []
    for match in _code_matches(text):
        value = match.group(0)
        if len(value) < 3 or len(value) > MAX_VALUE_CHARS:
            continue
        joined = any(mark in value for mark in "-_/#")
        if not joined and not any(char.isupper() for char in value):
            continue
        if not joined and (
            _ORDINAL.fullmatch(value) or _WITH_UNIT.fullmatch(value) or _TIME_LIKE.fullmatch(value)
        ):
            continue
        if _VERSION.fullmatch(value) or value.isdigit():
            continue
        if REDACTED.strip("[]") in value:
            continue
        codes.append(value)
    return _unique(codes)


def find_times(text: str) -> list[str]:
    """Clock times in `text`, verbatim ("14:30", "2 pm", "14h30", "14 Uhr"), no repeats."""
    times = scouted(_TIME, _TIME_SCOUT, text)
    return _unique(_normal_space(match.group(0)) for match in times)


def _code_matches(text: str) -> Iterator[re.Match[str]]:
    """`_CODE.finditer(text)`, the same matches, matched only where one may start: a
    code starts a run of the characters its look-behind refuses before it (`_IN_CODE`:
    none of them may come before a code), and that run holds a digit (its look-ahead
    asks for one): the start of each run around each of `text`'s digits, tried once.
    The pattern tried at every character took ~70 µs of a 900-character text."""
    tried = -1
    for digits in _DIGITS.finditer(text):
        start = digits.start()
        if start <= tried:
            continue  # in a run tried already, or in a code found
        while start and _in_code_run(text[start - 1]):
            start -= 1
        if start <= tried:
            continue
        match = _CODE.match(text, start)
        tried = match.end() if match is not None else digits.end()
        if match is not None:
            yield match


def _in_code_run(character: str) -> bool:
    """Whether `character` is one `_CODE`'s look-behind refuses before a code: a word
    character as the regex engine has it (`isalnum`, "_"), or "-", "/", "#", ".", "@"."""
    return character.isalnum() or character in "_-/#.@"


# An error message as programs print it: "ValueError: …", "error[E0425]: …", "fatal: …",
# "ERROR …", "Exception in thread …", a line of its own; or a quoted one with a code
# ("'ERR 0x80070057 parameter incorrect'"). Kept whole, word for word, up to this long.
MAX_ERROR_CHARS = 240
_ERROR_LINE = re.compile(
    r"^[ \t>]*((?:[A-Za-z_][\w.]*(?:Error|Exception)|error(?:\[[A-Z]?\d+\])?|fatal|FATAL|ERROR"
    r"|panic|Traceback \(most recent call last\))[:\s].{2,}?)\s*$",
    re.MULTILINE,
)
_QUOTED_ERROR = re.compile(
    r"['\"‘“]((?:ERR|ERROR|Error|error|E)[ _:-]?(?:0x[0-9A-Fa-f]+|\d{3,})[^'\"’”\n]{0,160})['\"’”]"
)


def find_errors(text: str) -> list[str]:
    """Error messages in `text`, word for word (a traceback's last line stands for it)."""
    found: list[str] = []
    lines = [m.group(1).strip() for m in _ERROR_LINE.finditer(text)]
    for line in lines:
        if not line.startswith("Traceback"):
            found.append(line[:MAX_ERROR_CHARS])
    found += [m.group(1).strip()[:MAX_ERROR_CHARS] for m in _QUOTED_ERROR.finditer(text)]
    return _unique(found)


def ledger_facts(
    messages: Sequence[Message],
    day_of: Callable[[datetime], date],
    facets: Facets | None = None,
) -> list[LedgerFact]:
    """The fact ledger of `messages` (any order): every hard fact the rules find, each
    with the first message it was said in and that message's day, oldest first.

    Names, codes and times come from this module; amounts, numbers, dates, file names,
    URLs, e-mails and identifiers from `extract_facets` (or `facets`, when they were
    already read from these messages), less any that is only a piece of a code or a
    time of the same message ("7731" of "AX-7731").
    """
    ordered = sorted(messages, key=lambda message: message.seq)
    by_seq = {message.seq: message for message in ordered}
    facts: list[LedgerFact] = []
    counts: dict[str, int] = {}
    wholes: dict[int, list[str]] = {}
    for message in ordered:
        text = redact_secrets(message.content)
        day = day_of(message.created_at)
        finders: tuple[tuple[FactKind, Callable[[str], list[str]]], ...] = (
            ("name", find_names),
            ("code", find_codes),
            ("time", find_times),
        )
        if message.role is Role.USER:  # what the user pasted, not Claude's explanation
            finders = (("error", find_errors), *finders)
        for kind, finder in finders:
            for value in finder(text):
                if counts.get(kind, 0) >= MAX_FACTS_PER_KIND:
                    break
                counts[kind] = counts.get(kind, 0) + 1
                wholes.setdefault(message.seq, []).append(value)
                facts.append(LedgerFact(kind=kind, value=value, seq=message.seq, day=day))
    if facets is None:
        facets = extract_facets(ordered)
    for entity in facets.entities:
        first = min(entity.sources, default=None)
        if first is None or first not in by_seq:
            continue
        if any(entity.text in whole for whole in wholes.get(first, ())):
            continue
        facts.append(
            LedgerFact(
                kind=entity.kind,
                value=entity.text[:MAX_VALUE_CHARS],
                seq=first,
                day=day_of(by_seq[first].created_at),
            )
        )
    facts.sort(key=lambda fact: fact.seq if fact.seq is not None else -1)
    return unique_facts(facts)


# --- helpers ---------------------------------------------------------------------------

_SPACES = re.compile(r"\s+")


def _normal_space(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


def _unique(values: Iterator[str] | Sequence[str]) -> list[str]:
    seen: set[str] = set()
    kept: list[str] = []
    for value in values:
        if value not in seen:
            seen.add(value)
            kept.append(value)
    return kept


def _strip_common(words: list[str]) -> list[str]:
    """`words` up to the first that is a common word (not part of a name)."""
    kept: list[str] = []
    for word in words:
        if word.casefold() in _NOT_NAME_WORDS:
            break
        kept.append(word)
    return kept


def _starts_sentence(text: str, start: int) -> bool:
    return _SENTENCE_START.search(text[max(0, start - 12) : start]) is not None or start == 0


def _after_article(text: str, start: int) -> bool:
    before = text[max(0, start - 12) : start].split()
    return bool(before) and before[-1].casefold().strip("'’") in _ARTICLES
