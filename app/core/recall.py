"""Automatic recall: archived originals quoted in the request (DESIGN §3, issue 12).

Before each reply the new user message's salient terms (`salient_terms`, and their
nouns' synonyms: `synonym_terms`) are looked up in the conversation's archive
(`app.store.recall.RecallIndex`); the matching messages are ranked here (`rank_matches`:
the terms they hold, in any of a word's forms, and whether they hold the kind of fact
the message asks for, see `recall_kinds`), cut to an exact excerpt around what matched,
and fitted into a token budget (`fit_recall`) as one labelled block that opens the
newest user turn.
Deterministic and offline: no model call.

Pure: no sqlite3, no Qt, no network. Only archived messages (covered by a summary)
reach this module, and `fit_recall` also drops any message of the live tail, so a
message is never sent twice.
"""

from __future__ import annotations

import functools
import itertools
import locale
import re
import unicodedata
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime

from app.core.conversation import date_line, local_day
from app.core.models import Role
from app.core.recall_dates import DayRange, asked_about, date_spans, is_calendar_word
from app.core.recall_kinds import AnswerKind, is_cue, kind_position, wanted_kinds
from app.core.recall_quotes import EXCERPT_CHARS, quote_body
from app.core.recall_synonyms import synonyms_of

RECALL_HEADING = "From earlier in this conversation — archived, quoted exactly"
RECALL_PREAMBLE = (
    f"# {RECALL_HEADING}\n\n"
    "Added by Cairn, not written by the user: archived messages of this conversation "
    "that match the user's newest message below, found by Cairn's search and quoted word "
    "for word, each with its date and message number. Where a summary and a quote "
    "disagree, the quote is what was actually said."
)
# Added to the preamble when a quote comes from another conversation (Settings → Memory).
OTHER_CONVERSATIONS_NOTE = (
    " The user lets Cairn look in their other conversations too: a quote from one names "
    "it (“in …”)."
)
# The preamble when the budget is small (a small window): the heading alone, and who added it.
RECALL_PREAMBLE_SHORT = f"# {RECALL_HEADING} (added by Cairn, not written by the user)"
# A quote that does not fit is tried again shorter, down to about this many characters.
SHORTEST_EXCERPT_CHARS = 120
# Fewer tokens than this left in the budget: not even a heading and a few words fit.
SMALLEST_QUOTE_TOKENS = 16
# More characters than text of any language takes a token (English about 4): an excerpt
# is known not to fit, without counting it, if it would not even at this many.
MOST_CHARS_PER_TOKEN = 6
# The most terms looked up for one message: the rarest say the most, and each costs a lookup.
MAX_TERMS = 8
# Words written apart in a message that are also looked up written as one, at most.
MAX_COMPOUNDS = 2
# The most quotes in one block: a few exact quotes help; many crowd the request. At
# recall's floor (800 tokens) short quotes stopped at 12 with a third of it unused, the
# next best (a fact said once, ranked beside a name's many mentions) left out (issue 22).
MAX_QUOTES = 20
# Of a longer message only its start and its end are read for terms (a pasted page is
# mostly what it quotes; the question is at either end), so a page costs what a line does.
TERMS_FROM_CHARS = 1_000
# A word that only says what kind of answer is wanted ("name", "cost", "what time").
CUE_WEIGHT = 0.5
# Another word for a question's noun ("kids" for "children", recall_synonyms): a weaker
# sign than the word itself; at most this many of a question's words get theirs, each
# at most `MAX_SYNONYMS` (each word looked up costs a seek).
SYNONYM_WEIGHT = 0.5
MAX_SYNONYM_TERMS = 3
MAX_SYNONYMS = 6
# A message that holds a fact of the kind asked for ("who" → a name): see recall_kinds.
KIND_BONUS = 1.5
# A word also counts as held in its stem's forms: "renew" in "renewal", "open" in
# "opening", "insurer" in "insurance" (English; in other languages they match nothing).
_SUFFIXES = (
    *("ations", "ation", "ings", "ing", "ers", "er", "ed", "es", "s"),
    *("al", "ance", "ants", "ant", "ment", "e"),
)
_ENDINGS = ("e", "s", "es", "ed", "ing", "er", "ers", "al", "ation", "ance", "ant", "ment")

# Runs of letters and digits, as the full-text index splits text.
_WORD = re.compile(r"[^\W_]+")
# Codes and identifiers: letter/digit runs joined by - _ . / : (AX-7731, v2.3.1, 14:30,
# report_q3.pdf, 2026-03-03), at least one digit or inner dot. Each begins where a run
# begins (the same matches: a match inside a run would have begun at its start), so the
# engine does not read each word again from each of its letters.
_CODE = re.compile(r"(?<![^\W_])[^\W_]+(?:[-_./:#][^\W_]+)+")
# Words joined by hyphens: "check-up", "follow-up", "mother-in-law".
_HYPHENATED = re.compile(r"(?<![^\W\d_])[^\W\d_]+(?:-[^\W\d_]+)+")
# Quoted phrases: "…", “…”, „…“, «…».
_QUOTED = re.compile(
    r"\"([^\"\n]{2,80})\"|“([^”\n]{2,80})”|„([^“\n]{2,80})“|«\s*([^»\n]{2,80}?)\s*»"
)

