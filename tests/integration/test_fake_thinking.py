"""The fake refuses what the API refuses about thinking, on today's models, through the real
SDK (tests/fakes/thinking_rules.py cites each page); and the bundled catalog agrees with
what the fake's `/v1/models` lists."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

from app.core.catalog import FALLBACK_MODELS, clean_model_list
from app.core.models import Usage
from app.core.pricing import bundled_prices
from app.llm.anthropic_provider import AnthropicProvider
from app.llm.provider import CancelToken, ChatRequest, StreamCallbacks
from tests.fakes.anthropic_server import FakeAnthropicServer

KEY = "sk-ant-test"
ASK = [{"role": "user", "content": "What is the gate code?"}]
TOOL = {"name": "lookup", "description": "d", "input_schema": {"type": "object"}}


def client(server: FakeAnthropicServer) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key=KEY, base_url=server.base_url, max_retries=0)


def refused(server: FakeAnthropicServer, **arguments: Any) -> str:
    with pytest.raises(anthropic.BadRequestError) as raised:
        client(server).messages.create(max_tokens=2_000, **arguments)
    return str(raised.value)


def test_always_on_models_refuse_thinking_off_and_forced_tools(
    fake_server: FakeAnthropicServer,
) -> None:
    for model in ("claude-opus-5-5", "claude-fable-5-1"):
        off = refused(fake_server, model=model, messages=ASK, thinking={"type": "disabled"})
        assert '"thinking.type.disabled" is not supported for this model' in off
        forced = {"type": "tool", "name": "lookup"}
        assert "forced tool use" in refused(
            fake_server, model=model, messages=ASK, tools=[TOOL], tool_choice=forced
        )
    # Sonnet 5.5 takes "between_tools" in place of "disabled" (thinking-troubleshooting).
    assert "disabled" in refused(
        fake_server, model="claude-sonnet-5-5", messages=ASK, thinking={"type": "disabled"}
    )


def test_a_final_assistant_turn_is_refused_from_claude_4_6_on(
    fake_server: FakeAnthropicServer,
) -> None:
    prefill = [*ASK, {"role": "assistant", "content": "The code is"}]
    for model in ("claude-sonnet-5-5", "claude-sonnet-4-6"):
        assert "does not support assistant message prefill" in refused(
            fake_server, model=model, messages=prefill
        )
    fake_server.add_reply(" AX-7731.")
    legacy = client(fake_server).messages.create(
        model="claude-haiku-4-5", max_tokens=100, messages=prefill
    )
    assert legacy.content[-1].type == "text"


def tool_round(server: FakeAnthropicServer, model: str) -> tuple[list[dict[str, Any]], Any]:
    """A tool call on `model` with summarized thinking: its content as it came."""
    server.add_tool_use("lookup", {"q": "gate"}, tool_id="toolu_x", text_before="Checking.")
    message = client(server).messages.create(
        model=model,
        max_tokens=2_000,
        messages=ASK,
        tools=[TOOL],
        thinking={"type": "adaptive", "display": "summarized"},
    )
    return [block.model_dump(exclude_none=True) for block in message.content], message


def follow_up(content: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        *ASK,
        {"role": "assistant", "content": content},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_x", "content": "AX"}],
        },
    ]


def test_thinking_comes_first_and_must_come_back_unchanged(
    fake_server: FakeAnthropicServer,
) -> None:
    content, _message = tool_round(fake_server, "claude-opus-5-5")
    kinds = [block["type"] for block in content]
    assert kinds[0] == "thinking" and kinds[-1] == "tool_use"
    assert any("Checking." in block.get("thinking", "") for block in content)
    tools = {"tools": [TOOL], "model": "claude-opus-5-5"}
    # Left out, or altered: "cannot be modified" / an invalid signature.
    without = [block for block in content if block["type"] != "thinking"]
    assert "cannot be modified" in refused(fake_server, messages=follow_up(without), **tools)
    altered = [
        {**block, "thinking": block["thinking"] + "!"} if block["type"] == "thinking" else block
        for block in content
    ]
    assert "Invalid `signature`" in refused(fake_server, messages=follow_up(altered), **tools)
    # A changed prefix (preserved thinking): another system prompt.
    assert "prefix" in refused(
        fake_server, messages=follow_up(content), system="Something else.", **tools
    )
    fake_server.add_reply("The code is AX.")
    done = client(fake_server).messages.create(
        max_tokens=2_000, messages=follow_up(content), **tools
    )
    assert done.stop_reason == "end_turn"


def test_display_omitted_returns_empty_thinking_with_a_signature(
    fake_server: FakeAnthropicServer,
) -> None:
    fake_server.add_reply("Hello.")
    message = client(fake_server).messages.create(
        model="claude-sonnet-5-5", max_tokens=2_000, messages=ASK
    )
    thinking = message.content[0]
    assert thinking.type == "thinking" and thinking.thinking == "" and thinking.signature


def test_the_catalog_matches_the_fake_model_list(fake_server: FakeAnthropicServer) -> None:
    provider = AnthropicProvider(KEY, fake_server.base_url)
    try:
        listed = {model.id: model for model in provider.list_models()}
    finally:
        provider.close()
    for row in FALLBACK_MODELS:
        served = listed[row.id]
        assert (served.max_input_tokens, served.max_tokens) == (
            row.max_input_tokens,
            row.max_tokens,
        )
        assert (served.thinking, served.effort, served.thinking_off) == (
            row.thinking,
            row.effort,
            row.thinking_off,
        ), row.id
        assert bundled_prices().for_model(row.id) is not None, f"no price for {row.id}"
    assert clean_model_list(listed.values())[0].id == "claude-sonnet-5-5"


def test_haiku_5_5_is_priced_by_prompt_size() -> None:
    prices = bundled_prices()
    small = Usage(input_tokens=50_000, output_tokens=1_000)
    large = Usage(input_tokens=150_000, output_tokens=1_000)
    assert prices.cost("claude-haiku-5-5", small) == 50_000 * 100 + 1_000 * 500
    assert prices.cost("claude-haiku-5-5", large) == 150_000 * 500 + 1_000 * 2_500
    assert prices.cost("claude-opus-5-5", small) == 50_000 * 4_000 + 1_000 * 20_000


def test_a_streamed_tool_round_comes_back_as_the_sdk_reads_it(
    fake_server: FakeAnthropicServer,
) -> None:
    """The provider reads text and thinking deltas from the events' JSON and the other
    events as the SDK's objects: the round's blocks (thinking and its signature, text,
    tool input) and what the callbacks heard are what the SDK reads of the same answer."""
    expected, message = tool_round(fake_server, "claude-opus-5-5")
    fake_server.add_tool_use("lookup", {"q": "gate"}, tool_id="toolu_x", text_before="Checking.")
    texts: list[str] = []
    thoughts: list[str] = []
    provider = AnthropicProvider(KEY, fake_server.base_url, max_retries=0)
    try:
        result = provider.stream_reply(
            ChatRequest(
                "claude-opus-5-5",
                ASK,
                2_000,
                tools=[TOOL],
                thinking={"type": "adaptive", "display": "summarized"},
            ),
            StreamCallbacks(on_text=texts.append, on_thinking=thoughts.append),
            CancelToken(),
        )
    finally:
        provider.close()
    assert list(result.content) == expected
    assert [(call.name, call.input) for call in result.tool_calls] == [("lookup", {"q": "gate"})]
    sdk_text = "".join(block.text for block in message.content if block.type == "text")
    assert result.text == "".join(texts) == sdk_text
    assert result.thinking == "".join(thoughts).strip() != ""
    assert result.stop_reason == message.stop_reason == "tool_use"
