"""Derive recall's table of synonyms (resources/synonyms-en.txt) from WordNet 3.0 (issue 22).

Run: python3 scripts/build_synonyms.py [WORDNET_DICT_FOLDER]
The folder defaults to /usr/share/wordnet, where Debian's `wordnet-base` puts WordNet 3.0
(`apt-get install wordnet-base`; licence: resources/WORDNET-LICENSE). The table is
committed: Cairn never needs WordNet itself.

What is kept, so that a synonym rarely means something else in a chat:
- nouns only, single words of letters ("kid", not "small fry");
- two words are synonyms when one sense is the first (the most frequent) of both:
  "child" and "kid" (a young person), not "child" and "minor" — and a word said more
  often as another part of speech than as a noun in WordNet's tagged texts
  (cntlist.rev: "minor", "present") is left out;
- irregular plurals (noun.exc: "children child") whose singular has synonyms.

Output: one group of synonyms a line, space-separated; then lines "= plural singular".
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "resources" / "synonyms-en.txt"
HEADER = (
    "# Recall's synonyms (issue 22), derived by scripts/build_synonyms.py from WordNet 3.0,\n"
    "# Copyright 2006 by Princeton University; licence: resources/WORDNET-LICENSE.\n"
)


def _synsets(folder: Path) -> dict[str, list[str]]:
    """Each noun synset's words (its offset → lower-case lemmas, markers dropped)."""
    synsets: dict[str, list[str]] = {}
    for line in (folder / "data.noun").open(encoding="latin-1"):
        if line.startswith("  "):
            continue  # the licence at the top
        fields = line.split()
        count = int(fields[3], 16)
        words = (re.sub(r"\(.*\)$", "", fields[4 + 2 * i]).lower() for i in range(count))
        synsets[fields[0]] = list(dict.fromkeys(words))
    return synsets


def _first_senses(folder: Path) -> dict[str, str]:
    """Each noun's first sense (its synset's offset): the index lists the most frequent first."""
    first: dict[str, str] = {}
    for line in (folder / "index.noun").open(encoding="latin-1"):
        if line.startswith("  "):
            continue
        fields = line.split()
        pointers = int(fields[3])
        first[fields[0]] = fields[4 + pointers + 2]
    return first


def _mostly_nouns(folder: Path) -> set[str]:
    """The words WordNet's tagged texts use as a noun at least as often as otherwise."""
    as_noun: Counter[str] = Counter()
    otherwise: Counter[str] = Counter()
    for line in (folder / "cntlist.rev").open(encoding="latin-1"):
        key, _number, tagged = line.split()
        lemma, rest = key.split("%", 1)
        (as_noun if rest.startswith("1") else otherwise)[lemma.lower()] += int(tagged)
    return {w for w in as_noun.keys() | otherwise.keys() if as_noun[w] >= otherwise[w]} | {
        w for w in as_noun if w not in otherwise
    }


def build(folder: Path) -> str:
    synsets, first = _synsets(folder), _first_senses(folder)
    mostly_nouns = _mostly_nouns(folder)
    counted = {
        line.split("%", 1)[0].lower() for line in (folder / "cntlist.rev").open(encoding="latin-1")
    }

    def fits(word: str, sense: str) -> bool:
        return (
            word.isalpha()
            and word.isascii()
            and first.get(word) == sense
            and (word in mostly_nouns or word not in counted)
        )

    groups: list[list[str]] = []
    for sense, words in synsets.items():
        kept = [w for w in words if fits(w, sense)]
        if len(kept) >= 2:
            groups.append(kept)
    grouped = {w for group in groups for w in group}
    plurals = []
    for line in (folder / "noun.exc").open(encoding="latin-1"):
        plural, singular = line.split()[:2]
        if singular in grouped and plural.isalpha() and plural != singular:
            plurals.append(f"= {plural} {singular}")
    lines = sorted(" ".join(group) for group in groups)
    return HEADER + "\n".join(lines + sorted(plurals)) + "\n"


def main() -> None:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("/usr/share/wordnet")
    if not (folder / "data.noun").is_file():
        sys.exit(f"No WordNet 3.0 in {folder}: apt-get install wordnet-base")
    TABLE.write_text(build(folder), encoding="utf-8")
    print(f"{TABLE.relative_to(ROOT)}: {TABLE.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
