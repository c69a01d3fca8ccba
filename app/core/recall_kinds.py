"""What kind of fact a question asks for, and where a message holds one (issue 12).

"When is the tasting?" asks for a date or a time, "Who is the architect?" for a name,
"How much was the survey?" for an amount. Of the archived messages that share the
question's words, the one that also holds a fact of the asked kind is the likeliest to
be the one that answered it ("So the survey will be £356") rather than talk about the
same subject ("The cost of the survey tends to grow"): `rank_matches` gives it a bonus,
and a quote cut to fit is cut around that fact. The words that only say the kind
("name", "called", "what time", "cost") say little about which message is meant:
`salient_terms` lowers their weight (`is_cue`).

Rules only, deterministic and offline; facts are found by the fact ledger's own finders
(`extract_facts`, `extract.entity_spans`). English, and the question words of French,
German, Spanish, Italian, Portuguese and Dutch.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Collection
from typing import Literal

from app.core.extract_scout import first_scouted, lowered_for_scouts

AnswerKind = Literal["name", "code", "money", "quantity", "date", "time", "file", "url", "decision"]

_CUES: dict[str, frozenset[AnswerKind]] = {}


def _cues(kinds: tuple[AnswerKind, ...], words: str) -> None:
    for word in words.split():
        _CUES[word] = _CUES.get(word, frozenset()) | frozenset(kinds)


# Folded words (lower case, no accents) that say what kind of answer is wanted.
_cues(("name",), "who whom whose name qui wer quien chi quem nom nombre nome naam")
_cues(("name", "file"), "called named")
_cues(("date", "time"), "when quand wann cuando quando wanneer")
_cues(("date",), "date dates day datum fecha")
_cues(("time",), "time hour heure uhr hora tijd clock")
_cues(
    ("money",),
    "cost costs price priced fee fees pay paid charge charged quote quoted spend spent "
    "combien kostet kosten cuesta cuanto costa quanto custa kost prix preis precio prezzo prijs",
)
_cues(("quantity",), "size weigh weighs weight area length height distance capacity")
_cues(("url",), "link links url website site page online lien enlace")
_cues(("url", "file"), "where wo donde dove onde waar")
_cues(("file",), "file files document spreadsheet attachment fichier datei archivo bestand")
_cues(("code",), "number reference ref code serial registration numero nummer codigo codice")
_cues(
    ("decision",),
    "decide decided decision choose chose choice pick picked settle settled opt opted agree agreed",
)
# After "how": "how much" (an amount, or a quantity), "how many", "how long"…
_AFTER_HOW: dict[str, frozenset[AnswerKind]] = {"much": frozenset({"money", "quantity"})}
for _word in ("many", "big", "long", "far", "tall", "high", "heavy", "thick", "wide", "deep"):
    _AFTER_HOW[_word] = frozenset({"quantity"})
# "go with", "went for", "settle on"; and "which … did we …", "which … have I …": a choice made.
_CHOICE_PAIRS = frozenset(
    [(verb, word) for verb in ("go", "went", "gone", "settle") for word in ("with", "for", "on")]
)
_WHICH_DID = frozenset(
    [(verb, who) for verb in ("did", "have", "do", "had") for who in ("we", "i", "you", "they")]
)
_HOW = frozenset({"how", "combien", "wie", "cuanto", "cuantos", "quanto", "quantos", "hoeveel"})

_WORD = re.compile(r"[^\W_]+")
# A choice stated: permissive, since it only ranks ("we talked it over and chose …").
_DECISION = re.compile(
    r"\b(?:decided|decision|chose|chosen|picked|opted|settled|agreed|go(?:ing)? with|"
    r"went with|let'?s use|we'?ll use|booked)\b",
    re.IGNORECASE,
)
# Where a choice may be stated: `_DECISION`'s words, in lower case, looked for in the text
# lowered (`app.core.extract_scout`): the same first match without trying the pattern at
# each of the text's characters (~30 µs of a 600-character candidate, ~2 ms of a "which …
# did I choose" question's 60; issue 20).
_DECISION_SCOUT = re.compile(
    r"decided|decision|chose|chosen|picked|opted|settled|agreed|go(?:ing)? with|"
    r"went with|let'?s use|we'?ll use|booked"
)


# Of a longer message only its start and its end are read (as for its terms).
READ_CHARS = 1_000


def wanted_kinds(question: str, fold: Callable[[str], str]) -> frozenset[AnswerKind]:
    """The kinds of fact `question` asks for (empty when it says none); `fold` folds case
    and accents as the index does."""
    if len(question) > 2 * READ_CHARS:
        question = question[:READ_CHARS] + "\n" + question[-READ_CHARS:]
    words = _WORD.findall(fold(question))
    wanted: set[AnswerKind] = set()
    asks_which = "which" in words
    for word, following in itertools.pairwise([*words, ""]):
        wanted |= _CUES.get(word, frozenset())
        if word in _HOW:
            wanted |= _AFTER_HOW.get(following, frozenset())
        pair = (word, following)
        if pair in _CHOICE_PAIRS or (asks_which and pair in _WHICH_DID):
            wanted.add("decision")
    return frozenset(wanted)


def is_cue(word: str, before: str = "") -> bool:
    """Whether the folded `word` (after the folded word `before`) only says the answer's kind."""
    return word in _CUES or (before in _HOW and word in _AFTER_HOW)


