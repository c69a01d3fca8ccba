"""Action items: "TODO:"/"Action:" lines; the user's own "I'll / I will / I need to …";
"you need to / you must / you'll have to …" (owned by the other role); "can you / could
you / please … by <date>" (only with a due date); "<Name> will / needs to …"; "we need
to / we have to …" (no owner). A due date ("by Friday", "before 2026-04-01",
"tomorrow") is split off the task (app.core.extract)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from app.core.extract_decisions import DECISION_STARTS, DECISION_VERBS
from app.core.extract_entities import DAY_MONTH, ISO_DATE, MONTH_DAY, NUMERIC_DATE, WEEKDAY
from app.core.extract_text import APOS, MAX_FACT_CHARS, clip, normalise
from app.core.models import Role
from app.core.text_scan import fold, holds_any, positions, search_at, word_set, word_starts

_RELATIVE_DAY = (
    r"(?:tomorrow(?:\s+(?:morning|afternoon|evening|night))?|tonight|today|"
    r"this\s+(?:week|weekend|morning|afternoon|evening)|"
    r"(?:next|this)\s+(?:week|month|year|(?-i:" + WEEKDAY + r"))|"
    r"(?:the\s+)?end\s+of\s+(?:the\s+)?(?:day|week|month|quarter|year)|EOD|EOW|COB)"
)
_DUE_DATE = (
    rf"(?:{ISO_DATE}|{NUMERIC_DATE}|(?:the\s+)?(?-i:{DAY_MONTH})|(?-i:{MONTH_DAY})|"
    rf"(?-i:{WEEKDAY})(?:\s+(?:morning|afternoon|evening|night))?|{_RELATIVE_DAY}|"
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
    return search_at(_DUE, text, word_starts(fold(text), _DUE_STARTS))


_TODO_LINE = re.compile(
    r"^(?:TODO|FIXME|action(?:\s+items?)?|next\s+steps?)\s*(?:\(([^)]*)\))?\s*[:\-–]\s*(.+)$",
    re.IGNORECASE,
)
_OWNER_TO = re.compile(r"^(@?[A-Z][\w.\-]*)\s+(?:to|will|should|needs?\s+to)\s+(.+)$")
_FIRST_PERSON = re.compile(
    rf"\bI(?:{APOS}ll|\s+will|\s+am\s+going\s+to|{APOS}m\s+going\s+to|\s+need\s+to|"
    r"\s+have\s+to|\s+must|\s+still\s+need\s+to)\s+(.+)",
)
_SECOND_PERSON = re.compile(
    rf"\byou(?:{APOS}ll\s+(?:need|have)\s+to|\s+will\s+(?:need|have)\s+to|\s+need\s+to|"
    r"\s+have\s+to|\s+must)\s+(.+)",
    re.IGNORECASE,
)
_REQUEST = re.compile(
    r"(?:\b(?:can|could|would|will)\s+you(?:\s+please)?|^please)\s+(.+)", re.IGNORECASE
)
_WE_MUST = re.compile(
    rf"\bwe(?:\s+still)?(?:\s+need\s+to|\s+have\s+to|\s+must|{APOS}ll\s+need\s+to)\s+(.+)",
    re.IGNORECASE,
)
_NAMED = re.compile(
    r"\b([A-Z][a-z]+(?:\s[A-Z][a-z]+)?)\s+(?:will|is\s+going\s+to|needs\s+to|has\s+to)\s+"
    r"(?!(?:be|not|never|probably|likely|raise|return|throw|fail|work|happen|cause|break|"
    r"crash|load|show|appear|look|seem|run\s+out|help|also|still|just|only|always|"
    r"automatically)\b)(.+)"
)
# Capitalised words that begin "X will …" without being anyone's name.
_NOT_NAMES = word_set(
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


def split_due(task: str) -> tuple[str, str | None]:
    """The task without its due date, and the due date verbatim (or None)."""
    match = _search_due(task)
    if match is None:
        return _tidy_task(task), None
    due = normalise(match.group())
    rest = task[: match.start()] + " " + task[match.end() :]
    return _tidy_task(rest), due


def _tidy_task(task: str) -> str:
    task = normalise(task).strip(" ,;:-–")
    task = task.rstrip(".!")
    return clip(task, MAX_FACT_CHARS)


def _could_be_a_name(words: str) -> bool:
    """False for "The …", "Testing …", "Deployment …": pronouns, gerunds, abstract nouns."""
    first = words.split()[0]
    return first not in _NOT_NAMES and not first.endswith(("ing", "tion", "ment", "ness"))


def request_with_due(sentence: str, starts: list[int], role: Role) -> tuple[str, str] | None:
    """(owner, task) for "can you / please … by <date>" (`_REQUEST` tried at `starts`);
    without a date it is just a question."""
    request = search_at(_REQUEST, sentence, starts)
    if request is None or _search_due(request.group(1)) is None:
        return None
    return _other_role(role), request.group(1).rstrip("?")


def open_starts(folded: str) -> tuple[str, ...]:
    """The words `OPEN_MARKER` can begin with in a sentence (folded), of the alternatives
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


def decision_starts(folded: str) -> tuple[str, ...]:
    """The words `DECISION` can begin with in a sentence (folded), of the alternatives
    whose other words it holds."""
    verbs = holds_any(folded, DECISION_VERBS)
    starts: tuple[str, ...] = DECISION_STARTS
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


def request_starts(folded: str) -> list[int]:
    """Where `_REQUEST` can match in a sentence (folded)."""
    asks = positions(folded, ("can", "could", "would", "will")) if "you" in folded else []
    if folded.startswith("please"):
        asks.insert(0, 0)
    return asks


def action_in(
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
        mine = search_at(_FIRST_PERSON, text, positions(text, "I", 0, start, end), end)
        if mine:
            return "user", mine.group(1)
    if must and "you" in folded:
        yours = search_at(_SECOND_PERSON, text, positions(folded, ("you",), start), end)
        if yours:
            return _other_role(role), yours.group(1)
    asks = request_starts(folded)
    if asks:
        request = request_with_due(text[start:end], asks, role)
        if request is not None:
            return request
    verbs = _named_verbs(text[start:end])
    if verbs:
        names = _name_starts(text, start, positions(text, verbs, 0, start, end))
        named_match = search_at(_NAMED, text, names, end)
        if named_match and _could_be_a_name(named_match.group(1)):
            return named_match.group(1), named_match.group(2)
    if must and "we" in folded:
        ours = search_at(_WE_MUST, text, positions(folded, ("we",), start), end)
        if ours:
            return None, ours.group(1)
    return None


_TODO_STARTS = ("todo", "fixme", "action", "next")
