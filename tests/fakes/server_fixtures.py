"""The `fake_server` fixture: a started fake Anthropic API, closed after the test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.anthropic_server import FakeAnthropicServer


@pytest.fixture
def fake_server() -> Iterator[FakeAnthropicServer]:
    """A fresh fake server on a free port; script it, point the SDK at `base_url`."""
    with FakeAnthropicServer() as server:
        yield server
