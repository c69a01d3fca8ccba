"""Automatic titles through the real SDK against the fake server: written after the
first reply by the summarizer's model, never over a title the user gave, and left as
the first message gave them offline or with offline summaries (issue 23)."""

from __future__ import annotations

from collections.abc import Callable

from app.core.settings import AppSettings
from app.core.summarization_config import SummarizationConfig
from app.core.summary import SummaryMode
from app.core.text import title_from_first_message
from app.core.titles import TITLE_TOOL
from tests.fakes.anthropic_server import FakeAnthropicServer, forces_a_tool
from tests.unit.chat.conftest import Chat

StartChat = Callable[..., Chat]
QUESTION = "Could you help me plan a long weekend in Lisbon for my parents next March?"


def title_calls(fake_server: FakeAnthropicServer) -> list[dict[str, object]]:
    return [
        request.body
        for request in fake_server.requests_to("/v1/messages")
        if forces_a_tool(request) and request.body["tool_choice"]["name"] == TITLE_TOOL
    ]


def title(chat: Chat) -> str:
    session = chat.service.current.state.session
    assert session is not None
    return session.title


def test_the_first_reply_brings_a_title_written_by_a_small_model(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    fake_server.add_reply("Gladly! Here is a plan for three easy days.")
    chat.send(QUESTION)
    assert title(chat) == "Could you help me plan a"  # the fake model's title
    (call,) = title_calls(fake_server)
    assert call["model"] == SummarizationConfig().summarizer_models[0]
    stored = chat.store.get_session(chat.service.current.state.session_id or "")
    assert stored is not None and stored.title == "Could you help me plan a"
    assert ("Could you help me plan a",) in [
        (session.title,) for (session,) in chat.events.named("session_changed")
    ]
    fake_server.add_reply("And a restaurant list.")
    chat.send("Add some restaurants too.")
    assert len(title_calls(fake_server)) == 1, "only after the first reply"


def test_a_title_the_user_gave_meanwhile_stays(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    fake_server.add_reply("Gladly!")
    # The title's answer comes late: the user renames the conversation first.
    fake_server.add_tool_fault("timeout", delay=1.5)
    assert chat.service.send(QUESTION)
    conversation = chat.service.current
    chat.run_until(lambda: conversation.titles.running)
    session_id = conversation.state.session_id
    assert session_id is not None
    chat.service.rename_session(session_id, "Parents in Lisbon")
    chat.run_until(lambda: not conversation.titles.running)
    assert len(title_calls(fake_server)) == 1
    assert title(chat) == "Parents in Lisbon"
    assert chat.store.get_session(session_id).title == "Parents in Lisbon"  # type: ignore[union-attr]


def test_offline_summaries_keep_titles_off_claude_too(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    settings = AppSettings(summarization=SummarizationConfig(mode=SummaryMode.RULE))
    chat = start_chat(settings=settings)
    fake_server.add_reply("Gladly!")
    chat.send(QUESTION)
    assert title_calls(fake_server) == []
    assert title(chat) == title_from_first_message(QUESTION)


def test_when_no_model_answers_the_first_message_title_stays(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    fake_server.add_reply("Gladly!")
    fake_server.add_tool_fault("overloaded", times=4)
    chat.send(QUESTION)
    assert title_calls(fake_server), "it was asked"
    assert title(chat) == title_from_first_message(QUESTION)
    assert chat.events.named("error_raised") == [], "a missing title is no error to show"


def test_a_short_first_message_keeps_its_title_without_asking(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    fake_server.add_reply("Hello!")
    chat.send("Say hello")
    assert title_calls(fake_server) == []
    assert title(chat) == "Say hello"
