"""Reading the rows of many keys at once: one `IN (?, ?, …)` query per batch of keys.

SQLite binds one parameter per key and limits how many one statement may bind (999
before 3.32, 32,766 since: https://www.sqlite.org/limits.html#max_variable_number),
so a long list of keys is read in batches.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from typing import TypeVar

# Keys per query: well under either limit, and a page of a transcript is never this long.
KEYS_PER_QUERY = 500

Key = TypeVar("Key", int, str)


def in_batches(keys: Collection[Key]) -> Iterator[tuple[list[Key], str]]:
    """`keys` sorted and without repeats, in batches of at most `KEYS_PER_QUERY`, each
    with the "?, ?, …" its `IN (…)` binds them with."""
    ordered = sorted(set(keys))
    for start in range(0, len(ordered), KEYS_PER_QUERY):
        batch = ordered[start : start + KEYS_PER_QUERY]
        yield batch, ", ".join("?" * len(batch))
