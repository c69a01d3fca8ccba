"""User settings: a pydantic model written atomically to settings.json (DESIGN §9).

The file carries a `schema_version`; `load_settings` migrates older files step by
step before validating them (version 1 had no summarization settings: it gains
the defaults). Nothing a user set is lost on the way: a damaged file is moved
aside whole; a damaged part (only the summary settings, say) is reset alone,
with the file copied aside first; fields a newer Cairn wrote are kept as they
are and written back.
"""

from __future__ import annotations

import contextlib
import json
import logging
import shutil
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from app.core.errors import StorageError
from app.core.files import atomic_write
from app.core.paint_settings import (
    DEFAULT_FONT_SIZE,
    DEFAULT_THEME,
    LARGEST_FONT_SIZE,
    SMALLEST_FONT_SIZE,
)

# Defined beside the reader that paints without this model; importable from here as before.
from app.core.paint_settings import MAX_INSTRUCTIONS_CHARS as MAX_INSTRUCTIONS_CHARS
from app.core.paint_settings import Theme as Theme
from app.core.summarization_config import SummarizationConfig, describe_errors

log = logging.getLogger(__name__)

SETTINGS_SCHEMA_VERSION = 2


class RecallSettings(BaseModel):
    """How Claude reaches what was condensed (DESIGN §3: the recall block and the tool).

    `automatic`: before each request, quote the archived originals that match the new
    message, within `budget_ratio` of the window. `tool`: offer Claude the
    `search_conversation_archive` tool, at most `max_lookups` times per reply;
    `across_conversations` lets it search every conversation, not only this one.
    """

    model_config = ConfigDict(extra="allow", validate_assignment=True)

    automatic: bool = True
    budget_ratio: float = Field(default=0.05, ge=0.0, le=0.2)
    tool: bool = True
    across_conversations: bool = False
    max_lookups: int = Field(default=3, ge=1, le=10)


class AppSettings(BaseModel):
    """Everything the user can set. Never holds the API key (that lives in the keyring).

    Unknown fields (from a newer Cairn) are kept and saved back unchanged.
    """

    model_config = ConfigDict(extra="allow", validate_assignment=True)

    schema_version: int = SETTINGS_SCHEMA_VERSION
    model: str | None = None
    api_base_url: str | None = None
    theme: Theme = DEFAULT_THEME
    font_size: int = Field(default=DEFAULT_FONT_SIZE, ge=SMALLEST_FONT_SIZE, le=LARGEST_FONT_SIZE)
    summarization: SummarizationConfig = Field(default_factory=SummarizationConfig)
    recall: RecallSettings = Field(default_factory=RecallSettings)
    # What a new conversation's instructions for Claude start as (its system prompt). No
    # length limit here: a long one edited into the file must not reset every setting.
    default_instructions: str = ""
    # Tell the user when a reply finishes while Cairn's window is in the background.
    notify_when_done: bool = True
    # "Think longer": a higher effort where the model takes one (app.core.thinking).
    think_longer: bool = False

    def new_conversation_instructions(self) -> str:
        """The instructions a new conversation starts with: trimmed, within the limit."""
        return self.default_instructions.strip()[:MAX_INSTRUCTIONS_CHARS]

    @field_validator("api_base_url")
    @classmethod
    def _check_base_url(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        value = value.strip()
        if not value.startswith(("http://", "https://")):
            raise ValueError("The API address must start with http:// or https://")
        return value.rstrip("/")


class SettingsLoadResult(BaseModel):
    settings: AppSettings
    notice: str | None = None  # shown to the user when the file had to be set aside


def load_settings(path: Path) -> SettingsLoadResult:
    """Read settings; a damaged file is copied aside (never lost) and defaults are used."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return SettingsLoadResult(settings=AppSettings())
    except OSError as error:
        log.warning("Could not read settings from %s: %s", path, error)
        return SettingsLoadResult(
            settings=AppSettings(),
            notice=f"Cairn could not read its settings ({error.strerror}); defaults are in use.",
        )
    try:
        data = json.loads(raw.decode("utf-8"))  # not UTF-8 is damage too (ValueError)
        if not isinstance(data, dict):
            raise ValueError("settings must be a JSON object")
        data = migrate_settings(data)
        summarization = data.pop("summarization", None)
        recall = data.pop("recall", None)
        settings = AppSettings.model_validate(data)
    except (ValueError, ValidationError) as error:
        aside = _aside_name(path)
        with contextlib.suppress(OSError):
            path.replace(aside)
        log.warning("Settings file %s was damaged (%s); moved to %s", path, error, aside)
        return SettingsLoadResult(
            settings=AppSettings(),
            notice=f"Your settings file was damaged, so Cairn started with defaults. "
            f"The old file is kept as {aside.name}.",
        )
    recall_notice = _load_recall(settings, recall, path)
    if summarization is None:
        return SettingsLoadResult(settings=settings, notice=recall_notice)
    try:
        settings.summarization = SummarizationConfig.model_validate(summarization)
    except ValidationError as error:
        problems, copy = _copied_aside(path, error, "Summary")
        return SettingsLoadResult(
            settings=settings,
            notice="Your summary settings could not be read, so they are back to their "
            f"defaults ({problems}). Your other settings are kept; the old file is "
            f"kept as {copy}.",
        )
    return SettingsLoadResult(settings=settings, notice=recall_notice)


def _load_recall(settings: AppSettings, recall: object, path: Path) -> str | None:
    """Put the file's "recall" object in `settings`; when it is damaged, its defaults
    alone, and the notice that says so (the file is copied aside first)."""
    if recall is None:
        return None
    try:
        settings.recall = RecallSettings.model_validate(recall)
    except ValidationError as error:
        problems, aside = _copied_aside(path, error, "Recall")
        return (
            "Your settings for looking up earlier messages could not be read, so they are "
            f"back to their defaults ({problems}). Your other settings are kept; the old "
            f"file is kept as {aside}."
        )
    return None


def _copied_aside(path: Path, error: ValidationError, section: str) -> tuple[str, str]:
    """A section of the settings file is damaged: copy the file aside and log why.

    Returns the problems in plain words and the copy's name, for the notice.
    """
    aside = _aside_name(path)
    with contextlib.suppress(OSError):
        shutil.copy2(path, aside)
    problems = " ".join(describe_errors(error))
    log.warning(
        "%s settings in %s were not valid (%s); copied to %s", section, path, problems, aside
    )
    return problems, aside.name


def migrate_settings(data: dict[str, Any]) -> dict[str, Any]:
    """A settings object of any older schema_version, brought to the current one.

    A newer version is left alone (its extra fields are kept), and a version that
    is not a positive whole number is refused with ValueError.
    """
    version = data.get("schema_version", 1)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ValueError(f"schema_version must be a whole number ≥ 1, not {version!r}")
    migrated = dict(data)
    if version < 2:
        # Version 2 keeps the summarization settings in this file; before, they were
        # fixed defaults, which is what a missing "summarization" object means.
        migrated["schema_version"] = 2
    return migrated


def _aside_name(path: Path) -> Path:
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    return path.with_name(f"{path.name}.damaged-{stamp}")


def save_settings(path: Path, settings: AppSettings) -> None:
    """Write `settings` atomically; a newer file's schema_version is kept, never lowered."""
    data = settings.model_dump(mode="json")
    data["schema_version"] = max(SETTINGS_SCHEMA_VERSION, int(data.get("schema_version", 0)))
    try:
        atomic_write(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    except OSError as error:
        raise StorageError(
            f"Cairn could not save your settings in {path.parent} ({error.strerror}). "
            "Check that the folder exists and that you may write to it.",
        ) from error
