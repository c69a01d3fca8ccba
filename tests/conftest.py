"""Fixtures every test gets: a private CAIRN_HOME, an in-memory keyring, and
failure on unexpected error logs (Qt warnings fail through qt_log_level_fail)."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest
from hypothesis import settings

from tests.fakes.keyring_backend import MemoryKeyring
from tests.fakes.server_fixtures import fake_server  # noqa: F401  (fixture)

# Hypothesis fails an example slower than 200 ms by default: an assertion on wall-clock
# time, which a loaded machine (2 cores, several test runs) breaks. No test of ours has
# a deadline; a hang is what pytest-timeout (pyproject.toml) is for.
settings.register_profile("cairn", deadline=None)
settings.load_profile("cairn")

# Markers for what only Linux has (pyproject.toml): the reason each is skipped elsewhere.
LINUX_ONLY = {
    "real_keyring": "the Secret Service (gnome-keyring on D-Bus) is Linux's",
    "xvfb": "an X server (Xvfb) is Linux's; Windows and macOS always have a screen",
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if sys.platform.startswith("linux"):
        return
    for item in items:
        for marker, reason in LINUX_ONLY.items():
            if item.get_closest_marker(marker):
                item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(autouse=True)
def cairn_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point every Cairn folder at a temporary directory, and hide the developer's own key."""
    home = tmp_path / "cairn-home"
    monkeypatch.setenv("CAIRN_HOME", str(home))
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture(autouse=True)
def memory_keyring(request: pytest.FixtureRequest) -> Iterator[MemoryKeyring | None]:
    """Unit tests use an in-memory keyring; `real_keyring` tests keep the system's."""
    if request.node.get_closest_marker("real_keyring"):
        yield None
        return
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


@pytest.fixture(autouse=True)
def fail_on_error_logs(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """An ERROR log a test did not expect fails it.

    A test that provokes an error on purpose reads the records it expects and
    then calls `caplog.clear()`.
    """
    caplog.set_level(logging.INFO)
    yield
    errors = [record for record in caplog.get_records("call") if record.levelno >= logging.ERROR]
    if errors:
        lines = "\n".join(f"{r.name}: {r.getMessage()}" for r in errors)
        pytest.fail(f"unexpected error logs:\n{lines}")
