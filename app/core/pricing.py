"""What a conversation's replies cost, estimated from a bundled, dated price table.

resources/prices.json holds the standard API prices per million tokens of each
model family (input, output, cache write, cache read), the day they were
checked and the page they were read from
(https://platform.claude.com/docs/en/about-claude/pricing). Cairn never knows
the user's bill: discounts, taxes and newer prices are not in the table, so
every figure is said as an estimate, and a model the table does not know has
no price at all rather than a guessed one.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from app.core.models import Usage


log = logging.getLogger(__name__)

PRICE_TABLE: Final = Path(__file__).resolve().parents[2] / "resources" / "prices.json"
# Costs are kept in billionths of a dollar: every listed price is a whole number of
# thousandths of a dollar per million tokens, so sums are exact, in any order.
NANODOLLARS_PER_DOLLAR: Final = 1_000_000_000


@dataclass(frozen=True)
class Prices:
    """Thousandths of a dollar per million tokens of one model family ($3 is 3000)."""

    family: str
    input: int
    output: int
    cache_write: int
    cache_read: int
    # Two bands by prompt size (Haiku 5.5: "$0.10 / MTok for prompts up to 100,000
    # tokens, $0.50 / MTok for prompts over 100,000 tokens"): a prompt over
    # `band_tokens` input tokens is priced at `over`.
    band_tokens: int | None = None
    over: Prices | None = None

    def cost(self, usage: Usage) -> int:
        """What `usage` costs, in billionths of a dollar (exact). A reply whose usage adds
        up several requests is priced in the band of their average prompt."""
        band = self.band_tokens
        if self.over is not None and band is not None:
            over = usage.total_input_tokens > band * max(1, usage.requests)
            return (self.over if over else replace(self, over=None)).cost(usage)
        return (
            usage.input_tokens * self.input
            + usage.output_tokens * self.output
            + usage.cache_creation_input_tokens * self.cache_write
            + usage.cache_read_input_tokens * self.cache_read
        )


@dataclass(frozen=True)
class PriceTable:
    """The bundled prices, matched on the start of a model id (the longest family first,
    so "claude-opus-4-5-20251101" is an Opus 4.5, not an Opus 4).

    Attributes:
        checked: the day the prices were read from `source` (ISO date).
        source: the pricing page they come from.
    """

    checked: str
    source: str
    families: tuple[Prices, ...]

    def for_model(self, model_id: str | None) -> Prices | None:
        """The prices of `model_id`'s family; None when the table does not know it."""
        if not model_id:
            return None
        for prices in self.families:
            if model_id.startswith(prices.family):
                return prices
        return None

    def cost(self, model_id: str | None, usage: Usage) -> int | None:
        """What `usage` of `model_id` costs in billionths of a dollar; None when no
        price is known."""
        prices = self.for_model(model_id)
        return None if prices is None else prices.cost(usage)


def parse_price_table(raw: str) -> PriceTable:
    """A price table from the JSON of resources/prices.json. Raises ValueError."""
    data = json.loads(raw)
    try:
        families = tuple(_prices(row) for row in data["models"])
        table = PriceTable(str(data["checked"]), str(data["source"]), families)
    except (KeyError, TypeError) as error:
        raise ValueError(f"the price table is not complete: {error}") from error
    ordered = sorted(table.families, key=lambda prices: len(prices.family), reverse=True)
    return PriceTable(table.checked, table.source, tuple(ordered))


def _prices(row: dict[str, object]) -> Prices:
    family = str(row["family"])
    over = row.get("over")
    band = row.get("band_tokens")
    if (over is None) != (band is None):
        raise ValueError(f"{family}: 'over' and 'band_tokens' go together")
    if band is not None and (not isinstance(band, int) or isinstance(band, bool) or band <= 0):
        raise ValueError(f"{family}: 'band_tokens' must be a whole number of tokens")
    if over is not None and not isinstance(over, dict):
        raise ValueError(f"{family}: 'over' must be a price row")
    return Prices(
        family=family,
        input=_thousandths(row["input"]),
        output=_thousandths(row["output"]),
        cache_write=_thousandths(row["cache_write"]),
        cache_read=_thousandths(row["cache_read"]),
        band_tokens=band,
        over=None if over is None else _prices({"family": family, **over}),
    )


def _thousandths(dollars: object) -> int:
    if not isinstance(dollars, int | float) or isinstance(dollars, bool) or dollars < 0:
        raise ValueError(f"a price must be a number of dollars, not {dollars!r}")
    thousandths = round(dollars * 1000)
    if abs(thousandths - dollars * 1000) > 1e-6:
        raise ValueError(f"a price finer than a tenth of a cent: {dollars!r}")
    return thousandths


@cache
def bundled_prices() -> PriceTable:
    """The price table shipped with Cairn (read once); empty when it cannot be read,
    so that every model says "no price known" instead of Cairn failing."""
    try:
        return parse_price_table(PRICE_TABLE.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        log.warning("Could not read the price table %s: %s", PRICE_TABLE, error)
        return PriceTable(checked="", source="", families=())


def format_cost(nanodollars: int) -> str:
    """A cost the way people read a small bill: "$0.0042", "$0.37", "$1,212.40";
    under a hundredth of a cent, "under $0.0001"."""
    dollars = nanodollars / NANODOLLARS_PER_DOLLAR
    if nanodollars <= 0:
        return "$0.00"
    if dollars < 0.0001:
        return "under $0.0001"
    if dollars < 0.01:
        return f"${dollars:.4f}"
    return f"${dollars:,.2f}"
