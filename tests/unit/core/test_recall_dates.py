"""recall_dates: the days a question names, relative ones included (issue 22, item 1)."""

from __future__ import annotations

from datetime import date

import pytest

from app.core.recall_dates import DayRange, asked_about, date_spans, is_calendar_word

TODAY = date(2026, 6, 30)  # a Tuesday


@pytest.mark.parametrize(
    ("question", "first", "last"),
    [
        ("What did I say on 21 May 2026?", date(2026, 5, 21), date(2026, 5, 21)),
        ("What was it on May 3rd?", date(2026, 5, 3), date(2026, 5, 3)),
        ("What did I give Tom in February?", date(2026, 2, 1), date(2026, 2, 28)),
        ("What was wrong in mid-January?", date(2026, 1, 10), date(2026, 1, 20)),
        ("Which poem did I pick last week?", date(2026, 6, 22), date(2026, 6, 28)),
        ("What happened a few days ago?", date(2026, 6, 25), date(2026, 6, 29)),
        ("What did we say last Tuesday?", date(2026, 6, 23), date(2026, 6, 23)),
        ("What did I say about it last spring?", date(2026, 3, 1), date(2026, 5, 31)),
        ("What did we decide in December?", date(2025, 12, 1), date(2025, 12, 31)),
    ],
)
def test_a_date_in_a_question_becomes_days(question: str, first: date, last: date) -> None:
    found = asked_about(question, TODAY)
    assert found is not None and (found.first, found.last) == (first, last)


def test_no_date_no_days_and_may_the_verb_is_not_a_month() -> None:
    assert asked_about("Where did we decide to go for our anniversary?", TODAY) is None
    assert asked_about("May I ask what the gate code was?", TODAY) is None
    assert asked_about("Who runs the Saturday story time?", TODAY) is None


def test_calendar_words_and_the_numbers_of_a_date_are_not_terms() -> None:
    assert is_calendar_word("february") and is_calendar_word("week")
    assert not is_calendar_word("saturday")  # "the Saturday class" names a thing
    text = "What did I say on 21 May 2026 about the car?"
    assert [text[a:b] for a, b in date_spans(text)] == ["21 May 2026"]


def test_a_loose_range_counts_days_near_it() -> None:
    days = DayRange(date(2026, 5, 1), date(2026, 5, 31))
    assert days.holds(date(2026, 5, 9)) and not days.holds(date(2026, 6, 2))
    assert days.near(date(2026, 6, 2), 3)


@pytest.mark.parametrize(
    ("question", "first", "last"),
    [
        ("What did the plumber say two weeks back?", date(2026, 6, 13), date(2026, 6, 19)),
        ("What did I book a couple of months back?", date(2026, 3, 31), date(2026, 6, 1)),
        ("What did we talk about the day before yesterday?", date(2026, 6, 28), date(2026, 6, 28)),
        ("What did I cook the week before last?", date(2026, 6, 15), date(2026, 6, 21)),
        ("Where did we go the weekend before last?", date(2026, 6, 20), date(2026, 6, 21)),
        ("What did I read the month before last?", date(2026, 4, 1), date(2026, 4, 30)),
        ("What did you recommend the other week?", date(2026, 6, 9), date(2026, 6, 25)),
        ("What did I plant in the spring?", date(2026, 3, 1), date(2026, 5, 31)),
        ("What happened at the end of March?", date(2026, 3, 20), date(2026, 3, 31)),
        ("What did I say at the start of May?", date(2026, 5, 1), date(2026, 5, 10)),
        ("What did I read between March and May?", date(2026, 3, 1), date(2026, 5, 31)),
        ("What did we do from November to February?", date(2025, 11, 1), date(2026, 2, 28)),
    ],
)
def test_relative_dates_as_people_say_them(question: str, first: date, last: date) -> None:
    found = asked_about(question, TODAY)
    assert found is not None and (found.first, found.last) == (first, last)


def test_a_weekday_after_the_names_a_thing_and_back_alone_is_no_date() -> None:
    assert asked_about("What did I say about the Saturday class?", TODAY) is None
    assert asked_about("Did I ever get my money back?", TODAY) is None
    text = "What did the plumber say two weeks back?"
    assert [text[a:b] for a, b in date_spans(text)] == ["two weeks back"]
