"""When a question is about: dates and relative dates in it, as days (issue 22, item 1).

"What did I say in May?", "last week", "a few days ago", "on 21 May 2026", "back in
early March", "last spring": the date lives in when a message was written, not in its
words, so recall turns these into a range of days (`asked_about`) that ranks the
messages written then, and leaves the calendar words out of the search terms
(`is_calendar_word`). "Before the wedding" is not a date: its subject stays a term.

Pure and deterministic: the day the question is asked is given. English, and the month
and weekday names of French, German, Spanish, Italian, Portuguese and Dutch.
"""

from __future__ import annotations

import calendar
import re
import unicodedata
from dataclasses import dataclass
from datetime import date, timedelta

_MONTHS: dict[str, int] = {}
for _number, _names in enumerate(
    (
        "january jan janvier januar enero gennaio janeiro januari",
        "february feb fevrier februar febrero febbraio fevereiro februari",
        "march mar mars marz marzo marco maart",
        "april apr avril abril aprile",
        "may mai mayo maggio maio mei",
        "june jun juin juni junio giugno junho",
        "july jul juillet juli julio luglio julho",
        "august aug aout agosto augustus",
        "september sep sept septembre septiembre settembre setembro",
        "october oct octobre oktober octubre ottobre outubro",
        "november nov novembre noviembre novembro",
        "december dec decembre dezember diciembre dicembre dezembro",
    ),
    start=1,
):
    for _name in _names.split():
        _MONTHS.setdefault(_name, _number)
_WEEKDAYS: dict[str, int] = {}
for _number, _names in enumerate(
    (
        "monday mon lundi montag lunes lunedi segunda maandag",
        "tuesday tue tues mardi dienstag martes martedi terca dinsdag",
        "wednesday wed mercredi mittwoch miercoles mercoledi quarta woensdag",
        "thursday thu thurs jeudi donnerstag jueves giovedi quinta donderdag",
        "friday fri vendredi freitag viernes venerdi sexta vrijdag",
        "saturday sat samedi samstag sabado sabato zaterdag",
        "sunday sun dimanche sonntag domingo domenica zondag",
    )
):
    for _name in _names.split():
        _WEEKDAYS.setdefault(_name, _number)
# Northern-hemisphere seasons: their first month and how many months they last.
_SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}
_UNITS = {"day": 1, "days": 1, "week": 7, "weeks": 7, "month": 30, "months": 30}
_UNITS |= {"year": 365, "years": 365, "fortnight": 14, "fortnights": 14}
_COUNTS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
_COUNTS |= {"couple": 2, "few": 3, "several": 4}
# Words that only place a question in time: never search terms (the month names, and
# these). Short abbreviations that are also words ("mar", "sat", "sun", "may", "wed")
# are calendar words only next to a day number (`_DAY_MONTH`); a weekday only in a date
# ("on Monday", "last Friday": `date_spans`), since "the Saturday class" names a thing.
_CALENDAR_TEXT = """
    today yesterday tonight tomorrow week weeks weekend weekends month months year years
    day days fortnight ago last past previous recently recent lately earlier early mid
    late spring summer autumn fall winter morning afternoon evening night
    january february march april june july august september october november december
    """
_CALENDAR = frozenset(_CALENDAR_TEXT.split())
CALENDAR_WORDS = _CALENDAR


@dataclass(frozen=True)
class DayRange:
    """The days a question asks about, first and last included.

    `exact`: a day or a week named outright ("on 21 May", "last week"); a month or a
    season, or "a few weeks ago", is looser (messages just outside still count a little).
    """

    first: date
    last: date
    exact: bool = False

    def holds(self, day: date) -> bool:
        return self.first <= day <= self.last

    def near(self, day: date, slack: int) -> bool:
        return self.first - timedelta(days=slack) <= day <= self.last + timedelta(days=slack)


def is_calendar_word(folded: str) -> bool:
    """Whether a folded word only places something in time ("may" is left to context)."""
    return folded in _CALENDAR


