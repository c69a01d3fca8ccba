"""What the first paint needs from settings.json (the theme, the text size, a new
conversation's instructions), read without pydantic.

Importing pydantic and building the settings' validators costs more than the
rest of the window's start-up code together (callgrind, bench_startup --callgrind;
issue 20), and the window needs two fields of the file to paint. This reader
gives them as `app.core.settings.load_settings` would — its defaults whenever the
whole file would be refused — or says it cannot tell (a value only pydantic's lax
rules can judge, such as a size written as "12" or 12.0); the full model is then
loaded before the paint, as it always was. The full model is validated after the
paint in every case, and it alone moves a damaged file aside and says so.
tests/unit/core/test_paint_settings.py checks, for any JSON, that whatever this
reader decides is what the model decides.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal, Protocol

Theme = Literal["system", "light", "dark"]
THEMES: Final[tuple[Theme, ...]] = ("system", "light", "dark")
DEFAULT_THEME: Final[Theme] = "system"
# The text size, in points (AppSettings.font_size).
DEFAULT_FONT_SIZE: Final = 11
SMALLEST_FONT_SIZE: Final = 8
LARGEST_FONT_SIZE: Final = 24
# The longest instructions for Claude a conversation keeps (a few pages).
MAX_INSTRUCTIONS_CHARS: Final = 20_000


@dataclass(frozen=True)
class PaintSettings:
    """The settings the first window is painted with."""

    theme: Theme = DEFAULT_THEME
    font_size: int = DEFAULT_FONT_SIZE
    default_instructions: str = ""

    def new_conversation_instructions(self) -> str:
        """As `AppSettings.new_conversation_instructions`: trimmed, within the limit."""
        return self.default_instructions.strip()[:MAX_INSTRUCTIONS_CHARS]


DEFAULTS: Final = PaintSettings()


class _HasPaintSettings(Protocol):
    theme: Theme
    font_size: int
    default_instructions: str


def paint_settings_of(settings: _HasPaintSettings) -> PaintSettings:
    """The part of loaded settings (an AppSettings) the first paint shows."""
    return PaintSettings(
        theme=settings.theme,
        font_size=settings.font_size,
        default_instructions=settings.default_instructions,
    )


class _Undecided(Exception):
    """A value pydantic's lax rules may take or refuse: leave it to the model."""


def read_paint_settings(path: Path) -> PaintSettings | None:
    """The theme, text size and instructions `load_settings(path)` gives, or None when
    only the full model can tell (the caller loads it then)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return DEFAULTS
    except OSError:
        return None  # the model's load says why, in its notice; it decides too
    try:
        data = json.loads(raw.decode("utf-8"))
    except ValueError:  # not UTF-8, not JSON: the whole file is refused
        return DEFAULTS
    if not isinstance(data, dict):
        return DEFAULTS
    try:
        return _judged(data)
    except _Undecided:
        return None


def _judged(data: dict[str, object]) -> PaintSettings:
    """What AppSettings makes of the file's top level (its "summarization" and
    "recall" objects, checked apart, never reset the rest)."""
    version = data.get("schema_version", 1)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        return DEFAULTS
    if version >= 2**63:
        raise _Undecided  # beyond a machine integer: pydantic's own limits apply
    if any(key.startswith(("_", "model_")) for key in data):
        raise _Undecided  # a name pydantic may keep for itself
    for name in ("model", "api_base_url"):
        value = data.get(name)
        if value is not None and not isinstance(value, str):
            return DEFAULTS
    base_url = data.get("api_base_url")
    stripped = base_url.strip() if isinstance(base_url, str) else ""
    if stripped and not stripped.startswith(("http://", "https://")):
        return DEFAULTS
    instructions = data.get("default_instructions", "")
    if not isinstance(instructions, str):
        return DEFAULTS
    for name in ("notify_when_done", "think_longer"):
        if not isinstance(data.get(name, False), bool):
            raise _Undecided  # 1, "yes", "on"…: pydantic's lax booleans
    theme = next((known for known in THEMES if data.get("theme", DEFAULT_THEME) == known), None)
    if theme is None:
        return DEFAULTS
    font_size = data.get("font_size", DEFAULT_FONT_SIZE)
    if isinstance(font_size, float | str):
        raise _Undecided  # 12.0 and "12" are taken, 12.5 and "big" are not
    if isinstance(font_size, bool) or not isinstance(font_size, int):
        return DEFAULTS
    if not SMALLEST_FONT_SIZE <= font_size <= LARGEST_FONT_SIZE:
        return DEFAULTS
    return PaintSettings(theme=theme, font_size=font_size, default_instructions=instructions)
