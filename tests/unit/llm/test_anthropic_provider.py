"""What AnthropicProvider decides before any request: key, base URL, and its lazy SDK import."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


_COUNT = st.one_of(st.none(), st.integers(0, 10**6))


def _delta_events() -> st.SearchStrategy[dict[str, Any]]:
    """`message_delta` events as the API sends them, and a few it does not (an object
    where a figure goes, a count missing or of the wrong type)."""
    delta = st.fixed_dictionaries(
        {},
        optional={
            "stop_reason": st.sampled_from([None, "end_turn", "max_tokens", "refusal", 7]),
            "stop_sequence": st.sampled_from([None, "\n\nHuman:"]),
            "stop_details": st.sampled_from(
                [None, {"type": "refusal", "category": "cyber", "explanation": "No."}]
            ),
            "container": st.sampled_from(
                [None, {"id": "c1", "expires_at": "2026-01-01T00:00:00Z"}]
            ),
        },
    )
    usage = st.fixed_dictionaries(
        {},
        optional={
            "output_tokens": st.one_of(st.integers(0, 10**6), st.just("12")),
            "input_tokens": _COUNT,
            "cache_creation_input_tokens": _COUNT,
            "cache_read_input_tokens": _COUNT,
            "server_tool_use": st.sampled_from([None, {"web_search_requests": 1}]),
        },
    )
    return st.fixed_dictionaries({"type": st.just("message_delta"), "delta": delta, "usage": usage})


def _started() -> Any:
    from app.llm.anthropic_provider import _Reply, _typed_event

    reply = _Reply()
    start = {
        "type": "message_start",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-x",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {
                "input_tokens": 120,
                "output_tokens": 1,
                "cache_creation_input_tokens": 5,
                "cache_read_input_tokens": 0,
            },
        },
    }
    reply.started(_typed_event(start).message)
    return reply


@settings(max_examples=300)
@given(_delta_events())
def test_a_plain_message_delta_does_what_the_sdks_event_does(data: dict[str, Any]) -> None:
    """Applied from its JSON (no SDK object made), a `message_delta` leaves the message as
    the SDK's event applied by `message_delta` leaves it; one it cannot apply so (an object
    in it, a figure of the wrong type) is left for the SDK's event, untouched."""
    from app.llm.anthropic_provider import _typed_event

    plain, typed = _started(), _started()
    before = plain.message.model_dump()
    if not plain.plain_message_delta(data):
        assert plain.message.model_dump() == before
        return
    typed.message_delta(_typed_event(data))
    assert plain.message.model_dump() == typed.message.model_dump()
