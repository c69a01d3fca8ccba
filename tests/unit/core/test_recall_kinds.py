"""What kind of fact a question asks for, and where a message holds one (issue 12)."""

from __future__ import annotations

import pytest

from app.core.recall import fold
from app.core.recall_kinds import AnswerKind, is_cue, kind_position, wanted_kinds


def wanted(question: str) -> set[AnswerKind]:
    return set(wanted_kinds(question, fold))


@pytest.mark.parametrize(
    ("question", "kinds"),
    [
        ("Who is the architect?", {"name"}),
        ("What is the vet's name?", {"name"}),
        ("When is the wedding tasting?", {"date", "time"}),
        ("What time does the ferry leave?", {"time"}),
        ("How much was the survey?", {"money", "quantity"}),
        ("What did the survey cost?", {"money"}),
        ("How long is the garden wall?", {"quantity"}),
        ("How many guests are on the list?", {"quantity"}),
        ("Where is the oven manual online?", {"url", "file"}),
        ("What is the link to the gift list?", {"url"}),
        ("What is the floor plan file called?", {"file", "name"}),
        ("What is the support ticket number?", {"code"}),
        ("Which band did we book?", {"decision"}),
        ("Which accounting firm did we go with?", {"decision"}),
        ("What did we decide about a car?", {"decision"}),
        # Other languages: their question words.
        ("Quand est la dégustation ?", {"date", "time"}),
        ("Wann ist die Hochzeit?", {"date", "time"}),
        ("¿Cuánto cuesta el horno?", {"money"}),
        ("Wie heißt der Klempner? Wer kommt?", {"name"}),
    ],
)
def test_a_question_says_what_kind_of_fact_it_asks_for(question: str, kinds: set[str]) -> None:
    assert wanted(question) == kinds


def test_a_question_without_a_cue_asks_for_no_kind() -> None:
    assert wanted("Tell me about the sourdough starter") == set()
    assert wanted("Which file has the bakery menu?") == {"file"}  # not a choice made
    assert wanted("") == set()


def test_only_the_start_and_end_of_a_long_message_are_read() -> None:
    pasted = "Who wrote this? " + "lorem ipsum " * 2_000 + "when " + "dolor " * 200
    assert wanted(pasted) == {"name"}  # "when" is in the middle, unread


def test_cue_words_are_known_and_size_words_only_after_how() -> None:
    assert is_cue("name") and is_cue("cost") and is_cue("called")
    assert is_cue("long", "how") and not is_cue("long", "my")
    assert not is_cue("architect")


@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        ("For the record, the architect is Niamh Ferreira.", "name", "Niamh Ferreira"),
        ("The gate code is AX-7731 from Monday.", "code", "AX-7731"),
        ("It turns out the ferry leaves at 7:40 pm.", "time", "7:40 pm"),
        ("Der Termin ist um 14.30 Uhr.", "time", "14.30 Uhr"),
        ("So the survey will be £356, more than I hoped.", "money", "£356"),
        ("The tank holds 850 litres now.", "quantity", "850 litres"),
        ("It's confirmed, the renewal is 2026-09-15.", "date", "2026-09-15"),
        ("Le rendez-vous est le 12/09/2026, pas avant.", "date", "12/09/2026"),
        ("Updated the floor plan, the file is floor_plan_v5.pdf.", "file", "floor_plan_v5.pdf"),
        ("Bookmarking the chart: https://colours.example.com/p/kba4fg", "url", "https://"),
        ("We talked it over and chose green zellige.", "decision", "chose"),
        ("Decided on the oven: we'll go with the deck oven.", "decision", "Decided"),
    ],
)
def test_where_a_message_holds_a_fact_of_a_kind(text: str, kind: AnswerKind, value: str) -> None:
    assert kind_position(text, [kind]) == text.index(value)


def test_a_message_without_the_kind_asked_for_holds_none() -> None:
    chatter = "The cost of the survey tends to grow with every small change, so fix it early."
    assert kind_position(chatter, ["money", "date", "time", "name", "url", "file"]) is None
    assert kind_position("We have 2026 reasons.", ["quantity"]) is None  # a bare figure
    assert kind_position("anything", []) is None


def test_the_first_fact_of_any_asked_kind_is_where_it_starts() -> None:
    text = "On 2026-09-12 at 14:30 the dentist."
    assert kind_position(text, ["time", "date"]) == text.index("2026")
