"""A clock that only moves when a test says so."""

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
