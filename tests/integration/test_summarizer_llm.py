"""The summarizer through the real `AnthropicProvider.complete_structured` and the real
SDK, against the fake server: one call per summary, the forced tool and its schema on
the wire, and what each fault of the tool path turns into."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import anthropic
import pytest

from app.core.errors import StructuredOutputError
from app.core.models import Message, Role
from app.core.summarization_config import SummarizationConfig
from app.core.summarizer import TOOL_NAME, Summarizer, SummarizeResult, summary_tool_schema
from app.core.summary import EventOutcome, SummaryMode, SummaryTrigger, render_summary_text
from app.core.tokens import TokenCounter
from app.llm.anthropic_provider import AnthropicProvider
from tests.fakes.anthropic_server import MESSAGES_PATH, FakeAnthropicServer

KEY = "sk-ant-summarizer-test-key"
MODEL = "claude-haiku-5-5"  # the first default summarizer model
START = datetime(2026, 3, 5, 9, 0, tzinfo=UTC)
# Short, so a `timeout` fault (the server waits a second) costs little.
CLIENT_TIMEOUT = 0.3

_COUNTER = TokenCounter()

TURNS = [
    "I'm drafting the budget in budget_2026.xlsx; the deadline is 2026-04-15.",
    "Good. Which costs go in first?",
    "Hosting is 1,200 EUR a month. Let's go with the annual plan.",
    "The annual plan saves 15% compared with monthly billing.",
    "TODO: ask finance about the 2026-05-01 invoice run?",
    "I'll check the numbers in costs.csv and get back to you.",
]


def conversation(count: int = len(TURNS)) -> list[Message]:
    return [
        Message(
            id=index + 1,
            session_id="s1",
            seq=index + 1,
            role=Role.USER if index % 2 == 0 else Role.ASSISTANT,
            content=TURNS[index % len(TURNS)],
            created_at=START + timedelta(minutes=index),
        )
        for index in range(count)
    ]


@pytest.fixture
def provider(fake_server: FakeAnthropicServer) -> Iterator[AnthropicProvider]:
    provider = AnthropicProvider(KEY, fake_server.base_url, timeout=CLIENT_TIMEOUT)
    try:
        yield provider
    finally:
        provider.close()


def summarize(
    provider: AnthropicProvider,
    *,
    model_order: list[str] | None = None,
    **settings: Any,
) -> SummarizeResult:
    summarizer = Summarizer(
        SummarizationConfig(**settings),
        complete=provider.complete_structured,
        counter=_COUNTER,
        tz=UTC,
    )
    return summarizer.summarize_messages(
        "s1", conversation(), trigger=SummaryTrigger.MANUAL, model_order=model_order
    )


def messages_calls(server: FakeAnthropicServer) -> list[Any]:
    return [request.body for request in server.requests_to(MESSAGES_PATH, "POST")]


def test_one_call_with_the_forced_tool_and_its_schema(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    result = summarize(provider)

    calls = messages_calls(fake_server)
    assert len(calls) == 1
    body = calls[0]
    assert body["model"] == MODEL
    assert body["tool_choice"] == {"type": "tool", "name": TOOL_NAME}
    assert body["tools"][0]["name"] == TOOL_NAME
    assert body["tools"][0]["input_schema"] == summary_tool_schema()
    assert not body.get("stream")
    assert "[#1 · user · 2026-03-05 09:00]" in body["messages"][0]["content"]

    assert result.outcome is EventOutcome.OK
    assert result.llm_calls == 1
    draft = result.draft
    assert draft is not None
    assert draft.mode is SummaryMode.HYBRID
    assert draft.model == MODEL
    assert draft.content.narrative.startswith("Summary of messages #1–#6.")
    assert all(1 <= seq <= 6 for point in draft.content.key_points for seq in point.sources)
    assert draft.summary_tokens <= 800


def test_no_drift_a_file_name_from_the_first_message_survives(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    result = summarize(provider, mode="llm")

    assert result.draft is not None
    text = render_summary_text(result.draft.content)
    for fact in ("budget_2026.xlsx", "2026-04-15", "costs.csv"):
        assert fact in text


@pytest.mark.parametrize(
    ("kind", "error_class"),
    [
        ("malformed", "StructuredOutputError"),
        ("missing_field", "ValidationError"),
        ("empty", "ValidationError"),
    ],
)
def test_a_bad_tool_answer_is_not_retried_and_becomes_basic(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider, kind: Any, error_class: str
) -> None:
    fake_server.add_tool_fault(kind)

    result = summarize(provider)

    assert len(messages_calls(fake_server)) == 1
    assert result.outcome is EventOutcome.FALLBACK
    assert result.error_class == error_class
    assert result.draft is not None
    assert result.draft.mode is SummaryMode.RULE
    assert "budget_2026.xlsx" in render_summary_text(result.draft.content)


def test_overloaded_once_is_retried_once(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    fake_server.add_tool_fault("overloaded")

    result = summarize(provider)

    assert len(messages_calls(fake_server)) == 2  # the SDK retried once
    assert result.outcome is EventOutcome.OK
    assert result.llm_calls == 1, "one call of the summarizer's; the retry is the SDK's"


def test_overloaded_twice_falls_back(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    fake_server.add_tool_fault("overloaded", times=2)

    result = summarize(provider)

    assert len(messages_calls(fake_server)) == 2
    assert result.outcome is EventOutcome.FALLBACK
    assert result.error_class == "OverloadedError"


def test_a_timeout_is_retried_once_then_falls_back(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    fake_server.add_tool_fault("timeout", delay=CLIENT_TIMEOUT * 4, times=2)

    result = summarize(provider)

    assert len(messages_calls(fake_server)) == 2
    assert result.outcome is EventOutcome.FALLBACK
    assert result.error_class == "ConnectionFailedError"
    assert result.draft is not None
    assert result.draft.mode is SummaryMode.RULE


def test_abort_on_failure_changes_nothing(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    fake_server.add_tool_fault("malformed")

    result = summarize(provider, abort_on_failure=True)

    assert result.draft is None
    assert result.outcome is EventOutcome.ABORTED


def test_a_missing_model_moves_down_the_list() -> None:
    with FakeAnthropicServer() as server:
        provider = AnthropicProvider(KEY, server.base_url, timeout=5)
        try:
            result = summarize(provider, model_order=["claude-gone-1", MODEL])
        finally:
            provider.close()
        models = [body["model"] for body in messages_calls(server)]

    assert models == ["claude-gone-1", MODEL]
    assert result.outcome is EventOutcome.OK
    assert result.draft is not None
    assert result.draft.model == MODEL


def test_thinking_is_turned_off_for_the_forced_tool(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    summarize(provider)

    assert messages_calls(fake_server)[0]["thinking"] == {"type": "disabled"}


def test_a_model_that_cannot_turn_thinking_off_hands_over_to_the_next(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    fake_server.thinking_always_on = {"claude-always-thinking"}

    result = summarize(provider, model_order=["claude-always-thinking", MODEL])

    assert [body["model"] for body in messages_calls(fake_server)] == [
        "claude-always-thinking",
        MODEL,
    ]
    assert result.outcome is EventOutcome.OK
    assert result.draft is not None
    assert result.draft.mode is SummaryMode.HYBRID  # Claude's summary, not a basic one
    assert result.draft.model == MODEL


def test_a_scripted_tool_answer_is_used_as_is(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    fake_server.add_tool_reply(
        {
            "narrative": "They planned the 2026 budget.",
            "key_points": [{"text": "Annual plan chosen.", "sources": [3, 42]}],
            "decisions": [],
            "action_items": [],
            "open_questions": [],
            "entities": ["budget_2026.xlsx"],
        }
    )

    result = summarize(provider, mode="llm")

    assert result.draft is not None
    assert result.draft.content.narrative == "They planned the 2026 budget."
    assert result.draft.content.key_points[0].sources == [3]  # 42 is outside #1–#6


# --- complete_structured itself ------------------------------------------------------------


def _complete(provider: AnthropicProvider, max_tokens: int = 500) -> dict[str, Any]:
    return provider.complete_structured(
        model=MODEL,
        system="Summarize.",
        prompt="<transcript>\n[#1 · user · 2026-03-05 09:00]\nSee notes.md.\n</transcript>",
        tool_name=TOOL_NAME,
        tool_description="Record the summary.",
        input_schema=summary_tool_schema(),
        max_tokens=max_tokens,
    )


def test_complete_structured_returns_the_tool_input(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    answer = _complete(provider)

    assert answer["narrative"].startswith("Summary of messages #1–#1.")
    assert "notes.md" in answer["entities"]
    assert set(answer) == set(summary_tool_schema()["properties"])


def test_complete_structured_refuses_a_reply_without_a_tool_call(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    fake_server.add_reply("Here is a summary in prose instead.", to_tool_call=True)

    with pytest.raises(StructuredOutputError) as caught:
        _complete(provider)
    assert caught.value.detail is not None
    assert "text" in caught.value.detail


def test_complete_structured_refuses_a_reply_cut_by_max_tokens(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    fake_server.add_reply("Cut", stop_reason="max_tokens", to_tool_call=True)

    with pytest.raises(StructuredOutputError, match="cut off"):
        _complete(provider)


def test_the_fake_streams_the_same_structured_answer_and_malformed_json(
    fake_server: FakeAnthropicServer,
) -> None:
    client = anthropic.Anthropic(api_key=KEY, base_url=fake_server.base_url, max_retries=0)
    arguments: dict[str, Any] = {
        "model": MODEL,
        "max_tokens": 500,
        "messages": [
            {"role": "user", "content": "<transcript>\n[#4 · user · x]\nHi.\n</transcript>"}
        ],
        "tools": [{"name": TOOL_NAME, "description": "d", "input_schema": summary_tool_schema()}],
        "tool_choice": {"type": "tool", "name": TOOL_NAME},
        # A forced tool call needs thinking off on a model that thinks by default.
        "thinking": {"type": "disabled"},
    }
    try:
        created = client.messages.create(**arguments)
        with client.messages.stream(**arguments) as stream:
            streamed = stream.get_final_message()
        fake_server.add_tool_fault("malformed")
        broken = client.messages.create(**arguments)
    finally:
        client.close()

    assert created.content[0].type == "tool_use"
    assert streamed.content[0].type == "tool_use"
    assert created.content[0].input == streamed.content[0].input
    assert created.content[0].input["key_points"] == [{"text": "Hi.", "sources": [4]}]
    assert broken.content[0].type == "tool_use"
    assert isinstance(broken.content[0].input, str)
