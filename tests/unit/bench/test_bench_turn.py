"""The natural archive of bench_path's cells (bench/bench_turn.py's `NaturalStream`) keeps
what its figures rest on: the same messages every run, one conversation alternating from
the user in time order, about as many tokens a message as the templated archive, people
and places that change from era to era, and the recall eval's own conversation untouched."""

from __future__ import annotations

import re
import statistics

import pytest

from app.core.tokens import TokenCounter, default_counter
from bench.bench_turn import NaturalStream, make_pool, natural_questions
from bench.natural_conversation import HELD_OUT, QUESTIONS, make_natural

ERA = len(make_natural(1_000).messages)


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    loaded = default_counter()
    loaded.load()
    return loaded


@pytest.fixture(scope="module")
def stream(counter: TokenCounter) -> NaturalStream:
    made = NaturalStream(counter)
    made.take(3 * ERA)
    return made


def test_the_same_messages_every_run(counter: TokenCounter, stream: NaturalStream) -> None:
    again = NaturalStream(counter).take(ERA + 10)
    assert again == stream.take(ERA + 10)


def test_one_conversation_from_the_user_alternating_in_time_order(
    stream: NaturalStream,
) -> None:
    messages = stream.take(3 * ERA)
    roles = [message.role for message in messages]
    assert roles[::2] == ["user"] * len(roles[::2])
    assert roles[1::2] == ["assistant"] * len(roles[1::2])
    times = [message.sent_at for message in messages]
    assert times == sorted(times)
    assert all(message.text.strip() for message in messages)


def test_tokens_counted_and_a_message_about_as_long_as_a_templated_one(
    counter: TokenCounter, stream: NaturalStream
) -> None:
    messages = stream.take(3 * ERA)
    assert all(message.tokens == counter.count(message.text) for message in messages[:200])
    natural = statistics.mean(message.tokens for message in messages)
    templated = statistics.mean(make_pool(counter).tokens)
    assert 0.75 * templated < natural < 1.25 * templated
    # Users write short lines; Claude answers at length.
    users = statistics.median(m.tokens for m in messages if m.role == "user")
    claude = statistics.median(m.tokens for m in messages if m.role == "assistant")
    assert users * 5 < claude


def test_each_era_has_its_own_secondary_people_and_places(stream: NaturalStream) -> None:
    messages = stream.take(3 * ERA)
    # The guitar's shop (Mill Lane in the eval's chats) and the brother (Sam): a story in
    # each era, its people and places drawn anew.
    shops = [re.findall(r"music shop on ([A-Z][a-z]+(?: [A-Z][a-z]+)?)", m.text) for m in messages]
    named = [shop for found in shops for shop in found]
    assert len(named) >= 3
    assert len(set(named)) >= 2
    brothers = {
        name
        for message in messages
        for name in re.findall(r"My brother ([A-Z][a-z]+)", message.text)
    }
    assert len(brothers) >= 2
    # Maya is Maya throughout.
    assert all(
        any("Maya" in m.text for m in messages[era * ERA : (era + 1) * ERA]) for era in range(3)
    )


def test_the_recall_evals_conversation_is_untouched(stream: NaturalStream) -> None:
    # The eval's tables rest on make_natural(22): the stream renames copies, never it.
    before = make_natural(22)
    stream.take(4 * ERA)
    assert make_natural(22) == before
    assert any("Mill Lane" in message.text for message in before.messages)


def test_questions_are_the_evals_worded_as_people_ask(counter: TokenCounter) -> None:
    pairs = natural_questions(30, seed=155_000, counter=counter)
    assert len(pairs) == 30
    assert len({question for question, _answer in pairs}) == 30
    rename = NaturalStream(counter).renamed(155_000)
    asked = {rename(question.text) for question in (*QUESTIONS, *HELD_OUT)}
    assert {question for question, _answer in pairs} <= asked
    assert all(answer.strip() for _question, answer in pairs)
    assert pairs == natural_questions(30, seed=155_000, counter=counter)
