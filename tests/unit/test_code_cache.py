"""app.code_cache: dataclasses' methods and typing's string annotations compiled once
and kept (issue 20).

Each check runs in a fresh interpreter: installing the cache changes `dataclasses` for
the whole process, and what is checked is what the next start reads back.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# Classes of every kind dataclasses writes methods for, and what their methods do.
_CLASSES = """
import dataclasses, json, sys
from dataclasses import dataclass, field
from pathlib import Path
from app import code_cache

installed = code_cache.install(Path(sys.argv[1]))

@dataclass(frozen=True)
class Point:
    x: int
    y: int = 2
    tags: tuple[str, ...] = ()

@dataclass(order=True)
class Row:
    key: str
    items: list[int] = field(default_factory=list)
    def __post_init__(self) -> None:
        self.items.append(len(self.key))

@dataclass(slots=True, kw_only=True)
class Options:
    name: str
    size: int = 11

point = Point(1)
try:
    point.x = 3
    frozen = False
except dataclasses.FrozenInstanceError:
    frozen = True
behaviour = {
    "point": repr(point), "equal": point == Point(1, 2), "hash": hash(point) == hash(Point(1)),
    "frozen": frozen, "row": repr(Row("abc")), "order": Row("a") < Row("b"),
    "options": repr(Options(name="n")),
    "code": Point.__init__.__code__.co_filename,
}
import typing
class Later(typing.TypedDict):
    point: "Point"
    rows: "list[Row]"
try:
    typing.ForwardRef("not an expression (")
    refused = False
except SyntaxError:
    refused = True
behaviour["hints"] = repr(typing.get_type_hints(Later, localns=globals()))
behaviour["bad annotation refused"] = refused
code_cache.save()
cache = code_cache._installed
print(json.dumps({"installed": installed, "compiled": cache.compiled_here if cache else None,
                  "behaviour": behaviour}))
"""


def run(code: str, *args: str, env: dict[str, str] | None = None) -> dict[str, object]:
    environment = {
        key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"
    }
    result = subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=True,
        env={**environment, **(env or {})},
    )
    loaded = json.loads(result.stdout.strip().splitlines()[-1])
    assert isinstance(loaded, dict)
    return loaded


def test_classes_behave_as_without_the_cache(tmp_path: Path) -> None:
    cached = run(_CLASSES, str(tmp_path / "methods.bin"))
    plain = run(_CLASSES.replace("code_cache.install(Path(sys.argv[1]))", "False"), "-")

    assert cached["installed"] is True
    assert cached["behaviour"] == plain["behaviour"]
    assert cached["behaviour"]["frozen"] is True  # type: ignore[index]
    assert cached["behaviour"]["bad annotation refused"] is True  # type: ignore[index]


def test_the_next_start_compiles_nothing_it_kept(tmp_path: Path) -> None:
    path = tmp_path / "methods.bin"

    first = run(_CLASSES, str(path))
    second = run(_CLASSES, str(path))

    assert isinstance(first["compiled"], int) and first["compiled"] > 0
    assert second["compiled"] == 0
    assert second["behaviour"] == first["behaviour"]


def test_a_torn_or_foreign_file_is_compiled_again_and_written_anew(tmp_path: Path) -> None:
    path = tmp_path / "methods.bin"
    run(_CLASSES, str(path))
    whole = path.read_bytes()

    for damaged in (whole[: len(whole) // 2], b"\x00\x01" + whole[2:], b""):
        path.write_bytes(damaged)
        again = run(_CLASSES, str(path))
        assert isinstance(again["compiled"], int) and again["compiled"] > 0
        assert path.read_bytes() == whole  # written anew, whole
        assert run(_CLASSES, str(path))["compiled"] == 0


def test_the_file_keeps_what_the_last_start_used(tmp_path: Path) -> None:
    # After an upgrade, texts no class asks for any more are not written again.
    path = tmp_path / "methods.bin"
    run(_CLASSES.replace("y: int = 2", "y: int = 2\n    z: int = 3"), str(path))
    larger = path.stat().st_size

    again = run(_CLASSES, str(path))

    assert isinstance(again["compiled"], int) and again["compiled"] > 0  # Point's methods
    assert path.stat().st_size < larger
    assert run(_CLASSES, str(path))["compiled"] == 0


def test_once_finished_the_standard_library_compiles_as_before(tmp_path: Path) -> None:
    finished = run(
        "import dataclasses, json, sys, typing\nfrom pathlib import Path\n"
        "from app import code_cache\ncode_cache.install(Path(sys.argv[1]))\n"
        "@dataclasses.dataclass\nclass Early:\n    x: int\n"
        "code_cache.finish()\n"
        "@dataclasses.dataclass\nclass Late:\n    y: int\n"
        "print(json.dumps({'kept': Path(sys.argv[1]).exists(), "
        "'installed': code_cache._installed is not None, "
        "'globals': ['exec' in vars(dataclasses), 'compile' in vars(typing)], "
        "'late': repr(Late(1))}))",
        str(tmp_path / "methods.bin"),
    )

    assert finished == {
        "kept": True,
        "installed": False,
        "globals": [False, False],
        "late": "Late(y=1)",
    }


def test_nothing_is_written_where_python_writes_no_bytecode() -> None:
    where = run(
        "import json\nfrom app.code_cache import cache_file\nprint(json.dumps({'path': "
        "None if cache_file() is None else str(cache_file())}))",
        env={"PYTHONDONTWRITEBYTECODE": "1"},
    )

    assert where == {"path": None}


def test_the_window_start_reads_the_methods_it_kept(tmp_path: Path) -> None:
    # As `cairn` does (app.__main__): installed before the window's imports. The second
    # start compiles none of the window's dataclass methods.
    code = (
        "import json, sys\nfrom pathlib import Path\nfrom app import code_cache\n"
        "code_cache.install(Path(sys.argv[1]))\nimport app.ui.app\ncode_cache.save()\n"
        "print(json.dumps({'compiled': code_cache._installed.compiled_here}))"
    )
    path = str(tmp_path / "methods.bin")
    env = {"QT_QPA_PLATFORM": "offscreen"}

    first = run(code, path, env=env)
    second = run(code, path, env=env)

    assert isinstance(first["compiled"], int) and first["compiled"] > 500
    assert second == {"compiled": 0}
