"""The request body, each turn encoded once: the same JSON as encoding it whole."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.llm.request_body import Body, BodyEncoder

_TEXT = st.text(max_size=20)
_TURNS = st.fixed_dictionaries(
    {
        "role": st.sampled_from(["user", "assistant"]),
        "content": st.one_of(
            _TEXT,
            st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": _TEXT}), max_size=3),
        ),
    }
)


def _whole(body: dict[str, Any]) -> Any:
    return json.loads(json.dumps(body, ensure_ascii=False))


@settings(max_examples=200)
@given(st.lists(st.lists(_TURNS, max_size=6), min_size=1, max_size=6), st.data())
def test_every_body_says_what_encoding_it_whole_says(
    requests: list[list[dict[str, Any]]], data: st.DataObject
) -> None:
    """Turns met again (the same objects) or new ones, in any order: the same body."""
    encoder = BodyEncoder()
    seen: list[dict[str, Any]] = []
    for turns in requests:
        again = data.draw(st.lists(st.sampled_from(seen), max_size=4)) if seen else []
        messages = [*again, *turns]
        seen.extend(turns)
        body = {"max_tokens": 10, "messages": messages, "model": "m", "stream": True}
        encoded = encoder.encode(body).joined()
        assert json.loads(encoded) == _whole(body)


def test_the_body_is_compact_utf8_as_the_sdk_writes_it() -> None:
    body = {"messages": [{"role": "user", "content": "ça ✓"}], "model": "m", "max_tokens": 5}
    encoded = BodyEncoder().encode(body).joined()
    assert (
        encoded
        == '{"messages":[{"role":"user","content":"ça ✓"}],"model":"m","max_tokens":5}'.encode()
    )


def test_a_turn_of_a_request_long_gone_never_lends_its_json() -> None:
    """Turns are known by identity only while held: a new turn at a reused id is encoded."""
    encoder = BodyEncoder()
    for index in range(40):
        messages = [{"role": "user", "content": f"question {index}"}]
        assert json.loads(encoder.encode({"messages": messages}).joined())["messages"] == messages


def test_the_turns_a_request_starts_with_are_not_encoded_again() -> None:
    """The turns of the request before, in its order, go as the JSON made then; the
    turns after the first that differs are encoded (a turn is never changed once
    built: changing one here shows which JSON went)."""
    encoder = BodyEncoder()
    first = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
    encoder.encode({"messages": first})
    first[0]["content"] = "changed"  # against the contract: shows the kept JSON goes
    first[1]["content"] = "changed too"
    again = json.loads(
        encoder.encode(
            {"messages": [first[0], {"role": "assistant", "content": "c"}, first[1]]}
        ).joined()
    )
    assert [turn["content"] for turn in again["messages"]] == ["a", "c", "changed too"]


def test_a_body_without_turns() -> None:
    assert json.loads(BodyEncoder().encode({"model": "m"}).joined()) == {"model": "m"}
    assert json.loads(BodyEncoder().encode({"messages": []}).joined()) == {"messages": []}


def test_nan_is_refused_as_the_sdk_refuses_it() -> None:
    with pytest.raises(ValueError):
        BodyEncoder().encode({"messages": [], "temperature": float("nan")})


def _assert_sent_as(body: Body, expected: bytes) -> None:
    """The pieces sent one after the other are `expected`, of the length the request says."""
    assert body.joined() == expected
    assert body.size == len(expected)
    assert all(type(chunk) is bytes for chunk in body.chunks)  # sent as they are


def _compact(body: dict[str, Any]) -> bytes:
    """The body as the SDK writes it, encoded whole: its messages first."""
    whole = {"messages": body["messages"], **body}
    return json.dumps(whole, ensure_ascii=False, separators=(",", ":")).encode()


@settings(max_examples=300)
@given(st.lists(st.lists(_TURNS, max_size=6), min_size=1, max_size=8), st.data())
def test_every_body_is_byte_for_byte_the_body_encoded_whole(
    requests: list[list[dict[str, Any]]], data: st.DataObject
) -> None:
    """Requests that go on from an earlier one (a turn, a continuation, a regeneration
    taking a reply back) or start anew: each body is the very bytes of encoding it whole."""
    encoder = BodyEncoder()
    sent: list[list[dict[str, Any]]] = [[]]
    for turns in requests:
        earlier = data.draw(st.sampled_from(sent))
        kept = data.draw(st.integers(0, len(earlier)))
        messages = [*earlier[:kept], *turns]
        sent.append(messages)
        body = {"max_tokens": 10, "messages": messages, "model": "m", "stream": True}
        _assert_sent_as(encoder.encode(body), _compact(body))


def test_a_conversation_keeps_one_body_not_one_a_turn() -> None:
    """A request that starts with all of the one before's turns takes its place: 50 turns
    of one conversation leave one body held, not 4 (the memory of `_KEPT_REQUESTS`)."""
    encoder = BodyEncoder()
    messages: list[dict[str, Any]] = []
    for index in range(50):
        messages = [*messages, {"role": "user", "content": f"question {index}"}]
        body = {"messages": messages, "model": "m"}
        _assert_sent_as(encoder.encode(body), _compact(body))
        messages = [*messages, {"role": "assistant", "content": f"answer {index}"}]
    assert len(encoder._requests) == 1


def test_the_history_is_not_copied_into_each_new_body() -> None:
    """Over 300 turns of one conversation, each body's pieces are mostly the very objects
    sent before: the bytes made new, all turns together, stay within a few times the last
    body (merging pieces copies a byte a few times in its life), where joining a new body
    each turn would copy the history every turn (~150 times the last body here); and a
    body stays a few pieces."""
    encoder = BodyEncoder()
    messages: list[dict[str, Any]] = []
    before: tuple[bytes, ...] = ()
    made = 0
    for index in range(300):
        messages = [*messages, {"role": "user", "content": f"question {index} " * 20}]
        body = encoder.encode({"messages": messages, "model": "m"})
        made += sum(len(c) for c in body.chunks[:-1] if not any(c is b for b in before))
        before = body.chunks
        assert len(body.chunks) <= 12
        messages = [*messages, {"role": "assistant", "content": f"answer {index} " * 20}]
    assert made < 6 * body.size
