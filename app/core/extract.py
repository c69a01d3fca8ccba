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
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict

from app.core.models import Message, Role

REDACTED = "[redacted]"

T = TypeVar("T")

MAX_FACTS = 30
MAX_ENTITIES = 50
MAX_SOURCE_SEQS = 20
MAX_FACT_CHARS = 300
MAX_ENTITY_CHARS = 200
MAX_BACKTICKED_CHARS = 80

EntityKind = Literal["file", "url", "identifier", "number", "money", "date", "email"]

# The kinds the retention check keeps verbatim: all of them (money and dates are
# numbers a reader acts on; e-mails, like URLs, are addresses that must not drift).
HARD_FACT_KINDS: frozenset[str] = frozenset(
    {"file", "url", "identifier", "number", "money", "date", "email"}
)


# --- the facets ----------------------------------------------------------------


class Fact(BaseModel):
    """A sentence worth keeping (a decision, an open question), and where it was said."""

    model_config = ConfigDict(frozen=True)

    text: str
    source_seqs: tuple[int, ...] = ()


class ActionItem(BaseModel):
    """Something someone is to do. `owner` is a name, "user", "assistant", or None."""

    model_config = ConfigDict(frozen=True)

    owner: str | None = None
    task: str
    due: str | None = None
    source_seqs: tuple[int, ...] = ()


class Entity(BaseModel):
    """A hard fact, verbatim: a file name, URL, identifier, number, amount, date or e-mail."""

    model_config = ConfigDict(frozen=True)

    kind: EntityKind
    text: str
    source_seqs: tuple[int, ...] = ()


class Facets(BaseModel):
    """Everything the rules found in a stretch of conversation (DESIGN §2 `summary.facets`)."""

    model_config = ConfigDict(frozen=True)

    decisions: tuple[Fact, ...] = ()
    action_items: tuple[ActionItem, ...] = ()
    open_questions: tuple[Fact, ...] = ()
    entities: tuple[Entity, ...] = ()

    @property
    def is_empty(self) -> bool:
        return not (self.decisions or self.action_items or self.open_questions or self.entities)


# --- secrets -------------------------------------------------------------------

_APOS = "['’]"

_PRIVATE_KEY = re.compile(
    r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
    r"(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
    re.DOTALL,
)
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
_BEARER = re.compile(r"(\bBearer\s+)(?!\[redacted\])([A-Za-z0-9\-._~+/]{8,}=*)", re.IGNORECASE)
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
_LONG_TOKEN = re.compile(r"(?<![A-Za-z0-9_\-])[A-Za-z0-9_\-]{32,}(?![A-Za-z0-9_\-])")
_WORD_LIKE = re.compile(r"[A-Z]?[a-z]{3,}")
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
    wordy = sum(
        len(match.group())
        for match in _WORD_LIKE.finditer(token)
        if _VOWELS.intersection(match.group().lower())
    )
    switches = sum(_char_class(a) != _char_class(b) for a, b in itertools.pairwise(token))
    reads_as_words = wordy / len(token) >= 0.8 and switches / (len(token) - 1) <= 0.4
    return not reads_as_words


def _redact_long_token(match: re.Match[str]) -> str:
    token = match.group()
    return REDACTED if looks_like_random_token(token) else token


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


def redact_secrets(text: str) -> str:
    """`text` with API keys, tokens, passwords and private keys replaced by `[redacted]`.

    Labels stay ("password: [redacted]"), so a summary can still say a password
    was shared. Ordinary prose is left alone.
    """
    text = _PRIVATE_KEY.sub(REDACTED, text)
    text = _URL_CREDENTIALS.sub(rf"\g<1>:{REDACTED}@", text)
    for pattern in _PREFIXED_SECRETS:
        text = pattern.sub(REDACTED, text)
    text = _BEARER.sub(_redact_bearer, text)
    text = _API_KEY_HEADER.sub(rf"\g<1>{REDACTED}", text)
    text = _QUERY_SECRET.sub(rf"\g<1>{REDACTED}", text)
    text = _PASSWORD_ASSIGNMENT.sub(rf"\g<1>{REDACTED}", text)
    text = _KEY_ASSIGNMENT.sub(rf"\g<1>{REDACTED}", text)
    return _LONG_TOKEN.sub(_redact_long_token, text)


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


