"""Timing one action again and again, for the benchmarks: milliseconds per call, and
the nearest-rank 95th percentile of them."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence


def timed(action: Callable[[], object], repeats: int = 1) -> list[float]:
    """Milliseconds of each of `repeats` calls of `action`."""
    samples = []
    for _ in range(repeats):
        start = time.perf_counter_ns()
        action()
        samples.append((time.perf_counter_ns() - start) / 1e6)
    return samples


def p95(samples: Sequence[float]) -> float:
    """The 95th percentile of `samples` (nearest rank; the largest of fewer than 20)."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(0.95 * len(ordered)) - 1)]
