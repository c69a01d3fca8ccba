"""Where the prompt-cache breakpoints go (app/core/caching.py, ContextBuilder)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from app.core.caching import (
    CACHE_CONTROL,
    DEFAULT_MINIMUM_CACHEABLE_TOKENS,
    MAX_BREAKPOINTS,
    CacheUse,
    minimum_cacheable_tokens,
    with_recall_turn,
    with_turn_breakpoint,
)
from app.core.catalog import ModelInfo
from app.core.context import ContextBuilder, RequestInputs
from app.core.conversation import ApiMessage
from app.core.models import Message, MessageStatus, Role, Usage
from app.core.tokens import default_counter
from tests.fakes.summaries import make_summary

WHEN = datetime(2026, 3, 3, 9, 0, tzinfo=UTC)
SONNET = ModelInfo(
    id="claude-sonnet-4-6", display_name="Sonnet", max_input_tokens=200_000, max_tokens=64_000
)
HAIKU = ModelInfo(
    id="claude-haiku-4-5-20251001", display_name="Haiku", max_input_tokens=200_000, max_tokens=8_000
)
LONG = "The ridge runs north from the col over three tops to the cairn. " * 120  # ~1.7k tokens


def stored(seq: int, role: Role, content: str) -> Message:
    return Message(
        id=seq,
        session_id="s",
        seq=seq,
        role=role,
        content=content,
        created_at=WHEN,
        token_estimate=default_counter().count(content),
        status=MessageStatus.COMPLETE,
    )


def breakpoints(system: object, messages: list[ApiMessage]) -> int:
    blocks = [*(system if isinstance(system, list) else [])]
    for message in messages:
        if isinstance(message["content"], list):
            blocks.extend(message["content"])
    return sum(1 for block in blocks if "cache_control" in block)


@pytest.mark.parametrize(
    ("model_id", "tokens"),
    [
        ("claude-opus-5-5", 512),
        ("claude-haiku-5-5", 512),
        ("claude-fable-5-1", 512),
        ("claude-sonnet-5-5", 512),
        ("claude-sonnet-5", 1_024),
        ("claude-opus-4-6", 4_096),
        ("claude-haiku-4-5-20251001", 4_096),
        ("claude-sonnet-4-6", 1_024),
        ("claude-opus-4-1-20250805", 1_024),
        ("claude-3-haiku-20240307", 2_048),
        ("some-compatible-model", DEFAULT_MINIMUM_CACHEABLE_TOKENS),
    ],
)
def test_the_minimum_cacheable_length_follows_the_documentation(model_id: str, tokens: int) -> None:
    assert minimum_cacheable_tokens(model_id) == tokens


def test_only_the_newest_user_turn_gets_a_breakpoint() -> None:
    messages: list[ApiMessage] = [
        {"role": "user", "content": "one"},
        {"role": "assistant", "content": "two"},
        {"role": "user", "content": "three"},
    ]

    marked = with_turn_breakpoint(messages)

    assert marked[:2] == messages[:2]
    assert marked[2] == {
        "role": "user",
        "content": [{"type": "text", "text": "three", "cache_control": CACHE_CONTROL}],
    }
    assert messages[2]["content"] == "three", "the input is left as it was"


def test_a_short_conversation_has_no_breakpoint() -> None:
    built = ContextBuilder().build_request(
        RequestInputs(model=SONNET, system_prompt="Be brief.", draft="Hi")
    )

    assert built.system == "Be brief."
    assert isinstance(built.messages[-1]["content"], str)


def test_a_long_conversation_caches_the_memory_block_and_the_newest_turn() -> None:
    summaries = [make_summary("condensed", 1, 40, LONG, created_at=WHEN)]
    tail = [stored(41, Role.USER, "And the descent?")]

    built = ContextBuilder().build_request(
        RequestInputs(model=SONNET, system_prompt="Be brief.", summaries=summaries, tail=tail)
    )

    assert isinstance(built.system, list)
    assert [("cache_control" in block) for block in built.system] == [False, True]
    assert isinstance(built.messages[-1]["content"], list)
    assert built.messages[-1]["content"][0]["cache_control"] == CACHE_CONTROL
    assert breakpoints(built.system, built.messages) == 2 <= MAX_BREAKPOINTS


def test_the_memory_block_under_the_model_minimum_gets_no_breakpoint() -> None:
    summaries = [make_summary("condensed", 1, 40, LONG, created_at=WHEN)]  # ~1.7k < 4,096

    built = ContextBuilder().build_request(
        RequestInputs(model=HAIKU, summaries=summaries, tail=[stored(41, Role.USER, "And then?")])
    )

    assert isinstance(built.system, list)
    assert "cache_control" not in built.system[0]
    assert isinstance(built.messages[-1]["content"], str)


def test_a_long_system_prompt_alone_is_cached() -> None:
    built = ContextBuilder().build_request(
        RequestInputs(model=SONNET, system_prompt=LONG, draft="Hi")
    )

    assert built.system == [{"type": "text", "text": LONG, "cache_control": CACHE_CONTROL}]


def test_the_next_request_repeats_the_previous_prefix_exactly() -> None:
    """What the previous request cached (up to its newest user turn) is sent again
    unchanged, so the API's look-back finds it."""
    builder = ContextBuilder(today=lambda: 0)
    tail = [stored(1, Role.USER, LONG)]
    first = builder.build_request(RequestInputs(model=SONNET, tail=tail))
    tail += [stored(2, Role.ASSISTANT, "Yes."), stored(3, Role.USER, "And then?")]
    second = builder.build_request(RequestInputs(model=SONNET, tail=tail))

    def plain(message: ApiMessage) -> str:
        content = message["content"]
        return content if isinstance(content, str) else content[0]["text"]

    assert [plain(m) for m in second.messages[:1]] == [plain(m) for m in first.messages]
    assert breakpoints(second.system, second.messages) == 1


