"""Search keys: what a condensed stretch is findable by (issue 22, Build item 2).

A summary's search keys (`SearchKey`) are words someone might later ask about a stretch
with, and the messages of that stretch. A model writes them in LLM and hybrid summaries;
by rule they are derived here from the exchanges themselves (`rule_search_keys`): an
exchange — a user's turn and Claude's reply, or Claude's question, the user's answer and
the reply — with the turn before it is about what more than one of its turns says
("How did the first Saturday reading session go?" — "Eleven kids turned up…" — "Eleven
is a great turnout for a first week": *first, eleven*), and each of its messages is
findable by that topic, however it words it. Only the topic, not every word: a key makes
every message of its exchange a candidate and counts its words for each (recall_rank's
KEY_SHARE), so a key of all the exchange's words lifted "Okay, off to bed" with the
question's names (natural eval, dev questions missed at 8k, rule: 3 without keys, 7 with
every word, 2 with the topic). Never shown to Claude: recall looks them up
(`app.core.recall_rank.keyed`).

A conversation can hold thousands of keys (a compressed summary keeps its children's),
and reading each against the question's terms costs ~13 µs a key: `KeyIndex` reads a
summary's keys once, and a turn then reads only the keys that hold one of the words a
term can match (`keys_for`) — the same keys, in the same order, `keyed` would have kept.

Pure: no sqlite3, no Qt.
"""

from __future__ import annotations

import math
import re
import threading
from collections import Counter, OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import timedelta

from app.core.models import Message, Role
from app.core.recall import RecallTerm, fold, is_common_word
from app.core.redaction import redact_secrets
from app.core.summary import MAX_KEY_CHARS, MAX_SEARCH_KEYS, SearchKey, Summary

# The keys of one summary and the characters of one, as for a model's keys.
MAX_RULE_KEYS = MAX_SEARCH_KEYS
MAX_RULE_KEY_CHARS = MAX_KEY_CHARS
# A word shorter than this says little on its own ("go", "ok", "10"); codes are kept by the
# ledger and the index, not here.
SHORTEST_KEY_WORD = 3
# A word in more than this share of a stretch's exchanges (at least `COMMON_FROM` of them)
# says nothing about which: "great", "lovely" in every reply.
COMMON_SHARE = 0.25
COMMON_FROM = 8
# The turn an exchange answers: only its first words count (a long reply's tail is about
# something else), after the exchange's own.
ANSWERED_WORDS = 12
# Runs of letters and digits, as the full-text index (and recall) splits text.
_WORD = re.compile(r"[^\W_]+")
# The turn before counts only when written this close to the exchange (the same sitting,
# not the end of another day's).
SAME_SITTING = timedelta(hours=3)
# The exchange's topic: a word said in at least this many of its turns.
TOPIC_TURNS = 2
# Summaries whose keys `KeyIndex` keeps read (a conversation's active ones, a few others).
INDEXED_SUMMARIES = 64


def _salient(text: str) -> list[str]:
    """The words of `text` worth searching by, folded, in order, each once."""
    seen: set[str] = set()
    words: list[str] = []
    for word in _WORD.findall(fold(redact_secrets(text))):
        if (
            len(word) >= SHORTEST_KEY_WORD
            and not word.isdigit()
            and not is_common_word(word)
            and word not in seen
        ):
            seen.add(word)
            words.append(word)
    return words


def _stem(word: str) -> str:
    return word[:-1] if word.endswith("s") and len(word) > 3 else word


def _exchanges(messages: Sequence[Message]) -> list[list[Message]]:
    """The stretch cut into exchanges: each begins at a user's turn, unless that turn
    answers Claude's question just before it (then it belongs to the question's)."""
    exchanges: list[list[Message]] = []
    for message in messages:
        previous = exchanges[-1][-1] if exchanges else None
        asked = (
            previous is not None
            and previous.role is Role.ASSISTANT
            and previous.content.rstrip().endswith("?")
        )
        if not exchanges or (message.role is Role.USER and not asked):
            exchanges.append([message])
        else:
            exchanges[-1].append(message)
    return exchanges


def _grouped(exchanges: list[list[Message]], most: int) -> list[list[Message]]:
    """At most `most` groups of consecutive exchanges, as even as they go."""
    if len(exchanges) <= most:
        return exchanges
    size = math.ceil(len(exchanges) / most)
    return [
        [message for exchange in exchanges[start : start + size] for message in exchange]
        for start in range(0, len(exchanges), size)
    ]


def _clipped(words: Iterable[str], chars: int) -> str:
    kept: list[str] = []
    used = 0
    for word in words:
        if used + len(word) + (1 if kept else 0) > chars:
            break
        used += len(word) + (1 if kept else 0)
        kept.append(word)
    return " ".join(kept)


