"""Automatic recall on the reply path: the archived fact reaches Claude in the recall
block, within its budget; the setting turns it off (issue 12 item 1)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.core.recall import RECALL_HEADING
from app.core.settings import AppSettings, RecallSettings
from app.core.summarization_config import SummarizationConfig
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.unit.chat.conftest import Chat

StartChat = Callable[..., Chat]
QUIET = SummarizationConfig(mode="rule", auto_summarize=False)


def last_reply_system(server: FakeAnthropicServer) -> Any:
    replies = [r for r in server.requests_to("/v1/messages") if not r.body.get("tool_choice")]
    return replies[-1].body.get("system")


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

    system = last_reply_system(fake_server)
    assert isinstance(system, list)
    recall = system[-1]
    assert "cache_control" not in recall
    assert recall["text"].startswith(f"# {RECALL_HEADING}")
    assert "AX-7731" in recall["text"] and "message #1 ·" in recall["text"]
    assert "cache_control" in system[-2]  # the memory block, its breakpoint before recall
    (model,) = [m for m in chat.service.models if m.id == chat.service.selected_model]
    window = model.max_input_tokens
    assert chat.service.counter.count(recall["text"]) <= 0.05 * window


def test_recall_off_sends_no_recall_block(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    settings = AppSettings(summarization=QUIET, recall=RecallSettings(automatic=False))
    chat = start_chat(settings=settings)
    archived_gate_code(chat)

    system = last_reply_system(fake_server)
    texts = [block["text"] for block in system] if isinstance(system, list) else [system]
    assert not any(RECALL_HEADING in text for text in texts)
