"""`app.llm.reply_stream`: a streamed reply gathered from its events' JSON is the one the
SDK's own event objects make."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

_COUNT = st.one_of(st.none(), st.integers(0, 10**6))


def _delta_events() -> st.SearchStrategy[dict[str, Any]]:
    """`message_delta` events as the API sends them, and a few it does not (an object
    where a figure goes, a count missing or of the wrong type)."""
    delta = st.fixed_dictionaries(
        {},
        optional={
            "stop_reason": st.sampled_from([None, "end_turn", "max_tokens", "refusal", 7]),
            "stop_sequence": st.sampled_from([None, "\n\nHuman:"]),
            "stop_details": st.sampled_from(
                [None, {"type": "refusal", "category": "cyber", "explanation": "No."}]
            ),
            "container": st.sampled_from(
                [None, {"id": "c1", "expires_at": "2026-01-01T00:00:00Z"}]
            ),
        },
    )
    usage = st.fixed_dictionaries(
        {},
        optional={
            "output_tokens": st.one_of(st.integers(0, 10**6), st.just("12")),
            "input_tokens": _COUNT,
            "cache_creation_input_tokens": _COUNT,
            "cache_read_input_tokens": _COUNT,
            "server_tool_use": st.sampled_from([None, {"web_search_requests": 1}]),
        },
    )
    return st.fixed_dictionaries({"type": st.just("message_delta"), "delta": delta, "usage": usage})


def _started() -> Any:
    from app.llm.reply_stream import GatheredReply, typed_event

    reply = GatheredReply()
    start = {
        "type": "message_start",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-x",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {
                "input_tokens": 120,
                "output_tokens": 1,
                "cache_creation_input_tokens": 5,
                "cache_read_input_tokens": 0,
            },
        },
    }
    reply.started(typed_event(start).message)
    return reply


@settings(max_examples=300)
@given(_delta_events())
def test_a_plain_message_delta_does_what_the_sdks_event_does(data: dict[str, Any]) -> None:
    """Applied from its JSON (no SDK object made), a `message_delta` leaves the message as
    the SDK's event applied by `message_delta` leaves it; one it cannot apply so (an object
    in it, a figure of the wrong type) is left for the SDK's event, untouched."""
    from app.llm.reply_stream import typed_event

    plain, typed = _started(), _started()
    before = plain.message.model_dump()
    if not plain.plain_message_delta(data):
        assert plain.message.model_dump() == before
        return
    typed.message_delta(typed_event(data))
    assert plain.message.model_dump() == typed.message.model_dump()


def _block_events(index: int, kind: str, pieces: list[str]) -> list[dict[str, Any]]:
    """One content block's events: its start, its deltas, its stop."""
    starts = {
        "text": {"type": "text", "text": ""},
        "thinking": {"type": "thinking", "thinking": "", "signature": ""},
        "tool_use": {"type": "tool_use", "id": f"toolu_{index}", "name": "lookup", "input": {}},
    }
    events: list[dict[str, Any]] = [
        {"type": "content_block_start", "index": index, "content_block": starts[kind]}
    ]
    if kind == "tool_use":
        pieces = ['{"q": ', json.dumps("".join(pieces)), "}"]
    for piece in pieces:
        delta = {
            "text": {"type": "text_delta", "text": piece},
            "thinking": {"type": "thinking_delta", "thinking": piece},
            "tool_use": {"type": "input_json_delta", "partial_json": piece},
        }[kind]
        events.append({"type": "content_block_delta", "index": index, "delta": delta})
    if kind == "thinking":
        signature = {"type": "signature_delta", "signature": f"sig{index}"}
        events.append({"type": "content_block_delta", "index": index, "delta": signature})
    events.append({"type": "content_block_stop", "index": index})
    return events


def _api_delta_events() -> st.SearchStrategy[dict[str, Any]]:
    """`message_delta` events as the API sends them at a reply's end."""
    usage = st.fixed_dictionaries(
        {"output_tokens": st.integers(0, 10**6)},
        optional={
            "input_tokens": _COUNT,
            "cache_creation_input_tokens": _COUNT,
            "cache_read_input_tokens": _COUNT,
        },
    )
    reason = st.sampled_from(["end_turn", "max_tokens", "refusal", "pause_turn", "tool_use"])
    delta = st.fixed_dictionaries({"stop_reason": reason, "stop_sequence": st.just(None)})
    return st.fixed_dictionaries({"type": st.just("message_delta"), "delta": delta, "usage": usage})