# Common words of English, French, German, Spanish, Italian, Portuguese and Dutch (folded:
# lower case, no accents): they match nearly everything and say nothing about which message.
# Not French "car" (because): it is also the English car.
_STOP_TEXT = """
    a about above after again against all also am an and any are aren as at be because
    been before being below between both but by can cannot could did didn do does doesn
    doing don down during each even ever every few for from further get got had has have
    having he her here hers herself him himself his how i if in into is isn it its itself
    just know let like ll me might more most much must my myself no nor not now of off on
    once one only or other our ours ourselves out over own please re really remember same
    say said she should so some still such tell than thank thanks that the their theirs
    them themselves then there these they thing things think this those through to too
    under until up us use used ve very want was wasn way we well were weren what when
    where which while who whom why will with would yes yet you your yours yourself
    yourselves again earlier ago back okay ok hi hello hey going gonna wanna make made
    le la les un une des du de et est en que qui quoi dans pour pas par sur au aux ce
    cet cette ces il elle ils elles nous vous je tu on ne se sa son ses leur leurs mon
    ma mes ton ta tes avec mais ou donc ni etait ete etre avoir fait comme tout plus
    moins tres bien quel quelle quels quelles y a
    der die das den dem des ein eine einer eines einem einen und oder aber ist sind war
    waren wird werden hat haben hatte ich du er sie es wir ihr mich dich sich mir dir
    uns euch mit von zu zum zur im am auf aus bei fur uber unter nach vor wie was wer
    wo wann warum nicht kein keine auch noch schon nur so dass wenn als mein dein sein
    el los las una unos unas y o pero es son fue ser estar esta este esto ese esa yo
    tu usted ustedes nosotros ellos ellas con por para sin sobre entre como cuando donde
    quien cual porque muy mas menos ya su sus mi mis lo al del se le les nos
    il lo gli una uno di da in con su per tra fra che chi non sono era io tu lui lei
    noi voi loro mio tuo suo nel nella della dei degli delle al alla allo ai agli alle
    um uma os as e ou mas nao sim eu ele ela nos eles elas com sem sobre como quando
    onde porque muito mais menos meu minha seu sua no na nos nas do da dos das ao
    de het een en of maar is zijn was waren ik jij hij zij wij jullie ze met van voor
    op aan bij naar uit over niet geen ook nog al dat die wat wie waar wanneer hoe
    """
_STOP_WORDS = frozenset(_STOP_TEXT.split())
COMMON_WORDS = _STOP_WORDS


@dataclass(frozen=True)
class RecallTerm:
    """One thing to look for in the archive.

    Attributes:
        text: as written in the message (a word, a code like "AX-7731", a quoted phrase).
        words: its runs of letters and digits, as the index holds them: looked up as a phrase.
        weight: how much a match says: codes, numbers and quoted phrases most, names next.
        forms: for a single word, the folded forms that count as holding it when ranking
            (`word_forms`; the index is asked for the word as written: each form would
            cost a lookup); empty: only `words`, as a phrase.
        cue: it only says what kind of answer is wanted ("name", "cost"): `CUE_WEIGHT`.
    """

    text: str
    words: tuple[str, ...]
    weight: float
    forms: tuple[str, ...] = ()
    cue: bool = False
    # Other ways of writing it, each a phrase of folded words: "check-up" is also
    # "checkup" (a form) and "check up"; "checkups" is also "check ups".
    alternatives: tuple[tuple[str, ...], ...] = ()


@dataclass(frozen=True)
class ArchivedMatch:
    """An archived message that holds at least one term (from `RecallIndex`).

    `rank` is the index's bm25 score (lower is better; 0.0 where there is no index).
    `held`: the indexes of the terms it holds, as the index found them (None: read
    them from the text).
    """

    message_id: int
    seq: int
    role: Role
    created_at: datetime
    content: str
    rank: float = 0.0
    held: frozenset[int] | None = None
    # Set for a message of another conversation (Settings → Memory): where it was said.
    session_id: str = ""
    conversation: str = ""
    # Its quote's body tokens when quoted whole (`whole_quote_tokens`, stored with the
    # message): None when not known, or longer than any excerpt.
    body_tokens: int | None = None


_new = object.__new__


def archived_match(
    message_id: int,
    seq: int,
    role: Role,
    created_at: datetime,
    content: str,
    rank: float = 0.0,
    held: frozenset[int] | None = None,
    body_tokens: int | None = None,
) -> ArchivedMatch:
    """`ArchivedMatch(...)` of this conversation, the same value made without the frozen
    dataclass's nine `object.__setattr__` calls: a turn makes ~350 (each row read, and
    each candidate and neighbour again with the terms it holds), ~0.6 ms of bench_path's
    155k:100k turn at half the cost (issue 20)."""
    match: ArchivedMatch = _new(ArchivedMatch)
    match.__dict__.update(
        message_id=message_id,
        seq=seq,
        role=role,
        created_at=created_at,
        content=content,
        rank=rank,
        held=held,
        session_id="",
        conversation="",
        body_tokens=body_tokens,
    )
    return match


@dataclass(frozen=True)
class RecallQuery:
    """What to look for in the archive for one message (`recall_query`).

    Attributes:
        terms: the words to search for, most telling first.
        wanted: the kinds of fact it asks for (recall_kinds).
        days: the days it asks about, from its dates ("in May", "last week"): they rank
            the messages written then; never searched as words.
        role: who said it, when the question says ("what did Claude suggest", "what did
            I tell you"): ranks that side's messages first.
        keyed: the messages the summaries' search keys point to for these terms.
    """

    terms: tuple[RecallTerm, ...]
    wanted: frozenset[AnswerKind] = frozenset()
    days: DayRange | None = None
    role: Role | None = None
    # Messages (seq) a summary's search keys name for these terms (`recall_rank.keyed`),
    # each with the indexes of the terms its key holds: candidates however they are worded.
    keyed: tuple[tuple[int, frozenset[int]], ...] = ()


