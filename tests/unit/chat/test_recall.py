"""Automatic recall on the reply path: the archived fact reaches Claude in the recall
block, within its budget; the setting turns it off (issue 12 item 1)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from app.core.lookup import TOOL_SYSTEM_PROMPT_TOKENS
from app.core.recall import RECALL_HEADING
from app.core.settings import AppSettings, RecallSettings
from app.core.summarization_config import SummarizationConfig
from tests.fakes.anthropic_server import FakeAnthropicServer, forces_a_tool
from tests.unit.chat.conftest import Chat

StartChat = Callable[..., Chat]
QUIET = SummarizationConfig(mode="rule", auto_summarize=False)


def last_reply(server: FakeAnthropicServer) -> Any:
    replies = [r for r in server.requests_to("/v1/messages") if not forces_a_tool(r)]
    return replies[-1].body


def block_texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    return [block["text"] for block in content if block.get("type") == "text"]


def archived_gate_code(chat: Chat) -> None:
    chat.send("Let's fix it: the new gate code is AX-7731 from Monday.")
    for turn in range(8):
        chat.send(f"Question {turn} about the garden beds and the lunch menu.")
    assert chat.service.summarize()
    chat.idle()
    assert chat.service.current.summaries
    chat.send("What was the gate code again?")


def test_the_archived_fact_is_quoted_in_the_request(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat(settings=AppSettings(summarization=QUIET))
    archived_gate_code(chat)

    body = last_reply(fake_server)
    # The recall block opens the newest user turn, before the user's words; never in
    # the system prompt, whose cached prefix every later turn reads.
    assert not any(RECALL_HEADING in text for text in block_texts(body["system"]))
    newest = body["messages"][-1]
    assert newest["role"] == "user"
    recall, asked = newest["content"][0], newest["content"][-1]
    assert "cache_control" not in recall
    assert recall["text"].startswith(f"# {RECALL_HEADING}")
    assert "AX-7731" in recall["text"] and "message #1 ·" in recall["text"]
    assert "What was the gate code again?" in asked["text"]
    # The turn breakpoint sits on the turn before the newest (caching.py), when cached.
    before = body["messages"][-2]["content"]
    assert isinstance(before, str) or "cache_control" in before[-1]
    (model,) = [m for m in chat.service.models if m.id == chat.service.selected_model]
    window = model.max_input_tokens
    assert chat.service.counter.count(recall["text"]) <= 0.05 * window


def test_recall_off_sends_no_recall_block(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    settings = AppSettings(summarization=QUIET, recall=RecallSettings(automatic=False))
    chat = start_chat(settings=settings)
    archived_gate_code(chat)

    body = last_reply(fake_server)
    texts = block_texts(body["system"]) + block_texts(body["messages"][-1]["content"])
    assert not any(RECALL_HEADING in text for text in texts)


def test_the_gauge_counts_the_archive_tool_and_what_the_last_request_quoted(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat(settings=AppSettings(summarization=QUIET))
    archived_gate_code(chat)

    body = last_reply(fake_server)
    quoted = body["messages"][-1]["content"][0]["text"]
    assert quoted.startswith(f"# {RECALL_HEADING}")
    service = chat.service
    calibration = service.calibrations.for_model(service.selected_model)
    state = service.context_state(draft="")
    assert state is not None
    sent = calibration.apply(service.counter.count(quoted))
    assert abs(state.breakdown.recall - sent) <= 0.05 * sent, "what the last request quoted"
    assert 0 < state.breakdown.recall <= state.recall_allowed
    # The definition as sent, calibrated; the API's tool-use prompt in its own tokens.
    definition = calibration.apply(service.counter.count(json.dumps(body["tools"])))
    assert state.breakdown.tools == definition + TOOL_SYSTEM_PROMPT_TOKENS
    assert state.used == state.required.used + state.breakdown.recall + state.breakdown.tools

    # A message that quotes nothing: the next figure counts nothing quoted.
    chat.send("Thanks! Anything else?")
    assert RECALL_HEADING not in str(last_reply(fake_server)["messages"][-1]["content"])
    after = service.context_state(draft="")
    assert after is not None and after.breakdown.recall == 0 and after.breakdown.tools > 0


def test_without_a_summary_the_gauge_counts_neither_tool_nor_quotes(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat(settings=AppSettings(summarization=QUIET))
    chat.send("The new gate code is AX-7731.")
    assert "tools" not in last_reply(fake_server)
    state = chat.service.context_state(draft="")
    assert state is not None and state == state.required
    assert state.recall_allowed == 0
