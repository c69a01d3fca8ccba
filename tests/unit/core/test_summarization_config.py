"""SummarizationConfig: the defaults of DESIGN §5, validation in plain words, the target length."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from app.core.summarization_config import (
    DEFAULT_SUMMARIZER_MODELS,
    MAX_SUMMARY_TOKENS,
    MIN_SUMMARY_TOKENS,
    MIN_TARGET_SUMMARY_TOKENS,
    SUMMARIZATION_SCHEMA_VERSION,
    SummarizationConfig,
    describe_errors,
)


def problems(**fields: Any) -> list[str]:
    """The plain sentences a settings dialog would show for these fields."""
    with pytest.raises(ValidationError) as raised:
        SummarizationConfig(**fields)
    return describe_errors(raised.value)


def test_defaults_are_those_of_the_design() -> None:
    config = SummarizationConfig()

    assert config.schema_version == SUMMARIZATION_SCHEMA_VERSION
    assert config.auto_summarize is True
    assert (config.trigger_ratio, config.reset_ratio) == (0.80, 0.70)
    assert (config.min_messages, config.preserve_recent, config.cooldown_messages) == (12, 6, 4)
    assert config.max_depth == 3
    assert config.message_trigger is None
    assert config.mode == "hybrid"
    assert config.summarizer_models == DEFAULT_SUMMARIZER_MODELS
    assert config.summarizer_models[0] == "claude-haiku-5-5"  # the cheapest capable first
    assert config.max_summary_tokens == 800
    assert config.abort_on_failure is False
    assert config.target_compression == 0.3
    assert config.force_refresh_after_messages is None
    assert config.prompt_template is None
    assert config.preview_automatic is False, "only manual summaries wait for a check"


def test_it_round_trips_through_json_and_ignores_unknown_fields() -> None:
    config = SummarizationConfig(
        message_trigger=100,
        mode="rule",
        summarizer_models=["claude-sonnet-4-6"],
        preview_automatic=True,
    )
    data = json.loads(config.model_dump_json())
    data["from_a_later_version"] = True

    assert SummarizationConfig.model_validate(data) == config


def test_it_is_frozen_and_changes_are_validated_as_a_whole() -> None:
    config = SummarizationConfig()

    with pytest.raises(ValidationError):
        config.trigger_ratio = 0.5  # type: ignore[misc]
    # The target (60 %) must come down with the reset level: it may not be above it.
    changed = config.with_changes(trigger_ratio=0.6, reset_ratio=0.5, target_ratio=0.4)
    assert (changed.trigger_ratio, changed.reset_ratio) == (0.6, 0.5)
    assert config.trigger_ratio == 0.8
    with pytest.raises(ValidationError):
        config.with_changes(trigger_ratio=0.6)  # the reset level (0.7) would be above it


def test_the_reset_level_must_be_below_the_trigger_level() -> None:
    assert problems(trigger_ratio=0.7, reset_ratio=0.7) == [
        "The reset level (70%) must be below the trigger level (70%), "
        "or summaries would start again at once."
    ]


def test_the_target_is_60_percent_and_never_above_the_reset_level() -> None:
    assert SummarizationConfig().target_ratio == 0.60
    assert SummarizationConfig(target_ratio=0.7).target_ratio == 0.7  # equal is allowed
    assert problems(target_ratio=0.75) == [
        "The level a summary brings the conversation down to (75%) must not be above the "
        "reset level (70%), or the next summary could never start."
    ]


def test_older_settings_without_a_target_get_the_default_or_their_reset_level() -> None:
    older = SummarizationConfig().model_dump(mode="json")
    del older["target_ratio"]

    assert SummarizationConfig.model_validate(older).target_ratio == 0.60
    # A file that loaded before (reset 50 %) still loads: its target is its reset level.
    low = {**older, "trigger_ratio": 0.6, "reset_ratio": 0.5}
    assert SummarizationConfig.model_validate(low).target_ratio == 0.5


@pytest.mark.parametrize(
    "field", ["trigger_ratio", "reset_ratio", "target_ratio", "target_compression"]
)
@pytest.mark.parametrize("value", [0.0, 1.0, -0.2, 1.5, float("nan"), float("inf")])
def test_ratios_must_lie_strictly_between_0_and_1(field: str, value: float) -> None:
    [message] = problems(**{field: value})

    assert "must be a share between 0 and 1 (for example 0.8 for 80 %)" in message


def test_at_least_two_recent_messages_stay() -> None:
    assert problems(preserve_recent=1) == [
        "At least 2 recent messages must stay as they are (and at most 100,000)."
    ]


def test_the_minimum_must_exceed_what_is_kept() -> None:
    [message] = problems(min_messages=6, preserve_recent=6)

    assert message.startswith("The minimum number of messages (6) must be larger than")
    assert "there is nothing to summarize" in message


def test_counts_are_checked() -> None:
    assert problems(cooldown_messages=-1) == [
        "The number of messages to wait after a summary must be between 0 and 100,000."
    ]
    assert problems(max_depth=0) == ["The number of summary levels must be between 1 and 10."]
    assert problems(force_refresh_after_messages=0) == [
        "The refresh interval must be between 1 and 100,000 messages, or left off."
    ]
    assert SummarizationConfig(cooldown_messages=0).cooldown_messages == 0


def test_the_message_trigger_cannot_be_below_the_minimum() -> None:
    assert problems(message_trigger=10) == [
        "The message-count trigger (10) must be at least the minimum number of messages (12)."
    ]
    assert SummarizationConfig(message_trigger=12).message_trigger == 12


def test_summarizer_models_are_trimmed_deduplicated_and_never_empty() -> None:
    config = SummarizationConfig(
        summarizer_models=[" claude-haiku-4-5 ", "claude-sonnet-4-6", "claude-haiku-4-5"]
    )

    assert config.summarizer_models == ("claude-haiku-4-5", "claude-sonnet-4-6")
    assert problems(summarizer_models=[]) == ["Choose at least one model to write summaries."]
    assert problems(summarizer_models=["claude-haiku-4-5", "  "]) == [
        "A summarizer model name is blank: remove it or type a model name."
    ]
    assert problems(summarizer_models="claude-haiku-4-5") == [
        "The summarizer models must be a list of model names."
    ]


def test_mode_is_one_of_three() -> None:
    [message] = problems(mode="magic")

    assert message.startswith("mode: ")


@pytest.mark.parametrize("tokens", [MIN_SUMMARY_TOKENS - 1, MAX_SUMMARY_TOKENS + 1, 0])
def test_max_summary_tokens_has_a_sane_range(tokens: int) -> None:
    assert problems(max_summary_tokens=tokens) == [
        "A summary may be between 100 and 8,000 tokens long."
    ]


def test_a_newer_schema_is_refused_in_plain_words() -> None:
    [message] = problems(schema_version=SUMMARIZATION_SCHEMA_VERSION + 1)

    assert "come from a newer Cairn" in message


def test_several_problems_are_all_reported() -> None:
    messages = problems(trigger_ratio=2.0, preserve_recent=0, summarizer_models=[])

    assert len(messages) == 3


# --- the custom prompt


def test_a_custom_prompt_needs_the_transcript_placeholder() -> None:
    assert problems(prompt_template="Summarize this, please.") == [
        "The custom prompt must contain {transcript}, where the messages go."
    ]


def test_a_custom_prompt_may_only_use_known_placeholders() -> None:
    [message] = problems(prompt_template="{transcript} in {language}")

    assert message.startswith("The custom prompt uses an unknown placeholder {language}")
    assert "{instructions}, {target_tokens}, {transcript}" in message


def test_a_custom_prompt_with_a_stray_brace_is_refused() -> None:
    [message] = problems(prompt_template="{transcript} and a { stray")

    assert "unmatched { or }" in message


def test_a_blank_custom_prompt_means_none() -> None:
    assert SummarizationConfig(prompt_template="   ").prompt_template is None
    assert (
        SummarizationConfig().render_prompt(transcript="t", instructions="", target_tokens=100)
        is None
    )


def test_a_custom_prompt_is_filled_in() -> None:
    config = SummarizationConfig(
        prompt_template=(
            "Keep it under {target_tokens} tokens. {instructions}\n{{json}}\n{transcript}"
        )
    )

    assert (
        config.render_prompt(
            transcript="user: hello", instructions="Focus on dates.", target_tokens=240
        )
        == "Keep it under 240 tokens. Focus on dates.\n{json}\nuser: hello"
    )


# --- the target length


def test_target_summary_tokens_is_a_share_of_the_source_within_bounds() -> None:
    config = SummarizationConfig()

    assert config.target_summary_tokens(1_000) == 300
    assert config.target_summary_tokens(10) == MIN_TARGET_SUMMARY_TOKENS
    assert config.target_summary_tokens(0) == MIN_TARGET_SUMMARY_TOKENS
    assert config.target_summary_tokens(50_000) == 800  # capped by max_summary_tokens
    assert config.with_changes(target_compression=0.1).target_summary_tokens(5_000) == 500


@given(
    source=st.integers(min_value=-10, max_value=10_000_000),
    compression=st.floats(min_value=0.01, max_value=0.99),
    cap=st.integers(min_value=MIN_SUMMARY_TOKENS, max_value=MAX_SUMMARY_TOKENS),
)
def test_target_summary_tokens_never_leaves_its_bounds(
    source: int, compression: float, cap: int
) -> None:
    config = SummarizationConfig(target_compression=compression, max_summary_tokens=cap)

    target = config.target_summary_tokens(source)

    assert MIN_TARGET_SUMMARY_TOKENS <= target <= cap
    if MIN_TARGET_SUMMARY_TOKENS <= source * compression <= cap - 1:
        assert abs(target - source * compression) <= 0.5
