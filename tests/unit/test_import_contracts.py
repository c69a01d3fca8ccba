"""The layer contract of DESIGN §1, as import-linter checks it (pyproject.toml).

`lint-imports` (a step of scripts/test) reads every import statement of `app`,
those inside functions included. These tests show that it would notice a
violation of each contract, and check at run time what it cannot see: the
modules our third-party dependencies load in turn when a layer is imported.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")

LAYERS_CONTRACT = "Imports point downward: ui > chat > llm | store | secrets > core"
CORE_CONTRACT = "app.core imports neither Qt, nor SQLite, nor the network, nor a higher layer"
QT_CONTRACT = "app.chat, app.store, app.llm and app.secrets import no Qt"
CHAT_CONTRACT = "app.chat is one-way: the service, a conversation, its parts, their state"
CIRCLES_CONTRACT = "No circle between the modules of app.chat, nor between those of app.ui"


def _chat_modules() -> list[str]:
    """Every module the app.chat layers contract places (each layer's "a | b" names)."""
    config = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = (
        c for c in config["tool"]["importlinter"]["contracts"] if c["name"] == CHAT_CONTRACT
    )
    return [name.strip() for layer in contract["layers"] for name in layer.split("|")]


# A tiny `app` with Cairn's layers: each module breaks one rule, the way a real
# mistake would (imports inside functions included).
VIOLATIONS = {
    "core/sneaky.py": "def later():\n    from ..ui import window\n",
    "core/saves.py": "def save():\n    import sqlite3\n",
    "core/fetch.py": "def fetch():\n    import urllib.request\n",
    "store/widget.py": "from PySide6 import QtWidgets\n",
    "chat/gauge.py": "def ask():\n    import shiboken6\n",
    "llm/cache.py": "from app.store import widget\n",  # siblings are independent
}


def _write_package(root: Path, files: dict[str, str]) -> None:
    for layer in ("core", "store", "llm", "secrets", "chat", "ui"):
        (root / "app" / layer).mkdir(parents=True)
        (root / "app" / layer / "__init__.py").write_text("", encoding="utf-8")
    (root / "app" / "__init__.py").write_text("", encoding="utf-8")
    (root / "app" / "ui" / "window.py").write_text(
        "from PySide6 import QtWidgets\n", encoding="utf-8"
    )
    for module in _chat_modules():
        (root / "app" / "chat" / f"{module}.py").write_text("", encoding="utf-8")
    # As the real ones do: the assembler imports its parts, a part its state.
    for name, source in {
        "conversation": "from app.chat import summaries\n",
        "summaries": "from app.chat import state\n",
    }.items():
        (root / "app" / "chat" / f"{name}.py").write_text(source, encoding="utf-8")
    for name, source in files.items():
        (root / "app" / name).write_text(source, encoding="utf-8")


def _lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """Run lint-imports with the real contracts on the `app` package under `root`."""
    shutil.copyfile(REPO_ROOT / "pyproject.toml", root / "pyproject.toml")
    result = subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--no-logo", "--config", str(root / "pyproject.toml")],
        cwd=root,
        # Ahead of the editable install of the real `app`.
        env=dict(os.environ, PYTHONPATH=str(root), NO_COLOR="1"),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        encoding="utf-8",
    )
    # The tiny package was analysed, not the real one (which has far more files).
    analysed = re.search(r"Analyzed (\d+) files", result.stdout)
    assert analysed is not None and int(analysed[1]) < 60, result.stdout + result.stderr
    return result


def test_lint_imports_notices_each_kind_of_violation(tmp_path: Path) -> None:
    _write_package(tmp_path, VIOLATIONS)

    result = _lint_imports(tmp_path)

    report = result.stdout + result.stderr
    assert result.returncode == 1, report
    assert "3 broken" in report, report
    for contract in (LAYERS_CONTRACT, CORE_CONTRACT, QT_CONTRACT):
        assert re.search(re.escape(contract) + r"\s+BROKEN", report), contract
    for importer, imported in [
        ("app.core.sneaky", "app.ui.window"),
        ("app.core.saves", "sqlite3"),
        ("app.core.fetch", "urllib"),
        ("app.store.widget", "PySide6"),
        ("app.chat.gauge", "shiboken6"),
        ("app.llm.cache", "app.store.widget"),
    ]:
        assert f"{importer} -> {imported}" in report, (importer, imported)


