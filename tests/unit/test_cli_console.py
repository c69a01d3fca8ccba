"""The command line writes UTF-8 whatever the console (app/cli.py, app/core/platform.py).

On Windows, Python 3.11 gives a redirected stdout the ANSI code page (cp1252 on
a Western-European system) unless UTF-8 mode is on: `cairn search … > out.txt`
crashed on any text cp1252 cannot encode. PYTHONIOENCODING=cp1252 gives a child
Python here exactly that stdout.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli import main
from app.core.paths import AppPaths
from app.store import SessionStore, open_database
from app.store.database import mark_clean_shutdown

ROOT = Path(__file__).resolve().parents[2]
TITLE = "Сводка · 要約"
WORDS = "Привет из Киева 👋 — “quoted”"


@pytest.fixture
def paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AppPaths:
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path / "home"))
    paths = AppPaths.from_environment()
    paths.ensure()
    opened = open_database(paths.database)
    store = SessionStore(opened.connection, database=opened.path)
    session = store.create_session(TITLE, "claude-sonnet-4-5")
    store.append_message(session.id, "user", WORDS)
    store.close()
    mark_clean_shutdown(opened.path)
    return paths


def test_search_into_a_cp1252_stdout_writes_utf8(
    paths: AppPaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, err = io.BytesIO(), io.BytesIO()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(out, encoding="cp1252"))
    monkeypatch.setattr(sys, "stderr", io.TextIOWrapper(err, encoding="cp1252"))
    monkeypatch.setattr(sys, "platform", "win32")

    code = main(["search", "Киева"])
    sys.stdout.flush()

    assert code == 0
    printed = out.getvalue().decode("utf-8")
    assert TITLE in printed and "[Киева]" in printed and "👋" in printed


def test_a_redirected_cairn_search_on_a_cp1252_console_does_not_crash(paths: AppPaths) -> None:
    environment = {**os.environ, "PYTHONIOENCODING": "cp1252", "PYTHONUTF8": "0"}
    done = subprocess.run(
        [sys.executable, "-m", "app", "search", "Киева"],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        timeout=60,
    )

    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    assert TITLE in done.stdout.decode("utf-8")
