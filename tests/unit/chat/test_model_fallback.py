"""A reply whose model answers 404 `not_found_error` (https://docs.claude.com/en/api/errors)
goes once to the next listed model, in the same row, and the user is told; with no model
left, the failure says what to do. Through the real SDK against the fake server."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.chat.model_fallback import SWITCHED_TITLE, ModelChoice
from app.core.catalog import FALLBACK_MODELS, ModelInfo, model_limits, next_model
from app.core.errors import ModelNotFoundError
from app.core.models import MessageStatus, Role
from app.core.settings import AppSettings, load_settings
from tests.fakes.anthropic_server import MESSAGES_PATH, FakeAnthropicServer
from tests.unit.chat.conftest import SMALL, Chat

StartChat = Callable[..., Chat]

SONNET, OPUS, HAIKU = FALLBACK_MODELS[:3]  # ranked in this order


def asked(fake_server: FakeAnthropicServer) -> list[tuple[str, object]]:
    """(model, messages) of each chat request, oldest first."""
    return [
        (request.body["model"], request.body["messages"])
        for request in fake_server.requests_to(MESSAGES_PATH)
    ]


def withdraw(fake_server: FakeAnthropicServer, *gone: ModelInfo) -> None:
    """The server stops serving `gone` (after Cairn listed them): it answers 404."""
    fake_server.models = [model for model in fake_server.models if model not in gone]


def test_a_withdrawn_model_falls_to_the_next_listed_one_once_and_says_so(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    assert chat.service.current.state.model_id == SONNET.id
    withdraw(fake_server, SONNET)
    fake_server.add_reply("Hello from Opus.")

    chat.send("Which model are you?")

    (question, reply) = chat.stored()
    assert (question.role, question.content) == (Role.USER, "Which model are you?")
    assert (reply.content, reply.status, reply.model) == (
        "Hello from Opus.",
        MessageStatus.COMPLETE,
        OPUS.id,
    )
    (first, second) = asked(fake_server)
    assert (first[0], second[0]) == (SONNET.id, OPUS.id)
    assert first[1] == second[1], "the same request, the question once"
    assert chat.events.named("notice_raised")[-1] == (
        SWITCHED_TITLE,
        "Claude Sonnet 5.5 isn't available to your API key, so Cairn switched this "
        "conversation to Claude Opus 5.5.",
    )
    assert chat.events.named("models_changed")[-1][1] == OPUS.id  # the picker shows it
    assert not chat.events.named("error_raised")
    assert not chat.events.named("message_removed"), "the reply kept its row"
    session_id = chat.service.current.state.session_id
    assert session_id is not None
    stored_session = chat.store.get_session(session_id)
    assert stored_session is not None and stored_session.model == OPUS.id
    assert chat.service.settings.model == OPUS.id
    assert load_settings(chat.paths.settings_file).settings.model == OPUS.id

    fake_server.add_reply("Still Opus.")
    chat.send("And now?")
    assert [model for model, _messages in asked(fake_server)][-1] == OPUS.id
    assert len(chat.events.named("notice_raised")) == 1


def test_a_conversation_reopened_after_a_switch_keeps_the_new_model(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    withdraw(fake_server, SONNET)
    chat.send("Hello")
    chat.service.shutdown()
    chat.store.close()

    fake_server.models = list(FALLBACK_MODELS)  # listed again: the switch still stands
    again = start_chat()

    assert again.service.current.state.model_id == OPUS.id


def test_a_default_for_new_conversations_chosen_elsewhere_is_left_alone(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat(settings=AppSettings(model=HAIKU.id))
    chat.service.new_conversation()
    chat.service.current.state.model_id = SONNET.id  # an older conversation's model
    withdraw(fake_server, SONNET)

    chat.send("Hello")

    assert chat.service.current.state.model_id == OPUS.id
    assert chat.service.settings.model == HAIKU.id


def test_when_the_next_model_is_not_available_either_the_error_says_what_to_do(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    withdraw(fake_server, SONNET, OPUS)

    chat.send("Hello?")

    assert [model for model, _messages in asked(fake_server)] == [SONNET.id, OPUS.id]  # once
    (error,) = chat.events.named("error_raised")[-1]
    assert isinstance(error, ModelNotFoundError)
    assert error.message == (
        "Neither Claude Sonnet 5.5 nor Claude Opus 5.5 is available to your API key. "
        "Choose another model at the top of the window or in Settings (or check your API "
        "key there), then press Retry on your question."
    )
    assert not error.retryable
    (question,) = chat.stored()  # nothing lost, no empty failed row
    assert question.content == "Hello?"

    chat.service.current.model.select(HAIKU.id)
    fake_server.add_reply("Haiku here.")
    chat.service.current.turns.retry()
    chat.idle()
    assert [message.content for message in chat.stored()] == ["Hello?", "Haiku here."]


def test_with_no_other_model_listed_the_error_says_what_to_do(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    fake_server.models = [SMALL]
    chat = start_chat()
    assert chat.service.current.state.model_id == SMALL.id
    # Listed, but not for this key: the API answers 404 all the same.
    fake_server.add_error(404, f"model: {SMALL.id}", path=MESSAGES_PATH)

    chat.send("Hello?")

    assert len(asked(fake_server)) == 1
    (error,) = chat.events.named("error_raised")[-1]
    assert isinstance(error, ModelNotFoundError)
    assert error.message.startswith(
        "Claude Small isn't available to your API key, and no other model is. Choose another"
    )
    assert not chat.events.named("notice_raised")
    assert chat.service.current.state.model_id == SMALL.id
    assert [message.content for message in chat.stored()] == ["Hello?"]


def test_a_continued_reply_falls_to_the_next_model_in_its_own_row(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    fake_server.add_reply("The first half", stop_reason="max_tokens")
    chat.send("Tell me a story")
    (_question, cut) = chat.stored()
    assert cut.status is MessageStatus.CUT_OFF
    withdraw(fake_server, SONNET)
    fake_server.add_reply(" and the second half.")

    assert chat.service.current.endings.continue_reply(cut)
    chat.idle()

    (_question, reply) = chat.stored()
    assert reply.id == cut.id
    assert reply.content == "The first half and the second half."
    assert reply.model == OPUS.id
    assert chat.service.current.state.model_id == OPUS.id


@settings(max_examples=80, deadline=None)
@given(
    steps=st.lists(
        st.tuples(
            st.sampled_from([model.id for model in FALLBACK_MODELS] + ["claude-unlisted-1"]),
            st.booleans(),  # the list replaced (the server listed the models again)
            st.lists(st.sampled_from(FALLBACK_MODELS), unique=True),
        ),
        min_size=1,
        max_size=12,
    )
)
def test_the_fallback_kept_between_replies_is_the_one_found_afresh(
    tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[str, bool, list[ModelInfo]]]
) -> None:
    """`ModelChoice.fallback` keeps its last answer for the same model and list (asked at
    every reply, issue 20): the same as ranking the list again, whatever changed between."""
    listed: list[ModelInfo] = list(FALLBACK_MODELS)
    choice = ModelChoice(
        AppSettings, tmp_path_factory.mktemp("settings") / "settings.json", lambda: listed
    )
    for model_id, replaced, models in steps:
        if replaced:
            listed = list(models)
        following = next_model(model_id, listed)
        assert choice.fallback(model_id) == (
            None if following is None else model_limits(following, listed)
        )
