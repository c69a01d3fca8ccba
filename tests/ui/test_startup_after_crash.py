"""After Cairn did not close normally, the window opens at once, read-only, and says
"Checking your conversations…" until the integrity check passes (issue 20 item 4)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.core.models import Role
from app.store.database import CheckResult, check_database
from app.store.transactions import WRITES_HELD_TITLE, writes_held
from app.ui import app as app_module
from app.ui.app import CairnSession
from tests.helpers.data_folder import data_folder


class HeldCheck:
    """The real check, started when the test lets it (so the window's state while it
    runs can be looked at)."""

    def __init__(self) -> None:
        self.go = threading.Event()
        self.runs = 0

    def __call__(self, path: Path | str, **options: object) -> CheckResult:
        self.runs += 1
        self.go.wait(30)
        return check_database(path, **options)  # type: ignore[arg-type]


@pytest.fixture
def held_check(monkeypatch: pytest.MonkeyPatch) -> Iterator[HeldCheck]:
    check = HeldCheck()
    monkeypatch.setattr(app_module, "check_database", check)
    yield check
    check.go.set()  # never left waiting when the window closes


def crash_with_a_conversation() -> None:
    with data_folder(clean=False) as (_paths, store):  # the state file still says "in use"
        session = store.create_session("Trip to Lisbon", "claude-sonnet-4-5")
        store.append_message(session.id, Role.USER, "Which tram goes to Belém?")
        store.append_message(session.id, Role.ASSISTANT, "Tram 15 from Praça da Figueira.")


def test_the_window_opens_read_only_while_the_check_runs(
    qtbot: QtBot,
    open_window: Callable[[], CairnSession],
    with_key: str,
    held_check: HeldCheck,
) -> None:
    crash_with_a_conversation()
    cairn = open_window()
    window = cairn.window
    # Painted and filled before the check ran to its end: the conversation is readable.
    assert held_check.runs == 1
    assert cairn.check_first is not None and writes_held(cairn.database)
    qtbot.waitUntil(lambda: window.transcript.message_count() == 2)
    assert window.banner.isVisible()
    assert window.banner.title_label.text() == WRITES_HELD_TITLE

    editor = window.composer.editor
    editor.setPlainText("And back to the hotel?")
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    # Refused in plain words; the words come back to the composer; nothing shown as sent.
    qtbot.waitUntil(lambda: window.composer.text() == "And back to the hotel?", timeout=15_000)
    qtbot.waitUntil(lambda: not cairn.controller.service.current.state.activity.busy)
    assert window.transcript.message_count() == 2
    assert window.banner.title_label.text() == WRITES_HELD_TITLE

    held_check.go.set()
    # The worker lets the writes go, then the window hears of it (a turn of its loop later).
    qtbot.waitUntil(lambda: cairn.check_first is None, timeout=15_000)
    assert not writes_held(cairn.database)
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: window.transcript.message_count() == 4, timeout=15_000)
    assert window.composer.text() == ""


def test_after_a_normal_quit_nothing_is_held(
    open_window: Callable[[], CairnSession], with_key: str, held_check: HeldCheck
) -> None:
    cairn = open_window()
    assert cairn.check_first is None
    assert not writes_held(cairn.database)
    assert not cairn.window.banner.isVisible()


def test_a_weekly_check_due_runs_after_the_first_paint_nothing_held(
    qtbot: QtBot,
    open_window: Callable[[], CairnSession],
    with_key: str,
    held_check: HeldCheck,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Closed cleanly, unchanged, its last check eight days old: the window does not wait
    # for the check (open_database), nothing is held, nothing is said; the check runs
    # after the first paint, as at every start, and counts as the week's.
    monkeypatch.setattr(app_module, "BACKGROUND_CHECK_DELAY_SECONDS", 0.0)
    with data_folder() as (paths, store):
        session = store.create_session("Trip to Lisbon", "claude-sonnet-4-5")
        store.append_message(session.id, Role.USER, "Which tram goes to Belém?")
    state = paths.database.with_name(paths.database.name + ".state.json")
    record = json.loads(state.read_text(encoding="utf-8"))
    record["last_check"] = (datetime.now(UTC) - timedelta(days=8)).isoformat()
    state.write_text(json.dumps(record), encoding="utf-8")

    cairn = open_window()
    assert (cairn.checked_at_open, cairn.check_first) == (False, None)
    assert not writes_held(cairn.database)
    qtbot.waitUntil(lambda: held_check.runs == 1, timeout=15_000)
    assert not cairn.window.banner.isVisible()
    held_check.go.set()
    qtbot.waitUntil(
        lambda: json.loads(state.read_text(encoding="utf-8"))["last_check"] > record["last_check"],
        timeout=15_000,
    )
