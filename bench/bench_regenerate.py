"""Regenerate (Ctrl+R) to the first delta of the new version on screen, in the real window.

Run: .venv/bin/python bench/bench_regenerate.py [--messages N] [--runs N]

The whole app (window, controller, message actions, the reply job, AnthropicProvider,
the real SDK) against the fake Anthropic server, in a conversation of `--messages`
stored messages of mixed prose (~100 tokens each; a realistic live tail). Each run
asks, as Ctrl+R does, for Claude's latest reply again (`MessageActions.regenerate_latest`)
and marks:
- press → request: until the worker hands the request to the SDK (the version's row
  made and the old one shelved in one transaction, the live tail read, the request built);
- request → first delta: the SDK and the fake server (HTTP on this machine, in-process);
- first delta → on screen: from the SDK handing the worker its first text delta to the
  first paint of the new version's text in the transcript.
Cairn's own overhead, beyond the server, is the first and the last part. The server
answers at once (no first-byte delay), so nothing of the server's is hidden in them.
Prints figures; not a pass/fail test.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from bench_streaming import TimedProvider, watch_first_text  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from app.core.catalog import ModelInfo  # noqa: E402
from app.core.models import Role  # noqa: E402
from app.core.paths import AppPaths  # noqa: E402
from app.core.tokens import default_counter  # noqa: E402
from app.llm.anthropic_provider import AnthropicProvider  # noqa: E402
from app.llm.provider import CancelToken, ChatRequest, ReplyResult, StreamCallbacks  # noqa: E402
from app.store.database import open_database  # noqa: E402
from app.store.sessions import SessionStore  # noqa: E402
from app.ui.app import open_cairn  # noqa: E402
from tests.fakes.anthropic_server import FakeAnthropicServer  # noqa: E402

MODEL = ModelInfo(
    id="claude-bench-1m",
    display_name="Claude (bench)",
    max_input_tokens=1_000_000,
    max_tokens=64_000,
)
PROSE = (
    "We talked about the boiler again this morning, and Maya thinks we should wait until "
    "March before deciding anything. The plan for Lisbon is two days of walking, about "
    "{n} km, with {m} m of ascent on the first day; could you check the figures from "
    "the invoice of {n} EUR and tell me whether the quarterly report matches them?"
)


class RequestTimedProvider(TimedProvider):
    """bench_streaming's provider, also noting when the worker sent the request."""

    def stream_reply(
        self, request: ChatRequest, callbacks: StreamCallbacks, cancel: CancelToken
    ) -> ReplyResult:
        self.marks.setdefault("request", time.perf_counter())
        return super().stream_reply(request, callbacks, cancel)


def fill(home: str, messages: int) -> None:
    """A stored conversation of `messages` messages, Claude's reply last."""
    paths = AppPaths.from_environment()
    paths.ensure()
    opened = open_database(paths.database)
    store = SessionStore(opened.connection, database=opened.path)
    counter = default_counter()
    counter.load()
    session = store.create_session("Bench", MODEL.id)
    for index in range(messages):
        text = PROSE.format(n=index * 7 % 97 + 3, m=index * 13 % 900 + 100)
        role = (Role.USER, Role.ASSISTANT)[index % 2]
        store.append_message(session.id, role, text, token_estimate=counter.count(text))
    store.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=400)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    app = QApplication([])
    marks: dict[str, float] = {}
    rows: dict[str, list[tuple[float, float, float]]] = {"regenerate": [], "send": []}
    with FakeAnthropicServer() as server, tempfile.TemporaryDirectory() as home:
        server.models = [MODEL]
        os.environ["CAIRN_HOME"] = home
        os.environ["ANTHROPIC_API_KEY"] = "sk-ant-bench"
        fill(home, args.messages)
        session = open_cairn(
            AppPaths.from_environment(),
            provider_factory=lambda key, url: RequestTimedProvider(
                AnthropicProvider(key, server.base_url), marks
            ),
        )
        window = session.window
        window.resize(1280, 900)
        window.show()
        session.controller.service.start()
        service = session.controller.service
        while not (service.model_wait.settled and service.counter.ready) or (
            session.controller.service.current.state.activity.busy
            or len(window.transcript.message_widgets()) < 2
        ):
            app.processEvents()
            time.sleep(0.001)
        watch = watch_first_text(app, session, marks)
        actions = {
            "regenerate": window.message_actions.regenerate_latest,  # what Ctrl+R does
            "send": lambda: window.composer.editor.submitted.emit(),  # Enter, the peer
        }
        for run in range(args.runs + 1):  # the first warms up (imports, caches)
            for name, act in actions.items():
                marks.clear()
                server.add_reply(f"Version {run}: the figures match, about 42 km in all.")
                window.composer.set_text(f"And the ascent on day {run}?")
                pressed = time.perf_counter()
                act()
                while (
                    "first_paint" not in marks
                    or session.controller.service.current.state.activity.busy
                ):
                    app.processEvents()
                    time.sleep(0.0005)
                if run:
                    rows[name].append(
                        (
                            (marks["request"] - pressed) * 1000,
                            (marks["first_delta"] - marks["request"]) * 1000,
                            (marks["first_paint"] - marks["first_delta"]) * 1000,
                        )
                    )
                window.composer.clear()
        app.removeEventFilter(watch)
        window.close()
        session.close()
    print(
        f"First delta on screen after Regenerate (Ctrl+R) and, beside it, after Enter; "
        f"{args.messages} stored messages, {args.runs} runs each"
    )
    for name, measured in rows.items():
        print(f"  {name}:")
        for label, column in (
            ("press → request (Cairn)", 0),
            ("request → first delta (SDK + fake server)", 1),
            ("first delta → on screen (Cairn)", 2),
        ):
            values = [row[column] for row in measured]
            print(
                f"    {label:44s} median {statistics.median(values):6.1f} ms"
                f"  max {max(values):6.1f} ms"
            )
        overhead = [row[0] + row[2] for row in measured]
        print(
            f"    {'Cairn overhead beyond the server':44s} median "
            f"{statistics.median(overhead):6.1f} ms  max {max(overhead):6.1f} ms (target ≤ 20 ms)"
        )
    print(f"  machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
