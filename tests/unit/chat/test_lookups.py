"""The archive tool loop (app/chat/lookups.py) through the service, against the fake
server through the real SDK: tool_use → tool_result → continued text, bounded, stoppable,
surviving a server error, and the lookups kept."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from app.chat.lookups import MIN_ANSWER_TOKENS, TOOL_FRAMING_TOKENS, ArchiveLookups, tool_offer
from app.core.context import BuiltRequest, ContextBreakdown, ContextState
from app.core.errors import ServerError
from app.core.lookup import (
    TOOL_NAME,
    TOOL_SYSTEM_PROMPT_TOKENS,
    Lookup,
    summary_line,
    tool_definition,
    tool_result_text,
)
from app.core.models import MessageStatus, Role
from app.core.paths import AppPaths
from app.core.settings import AppSettings, RecallSettings
from app.llm.provider import CancelToken, ChatRequest, ReplyResult, StreamCallbacks, ToolCall
from app.store.database import open_database
from app.store.lookups import LookupStore
from app.store.search import ArchiveSearch
from app.store.sessions import SessionStore
from app.store.summaries import SummaryStore
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.unit.chat.conftest import Chat
from tests.unit.store.test_summaries import condensed

StartChat = Callable[..., Chat]

ARCHIVED = [
    (Role.USER, "Please remember: the gate code is AX-7731 for the new flat."),
    (Role.ASSISTANT, "Noted, the gate code is AX-7731."),
    (Role.USER, "We also chose the blue van for moving day."),
    (Role.ASSISTANT, "The blue van it is."),
]
LIVE = [(Role.USER, "Lovely weather today."), (Role.ASSISTANT, "It is, enjoy it.")]


def seeded(start_chat: StartChat, model: str = "claude-sonnet-4-5", **recall: Any) -> Chat:
    """A conversation whose first four messages are condensed into a summary (archived);
    on `model` when the server lists it (else the best listed: Sonnet 5.5)."""
    paths = AppPaths.from_environment()
    paths.ensure()
    opened = open_database(paths.database)
    sessions = SessionStore(opened.connection, database=opened.path)
    session = sessions.create_session("Moving house", model)
    messages = [sessions.append_message(session.id, role, text) for role, text in ARCHIVED + LIVE]
    summaries = SummaryStore.open(paths.database)
    summaries.commit_summary(condensed(messages[:4]))
    summaries.close()
    sessions.close()
    chat = start_chat(settings=AppSettings(recall=RecallSettings(**recall)))
    chat.service.open_session(session.id)
    chat.run_until(lambda: chat.service.current.state.loaded)
    return chat


def content_of(request: Any, index: int) -> Any:
    return request.body["messages"][index]["content"]


def test_claude_searches_the_archive_and_answers_with_what_it_found(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = seeded(start_chat)
    fake_server.add_tool_use(
        TOOL_NAME, {"query": "gate code"}, tool_id="toolu_a", text_before="Let me check."
    )
    fake_server.add_reply("The gate code is AX-7731.")
    fake_server.clear_requests()
    chat.send("What was the gate code?")

    first, second = fake_server.requests_to("/v1/messages")
    (tool,) = first.body["tools"]
    assert tool["name"] == TOOL_NAME and tool["input_schema"]["required"] == ["query"]
    assert first.body["tool_choice"] == {"type": "auto"}
    # The follow-up repeats the request, then the assistant's blocks and the results.
    assert second.body["messages"][:-2] == first.body["messages"]
    assistant, results = second.body["messages"][-2:]
    assert assistant["role"] == "assistant"
    # Sonnet 5.5 writes its words between tool calls as thinking (whats-new-sonnet-5-5):
    # the turn goes back exactly as it came, every block, in order.
    assert [block["type"] for block in assistant["content"]] == ["thinking", "tool_use"]
    assert assistant["content"] == fake_server.sent_content[0]
    assert assistant["content"][1]["input"] == {"query": "gate code"}
    assert results["role"] == "user"
    (result,) = results["content"]
    assert result["type"] == "tool_result" and result["tool_use_id"] == "toolu_a"
    assert "AX-7731" in result["content"] and "[#1 · user · " in result["content"]
    assert "Lovely weather" not in result["content"], "live messages are sent already"

    reply = chat.stored()[-1]
    assert (reply.content, reply.status) == ("The gate code is AX-7731.", MessageStatus.COMPLETE)
    assert reply.thinking.startswith("Let me check."), "shown above the reply, not in it"
    (told,) = chat.events.named("lookup_made")
    lookup: Lookup = told[0]
    assert (lookup.message_id, lookup.ordinal, lookup.query) == (reply.id, 1, "gate code")
    assert [hit.seq for hit in lookup.hits] == [1, 2]
    assert chat.service.archive.lookups([reply.id]) == {reply.id: (lookup,)}
    # What the reply cost is both requests' (issue 19 item 8).
    assert reply.usage is not None and reply.usage.requests == 2
    assert reply.usage.total_input_tokens == sum(
        fake_server.count_input_tokens(request.body) for request in (first, second)
    )
    assert fake_server.count_input_tokens(first.body) > TOOL_SYSTEM_PROMPT_TOKENS


def test_the_lookups_survive_a_restart(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = seeded(start_chat)
    fake_server.add_tool_use(TOOL_NAME, {"query": "blue van"}, tool_id="toolu_b")
    fake_server.add_reply("The blue one.")
    chat.send("Which van?")
    reply = chat.stored()[-1]
    chat.service.shutdown()

    again = start_chat(settings=None)
    again.service.open_session(reply.session_id)
    again.run_until(lambda: again.service.current.state.loaded)
    (opened,) = again.events.named("conversation_opened")[-1:]
    assert opened[1][-1] == reply
    (lookup,) = again.service.archive.lookups([reply.id])[reply.id]
    assert lookup.query == "blue van"
    assert "blue van" in lookup.hits[0].text


def test_after_max_lookups_claude_must_answer(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = seeded(start_chat, max_lookups=2)
    for index in range(3):
        fake_server.add_tool_use(TOOL_NAME, {"query": f"code {index}"}, tool_id=f"toolu_{index}")
    fake_server.add_reply("Here is what I found.")
    fake_server.clear_requests()
    chat.send("Search a lot")

    requests = fake_server.requests_to("/v1/messages")
    assert [r.body["tool_choice"] for r in requests] == [
        {"type": "auto"},
        {"type": "auto"},
        {"type": "none"},
    ]
    assert fake_server.pending_script == 1, "with tool_choice none the third call never came"
    assert len(chat.events.named("lookup_made")) == 2
    assert chat.stored()[-1].content == "Here is what I found."


def test_a_call_beyond_the_bound_in_one_turn_is_refused(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    from tests.fakes.anthropic_server import Reply, ToolUseBlock

    chat = seeded(start_chat, max_lookups=1)
    fake_server.add(
        Reply(
            blocks=(
                ToolUseBlock(TOOL_NAME, {"query": "gate"}, id="toolu_1"),
                ToolUseBlock(TOOL_NAME, {"query": "van"}, id="toolu_2"),
            ),
            stop_reason="tool_use",
        )
    )
    fake_server.add_reply("Done.")
    fake_server.clear_requests()
    chat.send("Both, please")
    _first, second = fake_server.requests_to("/v1/messages")
    results = second.body["messages"][-1]["content"]
    assert [r["tool_use_id"] for r in results] == ["toolu_1", "toolu_2"]
    assert "is_error" not in results[0] and results[1]["is_error"] is True
    assert "at most 1 searches" in results[1]["content"]
    assert second.body["tool_choice"] == {"type": "none"}
    assert chat.stored()[-1].status is MessageStatus.COMPLETE


def test_stop_during_the_continued_stream_keeps_every_round(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = seeded(start_chat, "claude-sonnet-4-6")  # text between calls stays text
    fake_server.add_tool_use(TOOL_NAME, {"query": "gate"}, text_before="Looking.")
    chat.start_streaming("The code?", parts=200, word="word", until="word3")
    chat.service.current.turns.stop()
    chat.idle()
    reply = chat.stored()[-1]
    assert reply.status is MessageStatus.STOPPED
    assert reply.content.startswith("Looking.\n\nword0 word1 word2 word3")
    assert len(chat.events.named("lookup_made")) == 1


def test_stop_while_claude_writes_the_tool_call_sends_nothing_more(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = seeded(start_chat, "claude-sonnet-4-6")  # text between calls stays text
    fake_server.add_tool_use(
        TOOL_NAME,
        {"query": "gate code for the new flat"},
        text_before="Let me look.",
        chunk_delay=0.3,
    )
    fake_server.add_reply("never asked for")
    fake_server.clear_requests()
    assert chat.service.send("The code?")
    chat.run_until(
        lambda: (
            tuple(t for _, t in chat.events.named("message_text_changed"))[-1:] == ("Let me look.",)
        )
    )
    chat.service.current.turns.stop()  # while the tool_use block's input streams
    chat.idle()
    assert len(fake_server.requests_to("/v1/messages")) == 1
    assert fake_server.pending_script == 1
    reply = chat.stored()[-1]
    assert (reply.status, reply.content) == (MessageStatus.STOPPED, "Let me look.")
    assert chat.events.named("lookup_made") == []


def test_a_server_error_mid_loop_keeps_the_text_and_the_lookup(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = seeded(start_chat, "claude-sonnet-4-6")  # text between calls stays text
    fake_server.add_tool_use(TOOL_NAME, {"query": "gate"}, text_before="Checking the archive.")
    fake_server.add_error(500, times=3, path="/v1/messages")
    chat.send("The code?")
    reply = chat.stored()[-1]
    assert (reply.status, reply.content) == (MessageStatus.ERROR, "Checking the archive.")
    (error,) = chat.events.named("error_raised")
    assert isinstance(error[0], ServerError) and error[0].message
    paths = AppPaths.from_environment()
    store = LookupStore.open(paths.database)
    assert [lookup.query for lookup in store.for_messages([reply.id])[reply.id]] == ["gate"]
    store.close()


def test_without_the_tool_setting_no_tools_are_offered(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = seeded(start_chat, tool=False)
    fake_server.clear_requests()
    chat.send("Hello")
    (request,) = fake_server.requests_to("/v1/messages")
    assert "tools" not in request.body and "tool_choice" not in request.body


def test_across_conversations_finds_another_conversations_words(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = seeded(start_chat, across_conversations=True)
    chat.service.new_conversation()
    fake_server.add_tool_use(TOOL_NAME, {"query": "Lovely weather"})
    fake_server.add_reply("You talked about the weather.")
    chat.send("What did we say in the other chat?")
    (told,) = chat.events.named("lookup_made")
    (hit,) = told[0].hits
    assert (hit.seq, hit.conversation) == (5, "Moving house")


# --- the room: the tool turns never make the request overflow (DESIGN §3, invariant 3) ---


class ScriptedProvider:
    """A hand-written provider: answers each request with the next scripted result."""

    def __init__(self, *results: ReplyResult) -> None:
        self.results = list(results)
        self.requests: list[ChatRequest] = []

    def stream_reply(
        self, request: ChatRequest, callbacks: StreamCallbacks, cancel: CancelToken
    ) -> ReplyResult:
        self.requests.append(request)
        result = self.results.pop(0)
        callbacks.on_text(result.text)
        return result


def built_with_room(room: int, *, tools: bool = True) -> BuiltRequest:
    """A built request with `room` tokens left, offering the archive tool (or not)."""
    window, reserved = 10_000, 1_000
    used = window - reserved - room
    breakdown = ContextBreakdown(memory=200, history=used - 200, reserved_output=reserved)
    offered = (tool_definition(across_conversations=False),) if tools else ()
    return BuiltRequest("m", "", [], reserved, ContextState(breakdown, window), tools=offered)


def calling(query: str) -> ReplyResult:
    call = ToolCall("toolu_1", TOOL_NAME, {"query": query})
    block = {"type": "tool_use", "id": call.id, "name": call.name, "input": call.input}
    return ReplyResult("", "tool_use", None, "m", tool_calls=(call,), content=(block,))


def archive_lookups(
    chat: Chat, found: list[Lookup], count: Callable[[str], int] | None = None
) -> ArchiveLookups:
    session_id = chat.service.current.state.session_id
    assert session_id is not None
    return ArchiveLookups(
        database=chat.paths.database,
        session_id=session_id,
        settings=RecallSettings(),
        on_lookup=found.append,
        count=count or chat.service.counter.count,
    )


def test_the_loop_runs_only_when_the_built_request_offers_the_tool(
    start_chat: StartChat,
) -> None:
    # Whether the tool fits is the builder's to say (tests/unit/core/test_context.py).
    chat = seeded(start_chat)
    provider = ScriptedProvider()
    lookups = archive_lookups(chat, [])
    store = SessionStore.open(chat.paths.database)
    without = lookups.bind(provider, store, 1, built_with_room(5_000, tools=False))
    assert without == provider.stream_reply
    assert lookups.bind(provider, store, 1, built_with_room(5_000)) != provider.stream_reply
    store.close()


def test_the_tool_is_offered_once_something_is_archived() -> None:
    settings = RecallSettings()
    assert tool_offer(settings, archived=False) is None, "nothing to search yet"
    offer = tool_offer(settings, archived=True)
    assert offer is not None
    assert [tool["name"] for tool in offer.definitions] == [TOOL_NAME]
    assert offer.room_needed == TOOL_FRAMING_TOKENS + MIN_ANSWER_TOKENS
    assert tool_offer(RecallSettings(tool=False), archived=True) is None
    across = tool_offer(RecallSettings(across_conversations=True), archived=False)
    assert across is not None, "other conversations may have something"


def test_excerpts_are_dropped_until_the_answer_fits(start_chat: StartChat) -> None:
    chat = seeded(start_chat)
    reply = chat.stored()[-1]
    found: list[Lookup] = []
    count = len  # a character a token: the excerpts weigh enough to matter
    lookups = archive_lookups(chat, found, count)
    store = SessionStore.open(chat.paths.database)
    provider = ScriptedProvider(calling("gate code"), ReplyResult("Done.", "end_turn", None, "m"))
    search = ArchiveSearch.open(chat.paths.database)
    first, second = lookups.search(search, store, "gate code")
    search.close()
    both = count(tool_result_text("gate code", (first, second)))
    call = count(json.dumps(list(calling("gate code").content)))
    # Room for the call and one excerpt, not both (the tool itself is counted in `used`).
    room = TOOL_FRAMING_TOKENS + call + both + MIN_ANSWER_TOKENS // 5 - 1
    stream = lookups.bind(provider, store, reply.id, built_with_room(room))
    result = stream(ChatRequest("m", [], 10), StreamCallbacks(), CancelToken())
    store.close()
    assert result.text == "Done."
    (lookup,) = found
    assert len(lookup.hits) == 1, "one excerpt fits, the other was dropped"
    second = provider.requests[1]
    assert second.tool_choice == {"type": "none"}, "no room for another search: answer now"


def test_recall_quotes_from_another_conversation_are_kept_with_the_reply(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    # Settings → Memory on, the archive tool off: only automatic recall looks elsewhere.
    chat = seeded(start_chat, across_conversations=True, tool=False)
    chat.service.new_conversation()
    fake_server.add_reply("It was AX-7731.")
    chat.send("What was the gate code for the new flat?")
    reply = chat.stored()[-1]
    (told,) = chat.events.named("lookup_made")
    lookup = told[0]
    assert lookup.automatic and lookup.message_id == reply.id and lookup.query == ""
    hit = lookup.hits[0]
    assert hit.conversation == "Moving house" and hit.session_id, "it opens the other one"
    assert "AX-7731" in hit.text and hit.seq in (1, 2)
    assert summary_line((lookup,)).startswith("Quoted ") and "“Moving house”" in summary_line(
        (lookup,)
    )
    # Kept: after a restart the reply's line still names and opens them.
    store = LookupStore.open(AppPaths.from_environment().database)
    assert store.for_messages([reply.id])[reply.id] == (lookup,)
    store.close()


def test_recall_within_the_conversation_keeps_no_lookup(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = seeded(start_chat, tool=False)
    fake_server.add_reply("It was AX-7731.")
    chat.send("What was the gate code for the new flat?")
    assert not chat.events.named("lookup_made"), "its own archive: nothing to name"