_WORD = r"[^\W\d_]+"
_DAY_MONTH = re.compile(
    rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_WORD})\.?(?:,?\s+(\d{{4}}))?\b",
    re.IGNORECASE,
)
_MONTH_DAY = re.compile(
    rf"\b({_WORD})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(\d{{4}}))?", re.IGNORECASE
)
_ON_WEEKDAY = re.compile(rf"\b(?:on|last|this|next|since)\s+({_WORD})\b", re.IGNORECASE)
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
# "Two weeks ago", and as people also say it, "a couple of months back".
_AGO = re.compile(
    rf"\b(?:(\d+)|({'|'.join(_COUNTS)}))\s+(?:of\s+)?({'|'.join(_UNITS)})\s+(?:ago|back)\b",
    re.IGNORECASE,
)
_AGO_WORDS = frozenset(("ago", "back"))
_RELATIVE = re.compile(
    r"\b(?:(last|this|past|previous)\s+(week|weekend|month|year|fortnight)|(yesterday|today)"
    r"|(the\s+other\s+day)|(recently|lately)|(the\s+day\s+before\s+yesterday)"
    r"|the\s+(week|weekend|month)\s+before\s+last|(the\s+other\s+week))\b",
    re.IGNORECASE,
)
# What each pattern needs among a text's folded words: a text without any is not
# searched with it (a pasted page of 300 words cost a millisecond of regex otherwise).
_RELATIVE_TEXT = "week weekend month year fortnight yesterday today other recently lately"
_RELATIVE_WORDS = frozenset(_RELATIVE_TEXT.split())
# "In May", "last spring", "in the summer", "at the end of March", "mid-January 2026".
_NAMED = re.compile(
    rf"\b(?:(early|mid|late)[\s-]+)?(?:(last|this|in|on|during|over|back\s+in|since)\s+)?"
    rf"(the\s+)?(?:(start|beginning|middle|end)\s+of\s+)?"
    rf"(?:(early|mid|late)[\s-]+)?({_WORD})\b(?:\s+(\d{{4}}))?",
    re.IGNORECASE,
)
_PARTS = {"start": "early", "beginning": "early", "middle": "mid", "end": "late"}
# Two months as one stretch: "between March and May", "from April to June", "April-May".
_MONTH_PAIR = re.compile(
    rf"\b({_WORD})\s*(?:and|to|through|till|until|-|–)\s*({_WORD})\b(?:\s+(\d{{4}}))?",
    re.IGNORECASE,
)


def date_spans(text: str) -> list[tuple[int, int]]:
    """Where `text` names a date ("21 May 2026", "May 3rd", "2026-05-21", "two weeks
    ago"): its day numbers and years are not search terms."""
    words = _letter_words(text)
    spans = [m.span() for m in _ISO.finditer(text)]
    if not words.isdisjoint(_AGO_WORDS):
        spans += [m.span() for m in _AGO.finditer(text)]
    if not words.isdisjoint(_WEEKDAYS):
        spans += [m.span() for m in _ON_WEEKDAY.finditer(text) if _fold(m.group(1)) in _WEEKDAYS]
    if not words.isdisjoint(_MONTHS):
        for pattern, group in ((_DAY_MONTH, 2), (_MONTH_DAY, 1)):
            spans += [m.span() for m in pattern.finditer(text) if _fold(m.group(group)) in _MONTHS]
    return spans


def _letter_words(text: str) -> frozenset[str]:
    """The folded runs of letters of `text`, as the patterns' names are read."""
    return frozenset(map(_fold, re.findall(_WORD, text)))


