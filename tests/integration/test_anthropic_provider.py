"""AnthropicProvider against the fake server, through the real SDK (never mocked)."""

from __future__ import annotations

import contextlib
import json
import logging
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import anthropic
import pytest

from app.core.catalog import (
    UNKNOWN_MODEL_CONTEXT_WINDOW,
    UNKNOWN_MODEL_MAX_OUTPUT,
    ModelInfo,
    find_model,
)
from app.core.errors import (
    ApiError,
    ApiKeyRejectedError,
    BadRequestError,
    ConnectionFailedError,
    ModelNotFoundError,
    OutOfCreditError,
    OverloadedError,
    PermissionDeniedError,
    RateLimitedError,
    RequestTooLargeError,
    ServerError,
    SpendLimitError,
    StreamInterruptedError,
)
from app.core.models import Usage
from app.llm.anthropic_errors import partial_text_of
from app.llm.anthropic_provider import AnthropicProvider
from app.llm.provider import CancelToken, ChatRequest, ReplyResult, StreamCallbacks
from tests.fakes.anthropic_server import (
    COUNT_TOKENS_PATH,
    MESSAGES_PATH,
    MODELS_PATH,
    FakeAnthropicServer,
    count_text_tokens,
)

KEY = "sk-ant-provider-test-key"
MODEL = "claude-test-model"
REQUEST = ChatRequest(
    model=MODEL,
    messages=[{"role": "user", "content": "Tell me about cairns."}],
    max_tokens=256,
)


@dataclass
class Recorder:
    """StreamCallbacks that remember what the provider reported."""

    texts: list[str] = field(default_factory=list)
    retries: list[tuple[int, float | None]] = field(default_factory=list)
    first_text: threading.Event = field(default_factory=threading.Event)
    retried: threading.Event = field(default_factory=threading.Event)

    def callbacks(self) -> StreamCallbacks:
        return StreamCallbacks(on_text=self._on_text, on_retry=self._on_retry)

    def _on_text(self, text: str) -> None:
        self.texts.append(text)
        self.first_text.set()

    def _on_retry(self, attempt: int, wait: float | None) -> None:
        self.retries.append((attempt, wait))
        self.retried.set()


@contextlib.contextmanager
def provider_for(
    server: FakeAnthropicServer, *, max_retries: int = 2, timeout: float = 600
) -> Iterator[AnthropicProvider]:
    provider = AnthropicProvider(KEY, server.base_url, max_retries=max_retries, timeout=timeout)
    try:
        yield provider
    finally:
        provider.close()


@pytest.fixture
def provider(fake_server: FakeAnthropicServer) -> Iterator[AnthropicProvider]:
    with provider_for(fake_server) as provider:
        yield provider


@pytest.fixture
def provider_without_retries(fake_server: FakeAnthropicServer) -> Iterator[AnthropicProvider]:
    with provider_for(fake_server, max_retries=0) as provider:
        yield provider


def _stream(provider: AnthropicProvider, recorder: Recorder | None = None) -> ReplyResult:
    return provider.stream_reply(REQUEST, (recorder or Recorder()).callbacks(), CancelToken())


def _stream_failure(provider: AnthropicProvider, recorder: Recorder | None = None) -> ApiError:
    with pytest.raises(ApiError) as caught:
        _stream(provider, recorder)
    return caught.value


class ConnectionCounter:
    """Counts the TCP connections the client opened, from httpcore's debug log."""

    def __init__(self, caplog: pytest.LogCaptureFixture) -> None:
        self._caplog = caplog
        caplog.set_level(logging.DEBUG, logger="httpcore2.connection")

    @property
    def opened(self) -> int:
        return sum(
            record.name == "httpcore2.connection"
            and record.getMessage().startswith("connect_tcp.complete")
            for record in self._caplog.records
        )


@pytest.fixture
def connections(caplog: pytest.LogCaptureFixture) -> ConnectionCounter:
    return ConnectionCounter(caplog)


class StreamInThread:
    """Runs `stream_reply` on a worker thread, as ChatWorker does, for cancel tests."""

    def __init__(self, provider: AnthropicProvider, cancel: CancelToken) -> None:
        self.recorder = Recorder()
        self.result: ReplyResult | None = None
        self.error: BaseException | None = None
        self._thread = threading.Thread(
            target=self._run, args=(provider, cancel), name="stream-reply"
        )

    def _run(self, provider: AnthropicProvider, cancel: CancelToken) -> None:
        try:
            self.result = provider.stream_reply(REQUEST, self.recorder.callbacks(), cancel)
        except BaseException as error:
            self.error = error

    def start(self) -> StreamInThread:
        self._thread.start()
        return self

    def finished_within(self, seconds: float) -> bool:
        self._thread.join(seconds)
        return not self._thread.is_alive()


