"""The last model list `GET /v1/models` returned, cached as JSON (DESIGN §4).

Lets Cairn know each model's context window and output limit when it starts
offline. A cache that cannot be read is ignored with a warning (the bundled
table in `app.core.catalog` stands in) and overwritten by the next fetch.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from app.core.catalog import FALLBACK_MODELS, ModelInfo, clean_model_list
from app.core.errors import ApiError
from app.core.files import atomic_write
from app.store.data_file import DataFile

log = logging.getLogger(__name__)

MODEL_CACHE_FILE_NAME = "models.json"
MODEL_CACHE_SCHEMA_VERSION = 1
# Models change every few months; a day-old list is fresh enough not to ask again.
MODEL_CACHE_MAX_AGE = timedelta(days=1)


@dataclass(frozen=True)
class CachedModels:
    """A model list and when the server gave it."""

    models: tuple[ModelInfo, ...]
    fetched_at: datetime

    def is_stale(self, now: datetime, max_age: timedelta = MODEL_CACHE_MAX_AGE) -> bool:
        """True when the list is older than `max_age` (or dated in the future)."""
        age = now - self.fetched_at
        return age > max_age or age < timedelta(0)


class ModelCache(DataFile):
    """Reads and writes the cached model list at `path` (`models.json`)."""

    FILE_NAME = MODEL_CACHE_FILE_NAME

    def refresh(self, fetch: Callable[[], Sequence[ModelInfo]]) -> list[ModelInfo]:
        """The models to offer: freshly fetched (and cached), else cached, else bundled.

        `fetch` is the provider's `list_models` (call this from a worker thread).
        A failed fetch (offline, bad key, junk that does not parse) or a list
        without one usable model never raises: the cached list, else
        `FALLBACK_MODELS`, is returned instead.
        """
        try:
            fetched = list(fetch())
        except (ApiError, ValueError) as error:  # pydantic's ValidationError is a ValueError
            log.info("Could not fetch the model list (%s); using the cached one", error)
        else:
            saved = self.save(fetched)
            if saved is not None:
                return list(saved.models)
            cleaned = clean_model_list(fetched)
            if cleaned:  # usable, only the disk refused
                return cleaned
        cached = self.load()
        return list(cached.models) if cached is not None else list(FALLBACK_MODELS)

    def load(self) -> CachedModels | None:
        """The cached list (junk entries dropped), or None when there is none usable."""
        try:
            raw = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as error:
            log.warning("Could not read the model cache %s (%s); ignored", self.path, error)
            return None
        try:
            data = json.loads(raw)
            if not isinstance(data, dict):
                raise ValueError("not a JSON object")
            if data.get("schema_version") != MODEL_CACHE_SCHEMA_VERSION:
                raise ValueError(f"unknown schema_version {data.get('schema_version')!r}")
            fetched_at = datetime.fromisoformat(str(data["fetched_at"]))
            if fetched_at.tzinfo is None:
                raise ValueError("fetched_at has no time zone")
            entries = data["models"]
            if not isinstance(entries, list):
                raise ValueError("models is not a list")
        except (ValueError, KeyError, TypeError) as error:
            log.warning("The model cache %s is damaged (%s); ignored", self.path, error)
            return None
        models = clean_model_list(entries)
        if not models:
            log.warning("The model cache %s lists no usable model; ignored", self.path)
            return None
        return CachedModels(models=tuple(models), fetched_at=fetched_at.astimezone(UTC))

    def save(self, models: Sequence[ModelInfo]) -> CachedModels | None:
        """Cache a freshly fetched list (cleaned first); None when nothing usable or the disk
        refused (logged as a warning: the bundled table still works)."""
        cleaned = clean_model_list(models)
        if not cleaned:
            log.warning("The server listed no usable model; the model cache is left as it was")
            return None
        cached = CachedModels(models=tuple(cleaned), fetched_at=self._clock().astimezone(UTC))
        data = {
            "schema_version": MODEL_CACHE_SCHEMA_VERSION,
            "fetched_at": cached.fetched_at.isoformat(),
            "models": [model.model_dump() for model in cached.models],
        }
        try:
            atomic_write(self.path, json.dumps(data, indent=2) + "\n")
        except OSError as error:
            log.warning("Could not save the model cache to %s: %s", self.path, error)
            return None
        return cached
