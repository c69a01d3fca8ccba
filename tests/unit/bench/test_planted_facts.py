"""The planted-facts conversation (bench/planted_facts.py) keeps the promises the
evaluation rests on: the same every time, enough facts of every kind, none in the
newest messages, each stated once, and no question that gives its answer away."""

from __future__ import annotations

import re
from collections import Counter
from datetime import date, datetime

import pytest

from bench.planted_facts import KINDS, PLANTED_MINUTES, QUIET_TAIL, make_conversation

MIN_FACTS_PER_KIND = 20


def test_the_same_seed_gives_the_same_conversation() -> None:
    assert make_conversation(12) == make_conversation(12)
    assert make_conversation(12) != make_conversation(13)


def test_a_long_conversation_alternating_from_the_user_in_time_order() -> None:
    conversation = make_conversation()
    assert len(conversation.messages) >= 400
    roles = [message.role for message in conversation.messages]
    assert roles[::2] == ["user"] * len(roles[::2])
    assert roles[1::2] == ["assistant"] * len(roles[1::2])
    times = [message.sent_at for message in conversation.messages]
    assert times == sorted(times)
    assert (times[-1] - times[0]).days >= 30


@pytest.mark.parametrize("seed", [12, 1, 2026])
def test_at_least_twenty_facts_of_every_kind(seed: int) -> None:
    kinds = Counter(fact.kind for fact in make_conversation(seed).facts)
    assert set(kinds) == set(KINDS)
    assert min(kinds.values()) >= MIN_FACTS_PER_KIND


@pytest.mark.parametrize("seed", [12, 1, 2026])
def test_no_fact_in_the_newest_messages(seed: int) -> None:
    conversation = make_conversation(seed)
    newest = len(conversation.messages) - QUIET_TAIL
    assert all(fact.index < newest for fact in conversation.facts)
    assert not any(
        fact.value in message.text
        for message in conversation.messages[newest:]
        for fact in conversation.facts
    )


@pytest.mark.parametrize("seed", [12, 1, 2026])
def test_each_fact_is_stated_once_by_the_user_where_it_says(seed: int) -> None:
    conversation = make_conversation(seed)
    for fact in conversation.facts:
        stated = [i for i, m in enumerate(conversation.messages) if fact.value in m.text]
        assert stated == [fact.index], fact
        assert conversation.messages[fact.index].role == "user"
    assert len({fact.value for fact in conversation.facts}) == len(conversation.facts)


@pytest.mark.parametrize("seed", [12, 1, 2026])
def test_no_question_contains_its_value(seed: int) -> None:
    facts = make_conversation(seed).facts
    for fact in facts:
        assert fact.value.lower() not in fact.question.lower(), fact
    assert len({fact.question for fact in facts}) == len(facts)


@pytest.mark.parametrize("seed", [12, 1, 2026])
def test_planted_dates_fall_after_the_conversation(seed: int) -> None:
    """So that the date lines and date ranges of a request never count as a planted date."""
    conversation = make_conversation(seed)
    last_day = conversation.messages[-1].sent_at.date()
    for fact in conversation.facts:
        if fact.kind == "date":
            iso = re.fullmatch(r"\d{4}-\d{2}-\d{2}", fact.value)
            day = (
                date.fromisoformat(fact.value)
                if iso
                else datetime.strptime(fact.value, "%d %B %Y").date()
            )
            assert day > last_day, fact


@pytest.mark.parametrize("seed", [12, 1, 2026])
def test_no_message_is_sent_at_a_planted_minute(seed: int) -> None:
    """So that the times a summary shows never count as a planted clock time."""
    conversation = make_conversation(seed)
    for message in conversation.messages:
        for offset in (0, 30):
            assert (message.sent_at.minute + offset) % 60 not in PLANTED_MINUTES
    for fact in conversation.facts:
        if fact.kind == "time":
            assert int(fact.value.split(":")[1][:2]) in PLANTED_MINUTES


def test_too_short_a_conversation_is_refused() -> None:
    with pytest.raises(ValueError, match="too few"):
        make_conversation(12, length=200)