def test_the_same_package_without_violations_keeps_every_contract(tmp_path: Path) -> None:
    _write_package(tmp_path, {"core/models.py": "import json\n", "chat/service.py": ""})

    result = _lint_imports(tmp_path)

    assert result.returncode == 0, result.stdout + result.stderr
    assert "5 kept, 0 broken" in result.stdout


# A part that imports the conversation assembling it, for type checking only, and two
# windows of app.ui that know each other the same way: the circles DESIGN §1 forbids.
TYPE_ONLY_CIRCLES = {
    "chat/summaries.py": (
        "from typing import TYPE_CHECKING\n"
        "from app.chat import state\n"
        "if TYPE_CHECKING:\n"
        "    from app.chat.conversation import Conversation\n"
    ),
    "ui/panel.py": (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from app.ui.dialog import Dialog\n"
    ),
    "ui/dialog.py": "from app.ui import panel\n",
}


def test_a_circle_through_type_only_imports_breaks_the_chat_and_ui_contracts(
    tmp_path: Path,
) -> None:
    _write_package(tmp_path, TYPE_ONLY_CIRCLES)

    result = _lint_imports(tmp_path)

    report = result.stdout + result.stderr
    assert result.returncode == 1, report
    assert "3 kept, 2 broken" in report, report
    for contract in (CHAT_CONTRACT, CIRCLES_CONTRACT):
        assert re.search(re.escape(contract) + r"\s+BROKEN", report), contract
    assert "app.chat.summaries -> app.chat.conversation" in report
    assert "No cycles are allowed in app.chat" in report
    assert "No cycles are allowed in app.ui" in report


def test_a_chat_module_the_layers_do_not_place_breaks_the_chat_contract(tmp_path: Path) -> None:
    _write_package(tmp_path, {"chat/stray.py": ""})

    result = _lint_imports(tmp_path)

    report = result.stdout + result.stderr
    assert result.returncode == 1, report
    assert re.search(re.escape(CHAT_CONTRACT) + r"\s+BROKEN", report), report
    assert "app.chat.stray" in report


# --- at run time: what a layer loads, third-party code included ---------------------------

# What "no Qt, no SQLite, no network" means for app.core, in sys.modules terms.
CORE_FORBIDDEN = (
    "PySide6",
    "shiboken6",
    "sqlite3",
    "_sqlite3",
    "anthropic",
    "httpx",
    "httpx2",
    "urllib.request",
    "http.client",
    "app.store",
    "app.llm",
    "app.secrets",
    "app.chat",
    "app.ui",
)
NO_QT = ("PySide6", "shiboken6", "app.ui")

_IMPORT_EVERY_MODULE = """
import importlib, json, pkgutil, sys
report = {}
for name in sys.argv[1:]:
    before = set(sys.modules)
    package = importlib.import_module(name)
    modules = [name]
    for info in pkgutil.walk_packages(package.__path__, name + "."):
        importlib.import_module(info.name)
        modules.append(info.name)
    report[name] = {"modules": modules, "loaded": sorted(set(sys.modules) - before)}
print(json.dumps(report))
"""


@functools.cache
def _loaded(*packages: str) -> dict[str, dict[str, list[str]]]:
    """Import every module of each package in turn, in one new interpreter.

    For each package: its modules, and what importing them added to sys.modules.
    """
    result = subprocess.run(
        [sys.executable, "-c", _IMPORT_EVERY_MODULE, *packages],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        encoding="utf-8",
    )
    assert result.returncode == 0, result.stderr
    report: dict[str, dict[str, list[str]]] = json.loads(result.stdout.strip().splitlines()[-1])
    return report


def _present(forbidden: tuple[str, ...], loaded: list[str]) -> list[str]:
    return sorted(
        name for name in loaded if any(name == f or name.startswith(f + ".") for f in forbidden)
    )


def test_importing_core_and_what_it_uses_loads_no_qt_sqlite_or_network() -> None:
    # Core first, on its own: whatever it loads (pydantic, tiktoken…) is counted.
    report = _loaded("app.core", "app.chat", "app.store", "app.llm", "app.secrets")

    assert "app.core.errors" in report["app.core"]["modules"]  # the walk found the modules
    assert _present(CORE_FORBIDDEN, report["app.core"]["loaded"]) == []
    for layer in ("app.chat", "app.store", "app.llm", "app.secrets"):
        assert _present(NO_QT, report[layer]["loaded"]) == [], layer


def test_the_run_time_check_would_notice_a_forbidden_module() -> None:
    report = _loaded("sqlite3")

    assert {"sqlite3", "_sqlite3"} <= set(_present(CORE_FORBIDDEN, report["sqlite3"]["loaded"]))
