"""Automatic recall on the reply path: the archived fact reaches Claude in the recall
block, within its budget; the setting turns it off (issue 12 item 1)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from app.chat.recall import AutomaticRecall
from app.core.catalog import ModelInfo
from app.core.context import RECALL_FLOOR_TOKENS, ContextBuilder, RequestInputs
from app.core.lookup import TOOL_SYSTEM_PROMPT_TOKENS
from app.core.models import Message, Role
from app.core.recall import RECALL_HEADING, RecallQuery
from app.core.recall_rank import RecallPool
from app.core.settings import AppSettings, RecallSettings
from app.core.summarization_config import SummarizationConfig
from tests.fakes.anthropic_server import FakeAnthropicServer, forces_a_tool
from tests.fakes.summaries import make_summary
from tests.unit.chat.conftest import Chat

StartChat = Callable[..., Chat]
START = datetime(2026, 3, 3, 12, 0, tzinfo=UTC)
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
    assert chat.service.current.condensing.summarize()
    chat.idle()
    assert chat.service.current.state.summaries


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
    (model,) = [m for m in chat.service.models if m.id == chat.service.current.state.model_id]
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
    assert chat.service.current.endings.continue_reply(cut)
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
    # The paused turn goes back as Claude's, then a user turn asks to go on (no prefill).
    assert second["messages"][-2] == {"role": "assistant", "content": "Looking. "}
    assert second["messages"][-1]["role"] == "user"
    assert recall_texts(second) == []


def small_model(window: int) -> ModelInfo:
    return ModelInfo(id=f"m{window}", display_name="m", max_input_tokens=window, max_tokens=250)


ARCHIVED = [make_summary("condensed", 1, 8, "They talked about the house.")]


def test_a_small_window_gets_the_floor_and_a_large_one_its_share() -> None:
    recall = AutomaticRecall(ContextBuilder(), 0.05)
    # The floor, at most a fifth of what a small window can read (1,750 of 2k here).
    assert RECALL_FLOOR_TOKENS == 800
    assert (
        recall.raw_budget(RequestInputs(model=small_model(2_000), summaries=ARCHIVED, tail=[]))
        == 350
    )
    assert (
        recall.raw_budget(RequestInputs(model=small_model(8_000), summaries=ARCHIVED, tail=[]))
        == 800
    )
    assert (
        recall.raw_budget(RequestInputs(model=small_model(200_000), summaries=ARCHIVED, tail=[]))
        == 10_000
    )
    assert (
        AutomaticRecall(ContextBuilder(), 0.0).raw_budget(
            RequestInputs(model=small_model(2_000), summaries=ARCHIVED, tail=[])
        )
        == 0
    )
    assert recall.raw_budget(RequestInputs(model=small_model(2_000), summaries=[], tail=[])) == 0, (
        "nothing archived"
    )


def test_the_floor_is_never_more_than_the_room_the_request_leaves() -> None:
    builder = ContextBuilder()
    model = small_model(2_000)
    long_turn = Message(
        id=1, session_id="s", seq=1, role=Role.USER, content="word " * 1_550, created_at=START
    )
    state = builder.estimate_state(RequestInputs(model=model, summaries=ARCHIVED, tail=[long_turn]))
    room = int(state.usable * 0.95) - state.used
    assert 0 < room < RECALL_FLOOR_TOKENS
    assert (
        AutomaticRecall(builder, 0.05).raw_budget(
            RequestInputs(model=model, summaries=ARCHIVED, tail=[long_turn])
        )
        == room
    )


class RecordingArchive:
    """An archive that finds nothing and keeps how it was asked."""

    def __init__(self) -> None:
        self.asked: list[RecallQuery] = []

    def pool(self, session_id: str, query: RecallQuery, depth: int = 60) -> RecallPool:
        self.asked.append(query)
        return RecallPool()

    def participants(self, session_id: str) -> frozenset[str]:
        return frozenset({"maya", "claude"})


def test_a_question_says_what_it_asks_for_and_the_participants_are_not_terms() -> None:
    recall = AutomaticRecall(ContextBuilder(), 0.05)
    summary = make_summary("condensed", 1, 8, "They talked about insurance.")
    for text in ("Maya: which insurer did we go with?", "The insurer sent another letter."):
        archive = RecordingArchive()
        newest = Message(
            id=9, session_id="s", seq=9, role=Role.USER, content=text, created_at=START
        )
        recall.gather(
            archive,
            session_id="s",
            inputs=RequestInputs(
                model=small_model(8_000), system_prompt="", summaries=[summary], tail=[newest]
            ),
        )
        [query] = archive.asked
        assert [term.text for term in query.terms][:1] == ["insurer"]
        assert bool(query.wanted) == ("?" in text)  # a question: the kind of fact it asks for


def test_the_gauge_counts_the_archive_tool_and_what_the_last_request_quoted(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat(settings=AppSettings(summarization=QUIET))
    archived_gate_code(chat)

    body = last_reply(fake_server)
    quoted = body["messages"][-1]["content"][0]["text"]
    assert quoted.startswith(f"# {RECALL_HEADING}")
    service = chat.service
    calibration = service.calibrations.for_model(service.current.state.model_id)
    state = service.current.gauge.measure(draft="")
    assert state is not None
    sent = calibration.apply(service.counter.count(quoted))
    assert abs(state.breakdown.recall - sent) <= 0.05 * sent, "what the last request quoted"
    assert 0 < state.breakdown.recall <= state.recall_allowed
    # The definition as sent, calibrated; the API's tool-use prompt in its own tokens.
    definition = calibration.apply(service.counter.count(json.dumps(body["tools"])))
    assert state.breakdown.tools == definition + TOOL_SYSTEM_PROMPT_TOKENS
    # What summarizing goes by keeps recall's floor in place of what was quoted.
    required = state.required
    assert required.breakdown.recall == state.recall_floor > 0
    assert state.used == required.used - state.recall_floor + state.breakdown.recall + (
        state.breakdown.tools
    )

    # A message that quotes nothing: the next figure counts nothing quoted.
    chat.send("Thanks! Anything else?")
    assert RECALL_HEADING not in str(last_reply(fake_server)["messages"][-1]["content"])
    after = service.current.gauge.measure(draft="")
    assert after is not None and after.breakdown.recall == 0 and after.breakdown.tools > 0


def test_without_a_summary_the_gauge_counts_neither_tool_nor_quotes(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat(settings=AppSettings(summarization=QUIET))
    chat.send("The new gate code is AX-7731.")
    assert "tools" not in last_reply(fake_server)
    state = chat.service.current.gauge.measure(draft="")
    assert state is not None and state == state.required
    assert state.recall_allowed == 0


def test_the_summarys_search_keys_find_what_was_said_in_other_words(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    quiet_llm = SummarizationConfig(mode="llm", auto_summarize=False)
    chat = start_chat(settings=AppSettings(summarization=quiet_llm))
    chat.send("I walked up Pen-y-ghent on Sunday with my new camera.")
    for turn in range(8):
        chat.send(f"Question {turn} about the garden beds and the lunch menu.")
    fake_server.add_tool_reply(
        {
            "narrative": "They talked about the weekend and the garden.",
            "key_points": [],
            "decisions": [],
            "action_items": [],
            "open_questions": [],
            "entities": [],
            "standing": "The garden beds are still being planned.",
            "search_keys": [{"words": "new hobbies: hill walking, photography", "sources": [1]}],
        }
    )
    assert chat.service.current.condensing.summarize()
    chat.idle()
    (summary,) = chat.service.current.state.summaries
    assert summary.content.search_keys[0].sources == [1]

    chat.send("What new hobbies have I taken up?")

    (recall,) = recall_texts(last_reply(fake_server))
    assert "Pen-y-ghent" in recall  # no word of the question is in it: the key found it
    assert (
        "Where things stand now: The garden beds" in last_reply(fake_server)["system"][-1]["text"]
    )
