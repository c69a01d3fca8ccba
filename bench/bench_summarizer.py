"""How much the summarizer compresses, what it costs in calls, and how fast `rule` mode is.

Run: .venv/bin/python bench/bench_summarizer.py

1. Hybrid mode against the fake Anthropic server (through the real SDK and
   `AnthropicProvider.complete_structured`) on a 500-message synthetic conversation:
   a) one condensed summary of all 500 messages;
   b) ten condensed summaries of 50 messages, then one compressed summary of them.
   Prints tokens before and after, the ratio, and the `/v1/messages` calls the
   server logged (one per summary is the target).
2. Rule mode on 1,000 messages: the median and best of five runs, in milliseconds.

The fake "model" writes a deterministic summary from the transcript, so the figures
measure the pipeline (transcript cap, merge, retention check, size cap), not a model.
Figures, not pass/fail.
"""

from __future__ import annotations

import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.core.models import Message, Role
from app.core.summarization_config import SummarizationConfig
from app.core.summarizer import Summarizer
from app.core.summary import (
    Summary,
    SummaryDraft,
    SummaryTrigger,
)
from app.core.tokens import TokenCounter
from app.llm.anthropic_provider import AnthropicProvider
from tests.fakes.anthropic_server import MESSAGES_PATH, FakeAnthropicServer

START = datetime(2026, 3, 5, 9, 0, tzinfo=UTC)
RUNS = 5

_USER = [
    "Should we use Postgres or SQLite for the sync service in release {n}?",
    "Let's go with option {n}; Maria will draft the spec by Friday.",
    "I'll send the report_v{n}.xlsx to the board before 2026-04-{day:02d}.",
    "The budget is ${n},250.00 and the latency target is {n}0 ms on a 3.5 GB dataset.",
    "Can you check https://example.com/issues/{n} and src/app/module_{n}.py by tomorrow?",
]
_ASSISTANT = [
    "Postgres handles concurrent writers better; SQLite is simpler to ship with the app.",
    "You need to add an index on `user_id` before the import of {n}0,000 rows.",
    "We decided earlier that MAX_RETRIES stays at {n}; see config/settings_{n}.toml.",
    "The call fetchUserProfile() returns within {n}00 ms on 5 March 2026.",
    "A double room costs about €{n}50 per night, roughly {n}2 EUR more at weekends.",
]


def synthetic_messages(count: int, counter: TokenCounter) -> list[Message]:
    """Alternating turns of about 600 characters."""
    messages = []
    for seq in range(1, count + 1):
        role = Role.USER if seq % 2 else Role.ASSISTANT
        lines = _USER if role is Role.USER else _ASSISTANT
        parts = [
            lines[(seq + step) % len(lines)].format(n=seq % 97, day=seq % 28 + 1)
            for step in range(7)
        ]
        content = " ".join(parts)
        messages.append(
            Message(
                id=seq,
                session_id="bench",
                seq=seq,
                role=role,
                content=content,
                created_at=START + timedelta(minutes=seq),
                token_estimate=counter.count_message(content),
            )
        )
    return messages


def committed(draft: SummaryDraft, summary_id: str) -> Summary:
    return draft.committed(summary_id, START)


def bench_hybrid(counter: TokenCounter) -> None:
    messages = synthetic_messages(500, counter)
    with FakeAnthropicServer() as server:
        provider = AnthropicProvider("sk-ant-bench", server.base_url)
        try:
            summarizer = Summarizer(
                SummarizationConfig(mode="hybrid"),
                complete=provider.complete_structured,
                counter=counter,
                tz=UTC,
            )
            provider.complete_structured  # noqa: B018  (warm the SDK import before timing)
            server.clear_requests()
            began = time.perf_counter()
            whole = summarizer.summarize_messages("bench", messages, trigger=SummaryTrigger.AUTO)
            whole_ms = (time.perf_counter() - began) * 1000
            whole_calls = len(server.requests_to(MESSAGES_PATH, "POST"))

            server.clear_requests()
            began = time.perf_counter()
            children = []
            for start in range(0, 500, 50):
                result = summarizer.summarize_messages(
                    "bench", messages[start : start + 50], trigger=SummaryTrigger.AUTO
                )
                assert result.draft is not None
                children.append(committed(result.draft, f"c{start}"))
            compressed = summarizer.compress_summaries(
                "bench", children, trigger=SummaryTrigger.AUTO
            )
            chunked_ms = (time.perf_counter() - began) * 1000
            chunked_calls = len(server.requests_to(MESSAGES_PATH, "POST"))
        finally:
            provider.close()

    assert whole.draft is not None and compressed.draft is not None
    before = sum(message.token_estimate or 0 for message in messages)
    print("Hybrid mode, 500 messages, fake server (real SDK)")
    after = whole.draft.summary_tokens
    print(
        f"  one summary of 500:        {before:,} → {after:,} tokens "
        f"(ratio {after / before:.3f}, {before / after:.0f}×), "
        f"{whole_calls} call(s), {whole_ms:.0f} ms, outcome {whole.outcome.value}"
        + (f", {whole.detail}" if whole.detail else "")
    )
    condensed_tokens = sum(child.summary_tokens for child in children)
    print(
        f"  10 × 50 condensed:         {before:,} → {condensed_tokens:,} tokens "
        f"(ratio {condensed_tokens / before:.3f})"
    )
    print(
        f"  then compressed (depth {compressed.draft.depth}): {condensed_tokens:,} → "
        f"{compressed.draft.summary_tokens:,} tokens (overall ratio "
        f"{compressed.draft.summary_tokens / before:.3f}), {chunked_calls} calls for 11 "
        f"summaries, {chunked_ms:.0f} ms"
    )


def bench_rule(counter: TokenCounter) -> None:
    messages = synthetic_messages(1_000, counter)
    summarizer = Summarizer(
        SummarizationConfig(mode="rule"), complete=None, counter=counter, tz=UTC
    )
    timings = []
    result = None
    for _ in range(RUNS):
        began = time.perf_counter()
        result = summarizer.summarize_messages("bench", messages, trigger=SummaryTrigger.AUTO)
        timings.append((time.perf_counter() - began) * 1000)
    assert result is not None and result.draft is not None
    before = sum(message.token_estimate or 0 for message in messages)
    print("Rule mode, 1,000 messages")
    print(
        f"  median {statistics.median(timings):.0f} ms, best {min(timings):.0f} ms; "
        f"{before:,} → {result.draft.summary_tokens:,} tokens"
    )


def main() -> None:
    counter = TokenCounter()
    counter.load()
    bench_hybrid(counter)
    bench_rule(counter)


if __name__ == "__main__":
    main()
