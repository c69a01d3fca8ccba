"""Which Claude models exist, their limits, and which one to use by default."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping, Sequence

from pydantic import BaseModel, ConfigDict

log = logging.getLogger(__name__)

DEFAULT_CONTEXT_WINDOW = 200_000
DEFAULT_MAX_OUTPUT = 8_192

# Limits assumed for a model neither the server nor the bundled table knows.
# Conservative on purpose: every Claude model since Claude 2 reads at least
# 100k tokens and writes at least 4,096, so assuming less than the truth only
# makes Cairn summarize a little early, while assuming more could overflow.
UNKNOWN_MODEL_CONTEXT_WINDOW = 100_000
UNKNOWN_MODEL_MAX_OUTPUT = 4_096

# A listed limit above this is junk, not a model (see clean_model_list).
MAX_CONTEXT_WINDOW = 100_000_000


class ModelInfo(BaseModel):
    """A model as `GET /v1/models` describes it.

    Attributes:
        line: the API's model line ("haiku", "sonnet", "opus"…), None when it names
            none; the API says "do not infer a line from the `id`" (SDK `ModelInfo.line`).
        deprecated: the API lists it as `deprecated` ("closed to new adopters"): still
            usable by whoever chose it, never picked by default.
    """

    model_config = ConfigDict(frozen=True)

    id: str
    display_name: str
    max_input_tokens: int = DEFAULT_CONTEXT_WINDOW
    max_tokens: int = DEFAULT_MAX_OUTPUT
    line: str | None = None
    deprecated: bool = False


# Used when the server cannot be asked (offline, or an old compatible server).
# Ordered by preference for chatting: the first one listed is the default. Limits
# from each model's page of the documentation (checked November 2026):
# https://platform.claude.com/docs/en/models/sonnet-4-6/overview (1M window, 128K output),
# https://platform.claude.com/docs/en/models/opus-4-6/overview (1M, 128K),
# https://platform.claude.com/docs/en/about-claude/models/overview (Haiku 4.5: 200K, 64K).
FALLBACK_MODELS: tuple[ModelInfo, ...] = (
    ModelInfo(
        id="claude-sonnet-4-6",
        display_name="Claude Sonnet 4.6",
        max_input_tokens=1_000_000,
        max_tokens=128_000,
        line="sonnet",
    ),
    ModelInfo(
        id="claude-opus-4-6",
        display_name="Claude Opus 4.6",
        max_input_tokens=1_000_000,
        max_tokens=128_000,
        line="opus",
    ),
    ModelInfo(
        id="claude-haiku-4-5",
        display_name="Claude Haiku 4.5",
        max_input_tokens=200_000,
        max_tokens=64_000,
        line="haiku",
    ),
)

# Line preference when choosing among models the server lists: a balanced model
# first, then the strongest, then the fastest. The line is the one the API gives
# (`ModelInfo.line`), never guessed from the id.
_LINE_PREFERENCE = ("sonnet", "opus", "haiku")


def _preference(model: ModelInfo, position: int) -> tuple[bool, int, int]:
    rank = (
        _LINE_PREFERENCE.index(model.line)
        if model.line in _LINE_PREFERENCE
        else len(_LINE_PREFERENCE)
    )
    # Deprecated models last; the API lists newest first, so position breaks ties by age.
    return (model.deprecated, rank, position)


def pick_default_model(configured: str | None, available: Sequence[ModelInfo]) -> str:
    """The model to select: the configured one when listed, else the best listed.

    A deprecated model is kept when it is the one configured (the user chose it),
    and otherwise chosen only when nothing else is listed.
    """
    if not available:
        available = FALLBACK_MODELS
    ids = [model.id for model in available]
    if configured and configured in ids:
        return configured
    return ranked_models(available)[0].id


def ranked_models(available: Sequence[ModelInfo]) -> list[ModelInfo]:
    """`available` in the order Cairn prefers them for chatting (see `_preference`)."""
    ranked = sorted(enumerate(available), key=lambda pair: _preference(pair[1], pair[0]))
    return [model for _position, model in ranked]


def next_model(current: str, available: Sequence[ModelInfo]) -> str | None:
    """The model to fall to when `current` is not available to the key (a 404): the
    next one in the ranking, from the top again after the last, a deprecated one only
    when no other is listed; None when `available` lists no other. A `current` the
    list does not name falls to the best listed.
    """
    ranked = ranked_models(available)
    ids = [model.id for model in ranked]
    if current in ids:
        position = ids.index(current)
        ranked = ranked[position + 1 :] + ranked[:position]
    others = sorted((model for model in ranked if model.id != current), key=_is_deprecated)
    return others[0].id if others else None


def _is_deprecated(model: ModelInfo) -> bool:
    return model.deprecated


def find_model(model_id: str, available: Sequence[ModelInfo]) -> ModelInfo | None:
    for model in (*available, *FALLBACK_MODELS):
        if model.id == model_id:
            return model
    return None


# A dated snapshot of a listed model: "claude-haiku-4-5-20251001" of "claude-haiku-4-5".
_SNAPSHOT_SUFFIX = re.compile(r"-\d{8}")


def model_limits(model_id: str, available: Sequence[ModelInfo]) -> tuple[ModelInfo, bool]:
    """The model's limits, and whether they are known.

    Looks in `available` (the server's list), then in the bundled table, then
    for a dated snapshot of a model either knows. An unknown model gets
    `UNKNOWN_MODEL_CONTEXT_WINDOW` and `UNKNOWN_MODEL_MAX_OUTPUT`, and False,
    so the gauge can say its figures are a guess.
    """
    known = find_model(model_id, available)
    if known is not None:
        return known, True
    for model in (*available, *FALLBACK_MODELS):
        suffix = model_id.removeprefix(model.id)
        if suffix != model_id and _SNAPSHOT_SUFFIX.fullmatch(suffix):
            return model.model_copy(update={"id": model_id}), True
    unknown = ModelInfo(
        id=model_id,
        display_name=model_id,
        max_input_tokens=UNKNOWN_MODEL_CONTEXT_WINDOW,
        max_tokens=UNKNOWN_MODEL_MAX_OUTPUT,
    )
    return unknown, False


def clean_model_list(entries: Iterable[object]) -> list[ModelInfo]:
    """The usable models of a fetched or cached list, in order, each id once.

    Entries are `ModelInfo`s or mappings with the API's fields. An entry
    without a usable id, or with a limit that cannot be real (not a whole
    number, not in [1, MAX_CONTEXT_WINDOW], an output limit
    not smaller than the window), is dropped with a warning; so is a `retired`
    model ("inference requests naming it fail"). A missing limit is filled from
    the bundled table, else with the unknown-model default (an output limit at
    most half the window).
    """
    models: list[ModelInfo] = []
    seen: set[str] = set()
    for entry in entries:
        data: Mapping[str, object]
        if isinstance(entry, ModelInfo):
            data = entry.model_dump()
        elif isinstance(entry, Mapping):
            data = entry
        else:
            log.warning("Ignored a model list entry that is not an object: %r", entry)
            continue
        model = _clean_model(data)
        if model is not None and model.id not in seen:
            seen.add(model.id)
            models.append(model)
    return models


def _clean_model(data: Mapping[str, object]) -> ModelInfo | None:
    model_id = data.get("id")
    if not isinstance(model_id, str) or not model_id.strip() or model_id != model_id.strip():
        log.warning("Ignored a model without a usable id: %r", model_id)
        return None
    lifecycle = data.get("lifecycle")
    if lifecycle == "retired":
        log.info("Left out model %s: it is retired", model_id)
        return None
    table = next((model for model in FALLBACK_MODELS if model.id == model_id), None)
    try:
        window = _limit(data.get("max_input_tokens"))
        output = _limit(data.get("max_tokens"))
    except ValueError:
        log.warning(
            "Ignored model %s: its limits (%r, %r) cannot be real",
            model_id,
            data.get("max_input_tokens"),
            data.get("max_tokens"),
        )
        return None
    if window is None:
        window = table.max_input_tokens if table else UNKNOWN_MODEL_CONTEXT_WINDOW
    if output is None:
        output = table.max_tokens if table else UNKNOWN_MODEL_MAX_OUTPUT
        output = max(1, min(output, window // 2))
    if output >= window:
        log.warning("Ignored model %s: it would write %d of a %d window", model_id, output, window)
        return None
    name = data.get("display_name")
    display_name = name.strip() if isinstance(name, str) and name.strip() else model_id
    line = data.get("line")
    if not isinstance(line, str) or not line:
        line = table.line if table else None
    return ModelInfo(
        id=model_id,
        display_name=display_name,
        max_input_tokens=window,
        max_tokens=output,
        line=line,
        deprecated=lifecycle == "deprecated" or data.get("deprecated") is True,
    )


def _limit(value: object) -> int | None:
    """The limit, None when missing; ValueError when it cannot be real."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= MAX_CONTEXT_WINDOW:
        raise ValueError(value)
    return value
