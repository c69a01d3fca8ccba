"""How long rule-based extraction takes (the cost of `rule` mode, and of every summary's
first step), and how long it can keep the GUI thread waiting.

Run: .venv/bin/python bench/bench_extract.py [--quick]

Prints, in milliseconds:

- `extract_facets` over 1,000 synthetic messages of about 500 characters (a planning /
  coding mix with decisions, action items, questions, file names, URLs, amounts, dates
  and a secret now and then) — the median and the best of five runs — then the same per
  message, `redact_secrets` alone over the same text, and the size of the result;
- the longest GIL hold seen while those 1,000 messages are extracted on a worker thread:
  a heartbeat thread sleeps 1 ms in a loop and records the longest gap between its
  wake-ups. That is what the GUI thread feels while a summary is made (a gap includes the
  1 ms sleep and up to one switch interval, `sys.getswitchinterval()`, 5 ms by default,
  before the interpreter makes the busy thread let go);
- the same two figures (time, longest gap) for one message of 1 MB: prose in lines, prose
  on one line, code, and text without spaces (random key-like characters, base64, one
  letter repeated, digits, minified JSON, "a.a.a…"), and 1 MB of spaces.

Figures, not pass/fail. `--quick` uses 100 KB inputs and one run of each.
"""

from __future__ import annotations

import functools
import random
import statistics
import string
import sys
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.core.extract import extract_facets
from app.core.models import Message, Role
from app.core.redaction import redact_secrets

NOW = datetime(2026, 3, 5, 14, 30, tzinfo=UTC)
MESSAGES = 1_000
RUNS = 5
HUGE = 1_000_000

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
        messages.append(_message(seq, role, " ".join(parts)))
    return messages


def _message(seq: int, role: Role, content: str) -> Message:
    return Message(id=seq, session_id="bench", seq=seq, role=role, content=content, created_at=NOW)


def huge_inputs(size: int) -> dict[str, str]:
    """One text of `size` characters for each shape a pasted message can take."""
    rng = random.Random(7)
    lines = "\n".join(message.content for message in synthetic_messages(400))
    prose = (lines * (size // len(lines) + 1))[:size]
    code_lines = "".join(
        f"def handler_{i}(request):  # TODO: check user_{i}\n"
        f"    return fetch('https://api.example.com/items/{i}', timeout=30)\n"
        for i in range(size // 90)
    )
    minified = '{"url":"https://example.com/x","file":"src/a.py","n":12345,"user_id":"abc"},'
    return {
        "prose, in lines": prose,
        "prose, one line": prose.replace("\n", " "),
        "code (one fenced block)": "```python\n" + code_lines[:size] + "```",
        "no spaces: key-like characters": "".join(
            rng.choice(string.ascii_letters + string.digits) for _ in range(size)
        ),
        "no spaces: base64": "".join(
            rng.choice(string.ascii_letters + string.digits + "+/") for _ in range(size)
        ),
        "no spaces: one letter": "a" * size,
        "no spaces: digits": "1" * size,
        "no spaces: minified JSON": (minified * (size // len(minified) + 1))[:size],
        'no spaces: "a.a.a…"': ("a." * (size // 2 + 1))[:size],
        "spaces": "x" + " " * (size - 2) + "y",
    }


def _timed_ms(run: Callable[[], object]) -> float:
    start = time.perf_counter()
    run()
    return (time.perf_counter() - start) * 1000


def longest_gap_ms(work: Callable[[], object]) -> tuple[float, float]:
    """(how long `work` took on a worker thread, the longest gap between the 1 ms sleeps of
    a heartbeat thread meanwhile), in milliseconds."""
    done = threading.Event()
    gaps: list[float] = []

    def heartbeat() -> None:
        last = time.perf_counter()
        longest = 0.0
        while not done.is_set():
            time.sleep(0.001)
            now = time.perf_counter()
            longest = max(longest, now - last)
            last = now
        gaps.append(longest)

    took: list[float] = []
    beat = threading.Thread(target=heartbeat)
    worker = threading.Thread(target=lambda: took.append(_timed_ms(work)))
    beat.start()
    time.sleep(0.01)
    worker.start()
    worker.join()
    done.set()
    beat.join()
    return took[0], gaps[0] * 1000


def main() -> None:
    quick = "--quick" in sys.argv
    runs = 1 if quick else RUNS
    messages = synthetic_messages(MESSAGES)
    characters = sum(len(message.content) for message in messages)
    extract_times = [_timed_ms(lambda: extract_facets(messages)) for _ in range(runs)]
    redact_times = [
        _timed_ms(lambda: [redact_secrets(message.content) for message in messages])
        for _ in range(runs)
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
    interval = sys.getswitchinterval() * 1000
    idle = longest_gap_ms(functools.partial(time.sleep, 0.3))[1]
    gaps = [longest_gap_ms(lambda: extract_facets(messages))[1] for _ in range(runs)]
    print(
        "longest heartbeat gap while a worker extracts them: "
        f"median {statistics.median(gaps):.1f} ms, worst {max(gaps):.1f} ms"
    )
    print(
        f"  (floor: a 1 ms sleep plus up to the {interval:.0f} ms switch interval; "
        f"{idle:.1f} ms here with an idle worker)"
    )

    size = 100_000 if quick else HUGE
    print(f"one message of {size:,} characters: time, longest heartbeat gap")
    for name, text in huge_inputs(size).items():
        took, gap = longest_gap_ms(
            functools.partial(extract_facets, [_message(1, Role.USER, text)])
        )
        print(f"  {name:32s} {took:7.0f} ms {gap:7.1f} ms")


if __name__ == "__main__":
    main()
