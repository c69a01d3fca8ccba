"""The fake server ends a stream with each stop reason as the API does, read through the
real SDK: max_tokens when the script is longer than `max_tokens`, a refusal's
stop_details, and the others as scripted. Also: the exact count can be stopped."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import anthropic
import pytest

from app.core.errors import RequestStoppedError
from app.llm.anthropic_provider import AnthropicProvider
from app.llm.provider import CancelToken, ChatRequest, StreamCallbacks
from tests.fakes.anthropic_server import FakeAnthropicServer, count_text_tokens

KEY = "sk-ant-api03-test-key-0123456789abcdef"
MESSAGES = [{"role": "user", "content": "Tell me about cairns."}]


@pytest.fixture
def provider(fake_server: FakeAnthropicServer) -> Iterator[AnthropicProvider]:
    provider = AnthropicProvider(KEY, fake_server.base_url)
    yield provider
    provider.close()


def model_id(fake_server: FakeAnthropicServer) -> str:
    return fake_server.models[0].id


@pytest.mark.parametrize(
    "stop_reason",
    ["end_turn", "stop_sequence", "pause_turn", "refusal", "model_context_window_exceeded"],
)
def test_a_scripted_stop_reason_reaches_the_provider(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider, stop_reason: str
) -> None:
    fake_server.add_reply("Some text.", stop_reason=stop_reason)
    request = ChatRequest(model_id(fake_server), MESSAGES, 256)
    result = provider.stream_reply(request, StreamCallbacks(), CancelToken())
    assert (result.text, result.stop_reason) == ("Some text.", stop_reason)


def test_a_reply_longer_than_max_tokens_is_cut_there(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    long_text = " ".join(f"word{index}" for index in range(300))
    fake_server.add_reply(long_text)
    received: list[str] = []
    request = ChatRequest(model_id(fake_server), MESSAGES, 50)
    result = provider.stream_reply(request, StreamCallbacks(on_text=received.append), CancelToken())
    assert result.stop_reason == "max_tokens"
    assert long_text.startswith(result.text) and result.text == "".join(received)
    # The thinking before it counts against max_tokens too (the SDK's ThinkingConfigParam).
    assert 20 <= count_text_tokens(result.text) <= 50
    assert result.usage is not None and result.usage.output_tokens <= 50


def test_a_refusal_carries_its_stop_details(fake_server: FakeAnthropicServer) -> None:
    fake_server.add_reply("I", stop_reason="refusal")
    client = anthropic.Anthropic(api_key=KEY, base_url=fake_server.base_url)
    with client.messages.stream(
        model=model_id(fake_server), max_tokens=64, messages=MESSAGES
    ) as stream:
        final = stream.get_final_message()
    assert final.stop_reason == "refusal"
    assert final.stop_details is not None and final.stop_details.type == "refusal"


def test_the_exact_count_tells_its_retries_and_stops_at_once(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    fake_server.add_error(529, retry_after=600, path="/v1/messages/count_tokens")
    cancel = CancelToken()
    retries: list[tuple[int, float | None]] = []
    retried = threading.Event()
    errors: list[BaseException] = []

    def on_retry(attempt: int, wait: float | None) -> None:
        retries.append((attempt, wait))
        retried.set()

    def count() -> None:
        try:
            provider.count_tokens(
                ChatRequest(model_id(fake_server), MESSAGES, 64), cancel=cancel, on_retry=on_retry
            )
        except BaseException as error:
            errors.append(error)

    worker = threading.Thread(target=count)
    worker.start()
    assert retried.wait(10)
    cancel.cancel()
    worker.join(20)  # ended by the cancel: the 10-minute wait alone would outlast this
    assert not worker.is_alive()
    assert retries == [(2, 600.0)]
    assert len(errors) == 1 and isinstance(errors[0], RequestStoppedError)
    assert len(fake_server.requests_to("/v1/messages/count_tokens")) == 1
