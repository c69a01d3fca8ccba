"""Ranking what the archive found for a message: Cairn's own scoring (issue 22, items 1–3).

The index (`app.store.recall.RecallIndex.pool`) hands over a deep pool of candidates:
every archived message holding a rarer term, those holding a common one together with
another, the ones written on the days asked about, and the turns around the best of
them. Each is scored here:

- its terms, each worth its weight times how rare it is in the conversation (a word in
  half the messages says little; "octopus" says a lot) — a common word still counts, so
  a question made of common words still finds the message that holds most of them;
- the turn it answers: a reply holds what its question asked about ("What does the
  guitar look like?" — "A deep blue one with an octopus…"), so part of the score of the
  turn before it is its own, and the quote brings that turn along (`Ranked.partner`);
  a user's message Claude asked about right after brings Claude's question and the
  user's answer ("I bought a guitar!" — "What does it look like?" — "An octopus…":
  `Ranked.follow_up`), since the answer names nothing the question asks with;
- the days asked about ("in April", "last week"): messages written then rank first;
- who said it, when the question says ("what did Claude suggest");
- the summaries' search keys (`keyed`): a stretch whose key holds a term ("hobbies")
  counts it for each of its messages, however they word it;
- the best candidate's story (`_same_story`): when it holds several of the question's
  words, a candidate holding one of them and a word of the best's own ranks above one
  holding that word alone — the story's later turns ("Tom's firm lets him work from home"
  after "Tom got the job at the firm in Leeds");
- the kind of fact asked for (recall_kinds), near its terms;
- a span asked about whose words find nothing in it ("How did my race go in April?", the
  race called "the Riverside 10k" then): the span's most telling messages by their own
  words (`span_worth`) — what the user told, and their answers to what Claude asked about
  a thing ("How did the Riverside 10k go yesterday?"), quoted with Claude's question.

Pure: no sqlite3, no Qt. Deterministic for the same pool and query.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from itertools import chain

from app.core.conversation import local_day
from app.core.models import Role
from app.core.recall import (
    COMMON_WORDS,
    ArchivedMatch,
    RecallQuery,
    RecallTerm,
    fact_near,
    fold,
    held_terms,
)
from app.core.recall_dates import CALENDAR_WORDS
from app.core.summary import SearchKey

# The share of the score of the turn a message answers that counts as its own (of the
# terms it does not hold itself), and of the turn before that (Claude asks "What does it
# look like?" about the guitar named just before; the answer names neither).
CONTEXT_SHARE = 0.6
EARLIER_SHARE = 0.3
# The user going on from Claude's reply without being asked anything ("We've decided to
# wait" after "A second dog is a big commitment"): the same subject, less surely; of the
# reply and of the user's turn before it.
CONTINUES_SHARE = 0.3
# A message written on the days asked about; one within `DAY_SLACK` days of a loose
# range ("in May", "a few weeks ago") counts a little more than one far from it.
IN_DAYS = 2.5
NEAR_DAYS = 1.3
OUT_OF_DAYS = 0.6
DAY_SLACK = 3
# Written by the side the question asks about ("what did Claude suggest").
RIGHT_SIDE = 1.3
# Holding a fact of the kind asked for, near its terms; looked for in the best this many.
KIND_FACTOR = 1.35
KIND_READ = 60
# A message that holds no term but was written on an exact day asked about ("what did
# we talk about last Tuesday?").
ON_THE_DAY = 0.5
# A term's rarity: log((messages + 1) / (holding + 0.5)), never below this.
LEAST_RARITY = 0.2
# A term a summary's search key holds counts this much for each message of its stretch
# (the key says what the stretch is about; the message may say it in other words).
KEY_SHARE = 0.8
# The messages search keys may add as candidates, and of one key (its stretch's first).
KEYED_AT_MOST = 40
KEY_SOURCES_AT_MOST = 12
# The story's own words (issue 22, several turns): when the best candidate holds two or
# more of the question's words ("Tom got the job at the firm in Leeds; the commute's
# long"), a candidate holding one of them and a word of the best's own ("Tom's firm lets
# him work from home") is likelier the same story told weeks later than one holding the
# question's word alone ("Tom and I went for a walk"). Each such word (at most
# `STORY_WORDS_AT_MOST`) adds this share of the worth of the best's question words (their
# mean); a word in more than `STORY_COMMON` of those candidates says nothing of the story.
# A small share: it orders the candidates a question's word alone found, not those its
# words found more of (at 0.3 the planted facts' templated filler, sharing "weekend" with
# the best, passed the fact's question: evidence at 2k 0.99 -> 0.98). Only among the
# pool's candidates: searching the archive again with the best quotes' words found noise
# (words6: dev 8k 0.88 -> 0.79).
STORY_SHARE = 0.1
STORY_WORDS_AT_MOST = 2
STORY_COMMON = 0.25
STORY_WORD_LETTERS = 4
# A span's message found by no word (`span_worth`, 0..1) scores at most this: below a
# message holding a rarer term written outside the span (at least ~1 after OUT_OF_DAYS),
# so it fills the place the words leave empty and never takes one they found.
FILLED_SCORE = 0.4
# A user's message answering Claude's question: the question's worth counts as its own
# (what Claude asked about names the thing; "I did it! 57:42 on the clock" names none).
ASKED_SHARE = 1.0
# A message's worth is its most telling words' (a long message is not worth more for
# its length).
WORTH_WORDS = 4
# Of each message, the start its worth is read from.
SPAN_TEXT = 200


_LETTERS = re.compile(r"[^\W\d_]+")


@dataclass(frozen=True)
class RecallPool:
    """What the index found for a query.

    Attributes:
        matches: the candidates (archived messages of the conversation).
        filled: the candidates taken from the span asked about by their own worth.
        neighbours: archived turns just before or after a candidate, by seq (candidates
            included), for the turn a message answers and the quote's partner.
        frequency: per term of the query, how many of the conversation's messages hold
            it (capped); empty when unknown (no index: every term counts as rare).
        size: how many messages the conversation has.
    """

    matches: tuple[ArchivedMatch, ...] = ()
    neighbours: Mapping[int, ArchivedMatch] = field(default_factory=dict)
    frequency: tuple[int, ...] = ()
    size: int = 0
    # The span's messages taken in by their own worth (seq -> `span_worth`, 0..1) when
    # the question's words found nothing in the span it asks about.
    filled: Mapping[int, float] = field(default_factory=dict)
    # The terms each of this conversation's neighbours holds (seq -> term indexes), as
    # the index found them, for a neighbour kept without them (`ArchivedMatch.held`
    # None): ~180 a turn, not made again with them (issue 20).
    held: Mapping[int, frozenset[int]] = field(default_factory=dict)


@dataclass(frozen=True)
class Ranked:
    """A candidate with its score, and the turn it should be quoted with (or None)."""

    match: ArchivedMatch
    score: float
    partner: ArchivedMatch | None = None
    # The user's message Claude asked about right after, and the user's answer: "I bought
    # a guitar!" — "What does it look like?" — "Deep blue, with an octopus" (two hops).
    follow_up: tuple[ArchivedMatch, ...] = ()

    @property
    def quoted_with(self) -> tuple[ArchivedMatch, ...]:
        """The turns to quote it with, in the order they are worth a place."""
        return ((self.partner,) if self.partner is not None else ()) + self.follow_up


_new = object.__new__


def _ranked(
    match: ArchivedMatch,
    score: float,
    partner: ArchivedMatch | None,
    follow_up: tuple[ArchivedMatch, ...],
) -> Ranked:
    """`Ranked(match, score, partner, follow_up)`, the same value made without the frozen
    dataclass's `object.__setattr__` calls (~240 a turn at bench_path's 155k:100k)."""
    ranked: Ranked = _new(Ranked)
    ranked.__dict__.update(match=match, score=score, partner=partner, follow_up=follow_up)
    return ranked


def _rescored(item: Ranked, score: float) -> Ranked:
    """`replace(item, score=score)` without `dataclasses.replace`'s field walk and checks
    (~40 a turn at bench_path's 155k:100k, ~8 µs each)."""
    return _ranked(item.match, score, item.partner, item.follow_up)


def term_values(terms: Sequence[RecallTerm], frequency: Sequence[int], size: int) -> list[float]:
    """What holding each term is worth: its weight times its rarity in the conversation."""
    if len(frequency) != len(terms) or size <= 0:
        return [term.weight for term in terms]
    return [
        term.weight * max(LEAST_RARITY, math.log((size + 1) / (held + 0.5)))
        for term, held in zip(terms, frequency, strict=True)
    ]


def own_score(held: frozenset[int], values: Sequence[float]) -> float:
    return sum(map(values.__getitem__, held))  # the same sum, in C: ~300 calls a turn


def _lacking(
    other: tuple[frozenset[int], float], mine: frozenset[int], values: Sequence[float]
) -> float:
    """The worth of the terms `other` holds that `mine` lacks (`other`: its terms and their
    worth)."""
    held, worth = other
    return worth if held.isdisjoint(mine) else own_score(held - mine, values)


def keyed(
    keys: Iterable[SearchKey], terms: Sequence[RecallTerm]
) -> tuple[tuple[int, frozenset[int]], ...]:
    """The messages the summaries' search `keys` point to for `terms` (a key holding one
    of them, a cue aside), each with the terms its keys hold; the keys holding the most
    terms first, at most `KEYED_AT_MOST` messages."""
    topical = [n for n, term in enumerate(terms) if not term.cue]
    if not topical:
        return ()
    found: list[tuple[int, int, frozenset[int]]] = []  # (-terms held, order, held)
    sources: list[list[int]] = []
    for key in keys:
        held = held_terms(key.words, terms) & frozenset(topical)
        if held:
            found.append((-len(held), len(found), held))
            sources.append(key.sources[:KEY_SOURCES_AT_MOST])
    merged: dict[int, frozenset[int]] = {}
    for _size, order, held in sorted(found):
        for seq in sources[order]:
            if seq not in merged and len(merged) >= KEYED_AT_MOST:
                continue
            merged[seq] = merged.get(seq, frozenset()) | held
    return tuple(sorted(merged.items()))


def rank_pool(
    pool: RecallPool, query: RecallQuery, *, day_of: Callable[[ArchivedMatch], date] | None = None
) -> list[Ranked]:
    """The pool's messages, best first, each with the turn to quote it with."""
    terms = query.terms
    values = term_values(terms, pool.frequency, pool.size)
    day_of = day_of or _day
    everyone = {(m.session_id, m.seq): m for m in pool.neighbours.values()}
    everyone |= {(m.session_id, m.seq): m for m in pool.matches}
    subject = any(not term.cue for term in terms)
    by_key = {seq: held for seq, held in query.keyed}
    # Each message's terms and their worth, once: a message is also weighed as the turn
    # before (and the one before that) of its neighbours. A turn's ~240 messages hold a
    # dozen different sets of terms (one value each, from the index): each set's worth
    # is added up once (by the set itself, not an equal one: the same order of addition).
    worth: dict[tuple[str, int], tuple[frozenset[int], float]] = {}
    set_worth: dict[int, float] = {}
    # The same, and the messages, by conversation and then by seq: a message's neighbours
    # are looked up by seq, not by a key made for each (~5 a message).
    places: dict[str, dict[int, ArchivedMatch]] = {}
    weights: dict[str, dict[int, tuple[frozenset[int], float]]] = {}
    pool_held = pool.held
    for key, match in everyone.items():
        session_id, seq = key
        terms_held = match.held
        if terms_held is None:
            terms_held = pool_held.get(seq) if not session_id else None
            if terms_held is None:
                terms_held = held_terms(match.content, terms)
        own = set_worth.get(id(terms_held))
        if own is None:
            own = set_worth[id(terms_held)] = own_score(terms_held, values)
        worth[key] = weighed = terms_held, own
        if session_id not in places:
            places[session_id], weights[session_id] = {}, {}
        places[session_id][seq] = match
        weights[session_id][seq] = weighed
    days = query.days
    asked_role = query.role
    filled_by_seq = pool.filled
    assistant, user = Role.ASSISTANT, Role.USER
    ranked: list[Ranked] = []
    # Each one's sort key (`ranked`'s order below), made as it is ranked: sorted in C.
    keys: list[tuple[float, int, int]] = []
    for (session_id, seq), match in everyone.items():
        here, theirs = places[session_id], weights[session_id]
        mine, own = theirs[seq]
        role = match.role
        borrowed = 0.0  # what its summary's key says it is about (words5, issue 22)
        if not session_id and seq in by_key:
            borrowed = KEY_SHARE * own_score(by_key[seq] - mine, values)
        before = here.get(seq - 1)
        context = 0.0
        answers = False
        if before is not None and before.role is not role:
            # Claude's reply answers the user's turn; the user's turn answers Claude's when
            # Claude asked something, else it goes on from it (the same subject, less surely).
            # ("?" in its last 300 characters, looked for in place: no copy of them.)
            answers = role is assistant or before.content.find("?", -300) >= 0
            share, earlier_share = (
                (CONTEXT_SHARE, EARLIER_SHARE) if answers else (CONTINUES_SHARE, CONTINUES_SHARE)
            )
            # Only the terms it does not hold itself: a reply that repeats the question's
            # words is not worth them twice.
            context = share * _lacking(theirs[seq - 1], mine, values)
            earlier = theirs.get(seq - 2)
            if earlier is not None:
                # The user answering Claude's question about what they said just before.
                context += earlier_share * _lacking(earlier, mine, values)
        # A message's borrowed worth counts once (words5): from its key or from the turns
        # around it, the larger. Added up, a key and the turn before that both name "guest
        # list" lifted a reply holding neither word above the message holding both (planted
        # facts at 2k with keys: 0.985 -> 0.96).
        score = own + (context if context >= borrowed else borrowed)  # max(), no call
        filled = not session_id and score <= 0 and seq in filled_by_seq
        if filled:
            score = FILLED_SCORE * filled_by_seq[seq]
        if score <= 0:
            if days is None or not days.exact or not days.holds(day_of(match)):
                continue
            score = ON_THE_DAY
        if days is not None:
            day = day_of(match)
            if days.holds(day):
                score *= IN_DAYS
            elif not days.exact and days.near(day, DAY_SLACK):
                score *= NEAR_DAYS
            else:
                score *= OUT_OF_DAYS
        if asked_role is not None and role is asked_role:
            score *= RIGHT_SIDE
        partner = None
        follow_up: tuple[ArchivedMatch, ...] = ()
        if answers and (context > own or role is assistant or filled):
            partner = before  # what it answers gives it its meaning (a reply, always)
        elif match.content.rstrip().endswith("?"):
            partner = here.get(seq + 1)  # a question: its answer
        if partner is None and role is user:
            follow_up = _asked_about(here, seq)
        ranked.append(_ranked(match, score, partner, follow_up))
        keys.append((-score, len(match.content), -seq))
    # Equal scores: the shorter message first (it is more about what it holds), then the
    # newest (a stable sort, as of the items by the same keys).
    ranked = [ranked[n] for n in sorted(range(len(ranked)), key=keys.__getitem__)]
    ranked = _same_story(ranked, terms, values, worth)
    if query.wanted:
        # The kind of fact asked for, near the terms: read in the best few only (finding
        # facts costs a pass of the fact ledger's finders over the text).
        best = ranked[:KIND_READ]
        for n, item in enumerate(best):
            match = item.match
            topical = any(not terms[i].cue for i in worth[match.session_id, match.seq][0])
            wanted = topical or not subject
            if wanted and fact_near(match.content, terms, query.wanted):
                best[n] = _rescored(item, item.score * KIND_FACTOR)
        ranked = (
            sorted(best, key=lambda r: (-r.score, r.match.rank, -r.match.seq)) + ranked[KIND_READ:]
        )
    return ranked


def _same_story(
    ranked: list[Ranked],
    terms: Sequence[RecallTerm],
    values: Sequence[float],
    worth: Mapping[tuple[str, int], tuple[frozenset[int], float]],
) -> list[Ranked]:
    """`ranked` with the candidates that tell the best one's story lifted (`STORY_SHARE`),
    when the best holds two or more of the question's own words (not cues or synonyms);
    as it was otherwise."""
    if len(ranked) < 3:
        return ranked
    topical = frozenset(n for n, term in enumerate(terms) if not term.cue and term.weight >= 1)
    best = ranked[0].match
    held = worth[best.session_id, best.seq][0] & topical
    if len(held) < 2:
        return ranked
    asked = {fold(word) for term in terms for word in (*term.words, *term.forms)}
    story = _story_words(best.content) - asked
    if not story:
        return ranked
    # Only a candidate holding one of the question's words: one holding more is found by
    # them already, and lifting it by the best's words lifted a subject's filler over the
    # fact ("guest list" planted facts at 2k-16k: 0.99 -> 0.98).
    # Of each, its words among the story's (`_words_of`: the same as among its own story
    # words, the story's being such words; not filtered and kept a second time).
    found = {
        id(item): _story_held(story, item.match.content)
        for item in ranked[1:]
        if len(worth[item.match.session_id, item.match.seq][0] & topical) == 1
    }
    common = max(2, int(len(ranked) * STORY_COMMON))
    seen: dict[str, int] = {}
    for words in found.values():
        for word in words:
            seen[word] = seen.get(word, 0) + 1
    telling = frozenset(word for word in story if 0 < seen.get(word, 0) <= common)
    if not telling:
        return ranked
    lift = STORY_SHARE * sum(values[n] for n in held) / len(held)
    lifted = [ranked[0]]
    for item in ranked[1:]:
        shared = len(found.get(id(item), frozenset()) & telling)
        if shared:
            item = _rescored(item, item.score + lift * min(shared, STORY_WORDS_AT_MOST))
        lifted.append(item)
    lifted[1:] = sorted(lifted[1:], key=lambda r: (-r.score, len(r.match.content), -r.match.seq))
    return lifted


@functools.lru_cache(maxsize=256)
def _story_words(content: str) -> frozenset[str]:
    """The folded words of `content` that could name a story's things: not common, not
    calendar words, at least `STORY_WORD_LETTERS` letters. No Python call a word: a
    candidate of the natural archive (~1,000 characters) took ~0.3 ms a word at a time,
    and a turn that lifts a story reads ~55 (13-18 ms of bench_path's 155k:100k turn,
    issue 20)."""
    long = {word for word in _words_of(content) if len(word) >= STORY_WORD_LETTERS}
    return frozenset(long - _NO_STORY)


@functools.lru_cache(maxsize=1_024)
def _words_of(content: str) -> frozenset[str]:
    """The folded words of `content`: its `_LETTERS` runs, as `fold` leaves them (kept for
    the turns after: a turn weighs ~300 messages, some again)."""
    runs = _plain_runs(content)
    return frozenset(runs if runs is not None else _letter_runs(fold(content)))


def _story_held(story: frozenset[str], content: str) -> frozenset[str]:
    """`story & _words_of(content)`, the same words: `content`'s runs of letters matched
    against the story's, not made a set of their own (nor folded: `_plain_runs`). A turn
    that lifts a story weighs ~55 candidates it has not read before: a message of the
    natural archive that is not ASCII ("’", "£"; ~1,600 characters) took ~58 µs as
    `_words_of`, ~25 µs so (issue 20)."""
    runs = _plain_runs(content)
    return story & _words_of(content) if runs is None else story.intersection(runs)


def _plain_runs(content: str) -> list[str] | None:
    """`_letter_runs(fold(content))`, the same runs, when every character of `content`
    past ASCII is `_inert` (most: "’", "“", "—", "£"): its ASCII letters lowered, every
    other character a break, in one pass in C (`_LOWER_LETTERS`) — `fold` leaves such a
    text as `str.lower` does, and its runs of letters are its ASCII ones. None otherwise."""
    if not content.isascii():
        others = frozenset(_NOT_ASCII.findall(content))
        if not others <= _INERT and not all(map(_inert, others - _INERT)):
            return None
    return content.encode("utf-8", "surrogatepass").translate(_LOWER_LETTERS).decode().split()


# Characters past ASCII found `_inert`, learned as texts are read (a few dozen in most
# conversations; at most INERT_KEPT, ~250 KB: one past them is asked again each time).
INERT_KEPT = 4_096
_INERT: set[str] = set()


def _inert(character: str) -> bool:
    """Whether `fold` and `str.lower` leave `character` as it is in any text — no case, no
    decomposition, no combining mark, in the first plane — and it is no letter or digit
    (`_letter_runs` breaks runs at it). Remembered when it is (`_INERT`)."""
    if (
        character.isalnum()
        or character.casefold() != character
        or character.lower() != character
        or ord(character) > 0xFFFF
        or unicodedata.combining(character)
        or unicodedata.normalize("NFKD", character) != character
    ):
        return False
    if len(_INERT) < INERT_KEPT:
        _INERT.add(character)
    return True


def _letter_runs(text: str) -> list[str]:
    """`_LETTERS.findall(text)`, the same runs: when every letter of `text` is ASCII (most
    text, and most of the rest once folded: "é" is "e", "’" and "£" are no letters), in
    one pass in C — its other characters made spaces (`_ASCII_LETTERS`) and split at —
    not the regex's test of each character (~120 µs of a 1,500-character message)."""
    if not text.isascii():
        others = set(_NOT_ASCII.findall(text))
        if any(character.isalnum() and not character.isdecimal() for character in others):
            return _LETTERS.findall(text)  # a letter the regex knows ("ø", "λ", "日")
    # Each character past ASCII is bytes past 127 in UTF-8 (a lone surrogate too, passed):
    # spaces, as its other ones.
    return text.encode("utf-8", "surrogatepass").translate(_ASCII_LETTERS).decode().split()


# What `_LETTERS` takes for a letter beyond ASCII is what Python's regular expressions do:
# a character `isalnum` says is one, less the decimal digits (`\d`).
_NOT_ASCII = re.compile(r"[^\x00-\x7f]")
# Every byte but an ASCII letter as a space: what `split` leaves of an ASCII text is its
# `_LETTERS` runs (digits and the underscore split them too).
_ASCII_LETTERS = bytes(
    code if chr(code).isascii() and chr(code).isalpha() else 32 for code in range(256)
)
# The same, each capital its small letter: an ASCII text's `_LETTERS` runs lowered.
_LOWER_LETTERS = bytes(
    ord(chr(code).lower()) if chr(code).isascii() and chr(code).isalpha() else 32
    for code in range(256)
)
_NO_STORY = COMMON_WORDS | CALENDAR_WORDS


def span_worth(messages: Sequence[tuple[int, Role, str]]) -> dict[int, float]:
    """How telling each of a span's messages (seq, role, text; in seq order) is by its own
    words, 0..1, when the question's words found none of them: a word said in few of the
    span's messages is worth more (its rarity there), a message its `WORTH_WORDS` most
    telling words; a user's answer to Claude's question also its question's worth ("How
    did the Riverside 10k go yesterday?" — "I did it! 57:42 on the clock"). Greetings and
    templated chatter, said again and again, are worth little; Claude's greeting
    questions ("How was your day?") hold no word that tells."""
    if not messages:
        return {}
    words, little = _span_word_sets([text[:SPAN_TEXT] for _seq, _role, text in messages])
    held = Counter(chain.from_iterable(words))
    # A word's rarity by how many of the span's messages hold it; each message's best
    # words are its least held ones, looked up and sorted in C.
    size = len(messages) + 1
    rarity = [math.log(size / (count + 0.5)) for count in range(size + 1)]
    # The words that say little, left in each message's words: held by more messages than
    # there are, they sort after its telling words and weigh nothing (0.0 added: the same
    # sums). One look-up a distinct word, not one a word of each message (~0.2 ms a span).
    rarity.append(0.0)
    for word in little.intersection(held):
        held[word] = size + 1
    own = [
        sum(map(rarity.__getitem__, sorted(map(held.__getitem__, found))[:WORTH_WORDS]))
        for found in words
    ]
    worth: dict[int, float] = {}
    for n, (seq, role, _text) in enumerate(messages):
        value = own[n]
        if n and role is Role.USER:
            before_seq, before_role, before_text = messages[n - 1]
            if (
                before_seq == seq - 1
                and before_role is Role.ASSISTANT
                and before_text.rstrip().endswith("?")
            ):
                value += ASKED_SHARE * own[n - 1]
        worth[seq] = value
    best = max(worth.values())
    return {seq: value / best for seq, value in worth.items()} if best > 0 else {}


def _telling_words(content: str) -> frozenset[str]:
    """The folded words of `content` that may tell what it is about — of four characters
    or more, neither common nor calendar words — and its numbers ("10k", "57"): one regex
    pass and set differences, no Python call a word (a span's 240 messages are read
    cold: ~60 ms a turn at 100k as `_story_words` did it)."""
    found = frozenset(_TELLING.findall(content.lower() if content.isascii() else fold(content)))
    return found - _SAYS_LITTLE


# Runs of four letters or digits and more, and numbers ("57", "10k"); a run is not split
# (a pattern that looks for letters alone and digits anywhere took twice the time).
_TELLING = re.compile(r"[^\W_]{4,}|\d[^\W_]*")
_SAYS_LITTLE = COMMON_WORDS | CALENDAR_WORDS | frozenset("0123456789")


def _span_word_sets(texts: Sequence[str]) -> tuple[list[frozenset[str]], frozenset[str]]:
    """Each of `texts`' words, and the words among them that say little: each text's
    `_telling_words` are its words less those. A span of ASCII texts without a digit
    (most) is lowered and split at what is not a letter in one pass in C, its words of
    one to three letters and its common words left for the caller to drop (a look-up of
    each word of each text in ~18,000 took ~0.3 ms of a span's 200 messages): the regex
    walks each character in turn, and a span's 200 messages took ~1.4 ms of a 100k
    archive's 7 ms turn that way (~0.75 ms so; bench_recall). Otherwise each text on its
    own: one without a digit whose characters past ASCII fold as `str.lower` leaves them
    (`_plain_runs`: "’", "£"…) the same way, its words of one to three letters and its
    common words dropped by the caller; any other the regex, its words already without
    those that say little. (A span of 200 with one "’" or one digit in it was all read by
    the regex: ~3.8 ms, the natural archive's "in June"; ~0.5 ms so.)"""
    joined = "\0".join(texts)
    if joined.isascii():
        lowered = joined.lower()
        if not any(digit in lowered for digit in "0123456789"):
            parts = lowered.encode().translate(_LETTER_RUNS).decode().split("\0")
            if len(parts) == len(texts):  # no text held a NUL of its own
                return [frozenset(part.split()) for part in parts], _short_or_little()
    words: list[frozenset[str]] = []
    plain: set[str] = set()
    for text in texts:
        runs = None if _ASCII_DIGIT.search(text) else _plain_runs(text)
        if runs is None:
            words.append(_telling_words(text))
        else:
            found = frozenset(runs)
            words.append(found)
            plain |= found
    # The words that say little are only in the plain texts' words (the regex's have
    # none): those of one to three letters and the common ones, found among them — not
    # `_short_or_little`'s ~18,000 made (~3 ms, once) for the few hundred there are.
    return words, frozenset(word for word in plain if len(word) < 4) | _SAYS_LITTLE.intersection(
        plain
    )


_ASCII_DIGIT = re.compile(r"[0-9]")


# Every ASCII character but a letter, a digit or the NUL between texts (and every byte
# past ASCII, never met: the text is ASCII) as a space: in an ASCII text without a
# digit, `_TELLING`'s runs are what `split` leaves (the underscore splits them too).
_LETTER_RUNS = bytes(
    code if code == 0 or (code < 128 and chr(code).isalnum()) else 32 for code in range(256)
)


@functools.cache
def _short_or_little() -> frozenset[str]:
    """`_SAYS_LITTLE` and every word of one to three ASCII letters (~18,000; made once,
    on a span's first read, ~3 ms)."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    short = set(letters)
    for length in (2, 3):
        short.update(map("".join, itertools.product(letters, repeat=length)))
    return frozenset(short) | _SAYS_LITTLE


def _asked_about(turns: Mapping[int, ArchivedMatch], seq: int) -> tuple[ArchivedMatch, ...]:
    """Claude's question right after the user's turn `seq` (of `turns`, one conversation's
    by seq), and the user's answer to it (the next turns, when Claude's reply ends by
    asking); () otherwise."""
    asked = turns.get(seq + 1)
    answer = turns.get(seq + 2)
    if (
        asked is None
        or answer is None
        or asked.role is not Role.ASSISTANT
        or answer.role is not Role.USER
        or not asked.content.rstrip().endswith("?")
    ):
        return ()
    return (asked, answer)


def _answers(match: ArchivedMatch, before: ArchivedMatch) -> bool:
    """Whether `match` answers the turn `before` it: Claude's reply always answers the
    user's turn; the user's turn answers Claude's only when Claude asked something."""
    if before.role is match.role:
        return False
    return match.role is Role.ASSISTANT or "?" in before.content[-300:]


def _day(match: ArchivedMatch) -> date:
    return _day_of(match.created_at)


@functools.lru_cache(maxsize=8_192)
def _day_of(moment: datetime) -> date:
    """The local day of a message's time: a kept message is weighed again turn after turn."""
    return date.fromordinal(local_day(moment))


__all__ = ["Ranked", "RecallPool", "fold", "keyed", "rank_pool", "span_worth", "term_values"]
