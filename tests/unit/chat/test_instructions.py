"""A conversation's instructions for Claude: set from the window or the default in
Settings, sent as the system prompt (checked in the fake server's request log through
the real SDK), counted by the gauge, kept across a restart and never condensed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.core.context import ContextState
from app.core.settings import AppSettings
from app.core.summarization_config import SummarizationConfig
from app.core.summary import SummaryTrigger
from tests.fakes.anthropic_server import (
    FakeAnthropicServer,
    count_text_tokens,
    forces_a_tool,
    text_of_content,
)
from tests.unit.chat.conftest import SMALL, Chat

StartChat = Callable[..., Chat]
INSTRUCTIONS = "Answer in French, and keep every answer under three sentences."


def chat_requests(server: FakeAnthropicServer) -> list[Any]:
    """The bodies of the chat replies asked for (not the summaries' forced-tool calls)."""
    return [
        request.body
        for request in server.requests_to("/v1/messages", "POST")
        if not forces_a_tool(request)
    ]


def system_blocks(body: Any) -> list[str]:
    system = body.get("system", "")
    if isinstance(system, str):
        return [system] if system else []
    return [block["text"] for block in system]


def last_state(chat: Chat) -> ContextState:
    (state,) = chat.events.named("context_changed")[-1]
    assert isinstance(state, ContextState)
    return state


def test_instructions_set_on_a_conversation_go_as_its_system_prompt_and_stay(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    fake_server.add_reply("Hello.")
    chat.send("Hi there.")
    assert system_blocks(chat_requests(fake_server)[-1]) == []
    before = last_state(chat).breakdown.system

    assert chat.service.current.instructions.set(f"  {INSTRUCTIONS}\n")
    assert last_state(chat).breakdown.system > before, "the gauge counts them at once"
    (session,) = chat.events.named("session_changed")[-1]
    assert session.system_prompt == INSTRUCTIONS
    fake_server.add_reply("Bonjour.")
    chat.send("What is the weather like?")

    assert system_blocks(chat_requests(fake_server)[-1]) == [INSTRUCTIONS]
    session_id = chat.service.current.state.session_id
    assert session_id is not None
    chat.service.shutdown()
    restarted = start_chat()
    restarted.service.open_session(session_id)
    restarted.idle()
    assert restarted.service.current.instructions.text() == INSTRUCTIONS


def test_a_new_conversation_starts_with_the_default_from_settings(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat(settings=AppSettings(default_instructions=INSTRUCTIONS))
    assert chat.service.current.instructions.text() == INSTRUCTIONS
    fake_server.add_reply("Bonjour.")
    chat.send("Hello.")

    assert system_blocks(chat_requests(fake_server)[-1]) == [INSTRUCTIONS]
    session = chat.service.current.state.session
    assert session is not None and session.system_prompt == INSTRUCTIONS

    chat.service.new_conversation()
    assert chat.service.current.instructions.set("Be brief.")  # before its first message
    fake_server.add_reply("Yes.")
    chat.send("Is it raining?")
    assert system_blocks(chat_requests(fake_server)[-1]) == ["Be brief."]
    session = chat.service.current.state.session
    assert session is not None and session.system_prompt == "Be brief."


def test_clearing_the_instructions_sends_none(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat(settings=AppSettings(default_instructions=INSTRUCTIONS))
    fake_server.add_reply("Bonjour.")
    chat.send("Hello.")
    assert chat.service.current.instructions.set("   ")
    fake_server.add_reply("Hello again.")
    chat.send("And now?")
    assert system_blocks(chat_requests(fake_server)[-1]) == []


def test_instructions_are_never_condensed_and_count_toward_the_window(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    fake_server.models = [SMALL]
    # A long set of instructions: a sizeable share of the small model's window.
    long_instructions = "Always answer as a mountain guide would. " * 40
    early = SummarizationConfig(condense_while_it_fits=True)  # at the trigger ratio
    chat = start_chat(
        settings=AppSettings(default_instructions=long_instructions, summarization=early)
    )
    chat.run_until(lambda: chat.service.current.state.model_id == SMALL.id)
    state = chat.service.current.gauge.measure()
    assert state is not None and state.breakdown.system > 300

    for turn in range(30):
        fake_server.add_reply(f"Reply {turn}: " + " ".join(f"answer{n}" for n in range(60)))
        chat.send(f"Question {turn}: " + " ".join(f"detail{n}" for n in range(60)))
        if chat.events.named("summary_made"):
            break
    chat.idle()
    (report,) = chat.events.named("summary_made")[-1]
    assert report.trigger is SummaryTrigger.AUTO
    fake_server.add_reply("After the summary.")
    chat.send("One more question.")

    body = chat_requests(fake_server)[-1]
    blocks = system_blocks(body)
    assert blocks[0] == long_instructions.strip()
    assert len(blocks) == 2 and blocks[1].startswith("# Conversation so far")
    assert long_instructions.strip() not in blocks[1], "the summary did not take them in"
    # A cache breakpoint, when the prefix is long enough for one, comes after the memory
    # block only: the instructions and the summaries are cached as one (caching.py).
    assert "cache_control" not in body["system"][0]
    # Every request fitted the window with them counted (DESIGN §3, invariant 3).
    for sent in chat_requests(fake_server):
        text = [text_of_content(sent.get("system", ""))]
        text += [text_of_content(message["content"]) for message in sent["messages"]]
        tokens = sum(count_text_tokens(part) for part in text)
        assert tokens + sent["max_tokens"] <= SMALL.max_input_tokens


def test_instructions_too_long_for_the_model_are_named_and_the_message_is_kept(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    fake_server.models = [SMALL]
    huge = "Always answer as a mountain guide would, with care. " * 350  # ~4.5k tokens
    chat = start_chat(settings=AppSettings(default_instructions=huge))
    chat.run_until(lambda: chat.service.current.state.model_id == SMALL.id)

    assert not chat.service.send("Hello.")
    chat.idle()

    (error,) = chat.events.named("error_raised")[-1]
    assert "instructions for Claude alone" in error.message
    assert "Shorten them" in error.message
    assert chat_requests(fake_server) == [], "nothing was sent"
    assert chat.service.current.state.session is None, "nothing stored: the message stays typed"
