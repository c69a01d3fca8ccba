"""Fixtures shared by the store's tests: a database path and a fake clock."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.clock import FakeClock


@pytest.fixture
def database(tmp_path: Path) -> Path:
    return tmp_path / "cairn.db"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()