@dataclass(frozen=True)
class RecallQuote:
    """One quote of the block: an exact excerpt of an archived message (of another
    conversation, named by its title, when `conversation` is set)."""

    message_id: int
    seq: int
    role: Role
    created_at: datetime
    excerpt: str
    conversation: str = ""
    # The other conversation's id (with `conversation`), so the user can open it there.
    session_id: str = ""


@dataclass(frozen=True)
class RecallBlock:
    """The recall block of a request: its text, its raw tokens and what it quotes."""

    text: str
    tokens: int
    quotes: tuple[RecallQuote, ...]


def is_common_word(folded: str) -> bool:
    """Whether a folded word is one of the common words never searched for."""
    return folded in _STOP_WORDS


def fold(text: str) -> str:
    """Text as the index compares it: case and accents folded."""
    if text.isascii():
        return text.lower()  # most text: ten times faster than decomposing it
    folded = text.casefold()
    others = set(_NOT_ASCII.findall(folded))
    if others <= _KEPT_BY_FOLD or _kept_by_fold(others):
        # Only characters decomposing leaves as they are, none a mark ("’", "“", "£":
        # one message in six of the natural archive): the same text, not decomposed
        # and searched for marks (~45 µs of a 1,000-character message; ~17 so).
        return folded
    decomposed = unicodedata.normalize("NFKD", folded)
    if _beyond_first_plane(decomposed):  # an emoji, or marks beyond the first plane
        return _ASTRAL.sub(_unless_mark, _plane_marks().sub("", decomposed))
    # The marks dropped in one pass in C: a turn folds every message recall weighs, and
    # asking `combining` of each character in Python was most of recall's time.
    return _plane_marks().sub("", decomposed)


_NOT_ASCII = re.compile(r"[^\x00-\x7f]")
# Characters NFKD leaves as they are, none a combining mark: `fold` leaves them too
# (decomposition is each character's own, and only marks are reordered or dropped).
# Learnt as met; at most `_KEPT_AT_MOST` (a few hundred in a language's text).
_KEPT_BY_FOLD: set[str] = set()
_KEPT_AT_MOST = 20_000


def _kept_by_fold(characters: set[str]) -> bool:
    """Whether `fold` keeps each of `characters` as it is (learning those it keeps)."""
    kept = True
    for character in characters:
        if unicodedata.combining(character) or (
            unicodedata.normalize("NFKD", character) != character
        ):
            kept = False
        elif len(_KEPT_BY_FOLD) < _KEPT_AT_MOST:
            _KEPT_BY_FOLD.add(character)
    return kept


# Characters beyond Unicode's first plane (emoji, mostly): each asked whether it is a mark.
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def _beyond_first_plane(text: str) -> bool:
    """Whether `text` holds a character beyond the first plane: each takes two UTF-16
    units (a lone surrogate, one). Encoded in C: `max(text) > "\uffff"` made a string of
    each character, ~25 µs of a 1,500-character message, and a turn folds dozens (the
    natural archive's "’", "“" and "£": one message in six is not ASCII)."""
    return len(text.encode("utf-16-le", "surrogatepass")) != 2 * len(text)


def _unless_mark(match: re.Match[str]) -> str:
    character = match.group()
    return "" if unicodedata.combining(character) else character


@functools.cache
def _plane_marks() -> re.Pattern[str]:
    """The combining marks (`unicodedata.combining`) of Unicode's first plane, as one
    character class; made once, on the first fold of a text that is not ASCII (~5 ms)."""
    ranges: list[tuple[int, int]] = []
    for code in range(0x10000):
        if unicodedata.combining(chr(code)):
            if ranges and ranges[-1][1] == code - 1:
                ranges[-1] = (ranges[-1][0], code)
            else:
                ranges.append((code, code))
    spans = "".join(f"\\u{low:04x}-\\u{high:04x}" for low, high in ranges)
    return re.compile(f"[{spans}]+")


def recall_query(text: str, today: date, participants: Collection[str] = ()) -> RecallQuery:
    """What to look for in the archive for the message `text`, written on `today`.

    `participants`: the folded names of the people talking (the user's, as Claude greets
    them): never search terms — a person rarely writes their own name, so it finds the
    other side's greetings. The salient terms are followed by their nouns' synonyms
    (`synonym_terms`: "children" also finds "kids").
    """
    if len(text) > 2 * TERMS_FROM_CHARS:  # a pasted page: its ends, as for its terms
        text = text[:TERMS_FROM_CHARS] + "\n" + text[-TERMS_FROM_CHARS:]
    days = asked_about(text, today)
    terms = salient_terms(text, participants=participants)
    return RecallQuery(
        terms=(*terms, *synonym_terms(terms)),
        wanted=wanted_kinds(text, fold),
        days=days,
        role=asked_of(fold(text), participants),
    )


