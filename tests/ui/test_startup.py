"""Start-up when something is wrong: each case gets a clear dialog or notice, never a traceback."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from app.__main__ import display_problem
from app.core.paths import AppPaths
from app.store.instance_lock import InstanceLock
from app.ui.app import READ_ONLY_PLACEHOLDER, CairnSession, launch
from tests.fakes.read_only import read_only
from tests.helpers.data_folder import data_folder

REPO = Path(__file__).resolve().parents[2]


def refused_with(qtbot: QtBot, paths: AppPaths) -> str:
    """Launch Cairn expecting the start-up dialog; return its words."""
    seen: list[str] = []

    def read(box: QMessageBox) -> None:
        seen.append(f"{box.text()}\n{box.informativeText()}")

    assert launch(paths, show_problem=read) is None
    assert seen, "no dialog was shown"
    return seen[0]


def digest(folder: Path) -> dict[str, str]:
    """Hashes of the database and its side files (the lock file is Cairn's, not data)."""
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in folder.iterdir()
        if p.is_file() and p.name.startswith("cairn.db")
    }


def test_database_from_a_newer_cairn_is_refused_and_untouched(qtbot: QtBot) -> None:
    import sqlite3

    paths = AppPaths.from_environment()
    paths.data_dir.mkdir(parents=True)
    connection = sqlite3.connect(paths.database)
    connection.execute("CREATE TABLE future (x)")
    connection.execute("PRAGMA user_version = 999")
    connection.commit()
    connection.close()
    before = digest(paths.data_dir)
    words = refused_with(qtbot, paths)
    assert "newer" in words
    assert "Traceback" not in words
    assert digest(paths.data_dir) == before


def test_damaged_database_is_set_aside_and_the_user_told(
    qtbot: QtBot, open_window: Callable[[], CairnSession], with_key: str
) -> None:
    paths = AppPaths.from_environment()
    paths.data_dir.mkdir(parents=True)
    garbage = b"this is not a database at all " * 200
    paths.database.write_bytes(garbage)
    cairn = open_window()
    assert cairn.window.banner.isVisible()
    assert "set it aside" in cairn.window.banner.text_label.text()
    aside = [p for p in paths.data_dir.iterdir() if p.name.startswith("cairn.db.damaged-")]
    assert len(aside) == 1 and aside[0].read_bytes() == garbage
    assert cairn.window.sidebar.titles() == []


def test_unwritable_data_folder_gets_a_clear_dialog(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A regular file where a folder should be: unwritable even for root.
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("", encoding="utf-8")
    monkeypatch.setenv("CAIRN_HOME", str(blocker / "home"))
    words = refused_with(qtbot, AppPaths.from_environment())
    title, text = words.split("\n", 1)
    assert title == "<b>Cairn can't create its folder</b>"
    # What the folder is, where, why (the file in the way, named), and what to do.
    assert text.startswith(
        "Cairn can't create the folder where it keeps your conversations "
        f"({blocker / 'home' / 'data'}): there is a file where the folder should be "
        f"({blocker}). Move or rename that file, then start Cairn again."
    )
    assert "CAIRN_HOME" in text
    assert "Not a directory" not in words and "Traceback" not in words


def test_second_cairn_says_it_is_already_running(qtbot: QtBot) -> None:
    paths = AppPaths.from_environment()
    paths.data_dir.mkdir(parents=True)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "from app.store.instance_lock import InstanceLock\n"
            "lock = InstanceLock(sys.argv[1]); lock.acquire()\n"
            "print('held', flush=True); sys.stdin.read()",
            str(paths.data_dir),
        ],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        words = refused_with(qtbot, paths)
        assert "already running" in words
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=10)
    lock = InstanceLock(paths.data_dir)
    lock.acquire()
    lock.release()


@pytest.mark.xvfb
def test_no_display_is_explained_in_one_line() -> None:
    assert display_problem({}, "linux") is not None
    assert display_problem({"QT_QPA_PLATFORM": "offscreen"}, "linux") is None
    assert display_problem({"WAYLAND_DISPLAY": "wayland-0"}, "linux") is None
    assert display_problem({"DISPLAY": ":4242"}, "linux") is not None, "a display with no server"
    assert display_problem({}, "darwin") is None

    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env.pop("QT_QPA_PLATFORM", None)
    result = subprocess.run(
        [sys.executable, "-m", "app"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        encoding="utf-8",
    )
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "xvfb-run" in lines[0]


def test_a_read_only_data_folder_opens_read_only_and_says_so(
    qtbot: QtBot, open_window: Callable[[], CairnSession], with_key: str
) -> None:
    with data_folder() as (paths, store):
        session = store.create_session("Roses", "claude-sonnet-4-6")
        store.append_message(session.id, "user", "Prune in March?")
    before = sorted(path.name for path in paths.data_dir.iterdir())
    with read_only(paths.data_dir):
        cairn = open_window()
        window = cairn.window
        qtbot.waitUntil(lambda: window.sidebar.titles() == ["Roses"])
        assert window.banner.isVisible()
        assert "opened your conversations read-only" in window.banner.text_label.text()
        assert window.composer.editor.isReadOnly()
        assert window.composer.editor.placeholderText() == READ_ONLY_PLACEHOLDER
        assert not window.composer.button.isEnabled()
        window.close()
        cairn.close()
        assert sorted(path.name for path in paths.data_dir.iterdir()) == before
