"""What an automatic title looks like, and the call down the summarizer's models."""

from __future__ import annotations

import pytest

from app.core.errors import ModelNotFoundError, OverloadedError
from app.core.titles import (
    TITLE_SCHEMA,
    TITLE_TOOL,
    ask_for_title,
    clean_title,
    title_prompt,
    wants_a_title,
)
from tests.fakes.structured import FakeCompletion


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("Weekend trip to Lisbon", "Weekend trip to Lisbon"),
        ('"Weekend trip to Lisbon."', "Weekend trip to Lisbon"),
        ("Title: Fixing the\n printer", "Fixing the printer"),
        ("**Budget for the kitchen**", "Budget for the kitchen"),
        ("  ", None),
        (42, None),
        ("word " * 30, ("word " * 12).strip()),  # cut at a word, never with "…"
    ],
)
def test_clean_title(raw: object, clean: str | None) -> None:
    assert clean_title(raw) == clean


def test_the_title_goes_down_the_models_as_the_summarizer_does() -> None:
    complete = FakeCompletion(ModelNotFoundError("gone"), {"title": "Lisbon in March."})
    title, model = ask_for_title(complete, ["small-a", "small-b"], "Plan Lisbon?", "Sure!")
    assert (title, model) == ("Lisbon in March", "small-b")
    first, second = complete.calls
    assert first["model"] == "small-a" and second["model"] == "small-b"
    assert second["tool_name"] == TITLE_TOOL and second["input_schema"] == TITLE_SCHEMA
    assert second["prompt"] == title_prompt("Plan Lisbon?", "Sure!")
    assert second["prompt"].startswith("<question>\nPlan Lisbon?")


def test_a_failure_leaves_no_title() -> None:
    complete = FakeCompletion(OverloadedError("busy"))
    assert ask_for_title(complete, ["small-a", "small-b"], "Q", "A") == (None, None)
    assert len(complete.calls) == 1, "an overloaded server is not asked again here"
    assert ask_for_title(FakeCompletion({"title": " "}), ["m"], "Q", "A") == (None, None)


@pytest.mark.parametrize(
    ("first", "wanted"),
    [
        ("Say hello", False),
        ("Lisbon in March?", False),
        ("Could you help me plan a long weekend in Lisbon for my parents?", True),
        ("Fix this:\nTraceback (most recent call last)", True),
    ],
)
def test_a_short_first_message_is_title_enough(first: str, wanted: bool) -> None:
    assert wants_a_title(first) is wanted