@st.composite
def _replies(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A reply's raw events as the API streams them: text, thinking and tool use blocks,
    pings, and `message_start` figures of the expected types or not."""
    usage = draw(
        st.fixed_dictionaries(
            {"input_tokens": st.integers(0, 10**6), "output_tokens": st.integers(0, 9)},
            optional={
                "cache_creation_input_tokens": _COUNT,
                "cache_read_input_tokens": _COUNT,
                "service_tier": st.just("standard"),
            },
        )
    )
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": draw(st.sampled_from(["claude-x", None, ""])),
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    events: list[dict[str, Any]] = [{"type": "message_start", "message": message}]
    kinds = draw(st.lists(st.sampled_from(["text", "text", "thinking", "tool_use"]), max_size=4))
    words = st.lists(st.text(max_size=6), max_size=4)
    for index, kind in enumerate(kinds):
        events.extend(_block_events(index, kind, draw(words)))
        if draw(st.booleans()):
            events.append({"type": "ping"})
    events.append(draw(st.one_of(_api_delta_events(), _delta_events())))
    events.append({"type": "message_stop"})
    return events


class _Told:
    """What a stream tells its callbacks."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.thinking: list[str] = []

    def callbacks(self) -> Any:
        from app.llm.provider import StreamCallbacks

        return StreamCallbacks(on_text=self.text.append, on_thinking=self.thinking.append)


def _gathered_as_sdk_events(events: list[dict[str, Any]], told: _Told) -> Any:
    """The reply gathered from every event made the SDK's object (as before plain
    events): the reference."""
    from app.llm.reply_stream import GatheredReply, ThinkingClock, typed_event

    reply, thought = GatheredReply(), ThinkingClock()
    for data in events:
        event = typed_event(data)
        if event is None:
            continue
        if event.type == "message_start":
            reply.started(event.message)
        elif event.type == "content_block_start":
            if event.content_block.type == "thinking" and thought.started:
                told.thinking.append("\n\n")
            thought.block_started(event.content_block.type)
            reply.block_started(event.content_block)
        elif event.type == "content_block_delta":
            kind = event.delta.type
            if kind == "text_delta":
                told.text.append(event.delta.text)
            elif kind == "thinking_delta":
                told.thinking.append(event.delta.thinking)
            reply.delta(event.index, event.delta)
        elif event.type == "message_delta":
            reply.message_delta(event)
        elif event.type == "message_stop":
            reply.finished = True
    return reply


@settings(max_examples=300, deadline=None)
@given(_replies())
def test_a_reply_gathered_from_plain_events_is_the_one_gathered_from_sdk_events(
    events: list[dict[str, Any]],
) -> None:
    """The stream's events as `_stream` takes them (most applied from their JSON, no
    object made) give the result, and the final SDK message, that every event made the
    SDK's object gives; the plain result (no SDK objects at all) is that result too,
    whenever it is given."""
    from app.llm.reply_stream import GatheredReply, ThinkingClock, result_of, take_event

    plain_told, typed_told = _Told(), _Told()
    reply, received = GatheredReply(), list[str]()
    callbacks = plain_told.callbacks()
    thought = ThinkingClock()
    for data in json.loads(json.dumps(events)):  # the stream's own JSON, changed as it goes
        take_event(reply, data, thought, callbacks, received)
    reference = _gathered_as_sdk_events(json.loads(json.dumps(events)), typed_told)

    assert reply.finished and reply.has_started
    assert (plain_told.text, plain_told.thinking) == (typed_told.text, typed_told.thinking)
    text = "".join(received)
    plain = reply.plain_result(text, "asked", 0.0)  # before `final`, which makes SDK objects
    final, reference_final = reply.final(), reference.final()
    assert final.model_dump(warnings=False) == reference_final.model_dump(warnings=False)
    # A figure the API always gives, left out (a `message_delta` without output_tokens):
    # no result either way, as before.
    expected = _outcome(lambda: result_of(reference_final, text, "asked", 0.0))
    assert _outcome(lambda: result_of(final, text, "asked", 0.0)) == expected
    if plain is not None:
        assert plain == expected
        kinds = [e["content_block"]["type"] for e in events if e["type"] == "content_block_start"]
        assert "tool_use" not in kinds


def _outcome(make: Any) -> Any:
    """What `make()` returns, or the type of what it raised."""
    try:
        return make()
    except Exception as error:
        return type(error)