def asked_about(question: str, today: date) -> DayRange | None:
    """The days `question` (asked on `today`) is about, or None when it names none."""
    text = question
    words = _letter_words(text)
    named = not (
        words.isdisjoint(_MONTHS) and words.isdisjoint(_WEEKDAYS) and words.isdisjoint(_SEASONS)
    )
    iso = _ISO.search(text)
    if iso is not None:
        day = _safe_date(int(iso.group(1)), int(iso.group(2)), int(iso.group(3)))
        if day is not None:
            return DayRange(day, day, exact=True)
    day_months: list[tuple[str, str, str | None]] = []
    if not words.isdisjoint(_MONTHS):
        day_months += [(m.group(1), m.group(2), m.group(3)) for m in _DAY_MONTH.finditer(text)]
        day_months += [(m.group(2), m.group(1), m.group(3)) for m in _MONTH_DAY.finditer(text)]
    for number, name, written in day_months:
        month = _MONTHS.get(_fold(name))
        if month is None:
            continue
        day = _recent_date(today, month, int(number), int(written) if written else None)
        if day is not None:
            return DayRange(day, day, exact=True)
    ago = _AGO.search(text) if not words.isdisjoint(_AGO_WORDS) else None
    if ago is not None:
        count = int(ago.group(1)) if ago.group(1) else _COUNTS[ago.group(2).lower()]
        span = _UNITS[ago.group(3).lower()]
        centre = today - timedelta(days=count * span)
        vague = (ago.group(2) or "").lower() in ("few", "couple", "several")
        fuzz = max(span // 2, (count * span) // 2 + 1 if vague else 0)
        return DayRange(centre - timedelta(days=fuzz), min(today, centre + timedelta(days=fuzz)))
    relative = _RELATIVE.search(text) if not words.isdisjoint(_RELATIVE_WORDS) else None
    if relative is not None:
        return _relative(relative, today)
    if named and not words.isdisjoint(_MONTHS):
        for pair in _MONTH_PAIR.finditer(text):
            stretch = _months(today, pair)
            if stretch is not None:
                return stretch
    for match in _NAMED.finditer(text) if named else ():
        word = _fold(match.group(6))
        part = (match.group(1) or _PARTS.get((match.group(4) or "").lower()) or "").lower()
        part = part or (match.group(5) or "").lower()
        lead = (match.group(2) or "").lower()
        the = bool(match.group(3))
        year = int(match.group(7)) if match.group(7) else None
        month = _MONTHS.get(word)
        if month is not None and len(word) >= 3 and (word not in ("may", "mar") or lead or part):
            return _month(today, month, year, part, lead)
        if word in _SEASONS and (lead or part):
            return _season(today, word, year, lead)
        weekday = _WEEKDAYS.get(word)
        if weekday is not None and len(word) >= 6 and lead in ("last", "on", "this") and not the:
            back = (today.weekday() - weekday) % 7 or 7
            day = today - timedelta(days=back)
            return DayRange(day, day, exact=True)
    return None


def _months(today: date, pair: re.Match[str]) -> DayRange | None:
    """The stretch from one month to another ("between March and May"), or None when the
    pair is not two months' full names."""
    first_name, last_name = _fold(pair.group(1)), _fold(pair.group(2))
    first, last = _MONTHS.get(first_name), _MONTHS.get(last_name)
    if first is None or last is None or min(len(first_name), len(last_name)) < 3:
        return None
    if first_name in ("mar", "may") and last_name in ("mar", "may"):
        return None  # "may and may not": a month takes another's company to be one
    year = int(pair.group(3)) if pair.group(3) else None
    end = _month(today, last, year, "", "")
    start = _month(today, first, end.last.year if year is None else year, "", "")
    if start.first > end.last:
        start = _month(today, first, start.first.year - 1, "", "")
    return DayRange(start.first, end.last)


def _relative(match: re.Match[str], today: date) -> DayRange:
    which, unit = (match.group(1) or "").lower(), (match.group(2) or "").lower()
    monday = today - timedelta(days=today.weekday())
    if match.group(6):  # the day before yesterday
        day = today - timedelta(days=2)
        return DayRange(day, day, exact=True)
    if match.group(8):  # the other week: a week or two ago, loosely
        return DayRange(today - timedelta(days=21), today - timedelta(days=5))
    before_last = (match.group(7) or "").lower()
    if before_last == "week":
        return DayRange(monday - timedelta(days=14), monday - timedelta(days=8), exact=True)
    if before_last == "weekend":
        saturday = monday - timedelta(days=9)
        return DayRange(saturday, saturday + timedelta(days=1), exact=True)
    if before_last == "month":
        last_of = (today.replace(day=1) - timedelta(days=1)).replace(day=1) - timedelta(days=1)
        return DayRange(last_of.replace(day=1), last_of)
    if match.group(3):
        day = today if match.group(3).lower() == "today" else today - timedelta(days=1)
        return DayRange(day, day, exact=True)
    if match.group(4):
        return DayRange(today - timedelta(days=7), today)
    if match.group(5):
        return DayRange(today - timedelta(days=21), today)
    if unit == "week":
        if which == "this":
            return DayRange(monday, today, exact=True)
        if which == "past":
            return DayRange(today - timedelta(days=7), today, exact=True)
        return DayRange(monday - timedelta(days=7), monday - timedelta(days=1), exact=True)
    if unit == "weekend":
        saturday = monday - timedelta(days=2) if which != "this" else monday + timedelta(days=5)
        return DayRange(saturday, saturday + timedelta(days=1), exact=True)
    if unit == "fortnight":
        return DayRange(today - timedelta(days=14), today)
    if unit == "month":
        if which in ("this",):
            return DayRange(today.replace(day=1), today)
        if which == "past":
            return DayRange(today - timedelta(days=30), today)
        last_of_previous = today.replace(day=1) - timedelta(days=1)
        return DayRange(last_of_previous.replace(day=1), last_of_previous)
    # a year
    if which == "this":
        return DayRange(date(today.year, 1, 1), today)
    if which == "past":
        return DayRange(today - timedelta(days=365), today)
    return DayRange(date(today.year - 1, 1, 1), date(today.year - 1, 12, 31))


def _month(today: date, month: int, year: int | None, part: str, lead: str) -> DayRange:
    if year is None:
        year = today.year if month <= today.month else today.year - 1
        if lead == "last" and month == today.month:
            year -= 1
    last_day = calendar.monthrange(year, month)[1]
    first, last = 1, last_day
    if part == "early":
        last = 10
    elif part == "mid":
        first, last = 10, 20
    elif part == "late":
        first = 20
    return DayRange(date(year, month, first), date(year, month, last))


def _season(today: date, season: str, year: int | None, lead: str) -> DayRange:
    start = _SEASONS[season]
    if year is None:
        year = today.year
        in_it_now = (today.month - start) % 12 < 3
        if date(year, start, 1) > today or (lead == "last" and in_it_now):
            year -= 1  # not begun yet this year, or "last" while in it: the one before
    first = date(year, start, 1)
    end_month, end_year = start + 2, year
    if end_month > 12:
        end_month, end_year = end_month - 12, year + 1
    return DayRange(first, date(end_year, end_month, calendar.monthrange(end_year, end_month)[1]))


def _recent_date(today: date, month: int, day: int, year: int | None) -> date | None:
    if year is not None:
        return _safe_date(year, month, day)
    this_year = _safe_date(today.year, month, day)
    if this_year is not None and this_year <= today:
        return this_year
    return _safe_date(today.year - 1, month, day)


def _safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _fold(word: str) -> str:
    if word.isascii():
        return word.lower()  # most words: no accents to drop
    decomposed = unicodedata.normalize("NFKD", word.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))
