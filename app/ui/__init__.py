"""What the user *sees*: widgets, the controller, the worker threads. The only Qt layer."""

from __future__ import annotations

import sys
from types import ModuleType

import PySide6.QtCore  # noqa: F401  (loads PySide's import hook, replaced below)


def _uses_qt(module: ModuleType) -> bool:
    """Whether `module` may switch PySide's `__feature__`s: only Cairn's own modules do."""
    return getattr(module, "__name__", "").partition(".")[0] in ("app", "__main__")


def _stop_reading_sources() -> None:
    """Spare every later import PySide's search of its source for the word "PySide6".

    PySide calls `_mod_uses_pyside` after each import to default the module's
    `__feature__` selection (snake_case, true_property) to "none" or "ignored". It reads
    the module's whole source to decide, and keeps it in `linecache`: for the SDK's
    ~3,000 modules, half a second of CPU and ~24 MiB held for good. Cairn selects no
    feature, so "none" and "ignored" behave the same; its own modules get "none".
    """
    feature = sys.modules.get("PySide6.support.feature")
    if feature is not None and callable(getattr(feature, "_mod_uses_pyside", None)):
        setattr(feature, "_mod_uses_pyside", _uses_qt)  # noqa: B010  (PySide's private name)


_stop_reading_sources()
