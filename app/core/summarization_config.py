"""When and how Cairn summarizes: the settings of DESIGN §5, validated.

`SummarizationConfig` is a frozen pydantic model, so a policy or a worker can
hold one without fearing that the settings dialog changes it mid-run; change
settings with `with_changes`, which validates the whole model again (checks
that span fields, such as reset < trigger, cannot be enforced one assignment
at a time). Every validation message is a plain sentence the settings dialog
can show as is (`describe_errors`).
"""

from __future__ import annotations

import math
import string
from typing import Any, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from app.core.ratios import DEFAULT_RESET_RATIO, DEFAULT_TARGET_RATIO, DEFAULT_TRIGGER_RATIO
from app.core.summary import SummaryMode

SUMMARIZATION_SCHEMA_VERSION = 1

# Cheapest capable model first; the summarizer falls back down the list: today's Haiku
# and Sonnet, then the legacy Haiku (models overview, read 2026-11-28).
DEFAULT_SUMMARIZER_MODELS: tuple[str, ...] = (
    "claude-haiku-5-5",
    "claude-sonnet-5-5",
    "claude-haiku-4-5",
)

# The smallest emergency tail (DESIGN §5: preserve_recent adapts down to 2).
MIN_PRESERVE_RECENT = 2
MIN_SUMMARY_TOKENS = 100
MAX_SUMMARY_TOKENS = 8_000
# A target below this is too short to say anything useful, whatever the compression.
MIN_TARGET_SUMMARY_TOKENS = MIN_SUMMARY_TOKENS
# Limits on counts: generous, but a typo like 1e9 should read as a mistake, not a setting.
MAX_MESSAGE_SETTING = 100_000
MAX_DEPTH_LIMIT = 10

# Placeholders a custom prompt template may use; `{transcript}` is required.
PROMPT_PLACEHOLDERS: frozenset[str] = frozenset({"transcript", "instructions", "target_tokens"})
REQUIRED_PROMPT_PLACEHOLDERS: frozenset[str] = frozenset({"transcript"})


