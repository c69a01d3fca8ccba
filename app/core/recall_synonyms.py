"""Other words for a question's nouns, so recall finds "kids" for "children" (issue 22).

The table (resources/synonyms-en.txt) is derived from WordNet 3.0 by
scripts/build_synonyms.py: English nouns whose most frequent sense is shared ("child",
"kid", "youngster"), and irregular plurals ("children" → "child"). A synonym is a weaker
sign than the word itself (`recall.SYNONYM_WEIGHT`): it may mean something else.

Read once, when a question first needs it (on the reply's worker, after the window is
painted); a missing or unreadable table means no synonyms, never a failed reply.
"""

from __future__ import annotations

import functools
import logging
from pathlib import Path

log = logging.getLogger(__name__)

SYNONYM_TABLE = Path(__file__).resolve().parents[2] / "resources" / "synonyms-en.txt"


def synonyms_of(folded: str) -> tuple[str, ...]:
    """The synonyms of a folded English noun (its singular's), itself excluded; () if none."""
    groups, plurals = _table()
    word = folded
    if word not in groups:
        word = plurals.get(word) or _singular(word, groups) or word
    return tuple(w for w in groups.get(word, ()) if w != word)


def _singular(word: str, groups: dict[str, tuple[str, ...]]) -> str | None:
    """The singular of a regular English plural, when the table has it ("kids" → "kid",
    "boxes" → "box", "stories" → "story")."""
    for ending, replacement in (("ies", "y"), ("es", ""), ("s", "")):
        if word.endswith(ending) and len(word) - len(ending) >= 2:
            base = word[: -len(ending)] + replacement
            if base in groups:
                return base
    return None


@functools.cache
def _table() -> tuple[dict[str, tuple[str, ...]], dict[str, str]]:
    """The synonyms by word and the irregular plurals, read once (~9,000 lines)."""
    groups: dict[str, tuple[str, ...]] = {}
    plurals: dict[str, str] = {}
    try:
        text = SYNONYM_TABLE.read_text(encoding="utf-8")
    except OSError as error:
        log.warning("Recall goes without synonyms: %s", error)
        return groups, plurals
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        words = line.split()
        if words[0] == "=" and len(words) == 3:
            plurals[words[1]] = words[2]
            continue
        for word in words:  # a word is in one group: its first sense's
            groups[word] = tuple(words)
    return groups, plurals
