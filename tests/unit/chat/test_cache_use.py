"""The conversation on screen says what its replies reused from Claude's prompt cache,
through the real SDK against the fake server's cache (tests/fakes/prompt_cache.py)."""

from __future__ import annotations

from collections.abc import Callable

from app.core.caching import CacheUse
from app.core.models import Role
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.unit.chat.conftest import Chat

StartChat = Callable[..., Chat]

# About 700 tokens a question: the prefix passes Sonnet's 1,024 on the second turn.
QUESTION = "Tell me about the path from Glenmore over Bynack More to the Fords of Avon. " * 40


def told(chat: Chat) -> list[CacheUse]:
    return [args[0] for args in chat.events.named("cache_use_changed")]


def stored_use(chat: Chat) -> CacheUse:
    use = CacheUse()
    for message in chat.stored():
        if message.role is Role.ASSISTANT and message.usage is not None:
            use = use.combined(CacheUse.of(message.usage, message.model))
    return use


def test_each_reply_adds_what_it_reused_and_reopening_says_the_same(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    for turn in range(4):
        fake_server.add_reply(f"Answer {turn}: the path is long and the water is clear.")
        chat.send(f"{turn}. {QUESTION}")

    uses = told(chat)
    last = uses[-1]
    assert last == stored_use(chat)
    assert last.read > 0
    assert last.read_share > 0.3
    # What Claude wrote and the estimated cost, from the usage and model of each reply.
    assert last.output > 0
    assert (last.cost > 0) != bool(last.unpriced)
    assert [u.read for u in uses] == sorted(u.read for u in uses)
    session_id = chat.service.current.state.session_id
    assert session_id is not None

    chat.service.new_conversation()
    assert told(chat)[-1] == CacheUse()
    chat.service.open_session(session_id)
    assert told(chat)[-1] == CacheUse(), "read in the background, not on the loop's thread"
    chat.run_until(lambda: told(chat)[-1] == last)


def test_a_reply_off_screen_does_not_change_the_figure_on_screen(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    fake_server.add_reply("First.")
    chat.send(QUESTION)
    first = chat.service.current.state.session_id
    chat.start_streaming(f"Again: {QUESTION}", parts=20)
    chat.service.new_conversation()
    chat.events.clear()
    chat.run_until(lambda: chat.service.runner.running == 0)

    assert told(chat) == []
    assert first is not None
    chat.service.open_session(first)
    chat.run_until(lambda: told(chat)[-1] == stored_use(chat) and told(chat)[-1].total > 0)


def test_a_reply_is_counted_from_what_its_job_read_not_on_the_loops_thread(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    fake_server.add_reply("First.")
    chat.send(QUESTION)
    tracker = chat.service.cache_use
    loop_store = chat.service.current.state.shared.store
    reads: list[int] = []
    read = loop_store.cache_use

    def counted(session_id: str, after_seq: int = 0) -> tuple[CacheUse, int]:
        reads.append(after_seq)
        return read(session_id, after_seq)

    loop_store.cache_use = counted  # type: ignore[method-assign]
    for turn in range(2):
        fake_server.add_reply(f"Answer {turn}.")
        chat.send(f"{turn}. {QUESTION}")

    # Nothing read on the loop's thread: the question's move is read by the reply's job
    # with the reply, once it is saved (issue 20).
    assert reads == []
    assert told(chat)[-1] == stored_use(chat)
    assert told(chat)[-1].total > 0
    assert tracker.use == stored_use(chat)
