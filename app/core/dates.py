"""Every date and time a person reads, said in one place and in their own time zone.

Cairn stores times in UTC. Whatever shows one — the window, the command line, a
Markdown export, a summary's "When" line, the date lines Claude reads — says it in
this computer's local zone, in one of the forms below; change a form here and it
changes everywhere. An aware time is taken to the local zone; a naive one is taken
as local already. Day and month names are English, as the rest of Cairn's words.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime

# What gives the time now (a store's, a test's fake clock).
Clock = Callable[[], datetime]


def utc_now() -> datetime:
    """The current time in UTC, the only zone Cairn stores."""
    return datetime.now(UTC)


def local(moment: datetime) -> datetime:
    """`moment` in this computer's time zone (a naive one is taken as local already)."""
    return moment.astimezone() if moment.tzinfo is not None else moment


def _now() -> datetime:
    return datetime.now().astimezone()


# --- days


def short_date(day: date) -> str:
    """ "3 Mar 2026"."""
    return f"{day.day} {day:%b} {day.year}"


def long_date(day: date) -> str:
    """ "3 March 2026"."""
    return f"{day.day} {day:%B} {day.year}"


def weekday_date(day: date) -> str:
    """ "Tuesday 3 March 2026"."""
    return f"{day:%A} {long_date(day)}"


def day_range(first: date, last: date, *, this_year: int | None = None) -> str:
    """Days said briefly: "5 March 2026", "3–5 March 2026", "28 February – 3 March 2026",
    "30 December 2025 – 2 January 2026"; without the year when it is `this_year`."""
    year = "" if last.year == this_year else f" {last.year}"
    if first == last:
        return f"{last.day} {last:%B}{year}"
    if (first.year, first.month) == (last.year, last.month):
        return f"{first.day}–{last.day} {last:%B}{year}"
    first_year = "" if first.year == last.year else f" {first.year}"
    return f"{first.day} {first:%B}{first_year} – {last.day} {last:%B}{year}"


# --- moments


def clock(moment: datetime) -> str:
    """ "14:05", in the local zone."""
    return f"{local(moment):%H:%M}"


def stamp(moment: datetime) -> str:
    """ "2026-03-05 14:05": sortable, for lists a person scans (the command line, exports)."""
    return f"{local(moment):%Y-%m-%d %H:%M}"


def timestamp(moment: datetime, now: datetime | None = None) -> str:
    """A message's time: "14:05" today, "3 Mar 14:05" this year, "3 Mar 2024 14:05" before."""
    shown, today = local(moment), local(now or _now()).date()
    if shown.date() == today:
        return clock(shown)
    if shown.year == today.year:
        return f"{shown.day} {shown:%b} {clock(shown)}"
    return f"{short_date(shown.date())} {clock(shown)}"


def full_timestamp(moment: datetime) -> str:
    """The long form, for a tooltip: "Tuesday 3 March 2026, 14:05"."""
    shown = local(moment)
    return f"{weekday_date(shown.date())}, {clock(shown)}"


def friendly_date(moment: datetime, now: datetime | None = None) -> str:
    """When a conversation was active: "14:05" today, "Yesterday", "3 Mar" this year,
    "3 Mar 2025" before."""
    shown, today = local(moment), local(now or _now()).date()
    if shown.date() == today:
        return clock(shown)
    if (today - shown.date()).days == 1:
        return "Yesterday"
    if shown.year == today.year:
        return f"{shown.day} {shown:%b}"
    return short_date(shown.date())


def moment_range(first: datetime | None, last: datetime | None) -> str:
    """The days a stretch of messages spans, the current year left out: "3–5 March";
    "" when neither end is known."""
    known_first, known_last = first or last, last or first
    if known_first is None or known_last is None:
        return ""
    return day_range(local(known_first).date(), local(known_last).date(), this_year=_now().year)
