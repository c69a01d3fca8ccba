"""Decisions: "decided", "let's go with/use/pick…", "we'll use/go with…", "agreed",
"settled on", "final answer/decision"…, not in a question and not negated ("we haven't
decided") (app.core.extract)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from app.core.extract_text import APOS
from app.core.text_scan import finditer_at

DECISION = re.compile(
    r"\b(?:decided|decision\s*(?:is|was|:)"
    rf"|let{APOS}?s\s+(?:go\s+with|use|pick|choose|stick\s+with|book|take|settle\s+on)"
    rf"|we(?:{APOS}ll|\s+will|\s+shall|{APOS}re\s+going\s+to|\s+are\s+going\s+to)\s+"
    r"(?:use|go\s+with|pick|choose|stick\s+with|adopt|switch\s+to|book|take)"
    r"|(?:we|i)\s+(?:chose|picked|opted\s+for|went\s+with|settled\s+on)"
    rf"|we(?:{APOS}re|\s+are)\s+going\s+with"
    r"|agreed|settled\s+on|final\s+(?:answer|decision|choice|plan)|the\s+plan\s+is)\b",
    re.IGNORECASE,
)
_NEGATION = re.compile(
    rf"(?:\bnot\b|n{APOS}t\b|\bnever\b|\bno\b|\byet\s+to\b)[\w\s,']{{0,20}}$", re.IGNORECASE
)


DECISION_VERBS = ("chose", "picked", "opted", "went", "settled")
DECISION_STARTS = ("decided", "decision", "let", "agreed", "settled", "final")


def is_decision(text: str, start: int, end: int, starts: Sequence[int]) -> bool:
    """Whether the sentence `text[start:end]` states a decision that is not negated:
    `DECISION` tried at `starts` (where one of its alternatives can begin)."""
    return any(
        not _negated(text, start, match.start())
        for match in finditer_at(DECISION, text, starts, end)
    )


def _negated(text: str, sentence_start: int, end: int) -> bool:
    """`_NEGATION.search(text[sentence_start:end])`, reading only the end: a negation ends
    at most twenty characters before `end`, and only "yet … to" can reach further back
    (over whitespace)."""
    start = max(sentence_start, end - 28)
    while start > sentence_start and text[start - 1].isspace():
        start -= 1
    return _NEGATION.search(text, max(sentence_start, start - 3), end) is not None
