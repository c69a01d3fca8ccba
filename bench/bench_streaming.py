"""A reply streaming into the real window: latency of the first delta, and GUI stalls.

Run: .venv/bin/python bench/bench_streaming.py [--tokens N] [--rate TOKENS_PER_SECOND]

The whole app (window, controller, ChatWorker, AnthropicProvider, the real SDK)
talks to the fake Anthropic server, which streams one word per delta at the
given rate. Measured:
- first delta to text on screen: from the moment the SDK hands the worker its
  first text delta to the first paint of the reply's widget showing that text;
- GUI-thread stalls: a 5 ms QTimer heartbeat runs on the GUI thread while the
  reply streams; the longest gap between two beats is the longest stall.
Prints figures; not a pass/fail test.
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QEvent, QObject, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication, QWidget  # noqa: E402

from app.core.catalog import ModelInfo  # noqa: E402
from app.core.paths import AppPaths  # noqa: E402
from app.llm.anthropic_provider import AnthropicProvider  # noqa: E402
from app.llm.provider import (  # noqa: E402
    CancelToken,
    ChatProvider,
    ChatRequest,
    ReplyResult,
    StreamCallbacks,
)
from app.ui.app import CairnSession, open_cairn  # noqa: E402
from tests.fakes.anthropic_server import FakeAnthropicServer  # noqa: E402


class TimedProvider:
    """Wraps the real provider to note when the first text delta reached the worker."""

    def __init__(self, inner: ChatProvider, marks: dict[str, float]) -> None:
        self.inner = inner
        self.marks = marks

    def stream_reply(
        self, request: ChatRequest, callbacks: StreamCallbacks, cancel: CancelToken
    ) -> ReplyResult:
        original = callbacks.on_text

        def on_text(delta: str) -> None:
            self.marks.setdefault("first_delta", time.perf_counter())
            original(delta)

        callbacks.on_text = on_text
        return self.inner.stream_reply(request, callbacks, cancel)

    def list_models(self) -> list[ModelInfo]:
        return self.inner.list_models()

    def check_key(self) -> None:
        self.inner.check_key()

    def count_tokens(self, request: ChatRequest) -> int:
        return self.inner.count_tokens(request)

    def complete_structured(self, **arguments: Any) -> dict[str, Any]:
        return self.inner.complete_structured(**arguments)


class PaintWatch(QObject):
    """Notes the first paint of a widget under the transcript after text arrived."""

    def __init__(self, marks: dict[str, float], transcript: QWidget) -> None:
        super().__init__()
        self.marks = marks
        self.transcript = transcript

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            event.type() == QEvent.Type.Paint
            and "first_text" in self.marks
            and "first_paint" not in self.marks
            and isinstance(watched, QWidget)
            and self.transcript.isAncestorOf(watched)
        ):
            self.marks["first_paint"] = time.perf_counter()
        return False


def watch_first_text(
    app: QApplication, session: CairnSession, marks: dict[str, float]
) -> PaintWatch:
    """Mark in `marks` when the first streamed text reaches the transcript ("first_text")
    and when it is painted ("first_paint", by the returned filter, installed on `app`)."""
    transcript = session.window.transcript
    original_update = transcript.update_message_text

    def update(message_id: int, text: str) -> None:
        original_update(message_id, text)
        if text:
            marks.setdefault("first_text", time.perf_counter())

    session.controller.message_text_changed.disconnect(transcript.update_message_text)
    session.controller.message_text_changed.connect(update)
    watch = PaintWatch(marks, transcript)
    app.installEventFilter(watch)
    return watch


def run_once(app: QApplication, tokens: int, rate: float) -> tuple[float, float, float, int]:
    marks: dict[str, float] = {}
    words = [f"word{i} " for i in range(tokens)]
    with FakeAnthropicServer() as server, tempfile.TemporaryDirectory() as home:
        os.environ["CAIRN_HOME"] = home
        os.environ["ANTHROPIC_API_KEY"] = "sk-ant-bench"
        server.add_reply("".join(words), chunks=words, chunk_delay=1 / rate)
        session = open_cairn(
            AppPaths.from_environment(),
            provider_factory=lambda key, url: TimedProvider(
                AnthropicProvider(key, server.base_url), marks
            ),
        )
        window = session.window
        window.show()
        session.controller.service.start()
        watch = watch_first_text(app, session, marks)

        beats: list[float] = []
        heartbeat = QTimer()
        heartbeat.setInterval(5)
        heartbeat.timeout.connect(lambda: beats.append(time.perf_counter()))
        window.composer.set_text("Tell me a story")
        heartbeat.start()
        window.composer.editor.submitted.emit()
        while session.controller.service.current.state.activity.busy or not beats:
            app.processEvents()
            time.sleep(0.001)
        heartbeat.stop()
        app.removeEventFilter(watch)
        gaps = [(b - a) * 1000 for a, b in itertools.pairwise(beats)]
        window.close()
        session.close()
    latency = (marks["first_paint"] - marks["first_delta"]) * 1000
    return latency, max(gaps), statistics.quantiles(gaps, n=100)[98], len(gaps)


def import_stall(app: QApplication) -> float:
    """Longest GUI gap while the SDK is imported on a worker thread (as at start-up)."""
    import threading

    beats: list[float] = []
    heartbeat = QTimer()
    heartbeat.setInterval(5)
    heartbeat.timeout.connect(lambda: beats.append(time.perf_counter()))
    heartbeat.start()
    worker = threading.Thread(target=lambda: __import__("anthropic"))
    worker.start()
    while worker.is_alive() or len(beats) < 2:
        app.processEvents()
        time.sleep(0.001)
    heartbeat.stop()
    return max((b - a) * 1000 for a, b in itertools.pairwise(beats))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tokens", type=int, default=1000)
    parser.add_argument("--rate", type=float, default=200.0)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    app = QApplication([])
    print(f"importing the SDK on a worker thread: longest GUI gap {import_stall(app):.1f} ms")
    print(f"streaming {args.tokens} deltas at {args.rate:.0f}/s into the window, {args.runs} runs")
    for run in range(args.runs):
        latency, worst, p99, beats = run_once(app, args.tokens, args.rate)
        print(
            f"  run {run + 1}: first delta to screen {latency:6.1f} ms | "
            f"GUI heartbeat gaps: longest {worst:6.1f} ms, p99 {p99:5.1f} ms ({beats} beats)"
        )


if __name__ == "__main__":
    main()
