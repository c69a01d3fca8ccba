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

# A current model with a 1M window and one with a 200k window, as the models pages say
# (https://platform.claude.com/docs/en/models/sonnet-5-5/overview; Haiku 4.5: 200K): the
# vision limits differ by window (600 images, or 100).
SONNET_5_5 = ModelInfo(
    id="claude-sonnet-5-5",
    display_name="Claude Sonnet 5.5",
    max_input_tokens=1_000_000,
    max_tokens=128_000,
)
HAIKU_4_5 = ModelInfo(
    id="claude-haiku-4-5",
    display_name="Claude Haiku 4.5",
    max_input_tokens=200_000,
    max_tokens=64_000,
)


@pytest.fixture
def fake_server() -> Iterator[FakeAnthropicServer]:
    """A fresh fake server on a free port; script it, point the SDK at `base_url`."""
    with FakeAnthropicServer() as server:
        yield server
