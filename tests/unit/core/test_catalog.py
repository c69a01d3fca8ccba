"""The model catalog: limits per model, a safe default for unknown ones, junk lists cleaned."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from app.core.catalog import (
    FALLBACK_MODELS,
    MAX_CONTEXT_WINDOW,
    UNKNOWN_MODEL_CONTEXT_WINDOW,
    UNKNOWN_MODEL_MAX_OUTPUT,
    ModelInfo,
    clean_model_list,
    find_model,
    model_limits,
    model_name,
    next_model,
    pick_default_model,
)

SERVER_MODEL = ModelInfo(
    id="claude-server-only", display_name="Server Only", max_input_tokens=500_000, max_tokens=32_000
)


def test_limits_come_from_the_server_list_first() -> None:
    listed = ModelInfo(id="claude-sonnet-4-6", display_name="Sonnet", max_input_tokens=1_000_000)

    info, known = model_limits("claude-sonnet-4-6", [listed])

    assert known is True
    assert info.max_input_tokens == 1_000_000


def test_limits_fall_back_to_the_bundled_table() -> None:
    info, known = model_limits("claude-haiku-4-5", [SERVER_MODEL])

    assert known is True
    assert info == find_model("claude-haiku-4-5", [])


def test_a_dated_snapshot_has_the_limits_of_its_model() -> None:
    info, known = model_limits("claude-server-only-20260115", [SERVER_MODEL])

    assert known is True
    assert info.id == "claude-server-only-20260115"
    assert (info.max_input_tokens, info.max_tokens) == (500_000, 32_000)


@pytest.mark.parametrize("model_id", ["claude-mystery-9", "gpt-4", "claude-sonnet-4-6-beta", ""])
def test_an_unknown_model_gets_a_safe_default_and_says_so(model_id: str) -> None:
    info, known = model_limits(model_id, [SERVER_MODEL])

    assert known is False
    assert info.id == model_id
    assert info.max_input_tokens == UNKNOWN_MODEL_CONTEXT_WINDOW == 100_000
    assert info.max_tokens == UNKNOWN_MODEL_MAX_OUTPUT == 4_096
    # Never more than any model Cairn knows: the default can only err on the safe side.
    assert all(info.max_input_tokens <= model.max_input_tokens for model in FALLBACK_MODELS)


def test_a_clean_list_passes_through_unchanged() -> None:
    assert clean_model_list([SERVER_MODEL, *FALLBACK_MODELS]) == [SERVER_MODEL, *FALLBACK_MODELS]


def test_api_shaped_entries_become_models() -> None:
    entries = [
        {
            "type": "model",
            "id": "claude-new",
            "display_name": "Claude New",
            "created_at": "2026-01-01T00:00:00Z",
            "max_input_tokens": 300_000,
            "max_tokens": 20_000,
        }
    ]

    assert clean_model_list(entries) == [
        ModelInfo(
            id="claude-new", display_name="Claude New", max_input_tokens=300_000, max_tokens=20_000
        )
    ]


def test_missing_limits_are_filled_from_the_table_or_the_safe_default() -> None:
    cleaned = clean_model_list(
        [
            {"id": "claude-opus-5"},
            {"id": "claude-unlisted", "display_name": "  "},
            {"id": "claude-small-window", "max_input_tokens": 2_000},
        ]
    )

    assert cleaned[0] == find_model("claude-opus-5", []).model_copy(
        update={"display_name": "claude-opus-5"}
    )
    assert cleaned[1] == ModelInfo(
        id="claude-unlisted",
        display_name="claude-unlisted",
        max_input_tokens=UNKNOWN_MODEL_CONTEXT_WINDOW,
        max_tokens=UNKNOWN_MODEL_MAX_OUTPUT,
    )
    assert cleaned[2].max_tokens == 1_000  # at most half the window


@pytest.mark.parametrize(
    "entry",
    [
        "claude-a-string",
        42,
        None,
        {"display_name": "no id"},
        {"id": ""},
        {"id": "  padded  "},
        {"id": 7},
        {"id": "claude-x", "max_input_tokens": -200_000},
        {"id": "claude-x", "max_input_tokens": 0},
        {"id": "claude-x", "max_input_tokens": "200000"},
        {"id": "claude-x", "max_input_tokens": 200_000.5},
        {"id": "claude-x", "max_input_tokens": True},
        {"id": "claude-x", "max_input_tokens": MAX_CONTEXT_WINDOW + 1},
        {"id": "claude-x", "max_tokens": -1},
        {"id": "claude-x", "max_input_tokens": 10_000, "max_tokens": 10_000},
    ],
)
def test_junk_entries_are_dropped_with_a_warning(
    entry: Any, caplog: pytest.LogCaptureFixture
) -> None:
    assert clean_model_list([entry, SERVER_MODEL]) == [SERVER_MODEL]
    assert any(record.levelno == logging.WARNING for record in caplog.records)


def test_a_repeated_id_is_kept_once_first_wins() -> None:
    twin = SERVER_MODEL.model_copy(update={"display_name": "Twin"})

    assert clean_model_list([SERVER_MODEL, twin]) == [SERVER_MODEL]


def test_the_existing_names_still_work() -> None:
    assert pick_default_model(None, []) == FALLBACK_MODELS[0].id
    assert pick_default_model("claude-server-only", [SERVER_MODEL]) == "claude-server-only"
    assert find_model("claude-server-only", [SERVER_MODEL]) == SERVER_MODEL
    assert find_model("claude-nothing", []) is None


def test_the_bundled_table_matches_the_documentation() -> None:
    # Each model's page: https://platform.claude.com/docs/en/models/<model>/overview
    limits = {model.id: (model.max_input_tokens, model.max_tokens) for model in FALLBACK_MODELS}

    assert limits == {
        "claude-sonnet-5-5": (1_000_000, 128_000),
        "claude-opus-5-5": (1_000_000, 128_000),
        "claude-haiku-5-5": (1_000_000, 128_000),
        "claude-fable-5-1": (1_000_000, 128_000),
        "claude-sonnet-5": (1_000_000, 128_000),
        "claude-opus-5": (1_000_000, 128_000),
        "claude-sonnet-4-6": (1_000_000, 128_000),
        "claude-haiku-4-5": (200_000, 64_000),
    }
    assert all(model.line is not None and not model.deprecated for model in FALLBACK_MODELS)


def test_the_ranking_follows_the_line_the_api_gives_not_the_id() -> None:
    # An id that reads like a family says nothing: only `line` does.
    looks_like_sonnet = ModelInfo(id="claude-sonnet-lookalike", display_name="A", line=None)
    haiku = ModelInfo(id="model-b", display_name="B", line="haiku")
    opus = ModelInfo(id="model-c", display_name="C", line="opus")

    assert pick_default_model(None, [looks_like_sonnet, haiku, opus]) == "model-c"
    assert pick_default_model(None, [looks_like_sonnet, haiku]) == "model-b"


def test_a_deprecated_model_is_not_picked_by_default_but_kept_when_chosen() -> None:
    old = clean_model_list(
        [{"id": "claude-old", "display_name": "Old", "line": "sonnet", "lifecycle": "deprecated"}]
    )[0]
    current = ModelInfo(id="claude-current", display_name="Current", line="haiku")

    assert old.deprecated
    assert pick_default_model(None, [old, current]) == "claude-current"
    assert pick_default_model("claude-old", [old, current]) == "claude-old"
    assert pick_default_model(None, [old]) == "claude-old"  # nothing else to offer


def test_the_next_model_follows_the_ranking_and_comes_round_again() -> None:
    sonnet = ModelInfo(id="model-s", display_name="S", line="sonnet")
    opus = ModelInfo(id="model-o", display_name="O", line="opus")
    haiku = ModelInfo(id="model-h", display_name="H", line="haiku")
    listed = [haiku, opus, sonnet]  # the API's order (newest first) is not the ranking

    assert next_model("model-s", listed) == "model-o"
    assert next_model("model-o", listed) == "model-h"
    assert next_model("model-h", listed) == "model-s"  # after the last, the best again
    assert next_model("claude-withdrawn", listed) == "model-s"  # not listed: the best


def test_the_next_model_is_a_deprecated_one_only_when_nothing_else_is_listed() -> None:
    current = ModelInfo(id="model-h", display_name="H", line="haiku")
    best = ModelInfo(id="model-s", display_name="S", line="sonnet")
    old = ModelInfo(id="model-old", display_name="Old", line="sonnet", deprecated=True)

    assert next_model("model-h", [current, old, best]) == "model-s"
    assert next_model("model-h", [current, old]) == "model-old"


def test_there_is_no_next_model_when_the_list_offers_no_other() -> None:
    only = ModelInfo(id="model-only", display_name="Only")

    assert next_model("model-only", [only]) is None
    assert next_model("model-only", []) is None
    assert next_model("claude-withdrawn", [only]) == "model-only"


def test_a_retired_model_is_left_out() -> None:
    entries = [{"id": "claude-gone", "lifecycle": "retired"}, SERVER_MODEL]

    assert clean_model_list(entries) == [SERVER_MODEL]


def test_a_line_missing_from_the_server_comes_from_the_table_only() -> None:
    cleaned = clean_model_list([{"id": "claude-haiku-4-5"}, {"id": "claude-haiku-9"}])

    assert [model.line for model in cleaned] == ["haiku", None]


@pytest.mark.parametrize(
    ("model_id", "said"),
    [
        ("claude-haiku-4-5", "Claude Haiku 4.5"),  # the bundled table's name
        ("claude-haiku-4-5-20251001", "Claude Haiku 4.5"),  # a dated snapshot of it
        ("claude-sonnet-7", "Claude Sonnet 7"),  # tomorrow's model, read from its id
        ("claude-3-5-haiku-20241022", "Claude Haiku 3.5"),
        ("my-local-model", "my-local-model"),  # nothing to read: said as it is
    ],
)
def test_model_name_says_models_as_people_know_them(model_id: str, said: str) -> None:
    assert model_name(model_id) == said
