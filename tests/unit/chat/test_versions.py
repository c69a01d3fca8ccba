"""Edit and resend, Regenerate and versions, through the real SDK against the fake server:
what each request holds (only the shown version and what follows it), what is kept (every
version), what the transcript is told, and the refusals in words (issue 11)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from app.chat.events import Activity
from app.core.conversation import date_line, local_day
from app.core.models import MessageStatus, Role
from app.store.versions import SUMMARIZED_TITLE
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.unit.chat.conftest import Chat

StartChat = Callable[..., Chat]


def dated(text: str) -> str:
    return f"{date_line(local_day(datetime.now(UTC)))}\n\n{text}"


def last_request(fake_server: FakeAnthropicServer) -> list[object]:
    messages = fake_server.turns()[-1].body["messages"]
    assert isinstance(messages, list)
    return messages


def two_turns(chat: Chat) -> None:
    chat.server.add_reply("Lisbon is lovely.")
    chat.send("Where should I go?")
    chat.server.add_reply("Pack light.")
    chat.send("What should I pack?")


def test_regenerate_sends_the_question_again_and_keeps_both_versions(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    two_turns(chat)
    first = chat.stored()[-1]
    chat.events.clear()

    fake_server.add_reply("Bring a raincoat.")
    assert chat.service.current.versions.regenerate(first)
    chat.idle()

    assert last_request(fake_server) == [
        {"role": "user", "content": dated("Where should I go?")},
        {"role": "assistant", "content": "Lisbon is lovely."},
        {"role": "user", "content": "What should I pack?"},
    ]
    *_, newest = chat.stored()
    assert (newest.content, newest.version_number, newest.version_count) == (
        "Bring a raincoat.",
        2,
        2,
    )
    assert chat.events.named("message_removed") == [(first.id,)]
    assert [m.id for (m,) in chat.events.named("message_added")] == [newest.id]
    # The earlier version stays in the archive.
    (kept,) = chat.store.messages_by_id({first.id})
    assert kept.content == "Pack light." and kept.version_number == 1


def test_the_next_request_holds_only_the_shown_version(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    two_turns(chat)
    fake_server.add_reply("Bring a raincoat.")
    chat.service.current.versions.regenerate(chat.stored()[-1])
    chat.idle()
    regenerated = chat.stored()[-1]

    chat.service.current.versions.show(regenerated.id, 1)  # back to "Pack light."
    fake_server.add_reply("You're welcome.")
    chat.send("Thanks")

    assert last_request(fake_server)[-2:] == [
        {"role": "assistant", "content": "Pack light."},
        {"role": "user", "content": "Thanks"},
    ]


def test_editing_a_question_replaces_what_followed_and_both_branches_stay(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    two_turns(chat)
    first_branch = [m.id for m in chat.stored()]
    chat.events.clear()

    fake_server.add_reply("Porto is lovely.")
    assert chat.service.current.versions.edit(first_branch[0], "Where in Portugal should I go?")
    chat.idle()

    assert last_request(fake_server) == [
        {"role": "user", "content": dated("Where in Portugal should I go?")},
    ]
    assert [(m.content, m.version_number, m.version_count) for m in chat.stored()] == [
        ("Where in Portugal should I go?", 2, 2),
        ("Porto is lovely.", 1, 1),
    ]
    removed = [message_id for (message_id,) in chat.events.named("message_removed")]
    assert sorted(removed) == first_branch  # the whole first branch left the screen

    edited = chat.stored()[0]
    chat.service.current.versions.show(edited.id, 1)
    assert [m.content for m in chat.stored()] == [
        "Where should I go?",
        "Lisbon is lovely.",
        "What should I pack?",
        "Pack light.",
    ]
    assert [e.id for e in chat.service.current.state.tail.entries] == [m.id for m in chat.stored()]


def test_versions_survive_a_restart(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    two_turns(chat)
    fake_server.add_reply("Bring a raincoat.")
    chat.service.current.versions.regenerate(chat.stored()[-1])
    chat.idle()
    session_id = chat.service.current.state.session_id
    chat.service.shutdown()
    chat.store.close()

    again = start_chat()
    assert again.service.current.state.session_id == session_id
    again.idle()
    (_, _, page, _) = ("", "", *again.events.named("conversation_opened")[-1][1:])
    newest = page[-1]
    assert (newest.content, newest.version_number, newest.version_count) == (
        "Bring a raincoat.",
        2,
        2,
    )
    again.service.current.versions.show(newest.id, 1)
    assert again.stored()[-1].content == "Pack light."


def test_an_offline_regenerate_keeps_the_earlier_reply_shown(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    two_turns(chat)
    earlier = chat.stored()[-1]
    chat.events.clear()

    fake_server.add_error(400, "Bad request", error_type="invalid_request_error")
    chat.service.current.versions.regenerate(earlier)
    chat.idle()

    assert chat.events.named("error_raised")
    assert [(m.id, m.content) for m in chat.stored()][-1] == (earlier.id, "Pack light.")
    assert chat.stored()[-1].version_count == 1
    assert chat.service.current.state.tail.entries[-1].id == earlier.id
    # The transcript was told nothing left, or was given the reply back.
    added = [m.id for (m,) in chat.events.named("message_added")]
    removed = [m for (m,) in chat.events.named("message_removed")]
    assert removed.count(earlier.id) == added.count(earlier.id)


def test_regenerate_while_a_reply_streams_is_refused_in_words(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    two_turns(chat)
    earlier = chat.stored()[-1]
    fake_server.add_reply("One two three four five six", chunk_delay=0.2)
    chat.service.send("And then?")
    chat.run_until(lambda: chat.service.current.state.activity is Activity.REPLYING)

    assert not chat.service.current.versions.regenerate(earlier)
    assert not chat.service.current.versions.edit(chat.stored()[0].id, "Other")
    (error,) = chat.events.named("error_raised")[-1]
    assert "still writing" in error.message
    chat.service.current.turns.stop()
    chat.idle()
    assert [m.content for m in chat.stored()][:4] == [
        "Where should I go?",
        "Lisbon is lovely.",
        "What should I pack?",
        "Pack light.",
    ]


def test_a_summarized_question_cannot_be_edited_and_says_so(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    for n in range(8):
        fake_server.add_reply(f"Answer {n}")
        chat.send(f"Question {n}")
    assert chat.service.current.condensing.summarize(keep_recent=2)
    chat.run_until(lambda: bool(chat.service.current.state.summaries))
    chat.idle()
    first = chat.store.messages(chat.service.current.state.session_id or "")[0]
    assert first.summary_id is not None

    assert not chat.service.current.versions.edit(first.id, "Something else")
    (error,) = chat.events.named("error_raised")[-1]
    assert error.title == SUMMARIZED_TITLE
    assert chat.stored()[0].content == "Question 0"


def test_a_declined_reply_is_not_regenerated(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    fake_server.add_reply("I can't help with that.", stop_reason="refusal")
    chat.send("Something")
    declined = chat.stored()[-1]
    assert declined.status is MessageStatus.DECLINED and declined.role is Role.ASSISTANT
    assert not chat.service.current.versions.regenerate(declined)
    (error,) = chat.events.named("error_raised")[-1]
    assert "Ask another model" in error.message and "edit your message" in error.message