def test_cache_use_adds_up_replies() -> None:
    use = CacheUse.of(
        Usage(
            input_tokens=10,
            output_tokens=50,
            cache_creation_input_tokens=1_000,
            cache_read_input_tokens=0,
        ),
        "claude-sonnet-4-6",
    )
    use = use.combined(
        CacheUse.of(
            Usage(
                input_tokens=10,
                output_tokens=30,
                cache_creation_input_tokens=200,
                cache_read_input_tokens=1_000,
            ),
            "claude-sonnet-4-6-20260101",
        )
    )

    # Sonnet 4.6: $3 input, $3.75 cache write, $0.30 cache read, $15 output per million.
    cost = 20 * 3_000 + 1_200 * 3_750 + 1_000 * 300 + 80 * 15_000
    assert use == CacheUse(read=1_000, written=1_200, total=2_220, output=80, cost=cost)
    assert use.uncached == 20
    assert use.read_share == pytest.approx(1_000 / 2_220)
    assert CacheUse().read_share == 0.0


def test_a_model_without_a_known_price_is_named_not_priced() -> None:
    usage = Usage(input_tokens=1_000, output_tokens=100)
    use = CacheUse.of(usage, "claude-sonnet-4-6").combined(
        CacheUse.of(usage, "someone-elses-model")
    )

    assert use.cost == 1_000 * 3_000 + 100 * 15_000
    assert use.unpriced == ("someone-elses-model",)
    assert use.output == 200


def test_the_recall_block_opens_the_newest_turn_and_the_breakpoint_moves_before_it() -> None:
    messages: list[ApiMessage] = [
        {"role": "user", "content": "first question"},
        {"role": "assistant", "content": "first answer"},
        {"role": "user", "content": "what was the gate code?"},
    ]

    sent = with_recall_turn(messages, "# From earlier: AX-7731")

    assert sent[0] == messages[0]
    assert sent[1]["content"] == [
        {"type": "text", "text": "first answer", "cache_control": {"type": "ephemeral"}}
    ]
    assert sent[2]["content"] == [
        {"type": "text", "text": "# From earlier: AX-7731"},
        {"type": "text", "text": "what was the gate code?"},
    ]
    # The next request sends this turn without the recall block: the prefix up to
    # the answer before it is the same, so it reads back what this one wrote.
    assert messages[2]["content"] == "what was the gate code?"
