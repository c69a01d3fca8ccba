"""The `cairn` command line: export, import, --help, exit codes, the instance lock."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.__main__ import main as cairn
from app.cli import CAIRN_IS_OPEN, command_names, main
from app.core.paths import AppPaths
from app.store import InstanceLock, SessionStore, open_database
from app.store.database import mark_clean_shutdown

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AppPaths:
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path / "home"))
    return AppPaths.from_environment()


def _fill(paths: AppPaths, *titles: str) -> list[str]:
    paths.ensure()
    opened = open_database(paths.database)
    store = SessionStore(opened.connection, database=opened.path)
    ids = []
    for title in titles:
        session = store.create_session(title, "claude-sonnet-4-5")
        store.append_message(session.id, "user", f"Hello from {title} 👋")
        store.append_message(session.id, "assistant", "Hello back")
        ids.append(session.id)
    store.close()
    mark_clean_shutdown(opened.path)
    return ids


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def _count(paths: AppPaths) -> int:
    opened = open_database(paths.database)
    try:
        return int(opened.connection.execute("SELECT count(*) FROM session").fetchone()[0])
    finally:
        opened.connection.close()


def test_export_all_then_import_elsewhere(
    paths: AppPaths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fill(paths, "Garden", "Taxes")
    target = tmp_path / "all.json"
    code, out, err = _run("export", "--all", "--format", "json", str(target))
    assert (code, err) == (0, "")
    assert out.startswith("Exported 2 conversations to ")
    assert len(json.loads(target.read_text(encoding="utf-8"))["conversations"]) == 2
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path / "elsewhere"))
    code, out, err = _run("import", str(target))
    assert (code, err) == (0, "")
    assert out == "Imported 2 conversations: “Garden”, “Taxes”.\n"
    assert _count(AppPaths.from_environment()) == 2


def test_export_one_as_markdown_by_extension(paths: AppPaths, tmp_path: Path) -> None:
    garden, _ = _fill(paths, "Garden", "Taxes")
    target = tmp_path / "garden.md"
    code, out, _ = _run("export", "--conversation", garden, str(target))
    assert code == 0 and "Exported 1 conversation " in out
    text = target.read_text(encoding="utf-8")
    assert "## Garden" in text and "Taxes" not in text and "Hello from Garden 👋" in text


def test_import_twice_is_refused_then_done_as_copy(paths: AppPaths, tmp_path: Path) -> None:
    _fill(paths, "Garden")
    target = tmp_path / "garden.json"
    assert _run("export", str(target))[0] == 0
    code, out, err = _run("import", str(target))
    assert (code, out) == (1, "")
    assert "“Garden” is already in Cairn" in err and "cairn import --as-copy FILE" in err
    code, out, _ = _run("import", "--as-copy", str(target))
    assert code == 0 and "“Garden (copy)”" in out
    assert _count(paths) == 2


def test_import_while_cairn_is_open_writes_nothing(paths: AppPaths, tmp_path: Path) -> None:
    _fill(paths, "Garden")
    target = tmp_path / "garden.json"
    assert _run("export", str(target))[0] == 0
    before = paths.database.read_bytes()
    with InstanceLock(paths.data_dir):
        # Reading beside the open window works; writing is refused plainly.
        assert _run("export", str(tmp_path / "again.json"))[0] == 0
        code, out, err = _run("import", "--as-copy", str(target))
    assert (code, out, err) == (1, "", CAIRN_IS_OPEN + "\n")
    assert _count(paths) == 1
    assert len(paths.database.read_bytes()) == len(before)


def test_refusals_say_why_and_exit_1(paths: AppPaths, tmp_path: Path) -> None:
    code, _, err = _run("export", str(tmp_path / "x.json"))
    assert code == 1 and "no conversations to export yet" in err
    foreign = tmp_path / "foreign.json"
    foreign.write_text('{"hello": 1}', encoding="utf-8")
    code, _, err = _run("import", str(foreign))
    assert code == 1 and "not a Cairn export" in err
    assert not paths.database.exists()  # a refused import did not even create the data
    _fill(paths, "Garden")
    code, _, err = _run("export", "--conversation", "nope", str(tmp_path / "x.json"))
    assert code == 1 and "no conversation with the id nope" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["export"],
        ["export", "--all", "--conversation", "x", "f.json"],
        ["export", "--format", "pdf", "f.json"],
        ["import"],
        ["frobnicate"],
        [],
    ],
)
def test_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert "usage: cairn" in capsys.readouterr().err


@pytest.mark.parametrize("command", sorted(command_names()))
def test_each_command_has_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([command, "--help"]) == 0
    assert f"usage: cairn {command}" in capsys.readouterr().out


def test_cairn_dispatches_and_keeps_its_own_flags(
    paths: AppPaths, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cairn(["--help"]) == 0
    text = capsys.readouterr().out
    assert "cairn export" in text and "cairn import" in text
    assert cairn(["--version"]) == 0
    assert capsys.readouterr().out.startswith("Cairn ")
    _fill(paths, "Garden")
    assert cairn(["export", str(tmp_path / "x.json")]) == 0
    assert (tmp_path / "x.json").exists()


def test_help_runs_as_a_process_without_qt_or_a_display(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env.update(PYTHONPATH=str(ROOT), CAIRN_HOME=str(tmp_path), QT_QPA_PLATFORM="xcb")
    done = subprocess.run(
        [sys.executable, "-m", "app", "export", "--help"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=30,
        check=False,
        encoding="utf-8",
    )
    assert done.returncode == 0, done.stderr
    assert "--conversation ID" in done.stdout and "--format" in done.stdout
    # A whole run (here a refused import) loads no Qt.
    probe = (
        "import sys, app.__main__; code = app.__main__.main(['import', 'missing.json']); "
        "print(code, sorted(m for m in sys.modules if m.startswith(('PySide6', 'shiboken6'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=30,
        check=False,
        encoding="utf-8",
    )
    assert done.stdout.strip() == "1 []", done.stderr
    assert "couldn't read" in done.stderr


def test_search_prints_conversation_date_author_and_snippet(paths: AppPaths) -> None:
    ids = _fill(paths, "Garden", "Kitchen")
    code, out, err = _run("search", "hello", "from", "kitchen")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert len(lines) == 2, out
    assert lines[0].startswith(f"Kitchen ({ids[1]}) #1 · ") and lines[0].endswith(" · You")
    assert "[Hello] [from] [Kitchen]" in lines[1]


def test_search_filters_and_says_when_nothing_is_found(paths: AppPaths) -> None:
    ids = _fill(paths, "Garden", "Kitchen")
    code, out, _ = _run("search", "hello", "--conversation", ids[0], "--author", "claude")
    assert code == 0
    assert out.splitlines()[0].startswith(f"Garden ({ids[0]}) #2 · ")
    assert out.splitlines()[0].endswith(" · Claude") and "Kitchen" not in out
    code, out, _ = _run("search", "hello", "--newest", "--limit", "1")
    assert code == 0 and out.splitlines()[-1] == "1 of 4 results; --limit shows more."
    code, out, _ = _run("search", "--", '"NEAR(*', "^-")
    assert (code, out) == (0, 'Nothing found for “"NEAR(* ^-”.\n')


def test_search_without_conversations_says_so(paths: AppPaths) -> None:
    code, out, err = _run("search", "anything")
    assert code == 1 and out == ""
    assert "There are no conversations to search yet" in err
