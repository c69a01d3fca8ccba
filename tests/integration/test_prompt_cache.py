"""Prompt caching for real: the breakpoints ContextBuilder places, sent through the
real SDK to the fake server, whose cache reports usage as the API does
(https://platform.claude.com/docs/en/build-with-claude/prompt-caching)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import anthropic
import pytest

from app.core.calibration import Calibrations
from app.core.catalog import FALLBACK_MODELS
from app.core.context import ContextBuilder, RequestInputs
from app.core.models import Message, MessageStatus, Role, Usage
from app.core.summary import Summary
from app.core.tokens import default_counter
from app.llm.anthropic_provider import AnthropicProvider
from app.llm.provider import CancelToken, ChatRequest, StreamCallbacks
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.summaries import make_summary

KEY = "sk-ant-prompt-cache-test-key"
SONNET = FALLBACK_MODELS[0]
WHEN = datetime(2026, 3, 3, 9, 0, tzinfo=UTC)
SYSTEM = "You are a patient guide for walkers in the hills. Keep place names exact."
QUESTION = "Where can we fill our bottles between Glenmore and the Fords of Avon? " * 8
ANSWER = "The Allt na Ciche and the River Nethy run all year; fill up before Bynack More. " * 8


@pytest.fixture
def provider(fake_server: FakeAnthropicServer) -> Iterator[AnthropicProvider]:
    provider = AnthropicProvider(KEY, fake_server.base_url)
    yield provider
    provider.close()


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


def converse(
    fake_server: FakeAnthropicServer,
    provider: AnthropicProvider,
    turns: int,
    *,
    summaries: tuple[Summary, ...] = (),
    calibrations: Calibrations | None = None,
    estimates: list[int] | None = None,
) -> list[Usage]:
    """`turns` questions and answers, each request built as the app builds it."""
    builder = ContextBuilder(calibrations=calibrations, today=lambda: 0)
    tail: list[Message] = []
    usages: list[Usage] = []
    for turn in range(turns):
        tail.append(stored(len(tail) + 1, Role.USER, f"{turn}: {QUESTION}"))
        built = builder.build_request(
            RequestInputs(model=SONNET, system_prompt=SYSTEM, summaries=summaries, tail=tail)
        )
        fake_server.add_reply(f"{turn}: {ANSWER}")
        result = provider.stream_reply(
            ChatRequest(built.model, built.messages, built.max_tokens, built.system),
            StreamCallbacks(),
            CancelToken(),
        )
        assert result.usage is not None
        if calibrations is not None:
            calibrations.learn_usage(SONNET.id, built.raw_input_tokens, result.usage)
        usages.append(result.usage)
        if estimates is not None:
            estimates.append(built.raw_input_tokens)
        tail.append(stored(len(tail) + 1, Role.ASSISTANT, result.text))
    return usages


def test_each_turn_reads_the_conversation_so_far_from_the_cache(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    usages = converse(fake_server, provider, 8)

    # Until the prefix reaches Sonnet's 1,024 tokens nothing is cached; from then
    # on each request writes its prefix and the next one reads it back.
    first_cached = next(n for n, u in enumerate(usages) if u.cache_creation_input_tokens)
    assert all(u.cache_read_input_tokens == 0 for u in usages[: first_cached + 1])
    for before, after in zip(usages[first_cached:], usages[first_cached + 1 :], strict=False):
        written = before.cache_read_input_tokens + before.cache_creation_input_tokens
        assert after.cache_read_input_tokens == written
        assert after.cache_creation_input_tokens > 0  # the new turns
    last = usages[-1]
    assert last.cache_read_input_tokens > 0.8 * last.total_input_tokens


def test_the_three_input_figures_add_up_to_what_count_tokens_says(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    usages = converse(fake_server, provider, 5)
    request = fake_server.turns()[-1].body

    assert usages[-1].total_input_tokens == fake_server.count_input_tokens(request)
    assert usages[-1].cache_read_input_tokens > 0
    assert usages[-1].cache_creation_input_tokens > 0


def test_a_summary_change_keeps_nothing_but_a_new_summary_is_cached_again(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    memory = (make_summary("condensed", 1, 40, "They chose granite. " * 400, created_at=WHEN),)
    first = converse(fake_server, provider, 1, summaries=memory)
    again = converse(fake_server, provider, 1, summaries=memory)
    changed = (make_summary("condensed", 1, 42, "They chose slate. " * 400, created_at=WHEN),)
    after_change = converse(fake_server, provider, 1, summaries=changed)

    assert first[0].cache_read_input_tokens == 0
    assert first[0].cache_creation_input_tokens > 0
    # The same memory block (and the same first question): read back whole.
    assert again[0].cache_read_input_tokens == first[0].cache_creation_input_tokens
    assert after_change[0].cache_read_input_tokens == 0


def test_calibration_counts_cached_tokens_as_input(
    fake_server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    calibrations = Calibrations()
    estimates: list[int] = []
    usages = converse(fake_server, provider, 6, calibrations=calibrations, estimates=estimates)

    assert usages[-1].cache_read_input_tokens > 0.5 * usages[-1].total_input_tokens
    # Had calibration learnt only `input_tokens` (the uncached rest), the gauge would
    # fall to a fraction of the truth; it stays within 5 % of what the server counts.
    calibration = calibrations.for_model(SONNET.id)
    for estimate, usage in zip(estimates[1:], usages[1:], strict=True):
        gauge = calibration.apply(estimate)
        assert abs(gauge - usage.total_input_tokens) / usage.total_input_tokens <= 0.05


def test_more_than_four_breakpoints_are_refused_as_the_api_does(
    fake_server: FakeAnthropicServer,
) -> None:
    marked = {"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}}
    client = anthropic.Anthropic(api_key=KEY, base_url=fake_server.base_url, max_retries=0)
    try:
        with pytest.raises(anthropic.BadRequestError, match="maximum of 4"):
            client.messages.create(
                model=SONNET.id,
                max_tokens=10,
                system=[marked, marked, marked],
                messages=[{"role": "user", "content": [marked, marked]}],
            )
    finally:
        client.close()


@pytest.mark.parametrize(
    ("model", "cached"),
    [
        ("claude-opus-5-5", True),
        ("claude-haiku-5-5", True),
        ("claude-fable-5-1", True),
        ("claude-sonnet-5", False),  # 1,024
        ("claude-haiku-4-5", False),  # 4,096
    ],
)
def test_the_fake_caches_from_each_models_documented_minimum(
    fake_server: FakeAnthropicServer, model: str, cached: bool
) -> None:
    # A prefix of about 700 tokens: over the 512 of the 5.5 models and Fable 5.1
    # (app.core.caching, from the prompt caching page), under Sonnet 5's and Haiku 4.5's.
    system = [{"type": "text", "text": ANSWER * 4, "cache_control": {"type": "ephemeral"}}]
    sdk = anthropic.Anthropic(api_key=KEY, base_url=fake_server.base_url, max_retries=0)
    prefix = fake_server.count_input_tokens({"system": system, "messages": []})
    assert 512 < prefix < 1_024
    for _ in range(2):
        fake_server.add_reply("Noted.")
        usage = sdk.messages.create(
            model=model,
            max_tokens=1_000,
            system=system,  # type: ignore[arg-type]
            messages=[{"role": "user", "content": "Where?"}],
        ).usage
    sdk.close()
    assert (usage.cache_read_input_tokens > 0) is cached
