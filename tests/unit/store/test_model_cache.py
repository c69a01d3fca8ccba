"""The model cache: the last /v1/models list on disk, junk ignored, the bundled table behind it."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from app.core.catalog import FALLBACK_MODELS, ModelInfo
from app.core.errors import ConnectionFailedError
from app.core.paths import AppPaths
from app.store.model_cache import (
    MODEL_CACHE_MAX_AGE,
    CachedModels,
    ModelCache,
)

FETCHED_AT = datetime(2026, 3, 5, 9, 30, tzinfo=UTC)
LISTED = [
    ModelInfo(id="claude-new", display_name="New", max_input_tokens=1_000_000, max_tokens=64_000),
    ModelInfo(id="claude-old", display_name="Old", max_input_tokens=200_000, max_tokens=8_192),
]


@pytest.fixture
def cache() -> ModelCache:
    return ModelCache(
        AppPaths.from_environment().data_dir / "models.json", clock=lambda: FETCHED_AT
    )


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


def write(cache: ModelCache, content: Any) -> None:
    cache.path.parent.mkdir(parents=True, exist_ok=True)
    text = content if isinstance(content, str) else json.dumps(content)
    cache.path.write_text(text, encoding="utf-8")


def test_it_lives_in_the_data_folder() -> None:
    paths = AppPaths.from_environment()

    assert ModelCache.in_data_dir(paths).path == paths.data_dir / "models.json"


def test_nothing_cached_yet(cache: ModelCache) -> None:
    assert cache.load() is None


def test_a_saved_list_is_read_back_after_a_restart(cache: ModelCache) -> None:
    saved = cache.save(LISTED)

    reopened = ModelCache(cache.path).load()

    assert saved == reopened == CachedModels(models=tuple(LISTED), fetched_at=FETCHED_AT)


def test_age_tells_when_to_ask_again() -> None:
    cached = CachedModels(models=tuple(LISTED), fetched_at=FETCHED_AT)

    assert not cached.is_stale(FETCHED_AT + MODEL_CACHE_MAX_AGE)
    assert cached.is_stale(FETCHED_AT + MODEL_CACHE_MAX_AGE + timedelta(seconds=1))
    assert cached.is_stale(FETCHED_AT - timedelta(hours=1))  # a clock that went back


@pytest.mark.parametrize(
    "content",
    [
        "{not json",
        "",
        "[]",
        "null",
        {"schema_version": 2, "fetched_at": "2026-03-05T09:30:00+00:00", "models": []},
        {"schema_version": 1, "models": []},
        {"schema_version": 1, "fetched_at": "yesterday", "models": []},
        {"schema_version": 1, "fetched_at": "2026-03-05T09:30:00", "models": []},
        {"schema_version": 1, "fetched_at": "2026-03-05T09:30:00+00:00", "models": {}},
        {"schema_version": 1, "fetched_at": "2026-03-05T09:30:00+00:00", "models": []},
        {
            "schema_version": 1,
            "fetched_at": "2026-03-05T09:30:00+00:00",
            "models": [{"id": "claude-x", "max_input_tokens": -1}, "junk"],
        },
    ],
)
def test_a_junk_cache_is_ignored_with_a_warning(
    cache: ModelCache, content: Any, caplog: pytest.LogCaptureFixture
) -> None:
    write(cache, content)

    assert cache.load() is None
    assert warnings_of(caplog)


def test_junk_entries_are_dropped_and_the_rest_kept(cache: ModelCache) -> None:
    write(
        cache,
        {
            "schema_version": 1,
            "fetched_at": "2026-03-05T10:30:00+01:00",
            "models": [
                {"id": "claude-new", "max_input_tokens": 1_000_000, "max_tokens": 64_000},
                {"id": "claude-broken", "max_input_tokens": "lots"},
                {"display_name": "no id"},
            ],
        },
    )

    loaded = cache.load()

    assert loaded is not None
    assert [model.id for model in loaded.models] == ["claude-new"]
    assert loaded.fetched_at == FETCHED_AT  # the same moment, in UTC


def test_refresh_caches_a_fetched_list(cache: ModelCache) -> None:
    models = cache.refresh(lambda: LISTED)

    assert models == LISTED
    loaded = cache.load()
    assert loaded is not None
    assert list(loaded.models) == LISTED


def test_when_fetching_fails_the_cached_list_is_used(cache: ModelCache) -> None:
    cache.save(LISTED)

    def offline() -> list[ModelInfo]:
        raise ConnectionFailedError("Can't reach Claude")

    assert cache.refresh(offline) == LISTED


def test_when_fetching_fails_and_nothing_is_cached_the_bundled_table_is_used(
    cache: ModelCache,
) -> None:
    def offline() -> list[ModelInfo]:
        raise ConnectionFailedError("Can't reach Claude")

    assert cache.refresh(offline) == list(FALLBACK_MODELS)


def test_a_list_that_does_not_parse_falls_back(cache: ModelCache) -> None:
    def junk() -> list[ModelInfo]:
        return [ModelInfo.model_validate({"id": "x", "display_name": "X", "max_tokens": "lots"})]

    assert cache.refresh(junk) == list(FALLBACK_MODELS)


def test_a_list_without_a_usable_model_keeps_the_old_cache(
    cache: ModelCache, caplog: pytest.LogCaptureFixture
) -> None:
    cache.save(LISTED)
    useless = [ModelInfo(id="claude-x", display_name="X", max_input_tokens=10, max_tokens=10)]

    assert cache.refresh(lambda: useless) == LISTED
    assert cache.refresh(list) == LISTED
    assert warnings_of(caplog)


def test_a_cache_that_cannot_be_written_still_returns_the_list(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    not_a_folder = tmp_path / "a-file"
    not_a_folder.write_text("", encoding="utf-8")
    cache = ModelCache(not_a_folder / "models.json")

    assert cache.refresh(lambda: LISTED) == LISTED
    assert any("Could not save" in message for message in warnings_of(caplog))