# --- replies --------------------------------------------------------------------------


def test_a_streamed_reply_arrives_delta_by_delta_with_usage(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    fake_server.add_reply("Stones piled by walkers.", chunks=["Stones ", "piled by ", "walkers."])
    recorder = Recorder()

    result = _stream(provider, recorder)

    assert recorder.texts == ["Stones ", "piled by ", "walkers."]
    assert result.text == "Stones piled by walkers."
    assert result.stop_reason == "end_turn"
    assert result.model == MODEL
    assert not result.cancelled
    body = fake_server.requests_to(MESSAGES_PATH)[0].body
    assert result.usage == Usage(
        input_tokens=fake_server.count_input_tokens(body),
        output_tokens=count_text_tokens("Stones piled by walkers."),
    )
    assert recorder.retries == []


def test_the_request_carries_the_key_the_conversation_and_the_system_prompt(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    system = [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}]
    request = ChatRequest(model=MODEL, messages=REQUEST.messages, max_tokens=99, system=system)

    provider.stream_reply(request, StreamCallbacks(), CancelToken())

    (sent,) = fake_server.requests_to(MESSAGES_PATH)
    assert sent.api_key == KEY
    assert sent.headers["anthropic-version"]
    assert sent.body["model"] == MODEL
    assert sent.body["max_tokens"] == 99
    assert sent.body["messages"] == [{"role": "user", "content": "Tell me about cairns."}]
    assert sent.body["system"] == system
    assert sent.body["stream"] is True


def test_each_turn_goes_as_one_whole_body_and_again_whole_on_a_retry(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    """The body is sent in pieces (the history as sent before, the new turns): at the
    server each request is one plain body of its `Content-Length`, never chunked, the
    whole conversation in it — a retry's too (the pieces are sent again from the start)."""
    turns: list[dict[str, Any]] = []
    for number in range(4):
        turns = [*turns, {"role": "user", "content": f"Question {number}: cairns? ✓"}]
        if number == 2:
            fake_server.add_error(529, retry_after_ms=1)
        fake_server.add_reply(f"Answer {number}.")
        request = ChatRequest(model=MODEL, messages=turns, max_tokens=99, system="Be brief.")
        result = provider.stream_reply(request, StreamCallbacks(), CancelToken())
        turns = [*turns, {"role": "assistant", "content": result.text}]
    sent = fake_server.requests_to(MESSAGES_PATH)
    assert len(sent) == 5  # four turns, one of them tried twice
    for request in sent:
        assert "transfer-encoding" not in request.headers
        expected = {
            "messages": request.body["messages"],
            "model": MODEL,
            "max_tokens": 99,
            "system": "Be brief.",
            "stream": True,
        }
        compact = json.dumps(expected, ensure_ascii=False, separators=(",", ":")).encode()
        assert int(request.headers["content-length"]) == len(compact)
    asked = [[turn["content"] for turn in request.body["messages"]] for request in sent]
    assert [len(turns) for turns in asked] == [1, 3, 5, 5, 7]
    assert asked[-1] == [turn["content"] for turn in turns[:-1]]


def test_an_empty_system_prompt_is_left_out(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    _stream(provider)

    assert "system" not in fake_server.requests_to(MESSAGES_PATH)[0].body


def test_the_key_and_base_url_come_from_the_sdk_variables(
    fake_server: FakeAnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-from-environment")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_server.base_url)
    provider = AnthropicProvider(None, None)
    try:
        provider.check_key()
    finally:
        provider.close()

    assert fake_server.requests[0].api_key == "sk-ant-from-environment"


def test_a_key_that_is_rejected_by_the_server(fake_server: FakeAnthropicServer) -> None:
    fake_server.valid_keys = {"sk-ant-the-right-one"}
    provider = AnthropicProvider("sk-ant-the-wrong-one", fake_server.base_url)
    try:
        with pytest.raises(ApiKeyRejectedError) as caught:
            provider.check_key()
        with pytest.raises(ApiKeyRejectedError) as during_chat:
            _stream(provider)
    finally:
        provider.close()

    for error in (caught.value, during_chat.value):
        assert "not accepted" in error.message
        assert "sk-ant-the-wrong-one" not in error.message
        assert "sk-ant-the-wrong-one" not in (error.detail or "")
        assert "authentication_error" in (error.detail or "")


def test_check_key_passes_with_a_good_key(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    fake_server.valid_keys = {KEY}

    provider.check_key()

    (request,) = fake_server.requests
    assert request.path == MODELS_PATH
    assert request.query["limit"] == ["1"]


# --- errors after the SDK's own retries ------------------------------------------------


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (400, BadRequestError),
        (401, ApiKeyRejectedError),
        (403, PermissionDeniedError),
        (404, ModelNotFoundError),
        (413, RequestTooLargeError),
    ],
)
def test_errors_the_user_must_fix_are_not_retried(
    fake_server: FakeAnthropicServer,
    provider: AnthropicProvider,
    status: int,
    expected: type[ApiError],
) -> None:
    fake_server.add_error(status)
    recorder = Recorder()

    error = _stream_failure(provider, recorder)

    assert type(error) is expected
    assert not error.retryable
    assert recorder.retries == []
    assert len(fake_server.requests) == 1
    assert f"HTTP {status}" in (error.detail or "")


# Bodies as the API sends them. The credit one is a plain 400 with no code, quoted by
# users in https://github.com/anthropics/claude-code/issues/867; the spend limits and
# the hold are in https://platform.claude.com/docs/en/api/errors ("HTTP errors": a 400
# for a spend limit you set; a 429 `rate_limit_error` for the tier's monthly cap,
# without retry-after, `error.details.error_code` "enforced_spend_limit_reached") and
# in the SDK's error classes (`EnforcedSpendLimitReachedError`, `OrganizationOnHoldError`).
@pytest.mark.parametrize(
    ("status", "message", "error_code", "expected", "title"),
    [
        (
            400,
            "Your credit balance is too low to access the Anthropic API. Please go to "
            "Plans & Billing to upgrade or purchase credits.",
            None,
            OutOfCreditError,
            "No credit left",
        ),
        (
            400,
            "You have reached your specified API usage limits. You will regain access on "
            "2026-12-01 at 00:00 UTC.",
            None,
            SpendLimitError,
            "Spending limit reached",
        ),
        (
            429,
            "Your organization has reached its monthly usage limit.",
            "enforced_spend_limit_reached",
            SpendLimitError,
            "Spending limit reached",
        ),
        (
            400,
            "This organization has been disabled.",
            "organization_on_hold",
            PermissionDeniedError,
            "Account on hold",
        ),
    ],
)
def test_account_problems_are_said_and_never_retried(
    fake_server: FakeAnthropicServer,
    provider: AnthropicProvider,
    status: int,
    message: str,
    error_code: str | None,
    expected: type[ApiError],
    title: str,
) -> None:
    # Queued three times: a retry, the SDK's included, would take the second one.
    fake_server.add_error(status, message, error_code=error_code, times=3)
    recorder = Recorder()

    error = _stream_failure(provider, recorder)

    assert isinstance(error, expected)
    assert error.title == title
    assert not error.retryable
    assert recorder.retries == []
    assert len(fake_server.requests) == 1
    assert "busy" not in error.message


def test_a_plain_rate_limit_is_still_retried_by_the_sdk(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    fake_server.add_error(429, retry_after_ms=1, error_code="ramp_limit_exceeded")
    fake_server.add_reply("Back again.")

    assert _stream(provider).text == "Back again."
    assert len(fake_server.requests) == 2


@pytest.mark.parametrize(
    ("status", "expected"),
    [(429, RateLimitedError), (500, ServerError), (529, OverloadedError)],
)
def test_transient_errors_are_retried_then_reported(
    fake_server: FakeAnthropicServer,
    provider: AnthropicProvider,
    status: int,
    expected: type[ApiError],
) -> None:
    fake_server.add_error(status, retry_after_ms=1, times=3)
    recorder = Recorder()

    error = _stream_failure(provider, recorder)

    assert type(error) is expected
    assert error.retryable
    assert len(fake_server.requests) == 3  # the first attempt and two retries
    assert recorder.retries == [(2, 0.001), (3, 0.001)]
    assert partial_text_of(error) == ""


def test_a_rate_limit_says_how_long_to_wait(
    fake_server: FakeAnthropicServer, provider_without_retries: AnthropicProvider
) -> None:
    fake_server.add_error(429, retry_after=30)

    error = _stream_failure(provider_without_retries)

    assert isinstance(error, RateLimitedError)
    assert error.retry_after == 30
    assert "about 30 seconds" in error.message


def test_a_retry_is_reported_and_then_the_reply_arrives(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    fake_server.add_error(529, retry_after_ms=1)
    fake_server.add_reply("Here after all.")
    recorder = Recorder()

    result = _stream(provider, recorder)

    assert recorder.retries == [(2, 0.001)]
    assert result.text == "Here after all."
    retry_counts = [r.headers["x-stainless-retry-count"] for r in fake_server.requests]
    assert retry_counts == ["0", "1"]


def test_a_retry_without_a_server_given_wait_reports_the_sdk_backoff(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    # A connection dropped before any answer: the SDK retries it after its own backoff
    # (about half a second for a first retry), and that wait is what is reported.
    fake_server.add_dropped_connection()
    fake_server.add_reply("Reconnected.")
    recorder = Recorder()

    result = _stream(provider, recorder)

    ((attempt, wait),) = recorder.retries
    assert attempt == 2
    assert wait is not None and 0 < wait < 1
    assert result.text == "Reconnected."


def test_the_last_failure_is_not_announced_as_a_retry(
    fake_server: FakeAnthropicServer, provider_without_retries: AnthropicProvider
) -> None:
    fake_server.add_error(529)
    recorder = Recorder()

    _stream_failure(provider_without_retries, recorder)

    assert recorder.retries == []


# --- failures mid-stream keep the partial text ----------------------------------------


@pytest.mark.parametrize(
    ("error_type", "expected"),
    [
        ("overloaded_error", OverloadedError),
        ("api_error", ServerError),
        ("mystery_error", StreamInterruptedError),
    ],
)
def test_an_error_event_mid_stream_keeps_the_partial_text(
    fake_server: FakeAnthropicServer,
    provider: AnthropicProvider,
    error_type: str,
    expected: type[ApiError],
) -> None:
    fake_server.add_stream_error("Cairns mark ", error_type=error_type)
    recorder = Recorder()

    error = _stream_failure(provider, recorder)

    assert type(error) is expected
    assert partial_text_of(error) == "Cairns mark "
    assert "".join(recorder.texts) == "Cairns mark "
    assert len(fake_server.requests) == 1  # a stream that began is never retried


def test_a_dropped_connection_mid_stream_keeps_the_partial_text(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    fake_server.add_dropped_connection("Half of it ")

    error = _stream_failure(provider)

    assert isinstance(error, StreamInterruptedError)
    assert partial_text_of(error) == "Half of it "
    assert error.retryable


def test_a_stalled_stream_times_out_with_the_partial_text(
    fake_server: FakeAnthropicServer,
) -> None:
    fake_server.add_reply("first then nothing", chunk_delay=60)
    # Long enough for the headers and the first delta even on a busy machine.
    with provider_for(fake_server, max_retries=0, timeout=1) as provider:
        error = _stream_failure(provider)

    assert isinstance(error, StreamInterruptedError)
    assert partial_text_of(error) == "first "


def test_a_server_that_never_answers_times_out(fake_server: FakeAnthropicServer) -> None:
    fake_server.add_reply("too late", first_byte_delay=60)
    with provider_for(fake_server, max_retries=0, timeout=0.3) as provider:
        error = _stream_failure(provider)

    assert isinstance(error, ConnectionFailedError)
    assert error.title == "Claude took too long"


def test_a_server_that_is_not_listening_is_a_connection_failure() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    provider = AnthropicProvider(KEY, f"http://127.0.0.1:{closed_port}", max_retries=0)
    try:
        error = _stream_failure(provider)
        with pytest.raises(ConnectionFailedError):
            provider.list_models()
    finally:
        provider.close()

    assert isinstance(error, ConnectionFailedError)
    assert error.title == "Can't reach Claude"
    assert error.message == "Check your internet connection and try again."
    assert error.retryable


# --- cancelling -----------------------------------------------------------------------


def test_cancel_between_slow_chunks_returns_promptly_with_the_text_so_far(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    fake_server.add_reply("one two three four", chunk_delay=60)
    cancel = CancelToken()
    worker = StreamInThread(provider, cancel).start()

    assert worker.recorder.first_text.wait(10)
    cancel.cancel()  # the server now sits 60 s before its next chunk

    assert worker.finished_within(10)
    assert worker.error is None
    assert worker.result is not None
    assert worker.result.cancelled
    assert worker.result.text == "one "
    assert worker.result.usage is None


def test_cancel_before_the_server_answers_returns_promptly(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    fake_server.add_reply("never sent", first_byte_delay=60)
    cancel = CancelToken()
    worker = StreamInThread(provider, cancel).start()

    assert fake_server.wait_for_requests(1)
    cancel.cancel()

    assert worker.finished_within(10)
    assert worker.error is None
    assert worker.result is not None
    assert worker.result.cancelled
    assert worker.result.text == ""
    assert len(fake_server.requests) == 1  # the cut connection was not retried


def test_a_cancelled_token_sends_nothing(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    cancel = CancelToken()
    cancel.cancel()

    result = provider.stream_reply(REQUEST, StreamCallbacks(), cancel)

    assert result.cancelled
    assert fake_server.requests == []


def test_cancel_during_a_retry_stops_the_retries(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    fake_server.add_error(529, retry_after_ms=1, times=3)
    cancel = CancelToken()
    callbacks = StreamCallbacks(on_retry=lambda _attempt, _wait: cancel.cancel())

    result = provider.stream_reply(REQUEST, callbacks, cancel)

    assert result.cancelled
    assert len(fake_server.requests) == 1


def test_cancel_during_a_long_retry_wait_returns_at_once(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    fake_server.add_error(529, retry_after=600, times=3)
    cancel = CancelToken()
    worker = StreamInThread(provider, cancel).start()

    assert worker.recorder.retried.wait(10)  # told before the SDK's 10-minute wait
    cancel.cancel()

    # Ended by the cancel: the SDK's wait alone would outlast this.
    assert worker.finished_within(20)
    assert worker.error is None
    assert worker.result is not None and worker.result.cancelled
    assert worker.recorder.retries == [(2, 600.0)]
    assert len(fake_server.requests) == 1


def test_cancel_after_the_reply_is_harmless_and_the_provider_goes_on(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    cancel = CancelToken()
    first = provider.stream_reply(REQUEST, StreamCallbacks(), cancel)
    cancel.cancel()

    second = _stream(provider)

    assert not first.cancelled
    assert not second.cancelled
    assert second.text == first.text


def test_concurrent_calls_report_to_their_own_callbacks(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    fake_server.add_reply("slow reply", chunk_delay=60)
    slow_cancel = CancelToken()
    slow = StreamInThread(provider, slow_cancel).start()
    assert slow.recorder.first_text.wait(10)

    fake_server.add_error(529, retry_after_ms=1)
    fake_server.add_reply("quick reply")
    quick = Recorder()
    result = _stream(provider, quick)
    slow_cancel.cancel()

    assert slow.finished_within(10)
    assert result.text == "quick reply"
    assert quick.retries == [(2, 0.001)]
    assert slow.recorder.retries == []
    assert slow.recorder.texts == ["slow "]


# --- one pool of kept-alive connections -------------------------------------------------


def test_calls_after_the_first_reuse_its_connection(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider, connections: ConnectionCounter
) -> None:
    first = _stream(provider)
    second = _stream(provider)
    provider.count_tokens(REQUEST)
    _complete(provider)
    provider.list_models()

    assert first.text and second.text
    assert len(fake_server.requests) == 5
    assert connections.opened == 1


def test_stop_during_a_stalled_stream_on_a_reused_connection_returns_at_once(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider, connections: ConnectionCounter
) -> None:
    _stream(provider)  # opens the connection and leaves it in the pool
    fake_server.add_reply("one two three", chunk_delay=60)
    cancel = CancelToken()
    worker = StreamInThread(provider, cancel).start()
    assert worker.recorder.first_text.wait(10)
    assert connections.opened == 1  # the stalled stream runs on the reused connection

    cancel.cancel()  # the server now sits 60 s before its next chunk

    assert worker.finished_within(30)  # ended by the stop, not by the server
    assert worker.error is None
    assert worker.result is not None and worker.result.cancelled
    assert worker.result.text == "one "


def _two_idle_connections(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider, connections: ConnectionCounter
) -> None:
    """Leave two connections in the pool: a slow reply holds one while a quick one opens another."""
    fake_server.add_reply("slow then done", chunk_delay=0.3)
    slow = StreamInThread(provider, CancelToken()).start()
    assert slow.recorder.first_text.wait(10)
    _stream(provider)
    assert slow.finished_within(10)
    assert connections.opened == 2


def test_stop_mid_stream_shuts_only_that_streams_connection(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider, connections: ConnectionCounter
) -> None:
    _two_idle_connections(fake_server, provider, connections)
    fake_server.add_reply("one two three", chunk_delay=60)
    cancel = CancelToken()
    stalled = StreamInThread(provider, cancel).start()
    assert stalled.recorder.first_text.wait(10)
    cancel.cancel()
    assert stalled.finished_within(5)

    after = _stream(provider)

    assert after.text
    assert connections.opened == 2  # the other pooled connection was left alone, and reused


def test_stop_before_the_first_byte_on_a_reused_connection_returns_at_once(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider, connections: ConnectionCounter
) -> None:
    _stream(provider)
    fake_server.add_reply("never sent", first_byte_delay=60)
    cancel = CancelToken()
    worker = StreamInThread(provider, cancel).start()
    assert fake_server.wait_for_requests(2)
    assert connections.opened == 1

    cancel.cancel()

    assert worker.finished_within(30)  # ended by the stop, not by the server's 60 s
    assert worker.result is not None and worker.result.cancelled
    assert len(fake_server.requests) == 2  # the cut connection was not retried


def test_a_connection_cut_by_stop_does_not_go_back_into_the_pool(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider, connections: ConnectionCounter
) -> None:
    fake_server.add_reply("one two three", chunk_delay=60)
    cancel = CancelToken()
    worker = StreamInThread(provider, cancel).start()
    assert worker.recorder.first_text.wait(10)
    cancel.cancel()
    assert worker.finished_within(5)

    after = _stream(provider)
    again = _stream(provider)

    assert not after.cancelled and after.text
    assert again.text == after.text
    assert connections.opened == 2  # one cut by Stop, one fresh and then reused


def test_idle_connections_shut_by_a_stop_before_the_first_byte_are_not_reused(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider, connections: ConnectionCounter
) -> None:
    _two_idle_connections(fake_server, provider, connections)
    # A Stop before the first byte on a reused connection shuts the idle one too.
    fake_server.add_reply("never sent", first_byte_delay=60)
    cancel = CancelToken()
    stalled = StreamInThread(provider, cancel).start()
    assert fake_server.wait_for_requests(3)
    cancel.cancel()
    assert stalled.finished_within(5)

    after = _stream(provider)

    assert not after.cancelled and after.text
    assert connections.opened == 3


def test_stop_leaves_the_other_call_on_the_provider_alone(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider, connections: ConnectionCounter
) -> None:
    fake_server.add_reply("stalled reply", chunk_delay=60)
    cancel = CancelToken()
    stalled = StreamInThread(provider, cancel).start()
    assert stalled.recorder.first_text.wait(10)
    summary = _complete(provider)  # the summarizer, meanwhile, on a second connection

    cancel.cancel()
    assert stalled.finished_within(5)
    again = _complete(provider)

    assert stalled.result is not None and stalled.result.cancelled
    assert summary == again
    assert connections.opened == 2


# --- models and tokens ----------------------------------------------------------------


def test_list_models_reads_every_page(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    fake_server.models = [
        ModelInfo(
            id=f"claude-model-{n}",
            display_name=f"Claude Model {n}",
            max_input_tokens=100_000 + n,
            max_tokens=8_000 + n,
        )
        for n in range(5)
    ]
    fake_server.max_page_size = 2

    models = provider.list_models()

    assert models == fake_server.models
    assert len(fake_server.requests_to(MODELS_PATH)) == 3


def test_limits_a_server_leaves_out_come_from_the_table_not_a_guess(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    haiku = find_model("claude-haiku-4-5", [])
    assert haiku is not None
    fake_server.models = [
        haiku,
        ModelInfo(id="claude-compatible", display_name="Compatible", line="sonnet"),
    ]
    fake_server.omitted_model_fields = {"max_input_tokens", "max_tokens", "line"}

    models = provider.list_models()

    assert models[0] == haiku  # the documented 200k / 64k, and its line, from the table
    assert (models[1].max_input_tokens, models[1].max_tokens) == (
        UNKNOWN_MODEL_CONTEXT_WINDOW,
        UNKNOWN_MODEL_MAX_OUTPUT,
    )
    assert models[1].line is None


def test_deprecated_and_retired_models_as_the_server_lists_them(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    fake_server.models = [
        ModelInfo(id="claude-old", display_name="Old", line="sonnet", deprecated=True),
        ModelInfo(id="claude-now", display_name="Now", line="opus"),
    ]

    models = provider.list_models()

    assert [(model.id, model.deprecated, model.line) for model in models] == [
        ("claude-old", True, "sonnet"),
        ("claude-now", False, "opus"),
    ]


def test_count_tokens_uses_the_server_count(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    request = ChatRequest(model=MODEL, messages=REQUEST.messages, max_tokens=10, system="Be kind.")

    counted = provider.count_tokens(request)
    replied = provider.stream_reply(request, StreamCallbacks(), CancelToken())

    assert replied.usage is not None
    assert counted == replied.usage.input_tokens
    body = fake_server.requests_to("/v1/messages/count_tokens")[0].body
    assert "max_tokens" not in body
    assert counted == fake_server.count_input_tokens(body)


def test_errors_from_models_and_counting_are_api_errors(
    fake_server: FakeAnthropicServer, provider_without_retries: AnthropicProvider
) -> None:
    fake_server.add_error(529, path=MODELS_PATH)
    fake_server.add_error(403, path="/v1/messages/count_tokens")

    with pytest.raises(OverloadedError):
        provider_without_retries.list_models()
    with pytest.raises(PermissionDeniedError):
        provider_without_retries.count_tokens(REQUEST)


def test_a_bug_in_a_callback_is_not_disguised_as_an_api_error(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    def broken(_text: str) -> None:
        raise KeyError("a bug in the caller")

    with pytest.raises(KeyError):
        provider.stream_reply(REQUEST, StreamCallbacks(on_text=broken), CancelToken())


# --- complete_structured: one call, the SDK's retries ------------------------------------

SCHEMA = {
    "type": "object",
    "properties": {"narrative": {"type": "string"}},
    "required": ["narrative"],
}


def _complete(provider: AnthropicProvider, **options: Any) -> dict[str, Any]:
    return provider.complete_structured(
        model=MODEL,
        system="Summarize.",
        prompt="<transcript>\n[#1 · user · 2026-03-05 09:00]\nSee notes.md.\n</transcript>",
        tool_name="record_summary",
        tool_description="Record the summary.",
        input_schema=SCHEMA,
        max_tokens=500,
        **options,
    )


def test_complete_structured_retries_once_by_default_and_says_so(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    fake_server.add_error(529, retry_after_ms=1, path=MESSAGES_PATH)
    recorder = Recorder()

    answer = _complete(provider, on_retry=recorder.callbacks().on_retry)

    assert answer["narrative"].startswith("Summary of messages #1–#1.")
    assert recorder.retries == [(2, 0.001)]
    retry_counts = [r.headers["x-stainless-retry-count"] for r in fake_server.requests]
    assert retry_counts == ["0", "1"]


def test_complete_structured_gives_up_after_its_retry(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    fake_server.add_error(529, retry_after_ms=1, path=MESSAGES_PATH, times=2)

    with pytest.raises(OverloadedError):
        _complete(provider)

    assert len(fake_server.requests) == 2


def test_complete_structured_takes_its_number_of_retries(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    fake_server.add_error(429, retry_after_ms=1, path=MESSAGES_PATH, times=3)
    recorder = Recorder()

    with pytest.raises(RateLimitedError):
        _complete(provider, max_retries=0, on_retry=recorder.callbacks().on_retry)
    _complete(provider, max_retries=2, on_retry=recorder.callbacks().on_retry)

    assert len(fake_server.requests) == 4
    assert recorder.retries == [(2, 0.001), (3, 0.001)]


def test_complete_structured_retries_a_timeout_after_the_sdk_backoff(
    fake_server: FakeAnthropicServer,
) -> None:
    fake_server.add_tool_fault("timeout", delay=1.2)
    recorder = Recorder()
    with provider_for(fake_server, timeout=0.3) as provider:
        answer = _complete(provider, on_retry=recorder.callbacks().on_retry)

    assert answer["narrative"]
    ((attempt, wait),) = recorder.retries
    assert attempt == 2
    assert wait is not None and 0 < wait < 1


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (400, BadRequestError),
        (401, ApiKeyRejectedError),
        (403, PermissionDeniedError),
        (404, ModelNotFoundError),
        (413, RequestTooLargeError),
    ],
)
def test_complete_structured_never_retries_what_the_user_must_fix(
    fake_server: FakeAnthropicServer,
    provider: AnthropicProvider,
    status: int,
    expected: type[ApiError],
) -> None:
    fake_server.add_error(status, path=MESSAGES_PATH)
    recorder = Recorder()

    with pytest.raises(expected):
        _complete(provider, max_retries=3, on_retry=recorder.callbacks().on_retry)

    assert len(fake_server.requests) == 1
    assert recorder.retries == []


def test_count_tokens_goes_through_the_pool_too(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider, connections: ConnectionCounter
) -> None:
    provider.count_tokens(REQUEST)
    provider.count_tokens(REQUEST)

    assert len(fake_server.requests_to(COUNT_TOKENS_PATH)) == 2
    assert connections.opened == 1


def _gathered_both_ways(server: FakeAnthropicServer, script: Any, **arguments: Any) -> list[Any]:
    """The same scripted reply streamed twice through the real SDK: gathered by its own
    `messages.stream` helper, and by the provider's `GatheredReply` from the raw events of
    `messages.create(stream=True)`, each as a plain dict without its id."""
    from app.llm.reply_stream import GatheredReply

    client = anthropic.Anthropic(api_key=KEY, base_url=server.base_url, max_retries=0)
    script()
    with client.messages.stream(**arguments) as helper:
        expected = helper.get_final_message()
    script()
    reply = GatheredReply()
    with client.messages.create(**arguments, stream=True) as raw:
        for event in raw:
            if event.type == "message_start":
                reply.started(event.message)
            elif event.type == "content_block_start":
                reply.block_started(event.content_block)
            elif event.type == "content_block_delta":
                reply.delta(event.index, event.delta)
            elif event.type == "message_delta":
                reply.message_delta(event)
    gathered = reply.final()
    # All but the id, the server's own for each message.
    return [message.model_dump(exclude={"id"}) for message in (expected, gathered)]


@pytest.mark.parametrize(
    ("model", "thinking"),
    [
        ("claude-haiku-4-5", None),
        ("claude-sonnet-5-5", {"type": "adaptive", "display": "summarized"}),
    ],
)
def test_the_reply_gathered_from_raw_events_is_the_sdks_own_accumulation(
    fake_server: FakeAnthropicServer, model: str, thinking: dict[str, Any] | None
) -> None:
    """Text in chunks, thinking with its signature, a tool call whose input JSON comes in
    pieces, the usage and stop reason of `message_delta`: as the SDK's helper has them."""
    tool = {"name": "lookup", "description": "d", "input_schema": {"type": "object"}}
    arguments: dict[str, Any] = {
        "model": model,
        "max_tokens": 2_000,
        "messages": [{"role": "user", "content": "What is the gate code?"}],
        "tools": [tool],
    }
    if thinking is not None:
        arguments["thinking"] = thinking
    expected, gathered = _gathered_both_ways(
        fake_server,
        lambda: fake_server.add_tool_use(
            "lookup", {"q": "gate", "n": [1, 2]}, tool_id="toolu_x", text_before="Checking."
        ),
        **arguments,
    )
    assert gathered == expected
    assert expected["stop_reason"] == "tool_use"
    kinds = [block["type"] for block in expected["content"]]
    assert kinds[-1] == "tool_use"
    assert kinds[0] == ("text" if thinking is None else "thinking")
    expected, gathered = _gathered_both_ways(
        fake_server,
        lambda: fake_server.add_reply("Stones piled by walkers.", chunks=["Stones ", "piled."]),
        **arguments,
    )
    assert gathered == expected


def test_each_request_is_told_as_it_is_handed_to_httpx(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    """`on_request_sent` (the window shows the turn then: issue 20): once per attempt,
    before the server has it, a retry included."""
    fake_server.add_error(529, retry_after_ms=1)
    fake_server.add_reply("Hello")
    received_when_told: list[int] = []
    callbacks = StreamCallbacks(
        on_request_sent=lambda: received_when_told.append(len(fake_server.requests))
    )

    result = provider.stream_reply(REQUEST, callbacks, CancelToken())

    assert result.text == "Hello"
    assert received_when_told == [0, 1]  # each told before the server had it
