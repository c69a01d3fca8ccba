"""What a chat request asks of Claude's thinking, per model (`ModelInfo.thinking`).

- A model that thinks by default (adaptive, or always on) is asked for *summarized*
  thinking: the default display on Claude 4.7 and later is "omitted" (an empty
  `thinking`), and on Opus 5.5, Sonnet 5.5 and Fable 5.1 the text Claude writes between
  tool calls comes back in thinking blocks, empty unless a display that returns the text
  is set (https://platform.claude.com/docs/en/models/opus-5-5/whats-new-opus-5-5#text-between-tool-calls;
  `display`: the SDK's `ThinkingConfigAdaptiveParam`).
- "Think longer" raises the effort where the model takes one
  (`output_config.effort`, https://platform.claude.com/docs/en/build-with-claude/effort);
  on a model with manual extended thinking only (Haiku 4.5), it turns thinking on with a
  budget ("Must be ≥1024 and less than `max_tokens`": the SDK's
  `ThinkingConfigEnabledParam.budget_tokens`).
- Otherwise nothing is sent: the model's own default stands.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from app.core.catalog import ModelInfo


# The effort "Think longer" asks for (the levels: low, medium, high, xhigh, max; the
# defaults are medium or high per model: models overview, "Default effort").
THINK_LONGER_EFFORT: Final = "xhigh"
# The budget asked of a model with manual extended thinking, at most half its max_tokens.
EXTENDED_BUDGET_TOKENS: Final = 16_000
MIN_BUDGET_TOKENS: Final = 1_024


@dataclass(frozen=True)
class ThinkingRequest:
    """The `thinking` and `output_config` of a request; None leaves the model's default."""

    thinking: dict[str, Any] | None = None
    output_config: dict[str, Any] | None = None


def thinking_request(model: ModelInfo, max_tokens: int, *, think_longer: bool) -> ThinkingRequest:
    """What to ask of `model`'s thinking for a reply of at most `max_tokens`."""
    if model.thinking in ("always", "adaptive"):
        effort = {"effort": THINK_LONGER_EFFORT} if think_longer and model.effort else None
        return ThinkingRequest({"type": "adaptive", "display": "summarized"}, effort)
    if model.thinking == "extended" and think_longer:
        budget = min(EXTENDED_BUDGET_TOKENS, max_tokens // 2)
        if budget >= MIN_BUDGET_TOKENS:
            return ThinkingRequest({"type": "enabled", "budget_tokens": budget})
    return ThinkingRequest()


def offers_think_longer(model: ModelInfo) -> bool:
    """Whether "Think longer" changes anything on `model`."""
    return (model.thinking in ("always", "adaptive") and model.effort) or (
        model.thinking == "extended"
    )


def thought_for(seconds: float | None) -> str:
    """The heading of a reply's thinking: "Thought for 12 s", "Thought for 2 min 5 s";
    "Thought for a moment" under a second or when the time is not known."""
    if seconds is None or seconds < 1:
        return "Thought for a moment"
    whole = round(seconds)
    if whole < 60:
        return f"Thought for {whole} s"
    minutes, rest = divmod(whole, 60)
    return f"Thought for {minutes} min {rest} s" if rest else f"Thought for {minutes} min"