# "What did Claude suggest", "what did you say": Claude's side; "what did I tell you",
# "I mentioned": the user's.
_CLAUDE_SAID = re.compile(
    r"\b(?:claude|you)\s+(?:say|said|suggest|suggested|recommend|recommended|tell|told|"
    r"advise|advised|propose|proposed|think|thought|mention|mentioned)\b"
)
_USER_SAID = re.compile(
    r"\b(?:i|we)\s+(?:say|said|tell|told|mention|mentioned|write|wrote)\b"
    r"|\bdid\s+i\b|\bmy\b"
)


def asked_of(folded: str, participants: Collection[str] = ()) -> Role | None:
    """Whose words a folded question asks about, when it says: Claude's or the user's."""
    if _CLAUDE_SAID.search(folded):
        return Role.ASSISTANT
    if _USER_SAID.search(folded):
        return Role.USER
    for name in participants:
        if name != "claude" and re.search(rf"\b{re.escape(name)}\b", folded):
            return Role.USER
    return None


def salient_terms(
    text: str, limit: int = MAX_TERMS, *, participants: Collection[str] = ()
) -> list[RecallTerm]:
    """The terms of `text` worth looking up, most telling first (at most `limit`).

    Kept: quoted phrases, codes and identifiers (whole, so "AX-7731" is one term),
    numbers, names (capitalised inside a sentence) and other words of three letters or
    more; dropped: common words of English and a few other languages, the participants'
    own names (folded, and "Claude"), and words that only say when ("May", "last week",
    "21 May 2026": `recall_dates` reads them). Two words that are also written as one
    ("mouth guard") add that word as a term of their own, after the others.
    """
    if len(text) > 2 * TERMS_FROM_CHARS:
        text = text[:TERMS_FROM_CHARS] + "\n" + text[-TERMS_FROM_CHARS:]
    # Key → (weight, as written, its words, cue, forms): a term is made of the best few
    # only (a pasted page holds hundreds of words).
    found: dict[tuple[str, ...], tuple[float, str, tuple[str, ...], bool, tuple[str, ...]]] = {}
    order: dict[tuple[str, ...], int] = {}

    skipped = {fold(name) for name in participants} | {"claude"}

    def add(
        raw: str,
        weight: float,
        position: int,
        *,
        cue: bool = False,
        one: str = "",
    ) -> None:
        # `one`: `raw` is a single word, and this is it folded.
        words = (raw,) if one else tuple(_WORD.findall(raw))
        if not words:
            return
        key = (one,) if one else tuple(fold(w) for w in words)
        known = found.get(key)
        if known is None or known[0] < weight:
            found[key] = (weight, raw, words, cue, ())
            order.setdefault(key, position)

    covered: set[int] = set()  # where phrases and codes start their words: not looked up alone
    for start, end in date_spans(text):
        covered.update(start + word.start() for word in _WORD.finditer(text[start:end]))
    for match in _HYPHENATED.finditer(text):
        parts = _WORD.findall(match.group())
        joined = fold("".join(parts))
        if len(parts) > 3 or is_calendar_word(joined) or not joined.isascii():
            continue
        key = tuple(fold(part) for part in parts)
        found[key] = (1.0, match.group(), tuple(parts), False, word_forms(joined))
        order.setdefault(key, match.start())
        covered.update(_word_starts(match))
    content: list[tuple[str, int, int]] = []  # (folded word, start, end) of plain words kept
    before = ""  # the folded word before the current one
    for match in _QUOTED.finditer(text):
        phrase = next(group for group in match.groups() if group is not None).strip()
        if len(_WORD.findall(phrase)) > 1:
            add(phrase, 3.0, match.start())
            covered.update(_word_starts(match))
    for match in _CODE.finditer(text):
        code = match.group()
        if any(c.isdigit() for c in code) or "." in code:
            add(code, 3.0, match.start())
            covered.update(_word_starts(match))
    for match in _WORD.finditer(text):
        word = match.group()
        folded, previous = fold(word), before
        before = folded
        if match.start() in covered:
            continue
        if word.isdigit():
            if len(word) >= 2:
                add(word, 2.0, match.start(), one=folded)
        elif not word.isalpha() and any(c.isdigit() for c in word):
            add(word, 3.0, match.start(), one=folded)  # a code without punctuation: A7, x86
        elif (
            folded in _STOP_WORDS
            or (len(word) < 3 and not _is_acronym(word))
            or folded in skipped
            or is_calendar_word(folded)
        ):
            continue
        elif is_cue(folded, previous):
            add(word, CUE_WEIGHT, match.start(), cue=True, one=folded)
        elif (word[0].isupper() and not _starts_sentence(text, match.start())) or _is_acronym(word):
            add(word, 1.5, match.start(), one=folded)
        else:
            add(word, 1.0, match.start(), one=folded)
            if word.isalpha():
                content.append((folded, match.start(), match.end()))
    ranked = sorted(found, key=lambda key: (-found[key][0], order[key]))
    terms = []
    for key in ranked[:limit]:
        weight, raw, words, cue, forms = found[key]
        term = RecallTerm(raw, words, weight, forms=forms, cue=cue)
        terms.append(term if forms else _with_forms(term))
    return terms + _compounds(text, content, set(found))


