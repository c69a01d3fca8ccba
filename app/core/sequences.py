"""Sequences compared by identity: what a new list of objects shares with an earlier one.

The request body's encoder (app.llm.request_body) and the scan for attached files
(app.chat.attachments) both remember a list they worked through and, given the next,
take over what they found for the objects it starts with; the objects are the very
same ones (frozen, handed back unchanged by the caches that make them).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import compress, count
from operator import is_not


def shared_start(earlier: Sequence[object], later: Sequence[object]) -> int:
    """How many items `later` starts with that are `earlier`'s first items, the same
    objects (`is`, not `==`); compared in C, not a Python step an item."""
    return next(compress(count(), map(is_not, earlier, later)), min(len(earlier), len(later)))


__all__ = ["shared_start"]
