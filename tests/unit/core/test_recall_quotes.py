"""A quote's stored body count (app.core.recall_quotes, migration 17): the heading's line
and the body add up to the whole quote's count exactly, for any heading and any text, and
fitting with the stored counts makes the very block counting every quote makes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.models import Role
from app.core.recall import (
    EXCERPT_CHARS,
    RECALL_PREAMBLE_SHORT,
    ArchivedMatch,
    RecallQuote,
    fit_recall,
    quote_heading,
    quote_text,
    salient_terms,
)
from app.core.recall_quotes import exact_counter, quote_body, whole_quote_tokens
from app.core.tokens import TokenCounter, default_counter

START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
# Characters cl100k's pre-tokenizer treats apart: white space of every kind (line breaks
# Python splits lines at, too), letters, digits, marks, emoji, quotes and brackets.
_TRICKY = list(" \n\t\r\u00a0\u3000\x0b\x0c\x1c\x85\u2028\u200babcXYZ09'’.,;:!?>[]()#·—…é漢🙂\x00")
texts = st.text(st.sampled_from(_TRICKY), max_size=60) | st.text(max_size=60)


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    counter = default_counter()
    assert counter.load(), "these tests need cl100k"
    return counter


@settings(max_examples=3_000, deadline=None)
@given(heading=texts, excerpt=texts)
def test_a_heading_line_and_a_quote_body_add_up_for_any_text(heading: str, excerpt: str) -> None:
    counter = default_counter()
    counter.load()
    line, body = heading + "\n", quote_body(excerpt)
    assert counter.count(line + body) == counter.count(line) + counter.count(body)


@settings(max_examples=400, deadline=None)
@given(
    seq=st.integers(min_value=1, max_value=10**7),
    minutes=st.integers(min_value=0, max_value=10**6),
    role=st.sampled_from(Role),
    conversation=texts,
    compact=st.booleans(),
    content=texts,
)
def test_a_quote_counts_its_heading_line_and_its_stored_body(
    seq: int, minutes: int, role: Role, conversation: str, compact: bool, content: str
) -> None:
    counter = default_counter()
    counter.load()
    stored = whole_quote_tokens(content, counter)
    assert stored is not None  # short: quoted whole
    quote = RecallQuote(
        1, seq, role, START + timedelta(minutes=minutes), content.strip(), conversation
    )
    heading = quote_heading(quote, compact=compact)
    whole = quote_text(quote, compact=compact)
    assert counter.count(whole) == counter.count(heading + "\n") + stored


def test_a_message_longer_than_any_excerpt_has_no_stored_count(counter: TokenCounter) -> None:
    assert whole_quote_tokens("  " + "a" * EXCERPT_CHARS + "\n\n", counter) is not None
    assert whole_quote_tokens("a" * (EXCERPT_CHARS + 1), counter) is None


def test_only_cl100k_loaded_counts_are_stored(counter: TokenCounter) -> None:
    assert exact_counter(counter)
    other = TokenCounter("no_such_encoding")
    assert not exact_counter(other)  # not loaded: never waited for
    assert whole_quote_tokens("Hi", other) is None
    assert not exact_counter(other)  # loaded now, and flagged: rough counts
    assert not exact_counter(lambda text: len(text))


def _archive(draw_texts: list[str]) -> tuple[ArchivedMatch, ...]:
    counter = default_counter()
    return tuple(
        ArchivedMatch(
            100 + n,
            100 + n,
            (Role.USER, Role.ASSISTANT)[n % 2],
            START + timedelta(hours=n),
            text,
            body_tokens=whole_quote_tokens(text, counter),
        )
        for n, text in enumerate(draw_texts)
    )


_WORDS = ["gate", "code", "AX-7731", "guitar", "octopus", "\n\n", "  ", "語", "🙂", "?", "Maya"]


@settings(max_examples=150, deadline=None)
@given(
    messages=st.lists(
        st.builds(
            lambda words, repeat: " ".join(words) * repeat,
            st.lists(st.sampled_from(_WORDS), min_size=1, max_size=14),
            st.integers(min_value=1, max_value=60),
        ),
        min_size=1,
        max_size=25,
    ),
    budget=st.integers(min_value=0, max_value=3_000),
    question=st.sampled_from(["What was the gate code?", "Maya's guitar?", "octopus 語 code"]),
)
def test_fitting_with_stored_counts_makes_the_same_block(
    messages: list[str], budget: int, question: str
) -> None:
    default_counter().load()
    matches = _archive(messages)
    terms = salient_terms(question)
    counted: list[str] = []

    def count(text: str) -> int:
        counted.append(text)
        return default_counter().count(text)

    exact = fit_recall(matches, terms, budget, default_counter().count)
    stored = fit_recall(matches, terms, budget, count, stored=True)
    assert stored == exact
    if stored is None:
        return
    # A message quoted whole had its heading counted, never its body again.
    by_seq = {m.seq: m for m in matches}
    compact = stored.text.startswith(RECALL_PREAMBLE_SHORT)
    for quote in stored.quotes:
        if quote.excerpt == by_seq[quote.seq].content.strip():
            heading = quote_heading(quote, compact=compact)
            assert heading + "\n" in counted
            assert quote_text(quote, compact=compact) not in counted