def _redacted_fact(fact: Fact) -> Fact:
    return fact.model_copy(update={"text": redact_secrets(fact.text)})


# --- splitting text ------------------------------------------------------------

_FENCE = re.compile(r"^\s*(```|~~~)")
_LINE_MARKUP = re.compile(r"^\s*(?:#{1,6}\s+|>\s*|[-*+•]\s+|\d{1,3}[.)]\s+|\[[ xX]\]\s+)+")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]*_]*\s+(?=[\"'(\[*_`]*[A-Z0-9])")
_SPACES = re.compile(r"\s+")
_CODE_TODO = re.compile(
    r"(?:#|//|--|/\*|\*|<!--)\s*(?:TODO|FIXME)\b\s*(?:\(([^)]*)\))?[:\s]\s*(.+)"
)


@dataclass
class _Sentence:
    text: str
    seq: int
    role: Role
    index: int  # position in the whole conversation, for "later than"


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _normalise(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


def _clip(text: str, limit: int = MAX_FACT_CHARS) -> str:
    text = _normalise(text)
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0] or text[:limit]
    return cut.rstrip(" ,;:") + "…"


def _split_blocks(content: str) -> tuple[list[str], list[str]]:
    """The prose lines and the code lines (inside fences) of a message."""
    prose: list[str] = []
    code: list[str] = []
    in_code = False
    for line in content.splitlines():
        if _FENCE.match(line):
            in_code = not in_code
            continue
        (code if in_code else prose).append(line)
    return prose, code


def _sentences(lines: Iterable[str]) -> Iterator[str]:
    for line in lines:
        line = _LINE_MARKUP.sub("", line).strip()
        if not line:
            continue
        for part in _SENTENCE_END.split(line):
            part = part.strip()
            if part:
                yield part


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


def _is_decision(sentence: str) -> bool:
    for match in _DECISION.finditer(sentence):
        if not _NEGATION.search(sentence[: match.start()]):
            return True
    return False


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


def _other_role(role: Role) -> str:
    return "assistant" if role is Role.USER else "user"


def _split_due(task: str) -> tuple[str, str | None]:
    """The task without its due date, and the due date verbatim (or None)."""
    match = _DUE.search(task)
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


def _request_with_due(sentence: str, role: Role) -> tuple[str, str] | None:
    """(owner, task) for "can you / please … by <date>"; without a date it is just a question."""
    request = _REQUEST.search(sentence)
    if request is None or _DUE.search(request.group(1)) is None:
        return None
    return _other_role(role), request.group(1).rstrip("?")


def _action_from_sentence(sentence: str, role: Role) -> tuple[str | None, str] | None:
    """(owner, task) when the sentence asks or promises that something be done."""
    todo = _TODO_LINE.match(sentence)
    if todo:
        owner, task = todo.group(1), todo.group(2)
        named = _OWNER_TO.match(task)
        if owner is None and named and named.group(1) not in _NOT_NAMES:
            owner, task = named.group(1).lstrip("@"), named.group(2)
        return (owner.strip() if owner else None), task
    if role is Role.USER:
        mine = _FIRST_PERSON.search(sentence)
        if mine:
            return "user", mine.group(1)
    yours = _SECOND_PERSON.search(sentence)
    if yours:
        return _other_role(role), yours.group(1)
    request = _request_with_due(sentence, role)
    if request is not None:
        return request
    named_match = _NAMED.search(sentence)
    if named_match and _could_be_a_name(named_match.group(1)):
        return named_match.group(1), named_match.group(2)
    ours = _WE_MUST.search(sentence)
    if ours:
        return None, ours.group(1)
    return None


# --- open questions --------------------------------------------------------------

_OPEN_MARKER = re.compile(
    r"\b(?:open\s+questions?|TBD|TBC|to\s+be\s+(?:decided|determined|confirmed)|"
    r"not\s+sure\s+(?:whether|if|yet|about|which|what|how)|"
    r"(?:still\s+)?(?:need|have)\s+to\s+(?:decide|figure\s+out|work\s+out)|undecided|"
    r"unclear\s+(?:whether|if|how|what|which)|unresolved|"
    rf"haven{_APOS}t\s+(?:yet\s+)?(?:decided|figured\s+out)|yet\s+to\s+(?:decide|be\s+decided))\b",
    re.IGNORECASE,
)
_DELIBERATION = re.compile(
    r"\b(?:should|shall)\s+(?:we|i)\b|\bwhich\b|\bwho\s+(?:will|should|is\s+going)\b|"
    r"\bwhen\s+(?:should|will|do|can|shall)\s+we\b|\bwhat\s+about\b|"
    r"\bhow\s+(?:should|do|shall)\s+we\b|\bor\b",
    re.IGNORECASE,
)
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


def _content_words(sentence: str) -> tuple[set[str], set[str]]:
    """(distinctive tokens, other content words) of a sentence, lower-cased.

    Distinctive: names and identifiers — capitalised past the first word, or
    holding a digit, an underscore or a dot.
    """
    distinctive: set[str] = set()
    ordinary: set[str] = set()
    for position, match in enumerate(_TOKEN.finditer(sentence)):
        token = match.group()
        lowered = token.lower()
        if lowered in _STOPWORDS or (len(token) < 3 and not token.isdigit()):
            continue
        if (
            any(c.isdigit() or c in "_." for c in token)
            or (position > 0 and token[0].isupper())
            or token.isupper()
        ):
            distinctive.add(lowered)
        else:
            ordinary.add(lowered)
    return distinctive, ordinary


class _Resolutions:
    """Which questions a later decision settled (see `_content_words`): a shared
    distinctive word, or two shared ordinary ones. Built once, so checking every
    question costs O(its words), not O(decisions)."""

    def __init__(self, decisions: Sequence[_Sentence]) -> None:
        # word -> the conversation indexes of the decisions that use it, ascending
        self._postings: dict[str, list[int]] = {}
        for decision in decisions:
            distinctive, ordinary = _content_words(decision.text)
            for word in distinctive | ordinary:
                self._postings.setdefault(word, []).append(decision.index)

    def settled(self, question: _Sentence) -> bool:
        distinctive, ordinary = _content_words(question.text)
        for word in distinctive:
            postings = self._postings.get(word)
            if postings and postings[-1] > question.index:
                return True
        shared: dict[int, int] = {}
        for word in ordinary:
            postings = self._postings.get(word, [])
            for decision_index in postings[bisect.bisect_right(postings, question.index) :]:
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
_URL = re.compile(r"\b(?:https?://|www\.)[^\s<>\"'`\[\]()]+")
_EMAIL = re.compile(r"\b[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}\b")
_FILE = re.compile(
    r"(?<![\w/.\-@])"
    r"(?:[A-Za-z]:\\(?:[\w .\-]+\\)*[\w.\-]+"  # C:\Users\me\file.txt
    # report_v2.xlsx, src/app/main.py, .env
    rf"|(?:~|\.{{1,2}})?/?(?:[\w.\-]+/)*[\w\-]?[\w.\-]*\.(?i:{_FILE_EXTENSIONS})(?![\w\-])"
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
_DATE = re.compile(
    rf"\b(?:{_ISO_DATE}|{_NUMERIC_DATE}|{_DAY_MONTH}|{_MONTH_DAY}|{_MONTH_YEAR})(?![\w])"
)
_UNITS = (
    r"%|percent|per\s?cent|kg|mg|µg|g|lbs?|oz|km/h|km|cm|mm|µm|nm|m/s|mph|mi|miles?|ft|"
    r"feet|inch(?:es)?|yd|ms|µs|ns|sec|secs|seconds?|mins?|minutes?|hrs?|hours?|days?|"
    r"weeks?|months?|years?|yrs?|KiB|MiB|GiB|TiB|KB|kB|MB|GB|TB|PB|bytes?|bits?|"
    r"Kbps|Mbps|Gbps|px|pt|rem|em|dpi|°C|°F|°|kWh|Wh|kW|MW|W|mAh|mA|mV|V|kHz|MHz|GHz|Hz|"
    r"fps|rpm|ml|mL|cl|dl|gal|tokens?|req/s|rps|qps|users?|people|persons|guests?|"
    r"nights?|adults?|children|kids|rooms?|seats?|tickets?|pages?|words?|lines?|rows?|"
    r"items?|steps?|cores?|threads?|GPUs?|CPUs?|messages?|calories|kcal|x|×|s|h|m"
)
_NUMBER = re.compile(
    r"(?<![\w.])(?:"
    rf"[-+]?\d+(?:[.,]\d+)*(?:\s?[kKM](?=\s?(?:tokens?|users?|people|messages?|rows?)\b))?"
    rf"\s?(?:{_UNITS})(?![\w/])"
    r"|v\d+(?:\.\d+)+(?:-[\w.]+)?|\d+\.\d+\.\d+(?:\.\d+)?(?:-[\w.]+)?"  # versions, IPs
    r"|\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d{4,}(?:\.\d+)?"  # large figures
    r")(?![\w])"
)
_BACKTICKED = re.compile(rf"`([^`\n]{{1,{MAX_BACKTICKED_CHARS}}})`")
_IDENTIFIER = re.compile(
    r"(?<![\w$@])(?:"
    r"[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*\(\)"  # calls: main(), os.replace()
    r"|[a-z_]\w*(?:\.[a-z_]\w*){2,}"  # dotted paths: app.core.models
    r"|_*[A-Za-z][A-Za-z0-9]*(?:_+[A-Za-z0-9]+)+_*"  # snake_case, CONSTANT_CASE
    r"|__[a-z]\w*__"  # __init__
    r"|[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+"  # camelCase
    r"|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+[A-Za-z0-9]*"  # PascalCase
    r")(?![\w])"
)
_TRAILING_URL_PUNCTUATION = ".,;:!?*_'\""

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


def _entities_in(
    text: str, patterns: Sequence[tuple[EntityKind, re.Pattern[str]]]
) -> Iterator[tuple[EntityKind, str]]:
    """Every entity of `text`; each pattern sees the text with earlier finds blanked out,
    so a URL's path is not also a file name, nor a date's year a number."""
    for kind, pattern in patterns:
        found: list[tuple[int, int]] = []
        for match in pattern.finditer(text):
            value = match.group(1) if pattern is _BACKTICKED else match.group()
            if kind == "url":
                value = value.rstrip(_TRAILING_URL_PUNCTUATION)
            value = _normalise(value)
            if pattern is _BACKTICKED:
                value = value.strip()
            # Cut short by a redaction ("…?token=[redacted]"): half a fact is no fact.
            touches_secret = "[redacted" in value or text.startswith(REDACTED, match.end())
            if not value or touches_secret or _BLANK in value:
                continue
            if len(value) > MAX_ENTITY_CHARS:
                continue
            found.append(match.span())
            yield kind, value
        if found:
            text = _blank(text, found)


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


@dataclass
class _Found(Generic[T]):
    """One fact being gathered: its value, and where and how often it was seen."""

    value: T
    first: int
    last: int = 0
    count: int = 0
    seqs: set[int] = field(default_factory=set)

    @property
    def source_seqs(self) -> tuple[int, ...]:
        return tuple(sorted(self.seqs)[-MAX_SOURCE_SEQS:])


class _Gatherer(Generic[T]):
    """Collects facts under a de-duplication key, remembering order and frequency.

    The first wording seen is the one kept.
    """

    def __init__(self) -> None:
        self.items: dict[tuple[str, ...], _Found[T]] = {}

    def add(self, key: tuple[str, ...], value: T, index: int, seq: int) -> None:
        found = self.items.get(key)
        if found is None:
            found = _Found(value=value, first=index)
            self.items[key] = found
        found.last = index
        found.count += 1
        found.seqs.add(seq)

    def most_recent(self, limit: int) -> list[_Found[T]]:
        """Up to `limit` items, the most recently seen, in order of first mention."""
        chosen = sorted(self.items.values(), key=lambda found: found.last)[-limit:]
        return sorted(chosen, key=lambda found: found.first)

    def most_frequent(self, limit: int) -> list[_Found[T]]:
        """Up to `limit` items, the most frequent (ties: most recent), in order of first mention."""
        chosen = sorted(self.items.values(), key=lambda found: (-found.count, -found.last))
        return sorted(chosen[:limit], key=lambda found: found.first)


def _fact_key(text: str) -> tuple[str, ...]:
    return (_normalise(text).casefold().rstrip(".!?"),)


def extract_facets(messages: Sequence[Message]) -> Facets:
    """The rule-based facets of `messages` (oldest first); see the module notes."""
    decisions: _Gatherer[str] = _Gatherer()
    actions: _Gatherer[tuple[str | None, str, str | None]] = _Gatherer()
    entities: _Gatherer[tuple[EntityKind, str]] = _Gatherer()
    questions: list[_Sentence] = []
    decision_sentences: list[_Sentence] = []
    last_index_of_role: dict[Role, int] = {}
    index = 0

    for message in messages:
        content = redact_secrets(message.content)
        if not content.strip():
            continue
        prose, code = _split_blocks(content)
        for line in code:
            todo = _CODE_TODO.search(line)
            if todo:
                owner = todo.group(1).strip() if todo.group(1) else None
                _add_action(actions, (owner, todo.group(2).rstrip(" */->")), index, message.seq)
        for sentence_text in _sentences(prose):
            index += 1
            if _is_question(sentence_text):
                # "Can you … by Friday?" asks for work rather than an answer.
                request = _request_with_due(sentence_text, message.role)
                if request is not None:
                    _add_action(actions, request, index, message.seq)
                elif len(sentence_text.split()) >= 3:
                    questions.append(_Sentence(sentence_text, message.seq, message.role, index))
                continue
            if _OPEN_MARKER.search(sentence_text):
                questions.append(_Sentence(sentence_text, message.seq, message.role, index))
                continue
            if _is_decision(sentence_text):
                decisions.add(_fact_key(sentence_text), _clip(sentence_text), index, message.seq)
                decision_sentences.append(
                    _Sentence(sentence_text, message.seq, message.role, index)
                )
            action = _action_from_sentence(sentence_text, message.role)
            if action is not None:
                _add_action(actions, action, index, message.seq)
        for kind, value in _entities_in("\n".join(prose), _PROSE_PATTERNS):
            entities.add(_entity_key(kind, value), (kind, value), index, message.seq)
        for kind, value in _entities_in("\n".join(code), _CODE_PATTERNS):
            entities.add(_entity_key(kind, value), (kind, value), index, message.seq)
        index += 1
        last_index_of_role[message.role] = index

    open_questions: _Gatherer[str] = _Gatherer()
    resolutions = _Resolutions(decision_sentences)
    for question in questions:
        if _is_open(question, last_index_of_role, resolutions):
            open_questions.add(
                _fact_key(question.text), _clip(question.text), question.index, question.seq
            )

    return Facets(
        decisions=_facts(decisions),
        action_items=tuple(
            ActionItem(
                owner=found.value[0],
                task=found.value[1],
                due=found.value[2],
                source_seqs=found.source_seqs,
            )
            for found in actions.most_recent(MAX_FACTS)
        ),
        open_questions=_facts(open_questions),
        entities=tuple(
            Entity(kind=found.value[0], text=found.value[1], source_seqs=found.source_seqs)
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
    question: _Sentence, last_index_of_role: dict[Role, int], resolutions: _Resolutions
) -> bool:
    other = Role.ASSISTANT if question.role is Role.USER else Role.USER
    answered = last_index_of_role.get(other, -1) > question.index
    marked = _OPEN_MARKER.search(question.text) is not None
    deliberates = _DELIBERATION.search(question.text) is not None
    if answered and not (marked or deliberates):
        return False
    return not resolutions.settled(question)


def _action_key(owner: str | None, task: str, due: str | None) -> tuple[str, ...]:
    return ((owner or "").casefold(), *_fact_key(task), (due or "").casefold())


def _entity_key(kind: str, value: str) -> tuple[str, ...]:
    return (kind, value if kind in _CASE_SENSITIVE_KINDS else value.casefold())


def _facts(gatherer: _Gatherer[str]) -> tuple[Fact, ...]:
    return tuple(
        Fact(text=found.value, source_seqs=found.source_seqs)
        for found in gatherer.most_recent(MAX_FACTS)
    )


def hard_facts(facets: Facets) -> set[str]:
    """The verbatim strings a summary must keep (identifiers, numbers, dates, URLs,
    file names, amounts, e-mails): the retention check adds any the LLM's draft lacks."""
    return {entity.text for entity in facets.entities if entity.kind in HARD_FACT_KINDS}
