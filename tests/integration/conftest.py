"""The integration tests' fake server also lists `claude-test-model`, the model they ask for."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from app.core.catalog import FALLBACK_MODELS
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.server_fixtures import TEST_MODEL


@pytest.fixture
def fake_server() -> Iterator[FakeAnthropicServer]:
    """As the shared `fake_server`, listing `TEST_MODEL` after the bundled models."""
    with FakeAnthropicServer(models=(*FALLBACK_MODELS, TEST_MODEL)) as server:
        yield server