def _first_found(text: str, values: list[str]) -> int | None:
    return text.find(values[0]) if values else None


def _first_decision(text: str) -> int | None:
    lowered = lowered_for_scouts(text)
    found = (
        _DECISION.search(text)
        if lowered is None
        else first_scouted(_DECISION, _DECISION_SCOUT, text, lowered)
    )
    return found.start() if found is not None else None


@functools.cache
def _finders() -> dict[AnswerKind, Callable[[str], int | None]]:
    """What finds each kind's first fact. The extraction machinery is imported on the
    first recall, not at start: its regex tables take ~30 ms to compile."""
    from app.core.extract import entity_spans
    from app.core.extract_facts import find_codes, find_names, find_times

    def first_span(text: str, kind: Literal["file", "url", "money", "date"]) -> int | None:
        span = next(entity_spans(text, kind), None)
        return span[0] if span is not None else None

    def first_quantity(text: str) -> int | None:
        """A number with its unit ("45 kg", "12.5 square metres"), not a bare figure."""
        for start, end in entity_spans(text, "number"):
            if not text[end - 1].isdigit():
                return start
        return None

    return {
        "name": lambda text: _first_found(text, find_names(text)),
        "code": lambda text: _first_found(text, find_codes(text)),
        "time": lambda text: _first_found(text, find_times(text)),
        "money": lambda text: first_span(text, "money"),
        "quantity": first_quantity,
        "date": lambda text: first_span(text, "date"),
        "file": lambda text: first_span(text, "file"),
        "url": lambda text: first_span(text, "url"),
        "decision": _first_decision,
    }


# Kinds whose every fact holds a digit: text without one is not read for them.
_DIGITAL: frozenset[AnswerKind] = frozenset({"code", "money", "quantity", "date", "time"})
_DIGIT = re.compile(r"\d")


# Texts whose facts of a kind were looked for, remembered: the turns after rank many of the
# same archived messages for the same kinds (a pass of the finders over 600 characters
# is ~70 µs; recall's rank and fit made ~45 a turn on bench_path's 155k:100k, issue 20).
POSITIONS_KEPT = 4_096


def kind_position(text: str, kinds: Collection[AnswerKind]) -> int | None:
    """Where the first fact of one of `kinds` starts in `text`, or None when it holds none."""
    digits = _DIGIT.search(text) is not None
    found = [
        position
        for kind in kinds
        if (digits or kind not in _DIGITAL) and (position := _first_fact(text, kind)) is not None
    ]
    return min(found) if found else None


@functools.lru_cache(maxsize=POSITIONS_KEPT)
def _first_fact(text: str, kind: AnswerKind) -> int | None:
    """Where the first fact of `kind` starts in `text` (pure: the finders' verdict)."""
    return _finders()[kind](text)