def synonym_terms(terms: Sequence[RecallTerm]) -> list[RecallTerm]:
    """Other words for the plain words among `terms` (recall_synonyms: English nouns), each
    word's as one term of `SYNONYM_WEIGHT` holding any of them in their plural too ("kid",
    "kids", "youngster"…): at most `MAX_SYNONYM_TERMS`, in the terms' order. A name, a
    code, a cue or a word written as one from two ("mouthguard") gets none."""
    known = {fold(w) for term in terms for w in (*term.words, *term.forms)}
    found: list[RecallTerm] = []
    for term in terms:
        if len(found) >= MAX_SYNONYM_TERMS:
            break
        if term.weight != 1.0 or term.cue or len(term.words) != 1 or term.alternatives:
            continue
        word = fold(term.words[0])
        if not word.isalpha() or not word.isascii() or term.text != term.words[0]:
            continue
        others = [w for w in synonyms_of(word) if w not in known][:MAX_SYNONYMS]
        if not others:
            continue
        known.update(others)
        spelled = tuple(dict.fromkeys((form,) for w in others for form in _noun_forms(w)))
        found.append(RecallTerm(others[0], (others[0],), SYNONYM_WEIGHT, alternatives=spelled))
    return found


def _noun_forms(noun: str) -> tuple[str, str]:
    """A noun and its regular English plural ("kid": "kids"; "story": "stories")."""
    if noun.endswith(("s", "x", "z", "ch", "sh")):
        return noun, noun + "es"
    if noun.endswith("y") and len(noun) > 1 and noun[-2] not in "aeiou":
        return noun, noun[:-1] + "ies"
    return noun, noun + "s"


def _compounds(
    text: str, content: list[tuple[str, int, int]], known: set[tuple[str, ...]]
) -> list[RecallTerm]:
    """Two neighbouring words also written as one ("mouth guard" → "mouthguard"), at most
    `MAX_COMPOUNDS`: each a term of its own, looked up as one word in its forms."""
    compounds: list[RecallTerm] = []
    for (first, _start, end), (second, second_start, _end) in itertools.pairwise(content):
        if text[end:second_start].strip() or len(first) < 3 or len(second) < 3:
            continue
        joined = first + second
        if (joined,) in known:
            continue
        compounds.append(RecallTerm(joined, (joined,), 1.0, forms=word_forms(joined)))
        if len(compounds) >= MAX_COMPOUNDS:
            break
    return compounds


def _with_forms(term: RecallTerm) -> RecallTerm:
    """A plain word's forms (a code, number or phrase is matched as written), and the
    two words a compound ending in a particle is also written as ("checkups": "check
    ups", "check up")."""
    if len(term.words) != 1 or term.weight >= 2.0:
        return term
    forms = word_forms(term.words[0])
    alternatives: list[tuple[str, ...]] = []
    for form in forms[:2]:
        for particle in _PARTICLES:
            if form.endswith(particle) and len(form) - len(particle) >= 3:
                alternatives.append((form[: -len(particle)], particle))
    return replace(term, forms=forms, alternatives=tuple(dict.fromkeys(alternatives)))


# The second halves of compounds also written as two words ("checkup", "check up").
_PARTICLES = ("ups", "up", "outs", "out", "ins", "offs", "off", "overs", "over", "downs", "down")


def _is_acronym(word: str) -> bool:
    """Two or more capitals ("GP", "VAT"): a name, however short."""
    return len(word) >= 2 and word.isupper()


def word_forms(word: str) -> tuple[str, ...]:
    """The folded forms that count as `word` when ranking: itself and its stem with common
    English endings ("renew" → "renews", "renewed", "renewal"…); () for a word of digits,
    accents or fewer than four letters (matched as written)."""
    folded = fold(word)
    if len(folded) < 4 or not folded.isascii() or not folded.isalpha():
        return ()
    stem, suffix = folded, ""
    for ending in _SUFFIXES:
        if folded.endswith(ending) and len(folded) - len(ending) >= 3:
            if ending == "s" and folded[-2] in "su":  # "glass", "status": no plural
                continue
            stem, suffix = folded[: -len(ending)], ending
            break
    bare = (stem,) if suffix != "e" else ()  # "time" → not "tim"
    return tuple(dict.fromkeys([folded, *bare, *(stem + ending for ending in _ENDINGS)]))


def _word_starts(match: re.Match[str]) -> list[int]:
    return [match.start() + word.start() for word in _WORD.finditer(match.group())]


def _starts_sentence(text: str, position: int) -> bool:
    """Whether only spaces stand between `position` and the start or a sentence's end."""
    index = position - 1
    while index >= 0 and text[index] in " \t\r\"'“«(":
        index -= 1
    return index < 0 or text[index] in ".!?\n:"


def held_terms(content: str, terms: Sequence[RecallTerm]) -> frozenset[int]:
    """The indexes of the `terms` that `content` holds."""
    words = _WORD.findall(fold(content))
    present = set(words)
    return frozenset(i for i, term in enumerate(terms) if holds(words, present, term))


def term_score(content: str, terms: Sequence[RecallTerm]) -> float:
    """The summed weights of the terms `content` holds (each term once, in any of its forms)."""
    return _scored(content, terms)[0]


def _scored(content: str, terms: Sequence[RecallTerm]) -> tuple[float, bool]:
    """`term_score`, and whether a term other than a cue is held."""
    words = _WORD.findall(fold(content))
    present = set(words)
    score, topical = 0.0, False
    for term in terms:
        if holds(words, present, term):
            score += term.weight
            topical = topical or not term.cue
    return score, topical


def holds(words: Sequence[str], present: Collection[str], term: RecallTerm) -> bool:
    """Whether folded text (its `words`, and their set `present`) holds `term`: its
    words together, any of its forms, or any of its alternatives."""
    if term.forms and not present.isdisjoint(term.forms):  # type: ignore[attr-defined]
        return True
    for key in ([fold(w) for w in term.words], *term.alternatives):
        if (
            key
            and (len(key) > 1 or not term.forms)
            and all(w in present for w in key)
            and (len(key) == 1 or _holds_phrase(words, key))
        ):
            return True
    return False


