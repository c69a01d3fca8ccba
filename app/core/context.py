"""What is sent to Claude, and how full the context window is (DESIGN §3, §4)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ContextBreakdown:
    """Estimated tokens of each part of the next request (calibrated)."""

    system: int = 0  # the user's instructions (system prompt)
    memory: int = 0  # the "Conversation so far" block of summaries
    history: int = 0  # the live tail of recent messages
    draft: int = 0  # what is being typed in the composer
    reserved_output: int = 0  # max_tokens kept free for the reply


@dataclass(frozen=True)
class ContextState:
    """How full the next request would make the model's context window.

    Attributes:
        breakdown: tokens per part.
        context_window: the model's max_input_tokens.
        trigger_ratio: the share of `usable` at which an automatic summary starts.
        model_known: False when the model is missing from the catalog (a safe default is used).
        estimate_flagged: True when no tokenizer loaded and a rough ~4 chars/token estimate is used.
        calibrated: True once real usage from the API has corrected the estimates for this model.
    """

    breakdown: ContextBreakdown
    context_window: int
    trigger_ratio: float = 0.8
    model_known: bool = True
    estimate_flagged: bool = False
    calibrated: bool = False

    @property
    def used(self) -> int:
        """Tokens of the next request: system + memory + history + draft."""
        b = self.breakdown
        return b.system + b.memory + b.history + b.draft

    @property
    def usable(self) -> int:
        """The window minus the room kept for the reply."""
        return max(1, self.context_window - self.breakdown.reserved_output)

    @property
    def ratio(self) -> float:
        return self.used / self.usable

    @property
    def fits(self) -> bool:
        return self.used <= self.usable
