"""The reply worker's CPU for the stream itself: `AnthropicProvider.stream_reply` reading a
reply of N deltas, from the request to the last event.

Run: .venv/bin/python bench/bench_stream_worker.py [--deltas 300] [--runs 15]
     [--tree CHECKOUT]

The fake Anthropic server (tests/fakes/anthropic_server.py) runs in a process of its own,
streaming one word per delta, 0.5 ms apart, so its work never competes for this process's
GIL; the provider is the app's, with the real SDK and httpx. Measured: the calling
thread's CPU clock over each `stream_reply` (the HTTP reads, the SDK's SSE decoding,
`_stream`'s handling of each event, the callbacks), median of the runs after 3 warm-up
ones. `--tree` runs another checkout's provider (main's, say) for a before/after in one
run. Figures, not pass/fail.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WARM_UP = 3


def serve(deltas: int, replies: int) -> None:
    """The fake, with `replies` replies of `deltas` words queued; runs until stdin closes."""
    from app.core.catalog import FALLBACK_MODELS
    from tests.fakes.anthropic_server import FakeAnthropicServer
    from tests.fakes.server_fixtures import TEST_MODEL

    words = [f"word{index} " for index in range(deltas)]
    with FakeAnthropicServer(chunk_delay=0.0005, models=(*FALLBACK_MODELS, TEST_MODEL)) as server:
        for _ in range(replies):
            server.add_reply("".join(words), chunks=words)
        print(server.base_url, flush=True)
        sys.stdin.read()


def measure(deltas: int, runs: int, tree: Path) -> list[float]:
    """Thread CPU (ms) of each measured `stream_reply`."""
    from app.llm.anthropic_provider import AnthropicProvider
    from app.llm.provider import CancelToken, ChatRequest, StreamCallbacks

    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", "--deltas", str(deltas), "--runs", str(runs)],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None and server.stdin is not None
    provider = AnthropicProvider("sk-ant-bench", server.stdout.readline().strip())
    received: list[str] = []
    callbacks = StreamCallbacks(on_text=received.append)
    request = ChatRequest("claude-test-model", [{"role": "user", "content": "Hello"}], 4_000)
    spent: list[float] = []
    try:
        for run in range(WARM_UP + runs):
            received.clear()
            started = time.thread_time()
            provider.stream_reply(request, callbacks, CancelToken())
            cpu = (time.thread_time() - started) * 1e3
            if len(received) != deltas:
                raise RuntimeError(f"expected {deltas} deltas, got {len(received)}")
            if run >= WARM_UP:
                spent.append(cpu)
    finally:
        provider.close()
        server.stdin.close()
        server.wait(30)
    return spent


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--deltas", type=int, default=300)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--tree", type=Path, default=REPO, help="the checkout whose app runs")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    sys.path.insert(0, str(args.tree.resolve()) if not args.serve else os.getcwd())
    if args.serve:
        serve(args.deltas, WARM_UP + args.runs)
        return
    spent = measure(args.deltas, args.runs, args.tree.resolve())
    print(
        f"{args.tree}: a reply of {args.deltas} deltas, {args.runs} runs: the worker's CPU "
        f"median {statistics.median(spent):.1f} ms (min {min(spent):.1f}, max "
        f"{max(spent):.1f}); load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )


if __name__ == "__main__":
    main()