class SummarizationConfig(BaseModel):
    """Every summarization setting (DESIGN §5), with the issue's additions.

    Attributes:
        schema_version: bumped when a field changes meaning, so old files can be migrated.
        auto_summarize: master switch for automatic summaries (emergencies still happen).
        trigger_ratio: summarize when the next request would use this share of the usable window.
        reset_ratio: hysteresis: no new automatic trigger until usage dropped below this
            (or the cooldown passed).
        target_ratio: a summary condenses the oldest messages just far enough to bring the
            next request down to this share of the usable window; never above reset_ratio,
            so the trigger re-arms once a summary is made.
        min_messages: never summarize automatically a shorter live context.
        preserve_recent: the fewest newest messages always kept verbatim (a floor: a summary
            usually keeps more, down to 2 in an emergency).
        cooldown_messages: new messages needed after a summary before the next automatic one.
        max_depth: levels of summaries of summaries; beyond it the oldest compressed
            content is trimmed by rule.
        message_trigger: optional count trigger (live messages); None is off.
        mode: "hybrid" (rules + LLM), "llm", or "rule" (offline, free, deterministic).
        summarizer_models: ordered preference, cheapest capable first.
        max_summary_tokens: cap per summary.
        abort_on_failure: when the LLM pass fails, change nothing instead of falling back
            to a rule-based summary.
        target_compression: the summary's target length as a share of its source tokens
            (capped by max_summary_tokens).
        force_refresh_after_messages: optional: once a summary exists, summarize again after
            this many new messages, whatever the usage; None is off.
        prompt_template: optional custom prompt; must contain `{transcript}`, may use
            `{instructions}` and `{target_tokens}`.
        preview_automatic: show automatic summaries for checking before they are saved,
            as manual ones always are (emergencies never wait: a message is being sent).
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    schema_version: int = SUMMARIZATION_SCHEMA_VERSION
    auto_summarize: bool = True
    trigger_ratio: float = DEFAULT_TRIGGER_RATIO
    reset_ratio: float = DEFAULT_RESET_RATIO
    target_ratio: float = DEFAULT_TARGET_RATIO
    min_messages: int = 12
    preserve_recent: int = 6
    cooldown_messages: int = 4
    max_depth: int = 3
    message_trigger: int | None = None
    mode: SummaryMode = SummaryMode.HYBRID
    summarizer_models: tuple[str, ...] = DEFAULT_SUMMARIZER_MODELS
    max_summary_tokens: int = 800
    abort_on_failure: bool = False
    target_compression: float = 0.3
    force_refresh_after_messages: int | None = None
    prompt_template: str | None = None
    preview_automatic: bool = False

    # --- one field at a time

    @field_validator("schema_version")
    @classmethod
    def _check_schema_version(cls, value: int) -> int:
        if value < 1:
            raise ValueError("The settings version must be 1 or more.")
        if value > SUMMARIZATION_SCHEMA_VERSION:
            raise ValueError(
                f"These summarization settings come from a newer Cairn (version {value}); "
                f"this one understands version {SUMMARIZATION_SCHEMA_VERSION}."
            )
        return value

    @model_validator(mode="before")
    @classmethod
    def _migrate(cls, data: Any) -> Any:
        """Older settings files have no target_ratio: they get the default, lowered to
        their reset level when that is below it, so a file that loaded before still loads.

        No schema bump: the field only adds, and an older Cairn ignores it (extra="ignore").
        """
        if isinstance(data, dict) and "target_ratio" not in data:
            reset = data.get("reset_ratio", cls.model_fields["reset_ratio"].default)
            if isinstance(reset, int | float) and math.isfinite(reset) and 0 < reset < 1:
                return {**data, "target_ratio": min(DEFAULT_TARGET_RATIO, reset)}
        return data

    @field_validator("trigger_ratio", "reset_ratio", "target_ratio", "target_compression")
    @classmethod
    def _check_share(cls, value: float, info: ValidationInfo) -> float:
        names = {
            "trigger_ratio": "The trigger level",
            "reset_ratio": "The reset level",
            "target_ratio": "The level a summary brings the conversation down to",
            "target_compression": "The target summary length",
        }
        label = names.get(info.field_name or "", "This setting")
        if not math.isfinite(value) or not 0 < value < 1:
            raise ValueError(f"{label} must be a share between 0 and 1 (for example 0.8 for 80 %).")
        return value

    @field_validator("min_messages", "cooldown_messages")
    @classmethod
    def _check_count(cls, value: int, info: ValidationInfo) -> int:
        names = {
            "min_messages": "The minimum number of messages",
            "cooldown_messages": "The number of messages to wait after a summary",
        }
        label = names.get(info.field_name or "", "This setting")
        if not 0 <= value <= MAX_MESSAGE_SETTING:
            raise ValueError(f"{label} must be between 0 and {MAX_MESSAGE_SETTING:,}.")
        return value

    @field_validator("preserve_recent")
    @classmethod
    def _check_preserve_recent(cls, value: int) -> int:
        if not MIN_PRESERVE_RECENT <= value <= MAX_MESSAGE_SETTING:
            raise ValueError(
                f"At least {MIN_PRESERVE_RECENT} recent messages must stay as they are "
                f"(and at most {MAX_MESSAGE_SETTING:,})."
            )
        return value

    @field_validator("max_depth")
    @classmethod
    def _check_max_depth(cls, value: int) -> int:
        if not 1 <= value <= MAX_DEPTH_LIMIT:
            raise ValueError(
                f"The number of summary levels must be between 1 and {MAX_DEPTH_LIMIT}."
            )
        return value

    @field_validator("message_trigger", "force_refresh_after_messages")
    @classmethod
    def _check_optional_count(cls, value: int | None, info: ValidationInfo) -> int | None:
        names = {
            "message_trigger": "The message-count trigger",
            "force_refresh_after_messages": "The refresh interval",
        }
        label = names.get(info.field_name or "", "This setting")
        if value is not None and not 1 <= value <= MAX_MESSAGE_SETTING:
            raise ValueError(
                f"{label} must be between 1 and {MAX_MESSAGE_SETTING:,} messages, or left off."
            )
        return value

    @field_validator("summarizer_models", mode="before")
    @classmethod
    def _clean_models(cls, value: Any) -> Any:
        """Trim names and drop repeats; blanks and an empty list are refused below."""
        if isinstance(value, str):
            raise ValueError("The summarizer models must be a list of model names.")
        if isinstance(value, list | tuple):
            cleaned: list[Any] = []
            for item in value:
                name = item.strip() if isinstance(item, str) else item
                if name not in cleaned:
                    cleaned.append(name)
            return cleaned
        return value

    @field_validator("summarizer_models")
    @classmethod
    def _check_models(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not value:
            raise ValueError("Choose at least one model to write summaries.")
        if any(not name for name in value):
            raise ValueError("A summarizer model name is blank: remove it or type a model name.")
        return value

    @field_validator("max_summary_tokens")
    @classmethod
    def _check_max_summary_tokens(cls, value: int) -> int:
        if not MIN_SUMMARY_TOKENS <= value <= MAX_SUMMARY_TOKENS:
            raise ValueError(
                f"A summary may be between {MIN_SUMMARY_TOKENS} and {MAX_SUMMARY_TOKENS:,} "
                "tokens long."
            )
        return value

    @field_validator("prompt_template")
    @classmethod
    def _check_prompt_template(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        try:
            fields = {name for _, name, _, _ in string.Formatter().parse(value) if name is not None}
        except ValueError:
            raise ValueError(
                "The custom prompt has an unmatched { or }. Write {{ or }} for a literal brace."
            ) from None
        unknown = sorted(fields - PROMPT_PLACEHOLDERS)
        if unknown:
            allowed = ", ".join(f"{{{name}}}" for name in sorted(PROMPT_PLACEHOLDERS))
            raise ValueError(
                f"The custom prompt uses an unknown placeholder {{{unknown[0]}}}; "
                f"the ones available are {allowed}."
            )
        missing = sorted(REQUIRED_PROMPT_PLACEHOLDERS - fields)
        if missing:
            raise ValueError(
                f"The custom prompt must contain {{{missing[0]}}}, where the messages go."
            )
        return value

    # --- across fields

    @model_validator(mode="after")
    def _check_together(self) -> Self:
        if self.reset_ratio >= self.trigger_ratio:
            raise ValueError(
                f"The reset level ({self.reset_ratio:.0%}) must be below the trigger level "
                f"({self.trigger_ratio:.0%}), or summaries would start again at once."
            )
        if self.target_ratio > self.reset_ratio:
            raise ValueError(
                f"The level a summary brings the conversation down to ({self.target_ratio:.0%}) "
                f"must not be above the reset level ({self.reset_ratio:.0%}), or the next "
                "summary could never start."
            )
        if self.min_messages <= self.preserve_recent:
            raise ValueError(
                f"The minimum number of messages ({self.min_messages}) must be larger than "
                f"the number kept as they are ({self.preserve_recent}), or there is nothing "
                "to summarize."
            )
        if self.message_trigger is not None and self.message_trigger < self.min_messages:
            raise ValueError(
                f"The message-count trigger ({self.message_trigger}) must be at least the "
                f"minimum number of messages ({self.min_messages})."
            )
        return self

    # --- use

    def with_changes(self, **changes: Any) -> SummarizationConfig:
        """A copy with `changes` applied, validated as a whole (raises ValidationError)."""
        return SummarizationConfig.model_validate({**self.model_dump(), **changes})

    def target_summary_tokens(self, source_tokens: int) -> int:
        """How long a summary of `source_tokens` should be: the compression target,
        at least MIN_TARGET_SUMMARY_TOKENS, at most max_summary_tokens."""
        wanted = round(max(0, source_tokens) * self.target_compression)
        return min(self.max_summary_tokens, max(MIN_TARGET_SUMMARY_TOKENS, wanted))

    def render_prompt(
        self, *, transcript: str, instructions: str, target_tokens: int
    ) -> str | None:
        """The custom prompt filled in, or None when no custom template is set."""
        if self.prompt_template is None:
            return None
        return self.prompt_template.format(
            transcript=transcript, instructions=instructions, target_tokens=target_tokens
        )


def describe_errors(error: ValidationError) -> list[str]:
    """Plain sentences for a settings dialog, one per problem, without pydantic's prefixes."""
    sentences: list[str] = []
    for item in error.errors(include_url=False):
        message = str(item.get("msg", ""))
        message = message.removeprefix("Value error, ")
        if item.get("type") != "value_error":
            where = ".".join(str(part) for part in item.get("loc", ()))
            message = f"{where.replace('_', ' ')}: {message}" if where else message
        if message not in sentences:
            sentences.append(message)
    return sentences
