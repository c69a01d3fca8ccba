"""Which Claude models exist, their limits, and which one to use by default."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

DEFAULT_CONTEXT_WINDOW = 200_000
DEFAULT_MAX_OUTPUT = 8_192


class ModelInfo(BaseModel):
    """A model as `GET /v1/models` describes it."""

    model_config = ConfigDict(frozen=True)

    id: str
    display_name: str
    max_input_tokens: int = DEFAULT_CONTEXT_WINDOW
    max_tokens: int = DEFAULT_MAX_OUTPUT


# Used when the server cannot be asked (offline, or an old compatible server).
# Ordered by preference for chatting: the first one listed is the default.
FALLBACK_MODELS: tuple[ModelInfo, ...] = (
    ModelInfo(
        id="claude-sonnet-4-6",
        display_name="Claude Sonnet 4.6",
        max_input_tokens=200_000,
        max_tokens=64_000,
    ),
    ModelInfo(
        id="claude-opus-4-6",
        display_name="Claude Opus 4.6",
        max_input_tokens=200_000,
        max_tokens=64_000,
    ),
    ModelInfo(
        id="claude-haiku-4-5",
        display_name="Claude Haiku 4.5",
        max_input_tokens=200_000,
        max_tokens=64_000,
    ),
)

# Family preference when choosing among models the server lists: a balanced
# model first, then the strongest, then the fastest.
_FAMILY_PREFERENCE = ("sonnet", "opus", "haiku")


def _preference(model: ModelInfo, position: int) -> tuple[int, int]:
    for rank, family in enumerate(_FAMILY_PREFERENCE):
        if family in model.id:
            # The API lists newest first, so the position breaks ties by age.
            return (rank, position)
    return (len(_FAMILY_PREFERENCE), position)


def pick_default_model(configured: str | None, available: Sequence[ModelInfo]) -> str:
    """The model to select: the configured one when listed, else the best listed."""
    if not available:
        available = FALLBACK_MODELS
    ids = [model.id for model in available]
    if configured and configured in ids:
        return configured
    ranked = sorted(enumerate(available), key=lambda pair: _preference(pair[1], pair[0]))
    return ranked[0][1].id


def find_model(model_id: str, available: Sequence[ModelInfo]) -> ModelInfo | None:
    for model in (*available, *FALLBACK_MODELS):
        if model.id == model_id:
            return model
    return None
