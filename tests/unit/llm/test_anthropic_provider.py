"""What AnthropicProvider decides before any request: key, base URL, and its lazy SDK import."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from app.core.errors import ApiKeyMissingError
from app.llm.anthropic_provider import AnthropicProvider

REPO_ROOT = Path(__file__).resolve().parents[3]


def test_no_key_anywhere_is_api_key_missing() -> None:
    with pytest.raises(ApiKeyMissingError) as caught:
        AnthropicProvider(None, None)

    assert "API key" in caught.value.message


def test_a_blank_key_counts_as_missing() -> None:
    with pytest.raises(ApiKeyMissingError):
        AnthropicProvider("   ", None)


def test_base_url_argument_wins_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")

    explicit = AnthropicProvider("key", "http://127.0.0.1:2")
    from_env = AnthropicProvider("key", None)

    assert explicit.base_url == "http://127.0.0.1:2"
    assert from_env.base_url == "http://127.0.0.1:1"


def test_importing_the_provider_does_not_import_the_sdk() -> None:
    """The SDK takes over a second to import; the window must paint before that."""
    code = (
        "import json, sys\n"
        "import app.llm.anthropic_provider\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('anthropic', 'httpx2', 'httpcore2'))))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        encoding="utf-8",
    )

    assert json.loads(result.stdout) == []