def _holds_phrase(words: Sequence[str], phrase: Sequence[str]) -> bool:
    first, size = phrase[0], len(phrase)
    return any(
        words[i] == first and list(words[i : i + size]) == list(phrase)
        for i in range(len(words) - size + 1)
    )


def rank_matches(
    matches: Iterable[ArchivedMatch],
    terms: Sequence[RecallTerm],
    wanted: Collection[AnswerKind] = (),
) -> list[ArchivedMatch]:
    """Best first: most telling terms held (and `KIND_BONUS` for holding, near them, a fact
    of a `wanted` kind), then the index's bm25, then the newest.

    The bonus goes only to a message that holds a term other than a cue (when there is
    one): a name next to the word "called" is not the architect's name.
    Deterministic for the same archive and message.
    """
    subject = any(not term.cue for term in terms)
    scored: list[tuple[float, ArchivedMatch]] = []
    for match in matches:
        score, topical = _scored(match.content, terms)
        if score <= 0:
            continue
        if wanted and (topical or not subject) and fact_near(match.content, terms, wanted):
            score += KIND_BONUS
        scored.append((score, match))
    scored.sort(key=lambda pair: (-pair[0], pair[1].rank, -pair[1].seq))
    return [m for _score, m in scored]


def fact_near(content: str, terms: Sequence[RecallTerm], wanted: Collection[AnswerKind]) -> bool:
    """Whether a fact of a `wanted` kind is within an excerpt's length of the terms."""
    start, end = _near(content, terms)
    return kind_position(content[start:end], wanted) is not None


