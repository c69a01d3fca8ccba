"""A running Cairn window wired to the fake Anthropic server through the real SDK."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from app.core.paths import AppPaths
from app.secrets.keystore import SERVICE_NAME, USERNAME
from app.ui.app import CairnSession, open_cairn
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.keyring_backend import MemoryKeyring

W = TypeVar("W", bound=QWidget)

TEST_KEY = "sk-ant-api03-test-key-0123456789abcdef"


class Previews:
    """Whether a summary's preview is accepted as it is, as a user pressing Enter would
    (the default, so tests about something else get their summary); tests of the preview
    itself set `accept = False` and answer the dialog."""

    def __init__(self) -> None:
        self.accept = True

    def watch(self, session: CairnSession) -> None:
        def accept_later(_preview: object) -> None:
            if self.accept:
                QTimer.singleShot(0, lambda: _accept(session))

        session.controller.summary_previewed.connect(accept_later)


def _accept(session: CairnSession) -> None:
    dialog = session.window.summaries.preview_dialog
    if dialog is not None:
        dialog.accept_button.click()


@pytest.fixture
def previews() -> Previews:
    return Previews()


@pytest.fixture
def open_window(
    qtbot: QtBot,
    fake_server: FakeAnthropicServer,
    monkeypatch: pytest.MonkeyPatch,
    previews: Previews,
) -> Iterator[Callable[..., CairnSession]]:
    """Opens Cairn on this test's CAIRN_HOME (call it again after closing to restart)."""
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_server.base_url)
    opened: list[CairnSession] = []

    def open_(*, typed: bool = True) -> CairnSession:
        """`typed=False`: nobody has started a message yet (the SDK is not loaded)."""
        session = open_cairn(AppPaths.from_environment())
        previews.watch(session)
        opened.append(session)
        qtbot.addWidget(session.window)
        session.show()
        qtbot.waitExposed(session.window)
        qtbot.waitUntil(lambda: session.started)
        # As a user would: typing starts once the window is ready (which lists the models,
        # loading the SDK), and the message after the server's model list came (a message
        # sent before waits for it: tests/unit/chat).
        service = session.controller.service
        if not typed:
            return session
        service.prepare_network()  # what the composer's `started` does
        qtbot.waitUntil(
            lambda: service.model_wait.settled or not service.credentials.has_key(), timeout=45_000
        )
        return session

    yield open_
    for session in opened:
        session.window.close()
        session.close()
        assert running_tasks(session) == 0, "a background task outlived the window"


@pytest.fixture
def with_key(memory_keyring: MemoryKeyring) -> str:
    memory_keyring.passwords[(SERVICE_NAME, USERNAME)] = TEST_KEY
    return TEST_KEY


@pytest.fixture
def cairn(open_window: Callable[[], CairnSession], with_key: str) -> CairnSession:
    """A window with a key already in the keyring, showing an empty new conversation."""
    return open_window()


def on_modal(kind: type[W], act: Callable[[W], None], timeout_ms: int = 10_000) -> None:
    """Once a modal dialog of `kind` is up (inside its own exec()), run `act` on it.

    Polls with timers instead of blocking, because the dialog's exec() loop runs
    above whatever scheduled this.
    """
    deadline = time.monotonic() + timeout_ms / 1000

    def poll() -> None:
        widget = QApplication.activeModalWidget()
        if isinstance(widget, kind):
            act(widget)
        elif time.monotonic() < deadline:
            QTimer.singleShot(10, poll)

    QTimer.singleShot(0, poll)


def home_files(home: Path) -> list[Path]:
    return [path for path in home.rglob("*") if path.is_file()]


def running_tasks(session: CairnSession) -> int:
    """Background tasks and timers still alive (0 once the window is shut down)."""
    controller = session.controller
    return controller.service.runner.running + controller.loop.active_timers
