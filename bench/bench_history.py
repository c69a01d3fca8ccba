"""The History window as the app opens it, over a real database: open it, and search.

Run: QT_QPA_PLATFORM=offscreen .venv/bin/python bench/bench_history.py
     [--conversations 1000] [--messages 40] [--runs 5]

A database of `--conversations` conversations of `--messages` messages each (realistic
words; a third of them with their older half condensed into a summary) is built once
into /tmp/cairn-bench/. The window is the app's own: `HistoryWindow` over the chat
service's `History` (its searches run as jobs on a `JobRunner` and come back through the
Qt loop), shown offscreen. Figures, in milliseconds:
- open: from creating the window to its first paint (the conversations listed, the first
  one's timeline shown), as Conversation ▸ History… does it (issue aim: ≤ 300 ms at 1,000
  conversations);
- search: from the search starting (the box's debounce fired) to the results painted,
  over rare and common words.
Prints figures; not a test.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.timing import p95

FOLDER = Path("/tmp/cairn-bench")
WORDS = [
    "garden",
    "tomato",
    "kitchen",
    "budget",
    "invoice",
    "holiday",
    "train",
    "ticket",
    "hotel",
    "museum",
    "recipe",
    "oven",
    "printer",
    "laptop",
    "router",
    "password",
    "meeting",
    "report",
    "deadline",
    "invoice",
    "plumber",
    "quote",
    "tiles",
    "dinner",
    "birthday",
    "present",
    "flight",
    "Lisbon",
    "Porto",
    "Berlin",
    "Monday",
    "Friday",
    "morning",
    "evening",
]


def build(path: Path, conversations: int, messages: int) -> None:
    from app.core.summary import (
        SummaryContent,
        SummaryDraft,
        SummaryMode,
        SummaryTier,
        SummaryTrigger,
    )
    from app.store import SessionStore, SummaryStore, open_database
    from app.store.database import mark_clean_shutdown

    rng = random.Random(7)
    opened = open_database(path)
    store = SessionStore(opened.connection, database=opened.path)
    summaries = SummaryStore.open(path)
    for number in range(conversations):
        session = store.create_session(f"Conversation {number}: {rng.choice(WORDS)}", "m")
        ids = []
        for turn in range(messages):
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 60)))
            if turn == 0:
                text += f" (reference code{number:04d})"  # a word said once in all
            role = "user" if turn % 2 == 0 else "assistant"
            ids.append(store.append_message(session.id, role, text, token_estimate=40).id)
        if number % 3 == 0:
            half = messages // 2
            summaries.commit_summary(
                SummaryDraft(
                    session_id=session.id,
                    tier=SummaryTier.CONDENSED,
                    first_seq=1,
                    last_seq=half,
                    message_ids=ids[:half],
                    content=SummaryContent(narrative="They talked about " + rng.choice(WORDS)),
                    source_tokens=40 * half,
                    summary_tokens=20,
                    mode=SummaryMode.RULE,
                    trigger=SummaryTrigger.AUTO,
                )
            )
        if number % 100 == 0:
            print(f"  built {number:,} of {conversations:,} conversations", flush=True)
    summaries.close()
    store.close()
    mark_clean_shutdown(opened.path)


def summary(label: str, samples: list[float]) -> str:
    ordered = sorted(samples)
    worst = p95(ordered)
    return (
        f"{label:<44} median {statistics.median(ordered):7.1f} ms   p95 {worst:7.1f} ms   "
        f"max {ordered[-1]:7.1f} ms   (n={len(ordered)})"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--conversations", type=int, default=1_000)
    parser.add_argument("--messages", type=int, default=40)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    from PySide6.QtCore import QEvent, QObject
    from PySide6.QtWidgets import QApplication

    from app.chat.events import ChatEvents
    from app.chat.history import History
    from app.chat.runner import JobRunner
    from app.ui.history_window import HistoryWindow
    from app.ui.qt_loop import QtEventLoop

    FOLDER.mkdir(exist_ok=True)
    path = FOLDER / f"history-{args.conversations}-{args.messages}.db"
    if not path.exists():
        print(f"building {path} (once)")
        build(path, args.conversations, args.messages)
    app = QApplication([])
    loop = QtEventLoop()
    history = History.on(path, JobRunner(loop), ChatEvents())

    class FirstPaint(QObject):
        def __init__(self) -> None:
            super().__init__()
            self.at: float | None = None

        def eventFilter(self, watched: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.Paint and self.at is None:
                self.at = time.perf_counter()
            return False

    def wait(done: object, seconds: float = 30) -> None:
        deadline = time.perf_counter() + seconds
        while not done() and time.perf_counter() < deadline:  # type: ignore[operator]
            app.processEvents()
        if not done():  # type: ignore[operator]
            raise TimeoutError("still waiting")

    print(
        f"{args.conversations:,} conversations of {args.messages} messages "
        f"({args.conversations * args.messages:,} messages); offscreen"
    )
    opens: list[float] = []
    searches: dict[str, list[float]] = {"rare": [], "common": []}
    for _ in range(args.runs):
        painted = FirstPaint()
        started = time.perf_counter()
        window = HistoryWindow(history)
        window.resize(1000, 680)
        window.conversation_view.viewport().installEventFilter(painted)
        window.show()
        wait(lambda p=painted: p.at is not None)  # type: ignore[misc]
        assert painted.at is not None
        opens.append((painted.at - started) * 1000)
        panel = window.search
        for kind, text in (("rare", "code0007"), ("common", "garden")):
            results = panel.view.viewport()
            shown = FirstPaint()
            results.installEventFilter(shown)
            panel.search_edit.setText(text)
            begun = time.perf_counter()
            panel.search()  # the debounce's end: the search starts here
            wait(lambda p=panel: p.results.hits() != [])  # type: ignore[misc]
            shown.at = None
            wait(lambda s=shown: s.at is not None)  # type: ignore[misc]
            assert shown.at is not None
            searches[kind].append((shown.at - begun) * 1000)
            results.removeEventFilter(shown)
        window.close()
        window.deleteLater()
        app.processEvents()
    print(summary("open (to first paint)", opens))
    for kind, samples in searches.items():
        print(summary(f"search, {kind} words (start to results painted)", samples))


if __name__ == "__main__":
    main()
