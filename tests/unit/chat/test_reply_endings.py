"""Every stop reason through the real SDK against the fake server: what is stored, what
the next request holds, Continue, a declined exchange left out, a filled window condensed
and continued once, a paused turn continued by itself, and no empty failed row."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from app.chat.events import Activity
from app.chat.stop_reasons import CONTINUE_PROMPT, MAX_PAUSE_CONTINUATIONS
from app.core.catalog import FALLBACK_MODELS, ModelInfo
from app.core.conversation import date_line, local_day
from app.core.errors import ApiError
from app.core.models import MessageStatus, Role
from app.core.settings import AppSettings
from app.core.summarization_config import SummarizationConfig
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.unit.chat.conftest import SMALL, Chat

StartChat = Callable[..., Chat]


def dated(text: str) -> str:
    return f"{date_line(local_day(datetime.now(UTC)))}\n\n{text}"


def words(label: str, count: int) -> str:
    return " ".join(f"{label}{index}" for index in range(count))


def small_model(fake_server: FakeAnthropicServer, start_chat: StartChat) -> Chat:
    fake_server.models = [SMALL]
    # Condensing at the trigger ratio (by default only once the conversation no longer fits).
    early = SummarizationConfig(condense_while_it_fits=True)
    chat = start_chat(settings=AppSettings(summarization=early))
    chat.run_until(lambda: chat.service.current.state.model_id == SMALL.id)
    return chat


def chat_requests(fake_server: FakeAnthropicServer) -> list[dict[str, object]]:
    return [request.body for request in fake_server.requests_to("/v1/messages")]


@pytest.mark.parametrize("stop_reason", ["end_turn", "stop_sequence"])
def test_a_finished_reply_is_complete(
    start_chat: StartChat, fake_server: FakeAnthropicServer, stop_reason: str
) -> None:
    chat = start_chat()
    fake_server.add_reply("All done.", stop_reason=stop_reason)
    chat.send("Hello")
    assert chat.stored()[-1].status is MessageStatus.COMPLETE


def test_max_tokens_cuts_the_reply_off_and_continue_appends_to_it(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = small_model(fake_server, start_chat)
    fake_server.add_reply(words("story", 600))  # more than SMALL's 400 output tokens
    chat.send("Tell me a long story")
    cut = chat.stored()[-1]
    assert cut.status is MessageStatus.CUT_OFF
    assert cut.content and words("story", 600).startswith(cut.content)
    assert len(cut.content) < len(words("story", 600))

    fake_server.add_reply(" and that is the end.")
    chat.events.clear()
    assert chat.service.current.endings.continue_reply(cut)
    chat.idle()
    (stored_question, stored_reply) = chat.stored()
    assert stored_question.content == "Tell me a long story"
    assert stored_reply.id == cut.id, "the same row goes on"
    assert stored_reply.content == cut.content + " and that is the end."
    assert stored_reply.status is MessageStatus.COMPLETE
    assert not chat.events.named("message_added") or all(
        added.id == cut.id for (added,) in chat.events.named("message_added")
    )
    # The request: the partial reply as Claude's turn, then the request to go on.
    last = chat_requests(fake_server)[-1]["messages"]
    assert last == [
        {"role": "user", "content": dated("Tell me a long story")},
        {"role": "assistant", "content": cut.content},
        {"role": "user", "content": CONTINUE_PROMPT},
    ]


def test_continue_survives_a_restart(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = small_model(fake_server, start_chat)
    fake_server.add_reply(words("story", 600))
    chat.send("Tell me a long story")
    cut = chat.stored()[-1]
    chat.service.shutdown()
    chat.store.close()

    again = start_chat()
    again.run_until(lambda: again.service.current.state.model_id == SMALL.id)
    again.service.open_session(cut.session_id)
    again.idle()
    (stored,) = [m for m in again.stored() if m.id == cut.id]
    assert stored.status is MessageStatus.CUT_OFF
    assert again.service.current.endings.can_continue(stored)
    fake_server.add_reply(" The end.")
    assert again.service.current.endings.continue_reply(stored)
    again.idle()
    assert again.stored()[-1].content == cut.content + " The end."


def test_continue_is_refused_in_words_for_an_older_reply(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = small_model(fake_server, start_chat)
    fake_server.add_reply(words("story", 600))
    chat.send("One")
    cut = chat.stored()[-1]
    fake_server.add_reply("Two.")
    chat.send("Two")
    assert not chat.service.current.endings.continue_reply(cut)
    (error,) = chat.events.named("error_raised")[-1]
    assert "latest reply" in error.message


def test_a_declined_exchange_is_kept_but_left_out_of_later_requests(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    fake_server.add_reply("Paris.")
    chat.send("Capital of France?")
    fake_server.add_reply("I can", stop_reason="refusal")
    chat.send("Something Claude declines")
    question, reply = chat.stored()[2:]
    assert reply.content == "I can" and reply.status is MessageStatus.DECLINED
    assert question.status is MessageStatus.DECLINED
    # Why, as the API explained it (stop_details), kept with the reply: not in memory only.
    assert reply.refusal == "This request was declined because it could enable cyber harm."
    assert question.refusal is None
    updated = [message for (message,) in chat.events.named("message_updated")]
    assert any(m.id == question.id and m.status is MessageStatus.DECLINED for m in updated)

    fake_server.add_reply("Berlin.")
    chat.send("Capital of Germany?")
    assert chat_requests(fake_server)[-1]["messages"] == [
        {"role": "user", "content": dated("Capital of France?")},
        {"role": "assistant", "content": "Paris."},
        {"role": "user", "content": "Capital of Germany?"},
    ]
    # Kept in the archive: still there after all.
    assert [m.content for m in chat.stored()][2:4] == ["Something Claude declines", "I can"]


def test_a_paused_turn_is_continued_by_itself(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    fake_server.add_reply("Part one. ", stop_reason="pause_turn")
    fake_server.add_reply("Part two.")
    chat.send("Go")
    (reply,) = chat.stored()[1:]
    assert reply.content == "Part one. Part two." and reply.status is MessageStatus.COMPLETE
    # The paused turn goes back as Claude's turn, as it was, then a user turn asks to go
    # on: never a prefill, which models from Claude 4.6 on refuse (the fake too).
    *_, paused, go_on = chat_requests(fake_server)[-1]["messages"]
    assert paused == {"role": "assistant", "content": "Part one. "}
    assert go_on["role"] == "user" and CONTINUE_PROMPT in str(go_on["content"])


def test_a_turn_that_keeps_pausing_stops_with_continue(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    for index in range(MAX_PAUSE_CONTINUATIONS + 1):
        fake_server.add_reply(f"Part {index}. ", stop_reason="pause_turn")
    chat.send("Go")
    (reply,) = chat.stored()[1:]
    assert reply.status is MessageStatus.PAUSED
    assert len(chat_requests(fake_server)) == MAX_PAUSE_CONTINUATIONS + 1
    assert chat.service.current.endings.can_continue(reply)
    fake_server.add_reply("Done.")
    assert chat.service.current.endings.continue_reply(reply)
    chat.idle()
    assert chat.stored()[-1].content.endswith("Part 3. Done.")
    # A paused reply goes on with Claude's turn, then a user turn: never a prefill.
    assert chat_requests(fake_server)[-1]["messages"][-1]["role"] == "user"


def test_a_filled_window_is_condensed_and_the_reply_continued_once(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = small_model(fake_server, start_chat)
    for turn in range(5):
        fake_server.add_reply(f"Reply {turn}: " + words("answer", 120))
        chat.send(f"Question {turn}: " + words("detail", 120))
    partial = "Half of it: " + words("half", 150)
    fake_server.add_reply(partial, stop_reason="model_context_window_exceeded")
    fake_server.add_reply(" and the rest.")
    chat.events.clear()
    chat.service.send("One more question")
    chat.run_until(lambda: bool(chat.events.named("summary_made")))
    chat.idle()
    reply = chat.stored()[-1]
    assert reply.content == partial + " and the rest."
    assert reply.status is MessageStatus.COMPLETE
    assert ("Summarizing earlier messages so Claude can finish its reply…",) in chat.events.named(
        "status_changed"
    )


def test_a_window_filled_twice_is_left_cut_off_with_continue(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    fake_server.add_reply("First half", stop_reason="model_context_window_exceeded")
    fake_server.add_reply(" and more", stop_reason="model_context_window_exceeded")
    chat.send("Go")
    reply = chat.stored()[-1]
    assert reply.content == "First half and more"
    assert reply.status is MessageStatus.CUT_OFF
    assert len(chat_requests(fake_server)) == 2, "one retry only"
    assert chat.service.current.state.activity is Activity.IDLE


def test_a_failed_reply_that_received_nothing_leaves_no_row(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    fake_server.add_error(401, path="/v1/messages")
    chat.send("Are you there?")
    (error,) = chat.events.named("error_raised")[-1]
    assert isinstance(error, ApiError)
    (question,) = chat.stored()
    assert question.role is Role.USER
    (added,) = [m for (m,) in chat.events.named("message_added") if m.role is Role.ASSISTANT]
    assert chat.events.named("message_removed") == [(added.id,)]
    assert chat.service.current.state.tail.tally.last_role is Role.USER
    fake_server.add_reply("Yes.")
    chat.service.current.turns.retry()
    chat.idle()
    assert [m.content for m in chat.stored()] == ["Are you there?", "Yes."]


def test_a_failed_reply_keeps_what_arrived(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    fake_server.add_stream_error(text_before="Half an ans")
    chat.send("Question")
    reply = chat.stored()[-1]
    assert reply.status is MessageStatus.ERROR and reply.content == "Half an ans"
    assert not chat.events.named("message_removed")


# --- stop means stop


def test_stop_during_a_retry_wait_ends_at_once_and_leaves_no_empty_row(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    fake_server.add_error(529, retry_after=30, path="/v1/messages")
    assert chat.service.send("Are you there?")
    chat.run_until(
        lambda: any("retrying" in text for (text,) in chat.events.named("status_changed"))
    )
    assert ("Claude is busy — retrying in 30 s…",) in chat.events.named("status_changed")
    chat.service.current.turns.stop()
    chat.idle()  # gives up (TimeoutError) well before the 30 s wait would end
    assert [m.content for m in chat.stored()] == ["Are you there?"]
    assert len(chat.events.named("message_removed")) == 1
    assert not chat.events.named("error_raised")
    fake_server.add_reply("Yes.")
    chat.service.current.turns.retry()
    chat.idle()
    assert [m.content for m in chat.stored()] == ["Are you there?", "Yes."]


def test_an_exact_count_near_the_limit_is_stoppable_and_its_retries_shown(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = small_model(fake_server, start_chat)
    fake_server.add_reply("Noted.")
    chat.send("Remember this: " + words("detail", 300))
    # A message that brings the request near the limit: the reply's request is then
    # counted by the server first (ReplyJob._build).
    count = 0
    while True:
        text = "And one more thing: " + words("more", count)
        state = chat.service.current.gauge.measure(draft=text)
        assert state is not None
        if state.used >= 0.97 * state.usable:
            break
        count += 5
    assert state.near_limit and state.fits
    fake_server.add_error(529, retry_after=30, path="/v1/messages/count_tokens")
    chat.events.clear()
    assert chat.service.send(text)
    chat.run_until(
        lambda: any("retrying" in text for (text,) in chat.events.named("status_changed"))
    )
    sent_before = len(fake_server.requests_to("/v1/messages"))
    chat.service.current.turns.stop()
    chat.idle()  # gives up (TimeoutError) well before the 30 s wait would end
    assert len(fake_server.requests_to("/v1/messages")) == sent_before, "nothing was sent after"
    assert chat.stored()[-1].content == text
    assert len(fake_server.requests_to("/v1/messages/count_tokens")) == 1
    assert not chat.events.named("error_raised")


# --- continuations on the models whose thinking is always on (Opus 5.5, Fable 5.1)

ALWAYS_THINKING = [model for model in FALLBACK_MODELS if model.thinking == "always"]


def thinking_chat(
    fake_server: FakeAnthropicServer, start_chat: StartChat, model: ModelInfo
) -> Chat:
    fake_server.models = [model]
    chat = start_chat(settings=AppSettings().model_copy(update={"model": model.id}))
    chat.run_until(lambda: chat.service.current.state.model_id == model.id)
    return chat


def assert_thought_every_time(fake_server: FakeAnthropicServer) -> None:
    """Every request asked for the thinking the model does anyway, and every answer began
    with a thinking block (as the strict fake sends it on these models)."""
    for body in chat_requests(fake_server):
        assert body["thinking"] == {"type": "adaptive", "display": "summarized"}
        assert body["messages"][-1]["role"] == "user", "never a prefill"  # type: ignore[index]
    for content in fake_server.sent_content:
        assert content[0]["type"] == "thinking"


@pytest.mark.parametrize("model", ALWAYS_THINKING, ids=lambda model: model.id)
def test_a_paused_turn_goes_on_by_itself_on_a_model_that_always_thinks(
    start_chat: StartChat, fake_server: FakeAnthropicServer, model: ModelInfo
) -> None:
    assert model.id in ("claude-opus-5-5", "claude-fable-5-1")
    chat = thinking_chat(fake_server, start_chat, model)
    fake_server.add_reply("Part one. ", stop_reason="pause_turn")
    fake_server.add_reply("Part two.")
    chat.send("Go")
    assert chat.events.named("error_raised") == []
    (reply,) = chat.stored()[1:]
    assert reply.content == "Part one. Part two." and reply.status is MessageStatus.COMPLETE
    assert reply.thinking, "the thinking shown above the reply is kept"
    *_, paused, go_on = chat_requests(fake_server)[-1]["messages"]  # type: ignore[misc]
    assert paused == {"role": "assistant", "content": "Part one. "}
    assert go_on["role"] == "user" and CONTINUE_PROMPT in str(go_on["content"])
    assert_thought_every_time(fake_server)


@pytest.mark.parametrize("model", ALWAYS_THINKING, ids=lambda model: model.id)
def test_continue_after_max_tokens_on_a_model_that_always_thinks(
    start_chat: StartChat, fake_server: FakeAnthropicServer, model: ModelInfo
) -> None:
    # The model's output limit made small, so a long story is cut off; thinking counts
    # against it too ("Thinking tokens count toward your max_tokens limit").
    chat = thinking_chat(fake_server, start_chat, model.model_copy(update={"max_tokens": 600}))
    fake_server.add_reply(words("story", 900))
    chat.send("Tell me a long story")
    cut = chat.stored()[-1]
    assert cut.status is MessageStatus.CUT_OFF
    assert cut.content and words("story", 900).startswith(cut.content)

    fake_server.add_reply(" and that is the end.")
    assert chat.service.current.endings.continue_reply(cut)
    chat.idle()
    assert chat.events.named("error_raised") == []
    reply = chat.stored()[-1]
    assert reply.id == cut.id and reply.content == cut.content + " and that is the end."
    assert reply.status is MessageStatus.COMPLETE
    question, answer, go_on = chat_requests(fake_server)[-1]["messages"]  # type: ignore[misc]
    assert question == {"role": "user", "content": dated("Tell me a long story")}
    assert answer == {"role": "assistant", "content": cut.content}
    # (On these models a prefix of 512 tokens is cached: the breakpoint is on this turn.)
    assert go_on["role"] == "user" and go_on["content"][0]["text"] == CONTINUE_PROMPT
    assert_thought_every_time(fake_server)
