"""Clocks that only move when a test says so."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


class FakeClock:
    """Call it for "now"; `advance` moves it."""

    def __init__(self, start: datetime | None = None) -> None:
        self.now = start or datetime(2025, 3, 5, 9, 30, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float = 1.0) -> None:
        self.now += timedelta(seconds=seconds)


class SecondsClock:
    """A loop's monotonic clock (`QueueLoop(clock)`), in seconds: it moves only when a
    test sets `now`."""

    def __init__(self, start: float = 0.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now