def _near(content: str, terms: Sequence[RecallTerm], centre: int | None = None) -> tuple[int, int]:
    """The stretch of `content` around its most telling match (`centre`, when known) an
    excerpt is cut from."""
    if len(content) <= EXCERPT_CHARS:
        return 0, len(content)
    if centre is None:
        centre = _first_match(content, terms)
    start = max(0, centre - EXCERPT_CHARS // 2)
    return start, min(len(content), centre + EXCERPT_CHARS)


def excerpt(
    content: str,
    terms: Sequence[RecallTerm],
    size: int = EXCERPT_CHARS,
    wanted: Collection[AnswerKind] = (),
) -> str:
    """An exact excerpt of `content`, about `size` characters around its most telling
    match (around the fact of a `wanted` kind near it, if any), cut at word boundaries;
    "…" marks where it was cut. Short messages whole."""
    text = content.strip()
    if len(text) <= size:
        return text
    centre, before = _first_match(text, terms), size // 3
    if wanted:
        start, end = _near(text, terms, centre)  # its match found once, not twice
        fact = kind_position(text[start:end], wanted)
        if fact is not None:
            centre, before = start + fact, size // 2  # the subject is usually said before
    start = max(0, min(centre - before, len(text) - size))
    end = min(len(text), start + size)
    if start > 0:
        space = text.find(" ", start, start + 40)
        start = space + 1 if space >= 0 else start
    if end < len(text):
        space = text.rfind(" ", end - 40, end)
        end = space if space > start else end
    body = text[start:end].strip()
    return ("…" if start > 0 else "") + body + ("…" if end < len(text) else "")


def _first_match(text: str, terms: Sequence[RecallTerm]) -> int:
    # Lower case keeps each character's place in nearly every text (not "İ": two then).
    lower = text.lower()
    lowered = lower if len(lower) == len(text) else None
    for term in sorted(terms, key=lambda t: -t.weight):
        if lowered is not None and (
            term.forms or (len(term.words) == 1 and term.words[0].isascii())
        ):
            start = _first_form(lowered, term.forms or (term.words[0].lower(),), term.forms != ())
        else:
            found = _term_pattern(term.words, term.forms).search(text)
            start = found.start() if found is not None else -1
        if start >= 0:
            return start
    return 0


def _first_form(lowered: str, forms: Sequence[str], whole: bool) -> int:
    """Where the first of `forms` is in lower-case text, as `_term_pattern` finds it (a
    whole word when `whole`, else anywhere; case aside, "ſ" or the Kelvin sign's own
    folds aside); -1 when none. Without a regex: a turn's
    terms are new, and compiling a pattern of a word's forms costs a quarter of a
    millisecond. A word's forms share its stem: the text is searched for the stem once,
    and each form tried only where it is (not a search of the whole text for each of a
    word's ~13 forms, most absent)."""
    if len(forms) > 1:
        stem = _shared_start(tuple(forms))
        if stem:
            start = lowered.find(stem)
            while start >= 0:
                for form in forms:
                    if lowered.startswith(form, start) and (
                        not whole or _whole_at(lowered, start, start + len(form))
                    ):
                        return start
                start = lowered.find(stem, start + 1)
            return -1
    first = -1
    for form in forms:
        start = lowered.find(form)
        while start >= 0 and (first < 0 or start < first):
            if not whole or _whole_at(lowered, start, start + len(form)):
                first = start
                break
            start = lowered.find(form, start + 1)
    return first


def _whole_at(lowered: str, start: int, end: int) -> bool:
    """Whether `lowered[start:end]` is a whole word: no letter or digit just before or after."""
    return (start == 0 or not lowered[start - 1].isalnum()) and (
        end == len(lowered) or not lowered[end].isalnum()
    )


@functools.lru_cache(maxsize=256)
def _shared_start(forms: tuple[str, ...]) -> str:
    """What all of `forms` begin with ("renew" of "renewal", "renews"…): maybe ""."""
    shortest = min(forms, key=len)
    for length in range(len(shortest), 0, -1):
        if all(form.startswith(shortest[:length]) for form in forms):
            return shortest[:length]
    return ""


@functools.lru_cache(maxsize=256)
def _term_pattern(words: tuple[str, ...], forms: tuple[str, ...]) -> re.Pattern[str]:
    """Where a term is in unfolded text: its words together, or any of its forms."""
    if forms:
        alternatives = "|".join(re.escape(form) for form in sorted(forms, key=len, reverse=True))
        return re.compile(rf"(?<![^\W_])(?:{alternatives})(?![^\W_])", re.IGNORECASE)
    return re.compile(r"\W+".join(re.escape(word) for word in words), re.IGNORECASE)


def quote_heading(quote: RecallQuote, *, compact: bool = False) -> str:
    """The line before a quote: its message number, date and who wrote it; `compact` for
    a small budget ("[#12 · 3 Mar 2026 · the user]", five tokens fewer)."""
    who = "the user" if quote.role is Role.USER else "you (Claude)"
    where = f" · in “{quote.conversation}”" if quote.conversation else ""
    said = _heading_day(local_day(quote.created_at), compact, locale.setlocale(locale.LC_TIME))
    if compact:
        return f"[#{quote.seq}{where} · {said} · {who}]"
    return f"[message #{quote.seq}{where} · {said} · {who} wrote]"


@functools.lru_cache(maxsize=4_096)
def _heading_day(day: int, compact: bool, _names: str) -> str:
    """A quote heading's day ("3 Mar 2026"; "Tuesday 3 March 2026"), in the month and
    day names of the locale `_names` (LC_TIME's): made once a day, not each quote."""
    if compact:
        moment = date.fromordinal(day)
        return f"{moment.day} {moment:%b} {moment.year}"
    return date_line(day).strip("[]")


def quote_text(quote: RecallQuote, *, compact: bool = False) -> str:
    """A quote as it appears in the block: its heading, then the excerpt as a quotation."""
    return f"{quote_heading(quote, compact=compact)}\n{quote_body(quote.excerpt)}"


def recall_block_text(
    quotes: Sequence[RecallQuote],
    preamble: str = RECALL_PREAMBLE,
    *,
    compact: bool = False,
    texts: Mapping[RecallQuote, str] | None = None,
) -> str:
    """The block's text, quotes oldest first; "" when there are none. `texts`: each
    quote's `quote_text`, when made already (fitting counts them)."""
    if not quotes:
        return ""
    ordered = sorted(quotes, key=lambda q: (q.conversation, q.seq))
    if any(q.conversation for q in quotes) and preamble == RECALL_PREAMBLE:
        preamble += OTHER_CONVERSATIONS_NOTE
    made = texts or {}
    return "\n\n".join(
        [preamble, *(made.get(q) or quote_text(q, compact=compact) for q in ordered)]
    )


def fit_recall(
    matches: Iterable[ArchivedMatch],
    terms: Sequence[RecallTerm],
    budget: int,
    count: Callable[[str], int],
    *,
    exclude_seqs: Collection[int] = (),
    max_quotes: int = MAX_QUOTES,
    wanted: Collection[AnswerKind] = (),
    ordered: Iterable[Sequence[ArchivedMatch | None]] | None = None,
    stored: bool = False,
) -> RecallBlock | None:
    """The best quotes that fit in `budget` raw tokens as one block, or None.

    Messages whose seq is in `exclude_seqs` (the live tail) are never quoted, and no
    message is quoted twice; `wanted` (the kinds of fact asked for) ranks and centres
    them. `ordered`: the messages best first, each with the turns to quote it with (its
    question, or its answer; Claude's question about it and the user's answer), as
    `recall_rank.rank_pool` gives them; without it they are ranked by `rank_matches`,
    alone. `tokens` is the sum of the parts' counts and a
    blank line's allowance for each: never below counting the whole text (the tokenizer
    splits text at blank lines), and it saves counting the block twice. `stored`: `count`
    is cl100k's (`exact_counter`), so a message quoted whole costs its heading's count and
    its stored body count (`ArchivedMatch.body_tokens`): the same figure, not counted.
    """
    if budget <= 0 or not terms:
        return None
    # On a small window the full preamble would take most of the budget: the short one,
    # and short headings.
    preamble = RECALL_PREAMBLE
    compact = (tokens := count(preamble)) * 4 > budget
    if compact:
        preamble = RECALL_PREAMBLE_SHORT
        tokens = count(preamble)
    room = budget - tokens
    chosen: list[RecallQuote] = []
    seen = _Taken(exclude_seqs)
    overhead = 0  # a heading's tokens and the line breaks around it, counted once
    if ordered is None:
        ordered = ((match, None) for match in rank_matches(matches, terms, wanted))
    said: set[str] = set()  # the words quoted so far: the same words again add nothing
    texts: dict[RecallQuote, str] = {}  # each quote as counted, to make the block of
    words: dict[tuple[str, int], str] = {}  # `_said` of each message weighed, made once

    def said_of(match: ArchivedMatch) -> str:
        # Folding a long message costs tens of µs, and a partner is weighed in many groups.
        known = words.get(_where(match))
        if known is None:
            known = words[_where(match)] = _said(match)
        return known

    for group in ordered:
        best = group[0]
        if len(chosen) >= max_quotes or room < max(overhead + 4, SMALLEST_QUOTE_TOKENS):
            break
        if best is None or said_of(best) in said:
            continue  # "Thanks, that helps" a tenth time: a repeat tells Claude nothing new
        for match in group:
            if match is None or seen.holds(match) or len(chosen) >= max_quotes:
                continue
            if match is not best and said_of(match) in said:
                continue
            if match is not best and not seen.holds(best):
                break  # the quote itself did not fit: its partner means nothing alone
            if not overhead:
                overhead = count(quote_heading(_quote(match, ""), compact=compact)) + 3
            fitted = _fitted_quote(
                match, terms, room, count, overhead, compact=compact, wanted=wanted, stored=stored
            )
            if fitted is None:
                continue
            quote, text, cost = fitted
            texts[quote] = text
            seen.taken.add(_where(match))
            said.add(said_of(match))
            chosen.append(quote)
            room -= cost
            tokens += cost
    if not chosen:
        return None
    quotes = tuple(sorted(chosen, key=lambda q: (q.conversation, q.seq)))
    text = recall_block_text(quotes, preamble, compact=compact, texts=texts)
    return RecallBlock(text, tokens, quotes)


# Below this a quote is counted in one piece (`app.core.tokens`, 65,536 characters: a
# longer text is cut into pieces, which may count a token apart from the whole).
_ONE_PIECE_CHARS = 60_000


class _Taken:
    """The messages a block may not quote (again): those quoted, and the live tail's (by
    seq, this conversation's) — the tail's seqs looked up as they are, not a pair made
    for each of its ~1,000 messages every turn."""

    def __init__(self, excluded: Collection[int]) -> None:
        self.excluded = excluded
        self.taken: set[tuple[str, int]] = set()

    def holds(self, match: ArchivedMatch) -> bool:
        return (not match.session_id and match.seq in self.excluded) or (
            _where(match) in self.taken
        )


def _said(match: ArchivedMatch) -> str:
    """A message's words, as compared for repeats (case, accents and spacing aside)."""
    return _said_of(match.content)


@functools.lru_cache(maxsize=1_024)
def _said_of(content: str) -> str:
    # Folding a long message costs tens of µs, half of fitting's time: the archive's
    # messages are kept between turns (app.store.recall), so each is folded once, and
    # a text said many times is folded once.
    return " ".join(fold(content).split())


def _where(match: ArchivedMatch) -> tuple[str, int]:
    """A message's place: its conversation (this one: "") and seq."""
    return match.session_id, match.seq


def _quote(match: ArchivedMatch, text: str) -> RecallQuote:
    """`RecallQuote(...)` of `match` quoting `text`, the same value made without the frozen
    dataclass's seven `object.__setattr__` calls (as `archived_match`): fitting makes one
    for each quote weighed, and one for the turn's heading."""
    quote: RecallQuote = _new(RecallQuote)
    quote.__dict__.update(
        message_id=match.message_id,
        seq=match.seq,
        role=match.role,
        created_at=match.created_at,
        excerpt=text,
        conversation=match.conversation,
        session_id=match.session_id if match.conversation else "",
    )
    return quote


def _fitted_quote(
    match: ArchivedMatch,
    terms: Sequence[RecallTerm],
    room: int,
    count: Callable[[str], int],
    overhead: int,
    *,
    compact: bool,
    wanted: Collection[AnswerKind],
    stored: bool = False,
) -> tuple[RecallQuote, str, int] | None:
    """The quote of `match`, its text and its cost, its excerpt shortened (around the match) until
    it fits in `room`; None when even the shortest does not.

    A shorter excerpt's size is worked out from the tokens the longer one took (less
    `overhead`, about what the heading takes), not halved and counted again: a turn
    counts a quote about once, and one that cannot fit is not counted again.
    `stored`: a message quoted whole with its body's count stored (`whole_quote_tokens`)
    costs its heading's count and that (the same figure: see `whole_quote_tokens`).
    """
    stripped = len(match.content.strip())
    shortest = min(stripped, SHORTEST_EXCERPT_CHARS)
    if overhead + shortest / MOST_CHARS_PER_TOKEN > room:
        return None  # not even its shortest excerpt could fit: not worth a count
    size = EXCERPT_CHARS
    body_tokens = match.body_tokens if stored else None
    for _attempt in range(4):
        quote = _quote(match, excerpt(match.content, terms, size, wanted))
        heading = quote_heading(quote, compact=compact)
        text = f"{heading}\n{quote_body(quote.excerpt)}"
        if body_tokens is not None and stripped <= size and len(text) < _ONE_PIECE_CHARS:
            cost = count(heading + "\n") + body_tokens + 2  # whole: its body counted once
        else:
            cost = count(text) + 2  # and the blank line before it
        if cost <= room:
            return quote, text, cost
        length = len(quote.excerpt)
        if length <= SHORTEST_EXCERPT_CHARS:
            return None
        per_char = max(cost - overhead, 1) / length
        if overhead + per_char * SHORTEST_EXCERPT_CHARS > room:
            return None  # even the shortest excerpt would not fit
        size = max(SHORTEST_EXCERPT_CHARS, int((room - overhead) / per_char * 0.95))
    return None