def rule_search_keys(messages: Sequence[Message]) -> list[SearchKey]:
    """Search keys for a stretch of `messages`, by rule: for each exchange (at most
    `MAX_RULE_KEYS`: neighbouring exchanges share one beyond that), its topic — the
    salient words said in at least `TOPIC_TURNS` of its turns and the turn it answers
    (the message before it, when written in the same sitting), the user's first — and the
    exchange's messages as sources. Words in more than a quarter of the stretch's
    exchanges are left out (they say nothing about which)."""
    ordered = sorted(messages, key=lambda message: message.seq)
    groups = _grouped(_exchanges(ordered), MAX_RULE_KEYS)
    own = [[_salient(message.content) for message in group] for group in groups]
    spread: Counter[str] = Counter(word for lists in own for word in set().union(*lists))
    common = (
        {word for word, count in spread.items() if count > COMMON_SHARE * len(groups)}
        if len(groups) >= COMMON_FROM
        else set()
    )
    previous: dict[int, Message | None] = {}
    last: Message | None = None
    for message in ordered:
        previous[message.seq] = last
        last = message
    keys: list[SearchKey] = []
    for group, lists in zip(groups, own, strict=True):
        by_side = sorted(
            range(len(group)), key=lambda n: (group[n].role is not Role.USER, group[n].seq)
        )
        turns = [lists[n] for n in by_side]
        answered = previous[group[0].seq]
        if answered is not None and group[0].created_at - answered.created_at <= SAME_SITTING:
            turns.append(_salient(answered.content)[:ANSWERED_WORDS])
        said_in: Counter[str] = Counter(_stem(w) for turn in turns for w in set(turn))
        words = [w for turn in turns for w in turn if said_in[_stem(w)] >= TOPIC_TURNS]
        text = _clipped(
            dict.fromkeys(word for word in words if word not in common), MAX_RULE_KEY_CHARS
        )
        if text:
            keys.append(SearchKey(words=text, sources=[message.seq for message in group]))
    return keys


# --- finding the keys that hold a term without reading each --------------------------------


@dataclass(frozen=True)
class _SummaryKeys:
    keys: tuple[SearchKey, ...]
    # folded word -> the positions of the keys holding it
    holding: dict[str, tuple[int, ...]]


def _anchors(term: RecallTerm) -> set[str]:
    """Words one of which a text must hold to hold `term` (`app.core.recall.holds`): any
    of its forms, or the first word of each phrase it may be written as."""
    found = set(term.forms)
    for phrase in ([fold(word) for word in term.words], *term.alternatives):
        if phrase:
            found.add(phrase[0])
    return found


class KeyIndex:
    """The search keys of summaries, each summary's read once (summaries do not change
    once made: an id names one content), by the words they hold.

    `keys_for` gives the keys of `summaries` that may hold one of `terms`, in the order
    the summaries list them: a superset of those `recall_rank.keyed` keeps, read in
    microseconds instead of every key in turn. Bounded: the keys of the
    `INDEXED_SUMMARIES` summaries read last are kept.
    """

    def __init__(self) -> None:
        self._read: OrderedDict[str, _SummaryKeys] = OrderedDict()
        self._lock = threading.Lock()  # replies' workers share one

    def keys_for(
        self, summaries: Sequence[Summary], terms: Sequence[RecallTerm]
    ) -> list[SearchKey]:
        anchors = set().union(*(_anchors(term) for term in terms if not term.cue))
        if not anchors:
            return []
        found: list[SearchKey] = []
        for summary in summaries:
            if not summary.content.search_keys:
                continue
            indexed = self._indexed(summary)
            positions = sorted({p for word in anchors for p in indexed.holding.get(word, ())})
            found.extend(indexed.keys[p] for p in positions)
        return found

    def _indexed(self, summary: Summary) -> _SummaryKeys:
        with self._lock:
            known = self._read.get(summary.id)
            if known is not None:
                self._read.move_to_end(summary.id)
                return known
        keys = tuple(summary.content.search_keys)
        holding: dict[str, list[int]] = {}
        for position, key in enumerate(keys):
            for word in set(_WORD.findall(fold(key.words))):
                holding.setdefault(word, []).append(position)
        indexed = _SummaryKeys(keys, {word: tuple(ps) for word, ps in holding.items()})
        with self._lock:
            self._read[summary.id] = indexed
            while len(self._read) > INDEXED_SUMMARIES:
                self._read.popitem(last=False)
        return indexed


__all__ = ["KeyIndex", "rule_search_keys"]
