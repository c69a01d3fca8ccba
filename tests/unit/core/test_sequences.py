"""What a list of objects shares with an earlier one, by identity."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from app.core.sequences import shared_start

_POOL = [object() for _ in range(6)]


def _by_steps(earlier: list[object], later: list[object]) -> int:
    length = 0
    for before, now in zip(earlier, later, strict=False):
        if before is not now:
            break
        length += 1
    return length


@given(st.lists(st.sampled_from(_POOL), max_size=12), st.lists(st.sampled_from(_POOL), max_size=12))
def test_it_counts_the_same_objects_at_the_start(
    earlier: list[object], later: list[object]
) -> None:
    assert shared_start(earlier, later) == _by_steps(earlier, later)
    assert shared_start(earlier, earlier + later) == len(earlier)


def test_equal_but_not_the_same_objects_are_not_shared() -> None:
    assert shared_start([[1], [2]], [[1], [2]]) == 0
    first = [1]
    assert shared_start([first, [2]], [first, [2]]) == 1
