"""The `fake_server` fixture: a started fake Anthropic API, closed after the test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from app.core.catalog import ModelInfo
from tests.fakes.anthropic_server import FakeAnthropicServer

# The model the wire-format tests (tests/integration) ask for. The fake answers 404
# for a model it does not list, as the API does, so those tests list it.
TEST_MODEL = ModelInfo(
    id="claude-test-model",
    display_name="Claude Test Model",
    max_input_tokens=200_000,
    max_tokens=64_000,
)


@pytest.fixture
def fake_server() -> Iterator[FakeAnthropicServer]:
    """A fresh fake server on a free port; script it, point the SDK at `base_url`."""
    with FakeAnthropicServer() as server:
        yield server
