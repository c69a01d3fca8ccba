"""Every date a person reads: one form each, in the local zone (app.core.dates)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from datetime import UTC, date, datetime

import pytest

from app.core.dates import (
    day_range,
    friendly_date,
    full_timestamp,
    moment_range,
    short_date,
    stamp,
    timestamp,
    weekday_date,
)


@pytest.fixture
def in_new_york() -> Iterator[None]:
    """This computer's zone is New York's (UTC-5 in March, before the change)."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = "America/New_York"
    time.tzset()
    yield
    if before is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = before
    time.tzset()


def test_days_said_briefly_and_in_full() -> None:
    assert short_date(date(2026, 3, 3)) == "3 Mar 2026"
    assert weekday_date(date(2026, 3, 3)) == "Tuesday 3 March 2026"


@pytest.mark.parametrize(
    ("first", "last", "said"),
    [
        (date(2026, 3, 5), date(2026, 3, 5), "5 March 2026"),
        (date(2026, 3, 3), date(2026, 3, 5), "3–5 March 2026"),
        (date(2026, 2, 28), date(2026, 3, 3), "28 February – 3 March 2026"),
        (date(2025, 12, 30), date(2026, 1, 2), "30 December 2025 – 2 January 2026"),
    ],
)
def test_a_range_of_days(first: date, last: date, said: str) -> None:
    assert day_range(first, last) == said
    assert day_range(first, last, this_year=last.year) == said.removesuffix(f" {last.year}")


def test_a_message_time_names_the_day_only_when_it_is_not_today() -> None:
    now = datetime(2026, 3, 5, 14, 30)
    assert timestamp(datetime(2026, 3, 5, 9, 7), now) == "09:07"
    assert timestamp(datetime(2026, 3, 3, 14, 5), now) == "3 Mar 14:05"
    assert timestamp(datetime(2025, 12, 31, 23, 59), now) == "31 Dec 2025 23:59"
    assert full_timestamp(datetime(2026, 3, 3, 14, 5)) == "Tuesday 3 March 2026, 14:05"


def test_a_conversation_time_says_yesterday() -> None:
    now = datetime(2026, 3, 5, 14, 30)
    assert friendly_date(datetime(2026, 3, 5, 8, 0), now) == "08:00"
    assert friendly_date(datetime(2026, 3, 4, 23, 0), now) == "Yesterday"
    assert friendly_date(datetime(2026, 1, 9, 8, 0), now) == "9 Jan"
    assert friendly_date(datetime(2025, 1, 9, 8, 0), now) == "9 Jan 2025"


def test_stored_utc_times_are_said_in_the_users_zone(in_new_york: None) -> None:
    stored = datetime(2026, 3, 5, 2, 30, tzinfo=UTC)  # 21:30 the evening before, in New York

    assert stamp(stored) == "2026-03-04 21:30"
    assert full_timestamp(stored) == "Wednesday 4 March 2026, 21:30"
    assert timestamp(stored, datetime(2026, 3, 5, 12, 0, tzinfo=UTC)) == "4 Mar 21:30"
    assert moment_range(stored, None) in ("4 March", "4 March 2026")
