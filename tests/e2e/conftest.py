"""End-to-end tests: the UI tests' running-window fixtures (test_restart.py), and for the
journeys a real X screen with the installed `cairn` on it (test_journeys.py)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.e2e.desktop import Cairn, Desktop, Journey, XServer, missing_tools
from tests.e2e.fake_server_process import RemoteFakeServer
from tests.ui.conftest import cairn, open_window, previews, with_key  # noqa: F401  (fixtures)

# scripts/test sets it: there a missing tool fails the journeys instead of skipping them.
REQUIRE_DESKTOP = "CAIRN_REQUIRE_DESKTOP"


@pytest.fixture(scope="session")
def desktop() -> Iterator[Desktop]:
    """One Xvfb screen for every journey (each journey has its own app and data)."""
    missing = missing_tools()
    if missing:
        message = f"journey tests need {', '.join(missing)} (scripts/test installs them)"
        if os.environ.get(REQUIRE_DESKTOP):
            pytest.fail(message)
        pytest.skip(message)
    server = XServer()
    screen = Desktop(server.display)
    yield screen
    screen.close()
    server.stop()


@pytest.fixture
def journey(desktop: Desktop, request: pytest.FixtureRequest) -> Journey:
    return Journey(desktop, request.node.name.removeprefix("test_"))


@pytest.fixture
def fake_api() -> Iterator[RemoteFakeServer]:
    """The fake Anthropic API in a process of its own."""
    server = RemoteFakeServer()
    yield server
    server.stop()


StartCairn = Callable[..., Cairn]


@pytest.fixture
def start_cairn(
    desktop: Desktop, fake_api: RemoteFakeServer, tmp_path: Path
) -> Iterator[StartCairn]:
    """Start the installed `cairn` on the screen, on a fresh CAIRN_HOME; it is ended after."""
    started: list[Cairn] = []

    def start(*, api_key: str | None = None, home: Path | None = None) -> Cairn:
        app = Cairn(desktop, home or tmp_path / "cairn-home", fake_api.base_url, api_key=api_key)
        app.start()
        started.append(app)
        return app

    yield start
    for app in started:
        app.kill()
