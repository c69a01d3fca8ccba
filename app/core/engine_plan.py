"""Which live messages one condensing pass covers, in runs (pure; see `app.core.engine`)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from app.core.models import Message, Role
from app.core.summary import (
    Summary,
)


@dataclass(frozen=True)
class Plan:
    """What one condensing pass covers: contiguous runs of live messages, oldest first.

    Attributes:
        runs: each becomes one condensed summary.
        kept: the live messages that stay verbatim (the newest, and every pinned one).
    """

    runs: tuple[tuple[Message, ...], ...]
    kept: int

    @property
    def covered(self) -> int:
        """How many messages the pass condenses."""
        return sum(len(run) for run in self.runs)

    @property
    def empty(self) -> bool:
        return not self.runs


def plan(
    live: Sequence[Message],
    active: Sequence[Summary],
    preserve_recent: int,
    *,
    fewer_if_needed: bool = False,
    enough: Callable[[Sequence[Message]], bool] | None = None,
) -> Plan:
    """The runs of live messages one condensing pass covers, oldest first (pure).

    The pinned messages are never covered, and the newest `preserve_recent`
    unpinned ones always stay (a floor). With `enough` — told the oldest unpinned
    messages a pass would cover, True when that brings the next request down to
    its target — the pass covers the fewest that are enough (assumed to be
    monotone: covering more never makes the request larger), else as many as
    the floor allows. The kept tail starts with a user turn, since the API drops
    a leading assistant turn: a cut moves back to one, or, with
    `fewer_if_needed` (an emergency), may go past the floor to one, keeping
    fewer. Runs break at a pinned message and at an active summary's range, so
    each run is contiguous.
    """
    candidates = [m for m in live if not m.pinned]
    floor = max(0, preserve_recent)
    most = len(candidates) - floor
    if most <= 0 and not fewer_if_needed:
        return Plan(runs=(), kept=len(live))
    limit = len(candidates) - 1 if fewer_if_needed else most

    def starts_a_turn(cut: int) -> bool:
        return cut == len(candidates) or candidates[cut].role is Role.USER

    cuts = [cut for cut in range(1, limit + 1) if starts_a_turn(cut)]
    within = [cut for cut in cuts if cut <= most]
    beyond = [cut for cut in cuts if cut >= most]
    fallback: int | None
    if fewer_if_needed:
        # No user turn to start on: all but the newest go, the request must fit.
        fallback = beyond[0] if beyond else max(0, len(candidates) - 1)
    else:
        fallback = within[-1] if within else None
    cut = fallback
    if enough is not None and cuts:
        # The fewest covered that are enough: the smallest cut whose request meets the target.
        low, high = 0, len(cuts)
        while low < high:
            middle = (low + high) // 2
            if enough(candidates[: cuts[middle]]):
                high = middle
            else:
                low = middle + 1
        if low < len(cuts):
            cut = cuts[low]
    if not cut:
        return Plan(runs=(), kept=len(live))
    covered = candidates[:cut]
    barriers = sorted(
        [m.seq for m in live if m.pinned] + [s.first_seq for s in active],
    )
    runs: list[list[Message]] = [[covered[0]]]
    for before, after in itertools.pairwise(covered):
        if any(before.seq < seq < after.seq for seq in barriers):
            runs.append([after])
        else:
            runs[-1].append(after)
    return Plan(runs=tuple(tuple(run) for run in runs), kept=len(live) - len(covered))
