"""How long rule-based extraction takes (the cost of `rule` mode, and of every summary's
first step).

Run: .venv/bin/python bench/bench_extract.py

Prints, in milliseconds: `extract_facets` over 1,000 synthetic messages of about 500
characters (a planning / coding mix with decisions, action items, questions, file
names, URLs, amounts, dates and a secret now and then) — the median and the best of
five runs — then the same per message, `redact_secrets` alone over the same text, and
the size of the result. Figures, not pass/fail.
"""

from __future__ import annotations

import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.core.extract import extract_facets, redact_secrets
from app.core.models import Message, Role

NOW = datetime(2026, 3, 5, 14, 30, tzinfo=UTC)
MESSAGES = 1_000
RUNS = 5

_USER_LINES = [
    "Should we use Postgres or SQLite for the sync service in release {n}?",
    "Let's go with option {n}; Maria will draft the spec by Friday.",
    "I'll send the report_v{n}.xlsx to the board before 2026-04-{day:02d}.",
    "The budget is ${n},250.00 and the latency target is {n}0 ms on a 3.5 GB dataset.",
    "Can you check https://example.com/issues/{n} and the file src/app/module_{n}.py by tomorrow?",
    "Not sure whether the retry_count_{n} setting should stay at {n} attempts.",
    "My token is sk-ant-api03-Q{n}x9fPq7LmZ2vB8nR4tY6wK1sD3 so keep it safe.",
]
_ASSISTANT_LINES = [
    "Postgres handles concurrent writers better; SQLite is simpler to ship with the app.",
    "You need to add an index on `user_id` before the import of {n}0,000 rows.",
    "We decided earlier that MAX_RETRIES stays at {n}; see config/settings_{n}.toml.",
    "The call fetchUserProfile() in ContextBuilder returns within {n}00 ms on 5 March 2026.",
    "A double room costs about €{n}50 per night, roughly {n}2 EUR more at weekends.",
    "Do you want me to compare the two options in a table for meeting {n}?",
]


def synthetic_messages(count: int) -> list[Message]:
    """Alternating turns of about 500 characters each."""
    messages = []
    for seq in range(1, count + 1):
        role = Role.USER if seq % 2 else Role.ASSISTANT
        lines = _USER_LINES if role is Role.USER else _ASSISTANT_LINES
        parts: list[str] = []
        offset = seq
        while sum(len(part) + 1 for part in parts) < 500:
            template = lines[offset % len(lines)]
            parts.append(template.format(n=seq % 97, day=seq % 28 + 1))
            offset += 3
        messages.append(
            Message(
                id=seq,
                session_id="bench",
                seq=seq,
                role=role,
                content=" ".join(parts),
                created_at=NOW,
            )
        )
    return messages


def _timed_ms(run: object) -> float:
    assert callable(run)
    start = time.perf_counter()
    run()
    return (time.perf_counter() - start) * 1000


def main() -> None:
    messages = synthetic_messages(MESSAGES)
    characters = sum(len(message.content) for message in messages)
    extract_times = [_timed_ms(lambda: extract_facets(messages)) for _ in range(RUNS)]
    redact_times = [
        _timed_ms(lambda: [redact_secrets(message.content) for message in messages])
        for _ in range(RUNS)
    ]
    facets = extract_facets(messages)
    median = statistics.median(extract_times)
    print(f"messages: {MESSAGES:,} ({characters:,} characters, {characters // MESSAGES} each)")
    print(f"extract_facets: median {median:.0f} ms, best {min(extract_times):.0f} ms")
    print(f"  per message:  {median / MESSAGES * 1000:.0f} µs")
    print(f"redact_secrets alone: median {statistics.median(redact_times):.0f} ms")
    print(
        f"result: {len(facets.decisions)} decisions, {len(facets.action_items)} action items, "
        f"{len(facets.open_questions)} open questions, {len(facets.entities)} entities"
    )


if __name__ == "__main__":
    main()
