"""User settings: a pydantic model written atomically to settings.json."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from app.core.errors import StorageError

log = logging.getLogger(__name__)

SETTINGS_SCHEMA_VERSION = 1

Theme = Literal["system", "light", "dark"]


class AppSettings(BaseModel):
    """Everything the user can set. Never holds the API key (that lives in the keyring)."""

    model_config = ConfigDict(extra="ignore", validate_assignment=True)

    schema_version: int = SETTINGS_SCHEMA_VERSION
    model: str | None = None
    api_base_url: str | None = None
    theme: Theme = "system"
    font_size: int = Field(default=11, ge=8, le=24)

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
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return SettingsLoadResult(settings=AppSettings())
    except OSError as error:
        log.warning("Could not read settings from %s: %s", path, error)
        return SettingsLoadResult(
            settings=AppSettings(),
            notice=f"Cairn could not read its settings ({error.strerror}); defaults are in use.",
        )
    try:
        data = json.loads(raw)
        if not isinstance(data, dict):
            raise ValueError("settings must be a JSON object")
        return SettingsLoadResult(settings=AppSettings.model_validate(data))
    except (ValueError, ValidationError) as error:
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        aside = path.with_name(f"{path.name}.damaged-{stamp}")
        with contextlib.suppress(OSError):
            path.replace(aside)
        log.warning("Settings file %s was damaged (%s); moved to %s", path, error, aside)
        return SettingsLoadResult(
            settings=AppSettings(),
            notice=f"Your settings file was damaged, so Cairn started with defaults. "
            f"The old file is kept as {aside.name}.",
        )


def atomic_write_text(path: Path, text: str) -> None:
    """Write `text` to `path` so that a crash leaves either the old or the new file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp_name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp_name)
        raise


def save_settings(path: Path, settings: AppSettings) -> None:
    try:
        atomic_write_text(path, settings.model_dump_json(indent=2) + "\n")
    except OSError as error:
        raise StorageError(
            f"Cairn could not save your settings in {path.parent} ({error.strerror}). "
            "Check that the folder exists and that you may write to it.",
        ) from error
