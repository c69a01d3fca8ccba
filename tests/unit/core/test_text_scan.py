"""Reading text in bounded steps (app.core.text_scan)."""

from __future__ import annotations

import re

from app.core import text_scan


def test_the_fold_finds_what_ignorecase_matches() -> None:
    """`fold` maps to an ASCII letter exactly the characters re's IGNORECASE matches as it
    (so an IGNORECASE pattern is tried wherever its first letters are)."""
    every_character = "".join(map(chr, range(0x110000)))
    folded = text_scan.fold(every_character)
    matched = re.compile("[a-z]", re.IGNORECASE)

    assert len(folded) == len(every_character)
    for match in matched.finditer(every_character):
        assert re.fullmatch(folded[match.start()], match.group(), re.IGNORECASE)
    folded_letters = {i for i, char in enumerate(folded) if "a" <= char <= "z"}
    assert folded_letters == {match.start() for match in matched.finditer(every_character)}
