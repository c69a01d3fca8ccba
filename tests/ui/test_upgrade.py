"""An upgrade whose migrations leave walks over every message (the search index, the
checksums) paints first, says how far it is, and lets the user read meanwhile; sending
waits, and says why (issue 20 item 4)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.core.errors import StorageError
from app.core.paths import AppPaths
from app.store.backfill import Progress, pending, run_backfills
from app.store.database import connect
from app.store.transactions import UPDATING, writes_held
from app.ui import upgrade as upgrade_module
from app.ui.app import CairnSession
from app.ui.upgrade import FAILED_TITLE, SENDING_OFF, SENDING_WAITS, updating_title
from tests.helpers.old_database import old_database


class HeldWalk:
    """The real back-fills, started when the test lets them (so the window's state while
    they run can be looked at), or failing as a full disk would."""

    def __init__(self) -> None:
        self.go = threading.Event()
        self.runs = 0
        self.fail = False

    def __call__(self, path: Path | str, **options: object) -> bool:
        self.runs += 1
        self.go.wait(30)
        if self.fail:
            raise StorageError("Cairn couldn't save: the disk is full.", title="Disk full")
        return run_backfills(path, **options)  # type: ignore[arg-type]


@pytest.fixture
def held_walk(monkeypatch: pytest.MonkeyPatch) -> Iterator[HeldWalk]:
    walk = HeldWalk()
    monkeypatch.setattr(upgrade_module, "run_backfills", walk)
    yield walk
    walk.go.set()  # never left waiting when the window closes


def left_by_an_older_cairn() -> AppPaths:
    paths = AppPaths.from_environment()
    paths.ensure()
    old_database(
        paths.database,
        {"Trip to Lisbon": ["Which tram goes to Belém?", "Tram 15 from Praça da Figueira."]},
    )
    return paths


def test_the_window_reads_while_the_update_runs_then_writes(
    qtbot: QtBot,
    open_window: Callable[[], CairnSession],
    with_key: str,
    held_walk: HeldWalk,
) -> None:
    left_by_an_older_cairn()
    cairn = open_window()
    window = cairn.window
    # Painted and filled while the update has not run: the conversation is readable.
    qtbot.waitUntil(lambda: held_walk.runs == 1)
    assert cairn.upgrading and writes_held(cairn.database)
    qtbot.waitUntil(lambda: window.transcript.message_count() == 2)
    banner = window.banner
    assert banner.isVisible()
    assert banner.title_label.text() == updating_title(0)
    assert banner.accessibleName() == "Notice"
    assert banner.accessibleDescription().startswith(f"{updating_title(0)}. You can read")
    # How far it is, as the worker tells it.
    assert cairn.upgrade is not None
    cairn.upgrade._told(Progress(34, 100))
    assert banner.title_label.text() == "Updating your conversations for this version… 34 %"
    assert "34 %" in banner.accessibleDescription()
    # Closed by the user, the notice stays closed; the composer still says why.
    qtbot.mouseClick(banner.close_button, Qt.MouseButton.LeftButton)
    cairn.upgrade._told(Progress(35, 100))
    assert not banner.isVisible()

    # Sending waits, and the composer says why; what is typed stays.
    composer = window.composer
    assert composer.waiting_note.isVisible() and composer.waiting_note.text() == SENDING_WAITS
    composer.editor.setPlainText("And back to the hotel?")
    assert not composer.button.isEnabled()
    assert composer.button.toolTip() == SENDING_WAITS
    qtbot.keyClick(composer.editor, Qt.Key.Key_Return)
    assert window.transcript.message_count() == 2
    assert composer.text() == "And back to the hotel?"

    # History searches the text meanwhile, and says a few matches may be missing.
    history = window.history.open_history()
    history.search.search_edit.setText("tram")
    label = history.search.count_label
    qtbot.waitUntil(lambda: label.isVisible() and "still updating" in label.text(), timeout=15_000)
    history.close()

    held_walk.go.set()
    qtbot.waitUntil(lambda: not writes_held(cairn.database), timeout=30_000)
    assert not banner.isVisible()
    assert not composer.waiting_note.isVisible()
    reading = connect(cairn.database)
    assert pending(reading) == {}
    reading.close()
    qtbot.keyClick(composer.editor, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: window.transcript.message_count() == 4, timeout=15_000)
    assert composer.text() == ""


def test_a_failed_update_keeps_reading_and_is_tried_again_at_the_next_start(
    qtbot: QtBot,
    open_window: Callable[[], CairnSession],
    with_key: str,
    held_walk: HeldWalk,
) -> None:
    left_by_an_older_cairn()
    held_walk.fail = True
    held_walk.go.set()
    cairn = open_window()
    window = cairn.window
    qtbot.waitUntil(lambda: window.banner.title_label.text() == FAILED_TITLE, timeout=15_000)
    assert "Nothing was lost" in window.banner.text_label.text()
    assert "disk is full" in window.banner.text_label.text()
    assert window.composer.waiting == SENDING_OFF
    assert writes_held(cairn.database)
    qtbot.waitUntil(lambda: window.transcript.message_count() == 2)
    cairn.close()
    assert not writes_held(cairn.database)

    held_walk.fail = False
    cairn = open_window()
    qtbot.waitUntil(lambda: not writes_held(cairn.database), timeout=30_000)
    assert held_walk.runs == 2
    assert cairn.window.composer.waiting is None
    assert not (
        cairn.window.banner.isVisible() and UPDATING.title in cairn.window.banner.title_label.text()
    )
