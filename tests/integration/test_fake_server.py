"""The fake Anthropic server speaks the real wire format: the real SDK parses all it sends."""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import pytest

from app.core.catalog import FALLBACK_MODELS, ModelInfo
from tests.fakes.anthropic_server import (
    COUNT_TOKENS_PATH,
    FAKE_MESSAGE_OVERHEAD,
    FAKE_REQUEST_OVERHEAD,
    MESSAGES_PATH,
    MODELS_PATH,
    FakeAnthropicServer,
    MessagesRequest,
    Reply,
    TextBlock,
    ToolUseBlock,
    count_text_tokens,
)
from tests.fakes.server_fixtures import TEST_MODEL

REPO_ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-ant-fake-test-key"
MODEL = "claude-test-model"
HELLO: list[Any] = [{"role": "user", "content": "Hello there"}]


@pytest.fixture
def sdk(fake_server: FakeAnthropicServer) -> Iterator[anthropic.Anthropic]:
    """The real SDK pointed at the fake, without retries so each fault shows as it is."""
    client = anthropic.Anthropic(api_key=KEY, base_url=fake_server.base_url, max_retries=0)
    yield client
    client.close()


def _raw_request(
    server: FakeAnthropicServer,
    method: str,
    path: str,
    body: Any = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, dict[str, str], bytes]:
    """One request with the standard library, for what the SDK would hide or add itself."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        payload = json.dumps(body).encode() if body is not None else None
        sent = {"content-type": "application/json", **(headers or {})}
        connection.request(method, path, body=payload, headers=sent)
        response = connection.getresponse()
        data = response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, data
    finally:
        connection.close()


_AUTHORIZED = {"x-api-key": KEY, "anthropic-version": "2023-06-01"}


# --- replies --------------------------------------------------------------------------


def test_a_streamed_reply_parses_with_the_sdk_accumulator(
    fake_server: FakeAnthropicServer, sdk: anthropic.Anthropic
) -> None:
    fake_server.add_reply("Hello there, world!", chunks=["Hel", "lo there, ", "world!"])

    with sdk.messages.stream(model=MODEL, max_tokens=100, messages=HELLO) as stream:
        deltas = list(stream.text_stream)
        message = stream.get_final_message()

    assert deltas == ["Hel", "lo there, ", "world!"]
    assert message.content[0].type == "text"
    assert message.content[0].text == "Hello there, world!"
    assert message.stop_reason == "end_turn"
    assert message.model == MODEL
    assert message.usage.input_tokens == fake_server.count_input_tokens(
        {"messages": HELLO, "model": MODEL}
    )
    assert message.usage.output_tokens == count_text_tokens("Hello there, world!")


def test_the_stream_sends_the_events_in_the_real_order(fake_server: FakeAnthropicServer) -> None:
    fake_server.add_reply("one two three")
    body = {"model": MODEL, "max_tokens": 50, "messages": HELLO, "stream": True}

    status, headers, data = _raw_request(fake_server, "POST", MESSAGES_PATH, body, _AUTHORIZED)

    events = [
        line.removeprefix("event: ")
        for line in data.decode().splitlines()
        if line.startswith("event: ")
    ]
    assert status == 200
    assert headers["content-type"].startswith("text/event-stream")
    assert headers["request-id"].startswith("req_")
    assert events == [
        "message_start",
        "content_block_start",
        "ping",
        "content_block_delta",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]


def test_a_json_reply_without_streaming(
    fake_server: FakeAnthropicServer, sdk: anthropic.Anthropic
) -> None:
    fake_server.add_reply("Short answer.", stop_reason="max_tokens")

    message = sdk.messages.create(model=MODEL, max_tokens=100, messages=HELLO)

    assert message.content[0].type == "text"
    assert message.content[0].text == "Short answer."
    assert message.stop_reason == "max_tokens"
    assert message.id.startswith("msg_")
    assert message.usage.output_tokens == count_text_tokens("Short answer.")


def test_without_a_script_the_reply_is_a_deterministic_echo(
    fake_server: FakeAnthropicServer, sdk: anthropic.Anthropic
) -> None:
    messages: list[Any] = [{"role": "user", "content": "Is the river cold?"}]

    first = sdk.messages.create(model=MODEL, max_tokens=100, messages=messages)
    second = sdk.messages.create(model=MODEL, max_tokens=100, messages=messages)

    assert first.content[0].type == "text"
    assert "Is the river cold?" in first.content[0].text
    assert first.content == second.content


def test_reply_generation_is_pluggable(sdk: anthropic.Anthropic) -> None:
    def shout(request: MessagesRequest) -> Reply:
        return Reply.of_text(request.last_user_text.upper())

    with FakeAnthropicServer(models=[TEST_MODEL], reply_generator=shout) as server:
        client = sdk.with_options(base_url=server.base_url)
        message = client.messages.create(model=MODEL, max_tokens=100, messages=HELLO)

    assert message.content[0].type == "text"
    assert message.content[0].text == "HELLO THERE"


def test_a_tool_use_reply_streams_its_input_as_json(
    fake_server: FakeAnthropicServer, sdk: anthropic.Anthropic
) -> None:
    summary = {"narrative": "They chose SQLite.", "decisions": ["use WAL"], "count": 2}
    fake_server.add(
        Reply(
            blocks=(TextBlock("Saving it."), ToolUseBlock("record_summary", summary)),
            stop_reason="tool_use",
        )
    )

    with sdk.messages.stream(model=MODEL, max_tokens=100, messages=HELLO) as stream:
        message = stream.get_final_message()

    tool_use = message.content[1]
    assert tool_use.type == "tool_use"
    assert tool_use.name == "record_summary"
    assert tool_use.input == summary
    assert message.stop_reason == "tool_use"


# --- faults ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "error_type", "exception_class"),
    [
        (400, "invalid_request_error", anthropic.BadRequestError),
        (401, "authentication_error", anthropic.AuthenticationError),
        (403, "permission_error", anthropic.PermissionDeniedError),
        (404, "not_found_error", anthropic.NotFoundError),
        (413, "request_too_large", anthropic.ContentTooLargeError),
        (429, "rate_limit_error", anthropic.RateLimitError),
        (500, "api_error", anthropic.InternalServerError),
        (529, "overloaded_error", anthropic.OverloadedError),
    ],
)
def test_errors_have_the_real_body_and_status(
    fake_server: FakeAnthropicServer,
    sdk: anthropic.Anthropic,
    status: int,
    error_type: str,
    exception_class: type[anthropic.APIStatusError],
) -> None:
    fake_server.add_error(status, "Scripted failure")

    with pytest.raises(exception_class) as caught:
        sdk.messages.create(model=MODEL, max_tokens=100, messages=HELLO)

    error = caught.value
    assert error.status_code == status
    assert error.type == error_type
    assert error.api_message == "Scripted failure"
    assert error.request_id is not None
    assert error.body == {
        "type": "error",
        "error": {"type": error_type, "message": "Scripted failure"},
        "request_id": error.request_id,
    }


def test_fail_once_then_succeed(fake_server: FakeAnthropicServer, sdk: anthropic.Anthropic) -> None:
    fake_server.add_error(529)
    fake_server.add_reply("Better now.")

    with pytest.raises(anthropic.OverloadedError):
        sdk.messages.create(model=MODEL, max_tokens=100, messages=HELLO)
    message = sdk.messages.create(model=MODEL, max_tokens=100, messages=HELLO)

    assert message.content[0].type == "text"
    assert message.content[0].text == "Better now."
    assert fake_server.pending_script == 0


def test_a_rate_limit_says_when_to_come_back(fake_server: FakeAnthropicServer) -> None:
    fake_server.add_error(429, retry_after=30, retry_after_ms=30_000, should_retry=True)
    body = {"model": MODEL, "max_tokens": 50, "messages": HELLO}

    status, headers, _ = _raw_request(fake_server, "POST", MESSAGES_PATH, body, _AUTHORIZED)

    assert status == 429
    assert headers["retry-after"] == "30"
    assert headers["retry-after-ms"] == "30000"
    assert headers["x-should-retry"] == "true"


def test_the_sdk_retries_after_the_wait_the_server_asked_for(
    fake_server: FakeAnthropicServer, sdk: anthropic.Anthropic
) -> None:
    fake_server.add_error(429, retry_after_ms=1, times=2)
    fake_server.add_reply("Third time lucky.")

    message = sdk.with_options(max_retries=2).messages.create(
        model=MODEL, max_tokens=100, messages=HELLO
    )

    assert message.content[0].type == "text"
    assert message.content[0].text == "Third time lucky."
    retry_counts = [r.headers["x-stainless-retry-count"] for r in fake_server.requests]
    assert retry_counts == ["0", "1", "2"]


def test_an_error_only_hits_the_path_it_names(
    fake_server: FakeAnthropicServer, sdk: anthropic.Anthropic
) -> None:
    fake_server.add_error(401, path=MODELS_PATH)

    sdk.messages.create(model=MODEL, max_tokens=100, messages=HELLO)
    with pytest.raises(anthropic.AuthenticationError):
        sdk.models.list()


def test_an_error_event_mid_stream_after_some_text(
    fake_server: FakeAnthropicServer, sdk: anthropic.Anthropic
) -> None:
    fake_server.add_stream_error("Partial answer ", error_type="overloaded_error")
    received: list[str] = []

    with (
        pytest.raises(anthropic.APIStatusError) as caught,
        sdk.messages.stream(model=MODEL, max_tokens=100, messages=HELLO) as stream,
    ):
        received.extend(stream.text_stream)

    assert "".join(received) == "Partial answer "
    assert caught.value.status_code == 200
    assert caught.value.type == "overloaded_error"


def test_a_stream_error_for_a_json_request_is_an_http_error(
    fake_server: FakeAnthropicServer, sdk: anthropic.Anthropic
) -> None:
    fake_server.add_stream_error("Partial", error_type="rate_limit_error", message="Slow down")

    with pytest.raises(anthropic.RateLimitError):
        sdk.messages.create(model=MODEL, max_tokens=100, messages=HELLO)


def test_a_dropped_connection_mid_stream(
    fake_server: FakeAnthropicServer, sdk: anthropic.Anthropic
) -> None:
    fake_server.add_dropped_connection("Half a sentence ")
    received: list[str] = []

    with (
        pytest.raises(httpx2.RemoteProtocolError),
        sdk.messages.stream(model=MODEL, max_tokens=100, messages=HELLO) as stream,
    ):
        received.extend(stream.text_stream)

    assert "".join(received) == "Half a sentence "


def test_a_connection_dropped_before_any_response(
    fake_server: FakeAnthropicServer, sdk: anthropic.Anthropic
) -> None:
    fake_server.add_dropped_connection()

    with pytest.raises(anthropic.APIConnectionError):
        sdk.messages.create(model=MODEL, max_tokens=100, messages=HELLO)


def test_closing_does_not_wait_for_a_slow_stream(
    fake_server: FakeAnthropicServer, sdk: anthropic.Anthropic
) -> None:
    fake_server.add_reply("one two three", chunk_delay=60)
    first_text = threading.Event()
    outcome: list[BaseException | None] = []

    def read_stream() -> None:
        try:
            with sdk.messages.stream(model=MODEL, max_tokens=100, messages=HELLO) as stream:
                for _ in stream.text_stream:
                    first_text.set()
        except Exception as error:
            outcome.append(error)
        else:
            outcome.append(None)

    reader = threading.Thread(target=read_stream)
    reader.start()
    assert first_text.wait(10)
    fake_server.close()  # the server is between two slow chunks
    reader.join(10)

    assert not reader.is_alive()
    assert isinstance(outcome[0], httpx2.RemoteProtocolError)  # cut off, not finished


# --- auth and the request log ---------------------------------------------------------


def test_both_auth_header_styles_are_accepted(fake_server: FakeAnthropicServer) -> None:
    fake_server.valid_keys = {KEY}
    version = {"anthropic-version": "2023-06-01"}

    as_api_key = _raw_request(
        fake_server, "GET", MODELS_PATH, headers={"x-api-key": KEY, **version}
    )
    as_bearer = _raw_request(
        fake_server, "GET", MODELS_PATH, headers={"authorization": f"Bearer {KEY}", **version}
    )

    assert as_api_key[0] == 200
    assert as_bearer[0] == 200
    assert [request.api_key for request in fake_server.requests] == [KEY, KEY]


@pytest.mark.parametrize(
    ("headers", "message"),
    [
        ({"x-api-key": "sk-ant-wrong"}, "invalid x-api-key"),
        ({"authorization": "Bearer sk-ant-wrong"}, "invalid x-api-key"),
        ({}, "x-api-key header is required"),
    ],
)
def test_a_wrong_or_missing_key_is_refused_like_the_real_api(
    fake_server: FakeAnthropicServer, headers: dict[str, str], message: str
) -> None:
    fake_server.valid_keys = {KEY}

    status, response_headers, data = _raw_request(
        fake_server, "GET", MODELS_PATH, headers={"anthropic-version": "2023-06-01", **headers}
    )

    assert status == 401
    assert json.loads(data) == {
        "type": "error",
        "error": {"type": "authentication_error", "message": message},
        "request_id": response_headers["request-id"],
    }


def test_any_key_is_accepted_until_keys_are_set(
    fake_server: FakeAnthropicServer, sdk: anthropic.Anthropic
) -> None:
    sdk.models.list()
    fake_server.valid_keys = {"sk-ant-another"}

    with pytest.raises(anthropic.AuthenticationError):
        sdk.models.list()


def test_the_api_version_header_is_required(fake_server: FakeAnthropicServer) -> None:
    status, _, data = _raw_request(fake_server, "GET", MODELS_PATH, headers={"x-api-key": KEY})

    assert status == 400
    assert json.loads(data)["error"]["type"] == "invalid_request_error"


def test_an_unknown_path_is_not_found(fake_server: FakeAnthropicServer) -> None:
    status, _, data = _raw_request(fake_server, "GET", "/v1/nothing", headers=_AUTHORIZED)

    assert status == 404
    assert json.loads(data)["error"]["type"] == "not_found_error"


def test_the_request_log_records_method_path_headers_and_body(
    fake_server: FakeAnthropicServer, sdk: anthropic.Anthropic
) -> None:
    sdk.messages.create(model=MODEL, max_tokens=64, messages=HELLO, system="Be brief.")

    assert fake_server.wait_for_requests(1)
    (request,) = fake_server.requests_to(MESSAGES_PATH, "POST")
    assert request.method == "POST"
    assert request.path == MESSAGES_PATH
    assert all(name == name.lower() for name in request.headers)
    assert request.headers["anthropic-version"]
    assert request.api_key == KEY
    assert request.body == {
        "model": MODEL,
        "max_tokens": 64,
        "messages": HELLO,
        "system": "Be brief.",
    }


def test_waiting_for_requests_that_never_come_times_out(fake_server: FakeAnthropicServer) -> None:
    assert not fake_server.wait_for_requests(1, timeout=0.05)


# --- validation -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("messages", "message_part"),
    [
        ([{"role": "assistant", "content": "Hi"}], "first message"),
        ([{"role": "user", "content": "  "}], "non-whitespace"),
        ([{"role": "user", "content": ""}], "non-whitespace"),
        # An empty text block is refused wherever it stands, even beside a full one.
        (
            [
                {
                    "role": "user",
                    "content": [{"type": "text", "text": "Hi"}, {"type": "text", "text": ""}],
                }
            ],
            "non-whitespace",
        ),
        (
            [
                {"role": "user", "content": "Hi"},
                {"role": "assistant", "content": [{"type": "text", "text": " "}]},
                {"role": "user", "content": "Again"},
            ],
            "messages.1",
        ),
        ([], "at least one message"),
    ],
)
def test_a_malformed_conversation_is_refused(
    sdk: anthropic.Anthropic, messages: list[Any], message_part: str
) -> None:
    with pytest.raises(anthropic.BadRequestError) as caught:
        sdk.messages.create(model=MODEL, max_tokens=100, messages=messages)

    assert message_part in (caught.value.api_message or "")


def test_consecutive_turns_of_one_role_are_combined_not_refused(
    sdk: anthropic.Anthropic,
) -> None:
    # https://platform.claude.com/docs/en/api/messages/create: "consecutive user or
    # assistant turns in your request will be combined into a single turn".
    message = sdk.messages.create(
        model=MODEL,
        max_tokens=100,
        messages=[{"role": "user", "content": "a"}, {"role": "user", "content": "b"}],
    )

    assert message.content


def test_max_tokens_zero_is_allowed(sdk: anthropic.Anthropic) -> None:
    # "minimum: 0" (pre-warming the prompt cache): the Messages API reference.
    sdk.messages.create(model=MODEL, max_tokens=0, messages=[{"role": "user", "content": "a"}])


def test_a_negative_max_tokens_is_refused(sdk: anthropic.Anthropic) -> None:
    with pytest.raises(anthropic.BadRequestError):
        sdk.messages.create(model=MODEL, max_tokens=-1, messages=[{"role": "user", "content": "a"}])


@pytest.mark.parametrize("system", ["   ", "\n\t", [{"type": "text", "text": " "}]])
def test_a_whitespace_only_system_is_refused(sdk: anthropic.Anthropic, system: Any) -> None:
    with pytest.raises(anthropic.BadRequestError) as caught:
        sdk.messages.create(
            model=MODEL,
            max_tokens=100,
            system=system,
            messages=[{"role": "user", "content": "a"}],
        )

    assert "system" in (caught.value.api_message or "")


def test_a_request_over_the_context_window_is_refused(
    fake_server: FakeAnthropicServer, sdk: anthropic.Anthropic
) -> None:
    fake_server.models = [
        ModelInfo(id="claude-tiny", display_name="Tiny", max_input_tokens=100, max_tokens=50)
    ]
    long_question: list[Any] = [{"role": "user", "content": "word " * 100}]

    with pytest.raises(anthropic.BadRequestError) as caught:
        sdk.messages.create(model="claude-tiny", max_tokens=50, messages=long_question)
    with pytest.raises(anthropic.BadRequestError):
        sdk.messages.create(model="claude-tiny", max_tokens=51, messages=HELLO)

    assert "exceed context limit" in (caught.value.api_message or "")


def test_a_model_it_does_not_list_is_not_found_by_default(sdk: anthropic.Anthropic) -> None:
    # https://docs.claude.com/en/api/errors: 404 `not_found_error`, for replies and counts.
    with pytest.raises(anthropic.NotFoundError) as caught:
        sdk.messages.create(model="claude-nonexistent", max_tokens=10, messages=HELLO)
    with pytest.raises(anthropic.NotFoundError):
        sdk.messages.count_tokens(model="claude-nonexistent", messages=HELLO)

    assert caught.value.body == {
        "type": "error",
        "error": {"type": "not_found_error", "message": "model: claude-nonexistent"},
        "request_id": caught.value.request_id,
    }


def test_unknown_models_are_answered_when_asked(sdk: anthropic.Anthropic) -> None:
    with FakeAnthropicServer(reject_unknown_models=False) as server:
        client = sdk.with_options(base_url=server.base_url)
        message = client.messages.create(model="claude-nonexistent", max_tokens=10, messages=HELLO)

    assert message.model == "claude-nonexistent"


# --- tokens and models ----------------------------------------------------------------


def test_count_tokens_and_reply_usage_follow_the_same_rule(
    fake_server: FakeAnthropicServer, sdk: anthropic.Anthropic
) -> None:
    messages: list[Any] = [
        {"role": "user", "content": "What is a cairn?"},
        {"role": "assistant", "content": "A pile of stones marking a path."},
        {"role": "user", "content": [{"type": "text", "text": "Who builds them?"}]},
    ]
    expected = (
        FAKE_REQUEST_OVERHEAD
        + count_text_tokens("Be kind.")
        + sum(
            FAKE_MESSAGE_OVERHEAD + count_text_tokens(text)
            for text in ("What is a cairn?", "A pile of stones marking a path.", "Who builds them?")
        )
    )

    counted = sdk.messages.count_tokens(model=MODEL, messages=messages, system="Be kind.")
    reply = sdk.messages.create(model=MODEL, max_tokens=100, messages=messages, system="Be kind.")

    assert counted.input_tokens == expected
    assert reply.usage.input_tokens == expected
    assert fake_server.requests_to(COUNT_TOKENS_PATH)[0].body["system"] == "Be kind."


def test_the_model_list_pages_like_the_real_one(
    fake_server: FakeAnthropicServer, sdk: anthropic.Anthropic
) -> None:
    fake_server.models = [
        ModelInfo(id=f"claude-model-{n}", display_name=f"Model {n}") for n in range(5)
    ]
    fake_server.max_page_size = 2

    listed = list(sdk.models.list(limit=10))
    first_page = sdk.models.list(limit=2)

    assert [model.id for model in listed] == [f"claude-model-{n}" for n in range(5)]
    assert listed[0].type == "model"
    assert listed[0].display_name == "Model 0"
    assert listed[0].max_input_tokens == 200_000
    assert listed[0].created_at > listed[1].created_at  # newest first
    assert first_page.has_more is True
    assert first_page.first_id == "claude-model-0"
    assert first_page.last_id == "claude-model-1"
    pages = [request.query.get("after_id") for request in fake_server.requests_to(MODELS_PATH)]
    assert pages == [None, ["claude-model-1"], ["claude-model-3"], None]


def test_one_model_can_be_fetched(
    fake_server: FakeAnthropicServer, sdk: anthropic.Anthropic
) -> None:
    model = sdk.models.retrieve(fake_server.models[0].id)

    assert model.id == fake_server.models[0].id
    with pytest.raises(anthropic.NotFoundError):
        sdk.models.retrieve("claude-nonexistent")


# --- by hand --------------------------------------------------------------------------


@pytest.mark.skipif(
    sys.platform == "win32",
    reason="Ctrl+C is a console event on Windows: Popen.send_signal(SIGINT) is POSIX only",
)
def test_it_runs_by_hand_until_ctrl_c() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.anthropic_server", "--port", "0", "--chunk-delay", "0"],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        encoding="utf-8",
    )
    try:
        assert process.stdout is not None
        first_line = process.stdout.readline()
        base_url = first_line.rsplit(" ", 1)[-1].strip()
        instructions = process.stdout.readline() + process.stdout.readline()
        # Run by hand, it lists the bundled models (and answers 404 for any other).
        listed = FALLBACK_MODELS[0].id
        with anthropic.Anthropic(api_key="anything", base_url=base_url) as client:
            message = client.messages.create(model=listed, max_tokens=50, messages=HELLO)
        process.send_signal(signal.SIGINT)
        return_code = process.wait(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()
        if process.stderr is not None:
            process.stderr.close()

    assert base_url.startswith("http://127.0.0.1:")
    assert f"ANTHROPIC_BASE_URL={base_url} ANTHROPIC_API_KEY=anything ./scripts/run" in instructions
    # Today's first model thinks by default, ahead of its text (thinking_rules.py).
    assert [block.type for block in message.content] == ["thinking", "text"]
    assert "Hello there" in message.content[1].text
    assert return_code == 0


# --- client tools: the follow-up must answer the tool calls (tool use docs) -----------------

TOOL_TURN: list[Any] = [
    {"role": "user", "content": "What was the code?"},
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": "toolu_1", "name": "search", "input": {"query": "code"}},
        ],
    },
]
SEARCH_TOOL = [{"name": "search", "input_schema": {"type": "object"}}]


def follow_up(sdk: anthropic.Anthropic, content: list[Any]) -> Any:
    return sdk.messages.create(
        model=MODEL,
        max_tokens=50,
        tools=SEARCH_TOOL,
        messages=[*TOOL_TURN, {"role": "user", "content": content}],
    )


def test_a_client_tool_call_streams_and_its_answered_follow_up_is_taken(
    sdk: anthropic.Anthropic, fake_server: FakeAnthropicServer
) -> None:
    fake_server.add_tool_use("search", {"query": "code"}, tool_id="toolu_1", text_before="Hm.")
    with sdk.messages.stream(
        model=MODEL, max_tokens=50, tools=SEARCH_TOOL, messages=TOOL_TURN[:1]
    ) as stream:
        message = stream.get_final_message()
    assert message.stop_reason == "tool_use"
    assert [block.type for block in message.content] == ["text", "tool_use"]
    assert message.content[1].input == {"query": "code"}  # type: ignore[union-attr]
    fake_server.add_reply("It is 7731.")
    answered = follow_up(
        sdk,
        [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "7731"},
            {"type": "text", "text": "Thanks"},
        ],
    )
    assert answered.content[0].text == "It is 7731."  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ([{"type": "tool_result", "tool_use_id": "toolu_2", "content": "x"}], "toolu_1"),
        (
            [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"},
                {"type": "tool_result", "tool_use_id": "toolu_9", "content": "y"},
            ],
            "unexpected `tool_use_id`",
        ),
        ([{"type": "text", "text": "no results"}], "without `tool_result`"),
        (
            [
                {"type": "text", "text": "first"},
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"},
            ],
            "must come first",
        ),
    ],
)
def test_a_follow_up_that_does_not_answer_the_tool_calls_is_refused(
    sdk: anthropic.Anthropic, content: list[Any], says: str
) -> None:
    with pytest.raises(anthropic.BadRequestError, match=says):
        follow_up(sdk, content)


def test_tool_choice_none_never_gets_a_tool_call(
    sdk: anthropic.Anthropic, fake_server: FakeAnthropicServer
) -> None:
    fake_server.add_tool_use("search", {"query": "code"})
    fake_server.add_reply("An answer.")
    message = sdk.messages.create(
        model=MODEL,
        max_tokens=50,
        tools=SEARCH_TOOL,
        tool_choice={"type": "none"},
        messages=TOOL_TURN[:1],
    )
    assert message.stop_reason == "end_turn" and fake_server.pending_script == 1
