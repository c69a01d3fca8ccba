"""The bundled price table and the estimated cost of a conversation's replies."""

from __future__ import annotations

import json

import pytest

from app.core.models import Usage
from app.core.pricing import (
    PRICE_TABLE,
    bundled_prices,
    format_cost,
    parse_price_table,
)


def test_the_bundled_table_is_dated_and_names_its_source() -> None:
    data = json.loads(PRICE_TABLE.read_text(encoding="utf-8"))
    table = bundled_prices()

    assert table.checked == data["checked"]
    assert table.source == "https://platform.claude.com/docs/en/about-claude/pricing"
    assert len(table.families) == len(data["models"])


@pytest.mark.parametrize(
    ("model_id", "family"),
    [
        ("claude-sonnet-4-6", "claude-sonnet-4-6"),
        ("claude-opus-4-5-20251101", "claude-opus-4-5"),  # not the dearer Opus 4
        ("claude-opus-4-20250514", "claude-opus-4"),
        ("claude-haiku-4-5-20251001", "claude-haiku-4-5"),
        ("claude-fable-5-1", "claude-fable-5-1"),  # not Fable 5's cache price
    ],
)
def test_a_model_id_finds_its_family_the_longest_match_first(model_id: str, family: str) -> None:
    prices = bundled_prices().for_model(model_id)
    assert prices is not None
    assert prices.family == family


@pytest.mark.parametrize("model_id", ["claude-small", "gpt-4o", "", None])
def test_an_unknown_model_has_no_price(model_id: str | None) -> None:
    assert bundled_prices().cost(model_id, Usage(input_tokens=1_000)) is None


def test_every_kind_of_token_has_its_own_price() -> None:
    # Haiku 4.5: $1 input, $5 output, $1.25 cache write, $0.10 cache read per million.
    usage = Usage(
        input_tokens=1_000_000,
        output_tokens=1_000_000,
        cache_creation_input_tokens=1_000_000,
        cache_read_input_tokens=1_000_000,
    )
    assert bundled_prices().cost("claude-haiku-4-5", usage) == 7_350_000_000  # $7.35


def test_a_table_with_a_missing_price_is_refused() -> None:
    raw = json.dumps(
        {"checked": "2026-11-27", "source": "x", "models": [{"family": "claude-x", "input": 1}]}
    )
    with pytest.raises(ValueError, match="not complete"):
        parse_price_table(raw)


def test_a_negative_price_is_refused() -> None:
    row = {"family": "claude-x", "input": -1, "output": 1, "cache_write": 1, "cache_read": 1}
    raw = json.dumps({"checked": "2026-11-27", "source": "x", "models": [row]})
    with pytest.raises(ValueError, match="number of dollars"):
        parse_price_table(raw)


@pytest.mark.parametrize(
    ("nanodollars", "said"),
    [
        (0, "$0.00"),
        (50, "under $0.0001"),
        (4_200_000, "$0.0042"),
        (370_000_000, "$0.37"),
        (1_212_400_000_000, "$1,212.40"),
    ],
)
def test_format_cost(nanodollars: int, said: str) -> None:
    assert format_cost(nanodollars) == said
