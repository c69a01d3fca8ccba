"""Scouted matching: the same matches as `finditer`, found where they may start (issue 20)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core import extract_facts, recall_kinds
from app.core.extract_scout import first_scouted, lowered_for_scouts, scouted

# Pieces the finders' patterns turn on: names, titles, naming and cue words in any case,
# sentence ends, apostrophes and hyphens, and the characters whose case is not simple
# ("İ" lowers to two, "ı" and "ſ" match "i" and "s" in any case, the Kelvin sign).
_PIECES = st.sampled_from(
    [
        "Maya", "Tom", "Maria Schneider", "Jean-Luc", "O'Brien", "Núñez", "van der", "de",
        "Dr.", "Dr", "Mr", "Mrs", "Mme", "M.", "Frau", "Señora", "Sra.", "Herrn", "Don",
        "named", "called", "name is", "heißt", "s'appelle", "s’appelle", "se llama",
        "with", "With", "WITH", "wıth", "aſk", "ask", "Asked", "TELL", "thanks", "für", "FÜR",
        "mit", "avec", "con", "chez", "pregúntale", "preguntarle", "demander", "cc", "Ping",
        "decided", "Decision", "CHOSE", "chosen", "picked", "opted", "settled", "agreed",
        "go with", "Going with", "went with", "let's use", "lets use", "we'll use", "booked",
        "decıded", "ſettled", "İ", "K", "the", "The", "a", "der", "la", "and", "Bahn",
        "Deutsche", "Freunden", "May", "Monday", "x", "9", "10k", "_", "-", "’", "'",
    ]
)  # fmt: skip
_GLUE = st.sampled_from([" ", " ", "  ", "\n", ". ", ", ", "! ", "? ", "", "(", '"', "“", ": "])
_TEXTS = st.lists(st.tuples(_PIECES, _GLUE), max_size=24).map(
    lambda parts: "".join(piece + glue for piece, glue in parts)
)


def _spans(matches: object) -> list[tuple[int, int, tuple[str | None, ...]]]:
    return [(m.start(), m.end(), m.groups()) for m in matches]  # type: ignore[attr-defined]


@settings(max_examples=400, deadline=None)
@given(_TEXTS)
def test_the_name_finders_scouted_match_as_their_patterns_do(text: str) -> None:
    facts = extract_facts
    for pattern, scout in (
        (facts._TITLED, facts._TITLED_SCOUT),
        (facts._NAMING, facts._NAMING_SCOUT),
        (facts._RUN, facts._RUN_SCOUT),
    ):
        assert _spans(scouted(pattern, scout, text)) == _spans(pattern.finditer(text))
    lowered = lowered_for_scouts(text)
    if lowered is not None:
        assert _spans(scouted(facts._CUE_SINGLE, facts._CUE_SCOUT, text, lowered)) == _spans(
            facts._CUE_SINGLE.finditer(text)
        )


@settings(max_examples=400, deadline=None)
@given(_TEXTS)
def test_a_decision_scouted_is_the_one_its_pattern_finds_first(text: str) -> None:
    expected = recall_kinds._DECISION.search(text)
    lowered = lowered_for_scouts(text)
    found = (
        expected
        if lowered is None
        else first_scouted(recall_kinds._DECISION, recall_kinds._DECISION_SCOUT, text, lowered)
    )
    assert _spans([found] if found else []) == _spans([expected] if expected else [])
    assert recall_kinds._first_decision(text) == (expected.start() if expected else None)


def test_each_scout_is_its_pattern_less_the_assertion_it_starts_with() -> None:
    facts = extract_facts
    assert facts._TITLED.pattern == r"\b" + facts._TITLED_SCOUT.pattern
    assert facts._RUN.pattern == r"(?<![\w'’-])" + facts._RUN_SCOUT.pattern
    assert facts._NAMING.pattern == facts._NAMING_SCOUT.pattern.replace("(?:(?:", r"(?:\b(?:", 1)


def test_a_text_whose_case_is_not_simple_is_not_lowered_for_scouts() -> None:
    assert lowered_for_scouts("Ask Maya") == "ask maya"
    assert lowered_for_scouts("İstanbul with Maya") is None  # "İ" lowers to two characters
    assert lowered_for_scouts("wıth Maya") is None  # matches "with" in any case
    assert lowered_for_scouts("aſk Maya") is None


def test_a_scout_that_finds_more_than_the_pattern_loses_no_match() -> None:
    # The scout stops at "xMr" and "Mr" inside "HMr": the pattern is tried there and
    # the search goes on from the next character, not past what the scout read.
    pattern, scout = re.compile(r"\bMr \w+"), re.compile(r"Mr \w+")
    text = "xMr Mr Smith HMr Jones, Mr Brown"
    assert _spans(scouted(pattern, scout, text)) == _spans(pattern.finditer(text))
    assert [m.group() for m in scouted(pattern, scout, text)] == ["Mr Smith", "Mr Brown"]


@settings(max_examples=300, deadline=None)
@given(_TEXTS)
def test_a_text_without_a_piece_of_a_naming_word_has_no_naming_match(text: str) -> None:
    if not any(piece in text for piece in extract_facts._NAMING_PIECES):
        assert extract_facts._NAMING.search(text) is None


@pytest.mark.parametrize(
    "word",
    ["named", "called", "name is", "heißt", "heisst", "namens", "s'appelle", "s’appelle",
     "nommé", "nommée", "se llama", "llamado", "llamada", "me llamo"],
)  # fmt: skip
def test_each_naming_word_holds_a_piece_the_finder_looks_for(word: str) -> None:
    assert extract_facts._NAMING.search(f"The cat {word} Marmalade") is not None
    assert any(piece in word for piece in extract_facts._NAMING_PIECES)


# Codes, clock times and what looks like them: joiners, dots, "@", units, ordinals, other
# scripts' digits and letters.
_CODE_PIECES = st.sampled_from(
    [
        "AX-7731", "INV-2024-0042", "B12C", "PO#4471", "v1.2", "3rd", "10kg", "14h30", "14h",
        "a.b12", "x@y1", "foo.AB12", "__a1", "ab_12-cd", "١٢", "x", "é", "ﬁ1", "A1", "12",
        "9:05", "9:05 am", "2 pm", "2pm", "2PM", "14.30 Uhr", "14 Uhr", "18 h", "23:59:59",
        "24:00", "7", "-", "/", "#", ".", "@", "_", ":", "am", "h", "Uhr", "abc", "Q3",
    ]
)  # fmt: skip
_CODE_TEXTS = st.lists(st.tuples(_CODE_PIECES, _GLUE), max_size=20).map(
    lambda parts: "".join(piece + glue for piece, glue in parts)
)


@settings(max_examples=500, deadline=None)
@given(st.one_of(_CODE_TEXTS, st.text(alphabet="aZ1٢-/#.@_: \nhpm", max_size=30)))
def test_codes_and_times_are_matched_as_their_patterns_match(text: str) -> None:
    facts = extract_facts
    assert _spans(facts._code_matches(text)) == _spans(facts._CODE.finditer(text))
    assert _spans(scouted(facts._TIME, facts._TIME_SCOUT, text)) == _spans(
        facts._TIME.finditer(text)
    )
