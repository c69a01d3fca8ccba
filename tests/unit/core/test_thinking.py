"""What a request asks of thinking per model, and how long it thought, in words."""

from __future__ import annotations

from app.core.catalog import FALLBACK_MODELS, ModelInfo, find_model
from app.core.thinking import offers_think_longer, thinking_request, thought_for


def model(model_id: str) -> ModelInfo:
    found = find_model(model_id, FALLBACK_MODELS)
    assert found is not None
    return found


def test_thinking_models_are_asked_for_summarized_thinking_and_think_longer_raises_effort() -> None:
    opus = model("claude-opus-5-5")
    plain = thinking_request(opus, 32_000, think_longer=False)
    assert plain.thinking == {"type": "adaptive", "display": "summarized"}
    assert plain.output_config is None
    longer = thinking_request(opus, 32_000, think_longer=True)
    assert longer.output_config == {"effort": "xhigh"}
    assert offers_think_longer(opus)


def test_manual_thinking_only_when_asked_with_a_budget_under_max_tokens() -> None:
    haiku = model("claude-haiku-4-5")
    assert thinking_request(haiku, 8_192, think_longer=False).thinking is None
    asked = thinking_request(haiku, 8_192, think_longer=True).thinking
    assert asked == {"type": "enabled", "budget_tokens": 4_096}


def test_thought_for_says_seconds_and_minutes() -> None:
    assert thought_for(None) == "Thought for a moment"
    assert thought_for(0.4) == "Thought for a moment"
    assert thought_for(12.4) == "Thought for 12 s"
    assert thought_for(125) == "Thought for 2 min 5 s"
