"""Open questions: a question, or a sentence marked open ("TBD", "not sure whether"…),
that nobody of the other role answered afterwards or that deliberates a choice, unless
a later decision resolves it (app.core.extract)."""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence

from app.core.extract_text import APOS, Decision
from app.core.text_scan import holds_any, search_at, word_set, word_starts

OPEN_MARKER = re.compile(
    r"\b(?:open\s+questions?|TBD|TBC|to\s+be\s+(?:decided|determined|confirmed)|"
    r"not\s+sure\s+(?:whether|if|yet|about|which|what|how)|"
    r"(?:still\s+)?(?:need|have)\s+to\s+(?:decide|figure\s+out|work\s+out)|undecided|"
    r"unclear\s+(?:whether|if|how|what|which)|unresolved|"
    rf"haven{APOS}t\s+(?:yet\s+)?(?:decided|figured\s+out)|yet\s+to\s+(?:decide|be\s+decided))\b",
    re.IGNORECASE,
)
# Folded literals one of which every open marker holds.
OPEN_WORDS = (
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
# The folded words `OPEN_MARKER` can begin with.
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
DELIBERATION = re.compile(
    r"\b(?:should|shall)\s+(?:we|i)\b|\bwhich\b|\bwho\s+(?:will|should|is\s+going)\b|"
    r"\bwhen\s+(?:should|will|do|can|shall)\s+we\b|\bwhat\s+about\b|"
    r"\bhow\s+(?:should|do|shall)\s+we\b|\bor\b",
    re.IGNORECASE,
)
DELIBERATES = ("should", "shall", "which", "who", "when", "what", "how", "or")
_TOKEN = re.compile(r"[A-Za-z0-9][\w.\-]*[A-Za-z0-9]|[A-Za-z0-9]")
_STOPWORDS = word_set(
    "the and for are but not you all any can had her was one our out day get has him his "
    "how man new now old see two way who boy did its let put say she too use that with "
    "have this will your from they know want been good much some time very when come "
    "here just like long make many more only over such take than them well were what "
    "which where would could should there their these those about after again also "
    "because before being between both does doing during each into most other same so "
    "then through under until while going think sure okay yes please thanks thank need "
    "really maybe better best still book pick choose use go with we i do it"
)


def is_marked_open(sentence: str, folded: str) -> bool:
    """`OPEN_MARKER.search`, tried where one of its alternatives can begin."""
    if not holds_any(folded, OPEN_WORDS):
        return False
    return search_at(OPEN_MARKER, sentence, word_starts(folded, _OPEN_STARTS)) is not None


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


class Resolutions:
    """Which questions a later decision settled (see `_content_words`): a shared
    distinctive word, or two shared ordinary ones. Built once, so checking every
    question costs O(its words), not O(decisions)."""

    def __init__(self, decisions: Sequence[Decision]) -> None:
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
