"""Regular expressions matched where they may match, not tried at every position (issue 20).

Python's regex engine skips ahead to the characters a pattern can start with only when
the pattern starts with them: a pattern that starts with an assertion (`\\b`, a
look-behind) or whose words are matched in any case is tried at every position of the
text. `scouted` gives the same matches as `finditer` with a second pattern, its scout,
that finds where one may start (the pattern less that assertion; its words in lower case,
looked for in the text lowered: `lowered_for_scouts`): the fact finders recall runs over
its candidates (`app.core.recall_kinds`) read a text in a third of the time so.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

# The characters an IGNORECASE pattern takes for an ASCII letter that `str.lower` does not
# make one (dotless i, long s): a text holding one is matched as it was, position by position.
_OTHER_CASES = ("ı", "ſ")


def lowered_for_scouts(text: str) -> str | None:
    """`text` in lower case when each of its characters is where it was (not "İ": two
    then) and no other character an IGNORECASE pattern folds to an ASCII letter is in it
    (`_OTHER_CASES`): a scout of lower-case words finds in it every place where an
    IGNORECASE pattern of those words may match `text`; None otherwise."""
    lowered = text.lower()
    if len(lowered) != len(text) or any(other in text for other in _OTHER_CASES):
        return None
    return lowered


def scouted(
    pattern: re.Pattern[str], scout: re.Pattern[str], text: str, scouted_text: str | None = None
) -> Iterator[re.Match[str]]:
    """`pattern.finditer(text)`, the same matches, for a `pattern` that never matches
    empty: `scout` finds in `scouted_text` (`text`, or it lowered when the same length)
    each place from which one may start — every place `pattern` matches at, and maybe
    others — and `pattern` is matched there, its assertions reading `text` around it."""
    searched = text if scouted_text is None else scouted_text
    position = 0
    while True:
        found = scout.search(searched, position)
        if found is None:
            return
        start = found.start()
        match = pattern.match(text, start)
        if match is None:
            position = start + 1
            continue
        yield match
        position = match.end()


def first_scouted(
    pattern: re.Pattern[str], scout: re.Pattern[str], text: str, scouted_text: str | None = None
) -> re.Match[str] | None:
    """`pattern.search(text)`, the same match, found as `scouted` finds it."""
    return next(scouted(pattern, scout, text, scouted_text), None)
