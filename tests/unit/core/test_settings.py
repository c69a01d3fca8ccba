"""Settings on disk: round trip, migration of older files, and nothing lost when damaged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.core.settings import (
    MAX_INSTRUCTIONS_CHARS,
    SETTINGS_SCHEMA_VERSION,
    AppSettings,
    RecallSettings,
    load_settings,
    migrate_settings,
    save_settings,
)
from app.core.summarization_config import SummarizationConfig
from app.core.summary import SummaryMode


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "settings.json"


def test_a_missing_file_gives_defaults(path: Path) -> None:
    loaded = load_settings(path)
    assert loaded.settings == AppSettings() and loaded.notice is None


def test_summarization_settings_round_trip(path: Path) -> None:
    settings = AppSettings(theme="dark", model="claude-opus-4-6")
    settings.summarization = SummarizationConfig().with_changes(
        trigger_ratio=0.9, mode="rule", summarizer_models=["claude-haiku-4-5"]
    )
    save_settings(path, settings)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["schema_version"] == SETTINGS_SCHEMA_VERSION == 2
    assert data["summarization"]["mode"] == "rule"
    loaded = load_settings(path)
    assert loaded.notice is None
    assert loaded.settings == settings
    assert loaded.settings.summarization.mode is SummaryMode.RULE
    assert loaded.settings.summarization.trigger_ratio == 0.9


def test_a_version_1_file_gains_the_default_summary_settings(path: Path) -> None:
    path.write_text(json.dumps({"schema_version": 1, "theme": "light"}), encoding="utf-8")
    loaded = load_settings(path)
    assert loaded.notice is None
    assert loaded.settings.theme == "light"
    assert loaded.settings.summarization == SummarizationConfig()
    assert loaded.settings.schema_version == 2
    assert migrate_settings({}) == {"schema_version": 2}


def test_a_file_from_before_the_target_setting_loads_with_the_default(path: Path) -> None:
    older = {
        "schema_version": 2,
        "summarization": {"trigger_ratio": 0.6, "reset_ratio": 0.5, "preserve_recent": 8},
    }
    path.write_text(json.dumps(older), encoding="utf-8")
    loaded = load_settings(path)
    assert loaded.notice is None
    summarization = loaded.settings.summarization
    assert (summarization.reset_ratio, summarization.preserve_recent) == (0.5, 8)
    assert summarization.target_ratio == 0.5, "lowered to the reset level, not refused"


def test_bad_summary_settings_reset_alone_and_the_file_is_kept(path: Path) -> None:
    original = {
        "schema_version": 2,
        "theme": "dark",
        "model": "claude-sonnet-4-6",
        "summarization": {"trigger_ratio": 0.5, "reset_ratio": 0.9},
    }
    path.write_text(json.dumps(original), encoding="utf-8")
    loaded = load_settings(path)
    assert loaded.settings.theme == "dark" and loaded.settings.model == "claude-sonnet-4-6"
    assert loaded.settings.summarization == SummarizationConfig()
    assert loaded.notice is not None and "summary settings" in loaded.notice
    assert "reset level" in loaded.notice, "the notice says what was wrong, in words"
    (aside,) = path.parent.glob("settings.json.damaged-*")
    assert json.loads(aside.read_text(encoding="utf-8")) == original
    assert path.exists(), "the file itself stays until the next save"


def test_a_damaged_file_is_moved_aside_whole(path: Path) -> None:
    path.write_text("{not json", encoding="utf-8")
    loaded = load_settings(path)
    assert loaded.settings == AppSettings()
    assert loaded.notice is not None and "damaged" in loaded.notice
    (aside,) = path.parent.glob("settings.json.damaged-*")
    assert aside.read_text(encoding="utf-8") == "{not json"


@pytest.mark.parametrize("version", [0, -1, "2", True, 1.5])
def test_a_nonsense_version_is_damage(path: Path, version: object) -> None:
    path.write_text(json.dumps({"schema_version": version}), encoding="utf-8")
    assert load_settings(path).notice is not None


def test_what_a_newer_cairn_wrote_is_kept(path: Path) -> None:
    path.write_text(
        json.dumps({"schema_version": 7, "theme": "dark", "future_option": {"x": 1}}),
        encoding="utf-8",
    )
    loaded = load_settings(path)
    assert loaded.notice is None and loaded.settings.theme == "dark"
    loaded.settings.theme = "light"
    save_settings(path, loaded.settings)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["future_option"] == {"x": 1}
    assert data["schema_version"] == 7, "never lowered"
    assert data["theme"] == "light"


def test_recall_settings_round_trip(path: Path) -> None:
    settings = AppSettings()
    settings.recall = RecallSettings(
        automatic=False, budget_ratio=0.1, tool=False, across_conversations=True, max_lookups=5
    )
    save_settings(path, settings)
    assert json.loads(path.read_text(encoding="utf-8"))["recall"]["budget_ratio"] == 0.1
    loaded = load_settings(path)
    assert loaded.settings.recall == settings.recall and loaded.notice is None


@pytest.mark.parametrize(
    "recall", [{"budget_ratio": 0.9}, {"max_lookups": 0}, {"automatic": "often"}, "all", [1]]
)
def test_bad_recall_settings_reset_alone_and_the_file_is_kept(path: Path, recall: object) -> None:
    original = {
        "schema_version": 2,
        "theme": "dark",
        "summarization": {"mode": "rule"},
        "recall": recall,
    }
    path.write_text(json.dumps(original), encoding="utf-8")
    loaded = load_settings(path)
    assert loaded.settings.theme == "dark"
    assert loaded.settings.summarization.mode is SummaryMode.RULE
    assert loaded.settings.recall == RecallSettings()
    assert loaded.notice is not None
    assert "looking up earlier messages" in loaded.notice and "back to their defaults" in (
        loaded.notice
    )
    (aside,) = path.parent.glob("settings.json.damaged-*")
    assert json.loads(aside.read_text(encoding="utf-8")) == original


def test_default_instructions_and_the_notice_switch_round_trip(path: Path) -> None:
    assert AppSettings().notify_when_done, "on by default"
    save_settings(path, AppSettings(default_instructions="Be brief.", notify_when_done=False))
    loaded = load_settings(path).settings
    assert loaded.default_instructions == "Be brief."
    assert not loaded.notify_when_done


def test_overlong_default_instructions_are_trimmed_not_a_reason_to_reset(path: Path) -> None:
    path.write_text(
        json.dumps({"theme": "dark", "default_instructions": " x" * 30_000}), encoding="utf-8"
    )
    loaded = load_settings(path)
    assert loaded.notice is None and loaded.settings.theme == "dark"
    assert len(loaded.settings.new_conversation_instructions()) == MAX_INSTRUCTIONS_CHARS
