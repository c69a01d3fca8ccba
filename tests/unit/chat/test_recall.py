"""Automatic recall on the reply path: the archived fact reaches Claude in the recall
block, within its budget; the setting turns it off (issue 12 item 1)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

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


def archive_the_gate_code(chat: Chat) -> None:
    chat.send("Let's fix it: the new gate code is AX-7731 from Monday.")
    for turn in range(8):
        chat.send(f"Question {turn} about the garden beds and the lunch menu.")
    assert chat.service.summarize()
    chat.idle()
    assert chat.service.current.summaries


def archived_gate_code(chat: Chat) -> None:
    archive_the_gate_code(chat)
    chat.send("What was the gate code again?")


def recall_texts(body: Any) -> list[str]:
    """Every text of a request that carries the recall block (system or any turn)."""
    texts = block_texts(body["system"])
    for turn in body["messages"]:
        texts += block_texts(turn["content"])
    return [text for text in texts if RECALL_HEADING in text]


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


def test_continue_does_not_gather_recall_again(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat(settings=AppSettings(summarization=QUIET))
    archive_the_gate_code(chat)
    fake_server.add_reply("The gate code you agreed on is", stop_reason="max_tokens")
    chat.send("What was the gate code again?")
    (recall,) = recall_texts(last_reply(fake_server))
    assert "AX-7731" in recall
    cut = chat.stored()[-1]

    fake_server.add_reply(" AX-7731.")
    assert chat.service.continue_reply(cut)
    chat.idle()

    body = last_reply(fake_server)
    assert body["messages"][-2] == {"role": "assistant", "content": cut.content}
    assert recall_texts(body) == [], "the continuation quoted the archive again"
    assert chat.stored()[-1].content == "The gate code you agreed on is AX-7731."


def test_a_paused_turn_goes_on_without_recall(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat(settings=AppSettings(summarization=QUIET))
    archive_the_gate_code(chat)
    fake_server.add_reply("Looking. ", stop_reason="pause_turn")
    fake_server.add_reply("It is AX-7731.")
    chat.send("What was the gate code again?")

    first, second = [
        r.body for r in fake_server.requests_to("/v1/messages") if not forces_a_tool(r)
    ][-2:]
    assert len(recall_texts(first)) == 1
    assert second["messages"][-1] == {"role": "assistant", "content": "Looking. "}
    assert recall_texts(second) == []
