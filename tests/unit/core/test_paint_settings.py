"""The settings read to paint agree with the full model on the theme and the text size."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from app.core.paint_settings import (
    DEFAULT_FONT_SIZE,
    DEFAULTS,
    LARGEST_FONT_SIZE,
    SMALLEST_FONT_SIZE,
    PaintSettings,
    paint_settings_of,
    read_paint_settings,
)
from app.core.settings import AppSettings, load_settings, save_settings

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.integers(min_value=SMALLEST_FONT_SIZE - 2, max_value=LARGEST_FONT_SIZE + 2)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from([12.0, 12.5, "12", " 14 ", "0x10", "1_2", "12.0", "yes", "off", "1", ""])
    | st.sampled_from(["system", "light", "dark", "Dark", " dark", "http://x", " https://y/ "])
    | st.text(max_size=12)
)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=6,
)
_KEYS = st.sampled_from(
    [
        "schema_version",
        "model",
        "api_base_url",
        "theme",
        "font_size",
        "summarization",
        "recall",
        "default_instructions",
        "notify_when_done",
        "think_longer",
        "model_fields",
        "_private",
        "future_option",
    ]
)
# Objects shaped like a settings file: its keys (and a few strangers), any values.
_SETTINGS_LIKE = st.dictionaries(_KEYS | st.text(max_size=8), _JSON, max_size=8)
# Files close to what Cairn writes: each field usually valid, sometimes just off.
_NEAR_VALID = st.fixed_dictionaries(
    {},
    optional={
        "schema_version": st.sampled_from([1, 2, 3, 0, -1, 2.0, "2", True, None]),
        "model": st.sampled_from([None, "claude-sonnet-4-6", "", 4, ["x"]]),
        "api_base_url": st.sampled_from(
            [None, "", "  ", "http://127.0.0.1:9", " https://a.example/ ", "ftp://x", "x", 1]
        ),
        "theme": st.sampled_from(["system", "light", "dark", "DARK", "", None, 1]),
        "font_size": st.integers(min_value=SMALLEST_FONT_SIZE - 3, max_value=LARGEST_FONT_SIZE + 3)
        | st.sampled_from([None, True, 12.0, 12.5, "13", [12]]),
        "default_instructions": st.sampled_from(["", "Be brief.", None, 3]),
        "notify_when_done": st.sampled_from([True, False, None, 1, 0, "yes", 2]),
        "think_longer": st.sampled_from([True, False, None, 0, "off"]),
        "summarization": st.sampled_from([None, {}, {"mode": "rule"}, {"trigger_ratio": 9}, 1]),
        "recall": st.sampled_from([None, {}, {"max_lookups": 0}, "all"]),
        "future_option": _JSON,
    },
)


def _both(text: str | bytes) -> tuple[PaintSettings | None, PaintSettings]:
    """What the paint reader says, and what the full load gives, for one file's content."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "settings.json"
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        painted = read_paint_settings(path)
        loaded = load_settings(path).settings
    return painted, paint_settings_of(loaded)


def _agree(text: str | bytes) -> None:
    painted, model = _both(text)
    assert painted is None or painted == model


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(_SETTINGS_LIKE)
@example({"theme": "dark", "font_size": 12.0})
@example({"theme": "light", "font_size": True})
@example({"schema_version": 2**64, "theme": "dark"})
@example({"schema_version": True, "theme": "dark"})
@example({"theme": "dark", "api_base_url": "ftp://x"})
@example({"theme": "dark", "api_base_url": "   "})
@example({"theme": "dark", "model_fields": 1})
def test_for_any_settings_object_the_reader_agrees_with_the_model(data: dict[str, Any]) -> None:
    _agree(json.dumps(data))


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(_NEAR_VALID)
@example({"theme": "dark", "font_size": LARGEST_FONT_SIZE + 1})
@example({"theme": "dark", "font_size": SMALLEST_FONT_SIZE - 1})
@example({"theme": "dark", "font_size": LARGEST_FONT_SIZE, "default_instructions": None})
@example({"theme": "light", "font_size": SMALLEST_FONT_SIZE, "model": 4})
@example({"theme": "dark", "schema_version": 0})
@example({"theme": "dark", "summarization": {"trigger_ratio": 9}, "recall": "all"})
def test_for_files_near_what_cairn_writes_the_reader_agrees_with_the_model(
    data: dict[str, Any],
) -> None:
    _agree(json.dumps(data))


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(_JSON)
def test_for_any_json_the_reader_agrees_with_the_model(data: object) -> None:
    _agree(json.dumps(data))


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=40) | st.text(max_size=40))
@example(b'{"theme": "dark"\xff}')
@example(b'\xef\xbb\xbf{"theme": "dark"}')
def test_for_any_bytes_the_reader_agrees_with_the_model(content: bytes | str) -> None:
    _agree(content)


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(
    theme=st.sampled_from(["system", "light", "dark"]),
    font_size=st.integers(min_value=SMALLEST_FONT_SIZE, max_value=LARGEST_FONT_SIZE),
    model=st.none() | st.text(max_size=20),
    base_url=st.none() | st.sampled_from(["http://127.0.0.1:9", "https://example.com/v1"]),
    instructions=st.text(max_size=30) | st.just(" padded ") | st.just("x" * 20_005),
    notify=st.booleans(),
    think=st.booleans(),
)
def test_what_cairn_saves_is_read_to_paint_without_the_model(
    theme: str,
    font_size: int,
    model: str | None,
    base_url: str | None,
    instructions: str,
    notify: bool,
    think: bool,
) -> None:
    # Every file Cairn writes itself is decided by the reader (no full load before the
    # paint), with the model's answer.
    saved = AppSettings.model_validate(
        {
            "theme": theme,
            "font_size": font_size,
            "model": model,
            "api_base_url": base_url,
            "default_instructions": instructions,
            "notify_when_done": notify,
            "think_longer": think,
        }
    )
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "settings.json"
        save_settings(path, saved)
        painted = read_paint_settings(path)

    assert painted == paint_settings_of(saved)
    assert painted.new_conversation_instructions() == saved.new_conversation_instructions()


def test_a_missing_file_paints_with_the_defaults(tmp_path: Path) -> None:
    assert read_paint_settings(tmp_path / "settings.json") == DEFAULTS
    assert PaintSettings(theme="system", font_size=DEFAULT_FONT_SIZE) == DEFAULTS
    assert (AppSettings().theme, AppSettings().font_size) == (DEFAULTS.theme, DEFAULTS.font_size)


def test_a_value_only_the_model_can_judge_is_left_to_it(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"theme": "dark", "font_size": "14"}), encoding="utf-8")

    assert read_paint_settings(path) is None
    assert load_settings(path).settings.font_size == 14, "pydantic's lax int takes it"


def test_the_reader_leaves_the_damaged_file_where_it_is(tmp_path: Path) -> None:
    # Moving a damaged file aside, and saying so, is the full load's (after the paint).
    path = tmp_path / "settings.json"
    path.write_text("{not json", encoding="utf-8")

    assert read_paint_settings(path) == DEFAULTS
    assert [p.name for p in tmp_path.iterdir()] == ["settings.json"]
