"""What the summarization engine costs a turn when no summary is due, and what it saves.

Run: .venv/bin/python bench/bench_engine.py [--messages 500] [--repeats 200]

1. Per turn, no summary due: `engine.decide()` (two reads of the in-memory
   repository, the builder's estimate, the policy) against the turn without the
   engine (`builder.estimate_state` on the same live tail and memory). The
   conversation is the newest `--messages` messages live, on a 200k model, so
   usage stays under the trigger.
2. Tokens before/after: a `--messages`-message synthetic conversation on a
   20k-window model, summarized in rule mode (offline, deterministic) the way
   the app does it (decide after every reply, run when due); the request's
   tokens with everything live versus what is sent at the end, and the work done.

Prints figures; it is not a pass/fail test.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.core.catalog import ModelInfo
from app.core.context import ContextBuilder, RequestInputs
from app.core.engine import SummarizationEngine
from app.core.models import Role
from app.core.policy import TriggerMemory
from app.core.summarization_config import SummarizationConfig
from app.core.summarizer import Summarizer
from app.core.summary import SummaryTrigger
from app.core.tokens import default_counter
from tests.fakes.memory_repository import MemorySummaryRepository

BIG = ModelInfo(id="big", display_name="Big", max_input_tokens=200_000, max_tokens=8_192)
SMALL = ModelInfo(id="small", display_name="Small", max_input_tokens=20_000, max_tokens=2_000)
SESSION = "bench"
TEXTS = [
    "We plan a two-day walk over Bynack More to the Fords of Avon refuge in late May. ",
    "Expect 17 km and about 900 m of ascent; carry water from the River Nethy. ",
    "Let's go with the tent; the map file is route_v2.gpx and the budget is £120. ",
    "Should we cross at the ford or walk round by the bridge after heavy rain? ",
]


def timed(action: Callable[[], object], repeats: int) -> float:
    """Median microseconds of `repeats` calls."""
    samples = []
    for _ in range(repeats):
        start = time.perf_counter_ns()
        action()
        samples.append((time.perf_counter_ns() - start) / 1e3)
    return statistics.median(samples)


def engine_for(config: SummarizationConfig) -> tuple[SummarizationEngine, MemorySummaryRepository]:
    counter = default_counter()
    repo = MemorySummaryRepository(counter)
    summarizer = Summarizer(config, complete=None, counter=counter)
    return SummarizationEngine(config, repo, summarizer, ContextBuilder(counter)), repo


def content(index: int, repeat: int) -> str:
    return f"({index}) " + TEXTS[index % len(TEXTS)] * repeat


def per_turn_cost(messages: int, repeats: int) -> None:
    engine, repo = engine_for(SummarizationConfig(mode="rule"))
    for index in range(messages):
        repo.append(SESSION, Role.USER if index % 2 == 0 else Role.ASSISTANT, content(index, 3))
    memory = TriggerMemory()
    decision = engine.decide(SESSION, model=BIG, memory=memory)
    assert not decision.summarize, decision.explain()
    builder = engine.builder
    live = repo.live_messages(SESSION)
    summaries = repo.active_summaries(SESSION)

    def without_engine() -> object:
        return builder.estimate_state(RequestInputs(model=BIG, summaries=summaries, tail=live))

    def with_engine() -> object:
        return engine.decide(SESSION, model=BIG, memory=memory)

    def reads_only() -> object:
        return repo.live_messages(SESSION), repo.active_summaries(SESSION)

    base = timed(without_engine, repeats)
    decided = timed(with_engine, repeats)
    reads = timed(reads_only, repeats)
    state = engine.state(SESSION, model=BIG)
    print(f"Per turn, {messages} live messages, no summary due ({state.ratio:.0%} of the window):")
    print(f"  turn without the engine (builder.estimate_state): {base:8.1f} µs")
    print(f"  engine.decide():                                  {decided:8.1f} µs")
    print(f"    of which repository reads (in-memory fake):     {reads:8.1f} µs")
    print(f"  added by the engine beyond the estimate:          {decided - base:8.1f} µs")


def tokens_saved(messages: int) -> None:
    config = SummarizationConfig(mode="rule")
    engine, repo = engine_for(config)
    memory = TriggerMemory()
    runs = 0
    summaries_made = 0
    run_ms: list[float] = []
    total_raw = 0
    for index in range(messages):
        message = repo.append(
            SESSION, Role.USER if index % 2 == 0 else Role.ASSISTANT, content(index, 4)
        )
        total_raw += message.token_estimate or 0
        memory = engine.policy.observe(memory, engine.state(SESSION, model=SMALL), new_messages=1)
        if index % 2 == 0:
            continue
        decision = engine.decide(SESSION, model=SMALL, memory=memory)
        memory = engine.policy.after_decision(memory, decision)
        if decision.summarize:
            start = time.perf_counter()
            outcome = engine.run(
                SESSION,
                model=SMALL,
                trigger=SummaryTrigger(decision.trigger or "auto"),
                decision=decision,
            )
            run_ms.append((time.perf_counter() - start) * 1000)
            runs += 1
            summaries_made += len(outcome.summaries)
            if outcome.changed:
                memory = engine.policy.after_summary(memory, outcome.state_after)
    after = engine.state(SESSION, model=SMALL)
    active = repo.active_summaries(SESSION)
    everything_live = engine.builder.estimate_state(
        RequestInputs(model=SMALL, tail=repo.messages(SESSION))
    )
    print(f"\nTokens, {messages} synthetic messages on a 20k window, rule mode:")
    print(f"  all messages live (what would be sent without the engine): {everything_live.used:,}")
    print(
        f"  sent at the end: {after.used:,} ({after.ratio:.0%} of usable): "
        f"memory {after.breakdown.memory:,}, live tail {after.breakdown.history:,}"
    )
    print(
        f"  runs {runs}, summaries committed {summaries_made}, active {len(active)}, "
        f"deepest {max((s.depth for s in active), default=0)}"
    )
    if run_ms:
        print(
            f"  run(): median {statistics.median(run_ms):.1f} ms, max {max(run_ms):.1f} ms "
            "(rule mode, no LLM)"
        )
    assert repo.check_coverage(SESSION) == []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=200)
    args = parser.parse_args()
    default_counter().load()
    per_turn_cost(args.messages, args.repeats)
    tokens_saved(args.messages)


if __name__ == "__main__":
    main()
