"""The layer contract of DESIGN §1: imports point downward only.

Each check imports every module of a layer in a fresh interpreter and looks at what
ended up in `sys.modules`, so an import made by a dependency counts too. A static scan
of the import statements adds imports that only run inside a function.
"""

from __future__ import annotations

import ast
import functools
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
APP_DIR = REPO_ROOT / "app"

# What "no Qt, no SQLite, no network" means for app.core, in sys.modules terms.
CORE_FORBIDDEN = (
    "PySide6",
    "sqlite3",
    "_sqlite3",
    "anthropic",
    "httpx",
    "httpx2",
    "urllib.request",
    "http.client",
)
SERVICE_LAYERS = ("app.store", "app.llm", "app.secrets")

_IMPORT_EVERY_MODULE = """
import importlib, json, pkgutil, sys
package = importlib.import_module(sys.argv[1])
modules = [package.__name__]
for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
    importlib.import_module(info.name)
    modules.append(info.name)
print(json.dumps({"modules": modules, "loaded": sorted(sys.modules)}))
"""


@functools.cache
def _layer_modules_loaded(package: str) -> tuple[list[str], set[str]]:
    """Import every module of `package` in a new interpreter; return them and sys.modules."""
    result = subprocess.run(
        [sys.executable, "-c", _IMPORT_EVERY_MODULE, package],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, f"importing {package} failed:\n{result.stderr}"
    report = json.loads(result.stdout.strip().splitlines()[-1])
    return report["modules"], set(report["loaded"])


def _present(forbidden: tuple[str, ...], loaded: set[str]) -> list[str]:
    """The forbidden modules (or any of their submodules) that got imported."""
    return sorted(
        name for name in loaded if any(name == f or name.startswith(f + ".") for f in forbidden)
    )


def _existing_layers(names: tuple[str, ...]) -> list[str]:
    return [name for name in names if (REPO_ROOT / name.replace(".", "/")).is_dir()]


def _imported_names(path: Path, root: Path = REPO_ROOT) -> set[str]:
    """Every module named by an import statement in the file, at any depth, made absolute."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    # The package a relative import starts from (for an __init__.py, its own package).
    package = list(path.relative_to(root).parts[:-1])
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


def test_core_imports_no_qt_sqlite_or_network() -> None:
    modules, loaded = _layer_modules_loaded("app.core")

    assert "app.core.errors" in modules  # the walk found the package's modules
    assert _present(CORE_FORBIDDEN, loaded) == [], f"app.core ({len(modules)} modules)"


@pytest.mark.parametrize("layer", _existing_layers(SERVICE_LAYERS))
def test_service_layers_import_no_qt(layer: str) -> None:
    modules, loaded = _layer_modules_loaded(layer)

    assert _present(("PySide6", "shiboken6"), loaded) == [], f"{layer} ({len(modules)} modules)"


@pytest.mark.parametrize("layer", _existing_layers(("app.core", *SERVICE_LAYERS)))
def test_lower_layers_never_load_the_ui(layer: str) -> None:
    modules, loaded = _layer_modules_loaded(layer)

    assert _present(("app.ui",), loaded) == [], f"{layer} ({len(modules)} modules)"


@pytest.mark.parametrize(
    ("layer", "forbidden"),
    [
        ("app/core", ("app.ui", "app.store", "app.llm", "app.secrets", *CORE_FORBIDDEN)),
        ("app/store", ("app.ui", "PySide6")),
        ("app/llm", ("app.ui", "PySide6")),
        ("app/secrets", ("app.ui", "PySide6")),
    ],
)
def test_no_import_statement_points_upward(layer: str, forbidden: tuple[str, ...]) -> None:
    """Catches imports that only run inside a function, which sys.modules can't see."""
    offenders = [
        f"{path.relative_to(REPO_ROOT)} imports {name}"
        for path in sorted((REPO_ROOT / layer).rglob("*.py"))
        for name in sorted(_imported_names(path))
        if any(name == f or name.startswith(f + ".") for f in forbidden)
    ]

    assert offenders == []


def test_the_checks_would_notice_a_forbidden_import(tmp_path: Path) -> None:
    """The harness itself works: it sees what a package loads, and lazy relative imports."""
    modules, loaded = _layer_modules_loaded("sqlite3")
    assert {"sqlite3", "_sqlite3"} <= set(_present(CORE_FORBIDDEN, loaded)), modules

    sneaky = tmp_path / "app" / "core" / "sneaky.py"
    sneaky.parent.mkdir(parents=True)
    sneaky.write_text("def later():\n    from ..ui import window\n", encoding="utf-8")
    assert "app.ui.window" in _imported_names(sneaky, root=tmp_path)
