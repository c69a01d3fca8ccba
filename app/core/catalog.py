"""Which Claude models exist, their limits, and which one to use by default."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

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


# How a model thinks, as the models overview's "Thinking" column says
# (https://platform.claude.com/docs/about-claude/models/overview, read 2026-11-28):
# "always" — adaptive thinking that cannot be turned off ("Adaptive (always on)");
# "adaptive" — on by default, `thinking: {"type": "adaptive"}`, the effort parameter;
# "extended" — off unless a budget is asked (`{"type": "enabled", "budget_tokens": N}`);
# "none" — a model (or an unknown one) that Cairn asks nothing of.
ThinkingMode = Literal["always", "adaptive", "extended", "none"]


class ModelInfo(BaseModel):
    """A model as `GET /v1/models` describes it, with what the documentation adds.

    Attributes:
        line: the model line ("haiku", "sonnet", "opus", "fable"…) as the API gives it
            (else the bundled table's); ranking falls back on the family read from the
            id (`family_and_version`).
        deprecated: the API lists it as `deprecated` ("closed to new adopters"): still
            usable by whoever chose it, never picked by default.
        thinking: how it thinks (`ThinkingMode`): the server's `capabilities` when it
            lists them, else the bundled table.
        effort: it takes `output_config.effort` (what "Think longer" raises).
        legacy: the documentation marks it "Legacy" (a newer model of its line exists);
            ranked after every current model.
    """

    model_config = ConfigDict(frozen=True)

    id: str
    display_name: str
    max_input_tokens: int = DEFAULT_CONTEXT_WINDOW
    max_tokens: int = DEFAULT_MAX_OUTPUT
    line: str | None = None
    deprecated: bool = False
    thinking: ThinkingMode = "none"
    effort: bool = False
    legacy: bool = False
    # It accepts `thinking: {"type": "disabled"}`, and with it a forced tool call (not
    # Opus 5.5, Sonnet 5.5, Fable 5.1: thinking-troubleshooting, whats-new pages).
    thinking_off: bool = True


# Used when the server cannot be asked (offline, or an old compatible server), and for
# what `/v1/models` leaves out. Today's models first, by preference for chatting; the
# legacy ones after. Each row from its model page (read 2026-11-28):
# https://platform.claude.com/docs/en/models/sonnet-5-5/overview (1M, 128K, Adaptive),
# https://platform.claude.com/docs/en/models/opus-5-5/whats-new-opus-5-5 (1M, 128K,
#   Adaptive, always on), https://platform.claude.com/docs/en/models/haiku-5-5/overview
#   (1M, 128K, Adaptive), https://platform.claude.com/docs/en/models/fable-5-1/overview
#   (1M, 128K, Adaptive, always on); legacy: https://platform.claude.com/docs/en/models/sonnet-5/overview
#   and opus-5/overview (1M, 128K, "Legacy"), sonnet-4-6/overview (1M, 128K, Adaptive),
#   https://platform.claude.com/docs/en/about-claude/models/overview (Haiku 4.5: 200K,
#   64K, Extended, effort "Not supported").
# (id, window, output, thinking, takes effort, thinking can be turned off, legacy); the name
# and the line are read from the id (`_named`).
_CATALOG: tuple[tuple[str, int, int, ThinkingMode, bool, bool, bool], ...] = (
    ("claude-sonnet-5-5", 1_000_000, 128_000, "adaptive", True, False, False),
    ("claude-opus-5-5", 1_000_000, 128_000, "always", True, False, False),
    ("claude-haiku-5-5", 1_000_000, 128_000, "adaptive", True, True, False),
    ("claude-fable-5-1", 1_000_000, 128_000, "always", True, False, False),
    ("claude-sonnet-5", 1_000_000, 128_000, "adaptive", True, True, True),
    ("claude-opus-5", 1_000_000, 128_000, "adaptive", True, True, True),
    ("claude-sonnet-4-6", 1_000_000, 128_000, "adaptive", True, True, True),
    ("claude-haiku-4-5", 200_000, 64_000, "extended", False, True, True),
)
# The page and day every row above was read from (a test checks the table against the
# fake server's `/v1/models`, which cites the same pages).
CATALOG_SOURCE = "https://platform.claude.com/docs/about-claude/models/overview"
CATALOG_CHECKED = "2026-11-28"

# Line preference when choosing among models the server lists: a balanced model
# first, then the strongest, then the fastest, then the slowest and dearest.
_LINE_PREFERENCE = ("sonnet", "opus", "haiku", "fable")

# "claude-<family>-<major>[-<minor>][-<date>]" (today's ids), or the older
# "claude-<major>[-<minor>]-<family>[-<date>]" ("claude-3-5-haiku-20241022").
_NEW_ID = re.compile(
    r"^claude-(?P<family>[a-z]+)-(?P<major>\d+)(?:-(?P<minor>\d{1,2}))?(?:-\d{8})?$"
)
_OLD_ID = re.compile(
    r"^claude-(?P<major>\d+)(?:-(?P<minor>\d{1,2}))?-(?P<family>[a-z]+)(?:-\d{8})?$"
)


def family_and_version(model_id: str) -> tuple[str | None, tuple[int, int]]:
    """The family ("sonnet") and version ((5, 5)) read from a Claude model id; (None,
    (0, 0)) for an id of another shape. Read from the id itself, so tomorrow's
    "claude-sonnet-6" ranks above "claude-sonnet-5-5" without a new release of Cairn."""
    match = _NEW_ID.match(model_id) or _OLD_ID.match(model_id)
    if match is None:
        return None, (0, 0)
    return match.group("family"), (int(match.group("major")), int(match.group("minor") or 0))


def _named(model_id: str) -> tuple[str | None, str]:
    """The family and the name read from a Claude model id ("sonnet", "Claude Sonnet
    5.5"); (None, the id) for an id of another shape."""
    family, (major, minor) = family_and_version(model_id)
    if family is None:
        return None, model_id
    version = f"{major}.{minor}" if minor else str(major)
    return family, f"Claude {family.capitalize()} {version}"


def _from_catalog(
    model_id: str,
    window: int,
    output: int,
    thinking: ThinkingMode,
    effort: bool,
    thinking_off: bool,
    legacy: bool,
) -> ModelInfo:
    """A row of the bundled table: the name and line read from the id, as the pages
    write them ("Claude Sonnet 5.5", "sonnet")."""
    family, name = _named(model_id)
    return ModelInfo(
        id=model_id,
        display_name=name,
        max_input_tokens=window,
        max_tokens=output,
        line=family,
        thinking=thinking,
        effort=effort,
        legacy=legacy,
        thinking_off=thinking_off,
    )


FALLBACK_MODELS: tuple[ModelInfo, ...] = tuple(_from_catalog(*row) for row in _CATALOG)


def model_name(model_id: str, available: Sequence[ModelInfo] = ()) -> str:
    """A model as people know it ("Claude Haiku 4.5"), never a raw id when it can be
    read: the server's or the bundled table's name, else one made from the id."""
    known, _ = model_limits(model_id, available)
    if known.display_name != model_id:
        return known.display_name
    return _named(model_id)[1]


def _line_of(model: ModelInfo) -> str | None:
    return model.line or family_and_version(model.id)[0]


def _superseded(available: Sequence[ModelInfo]) -> set[str]:
    """Ids of listed models a newer listed model of the same line replaces (or that the
    table marks legacy)."""
    newest: dict[str, tuple[int, int]] = {}
    for model in available:
        line, version = _line_of(model), family_and_version(model.id)[1]
        if line is not None and version > newest.get(line, (0, 0)):
            newest[line] = version
    return {
        model.id
        for model in available
        if model.legacy
        or (
            (line := _line_of(model)) is not None
            and family_and_version(model.id)[1] < newest.get(line, (0, 0))
        )
    }


def _preference(
    model: ModelInfo, position: int, superseded: set[str]
) -> tuple[bool, bool, int, tuple[int, int], int]:
    line = _line_of(model)
    rank = _LINE_PREFERENCE.index(line) if line in _LINE_PREFERENCE else len(_LINE_PREFERENCE)
    major, minor = family_and_version(model.id)[1]
    # Deprecated models last, then legacy ones; within a line the newest version first;
    # the API lists newest first, so position breaks the remaining ties.
    return (model.deprecated, model.id in superseded, rank, (-major, -minor), position)


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
    """`available` in the order Cairn prefers them for chatting (see `_preference`): the
    current models of each line, newest first, before any legacy or deprecated one."""
    superseded = _superseded(available)
    ranked = sorted(
        enumerate(available), key=lambda pair: _preference(pair[1], pair[0], superseded)
    )
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
        # The API's `line` ("do not infer a line from the id": the SDK's ModelInfo), else
        # the table's; ranking alone reads the family from the id (`_line_of`).
        line = table.line if table else None
    thinking, effort = _thinking_of(data.get("capabilities"))
    if thinking is None:  # the server did not say: the table, else Cairn asks nothing
        thinking = _known_thinking(data.get("thinking"), table)
        effort = table.effort if table else data.get("effort") is True
    return ModelInfo(
        id=model_id,
        display_name=display_name,
        max_input_tokens=window,
        max_tokens=output,
        line=line,
        deprecated=lifecycle == "deprecated" or data.get("deprecated") is True,
        thinking=thinking,
        effort=bool(effort),
        legacy=(table.legacy if table else data.get("legacy") is True),
        thinking_off=_thinking_off(data.get("capabilities"), table),
    )


def _thinking_off(capabilities: object, table: ModelInfo | None) -> bool:
    """Whether the model accepts `thinking: disabled` (`thinking.types.disabled`)."""
    if isinstance(capabilities, Mapping) and "thinking" in capabilities:
        return _supported(capabilities, "thinking", "types", "disabled")
    return table.thinking_off if table is not None else True


_THINKING_MODES: tuple[ThinkingMode, ...] = ("always", "adaptive", "extended", "none")


def _known_thinking(value: object, table: ModelInfo | None) -> ThinkingMode:
    if table is not None:
        return table.thinking
    for mode in _THINKING_MODES:
        if value == mode:
            return mode
    return "none"


def _supported(capabilities: Mapping[str, object], *path: str) -> bool:
    node: object = capabilities
    for key in path:
        node = node.get(key) if isinstance(node, Mapping) else None
    return isinstance(node, Mapping) and node.get("supported") is True


def _thinking_of(capabilities: object) -> tuple[ThinkingMode | None, bool]:
    """How a model thinks, from the `capabilities` object of `/v1/models` (the SDK's
    `ModelCapabilities`: `thinking.types.{adaptive,disabled,enabled}.supported`,
    `effort.supported`); (None, False) when the server sent none."""
    if not isinstance(capabilities, Mapping) or "thinking" not in capabilities:
        return None, False
    effort = _supported(capabilities, "effort")
    if not _supported(capabilities, "thinking"):
        return "none", effort
    if _supported(capabilities, "thinking", "types", "adaptive"):
        off = _supported(capabilities, "thinking", "types", "disabled") or _supported(
            capabilities, "thinking", "types", "between_tools"
        )
        if not off:  # neither "disabled" nor Sonnet 5.5's "between_tools": always on
            return "always", effort
        return "adaptive", effort
    if _supported(capabilities, "thinking", "types", "enabled"):
        return "extended", effort
    return "none", effort


def _limit(value: object) -> int | None:
    """The limit, None when missing; ValueError when it cannot be real."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= MAX_CONTEXT_WINDOW:
        raise ValueError(value)
    return value
