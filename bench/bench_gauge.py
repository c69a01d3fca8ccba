"""From a keystroke (once the debounce fired) to the gauge painted with the new figure.

Run: .venv/bin/python bench/bench_gauge.py [--messages N]

Opens the real window on a conversation of N live messages (their token counts
stored, as Cairn stores them), then types 60 keystrokes. For each it measures
`ChatController.set_draft` (what the debounce timer calls: counting the draft
and summing the tail) plus the gauge's repaint. Prints figures; not a test.
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
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication  # noqa: E402

from app.core.models import Role  # noqa: E402
from app.core.paths import AppPaths  # noqa: E402
from app.store import SessionStore, open_database  # noqa: E402
from app.ui.app import open_cairn  # noqa: E402
from app.ui.main_window import DRAFT_DEBOUNCE_MS  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=2_000)
    args = parser.parse_args()
    app = QApplication([])
    with tempfile.TemporaryDirectory() as home:
        os.environ["CAIRN_HOME"] = home
        os.environ["ANTHROPIC_API_KEY"] = "sk-ant-bench"
        os.environ["ANTHROPIC_BASE_URL"] = "http://127.0.0.1:9"
        paths = AppPaths.from_environment()
        store = SessionStore(open_database(paths.database).connection)
        session = store.create_session("Long", "claude-sonnet-4-6")
        for index in range(args.messages):
            role = Role.USER if index % 2 == 0 else Role.ASSISTANT
            store.append_message(session.id, role, f"Message {index}: " + "words here " * 30)
        store.close()
        cairn = open_cairn(paths)
        cairn.window.show()
        cairn.controller.service.start()
        cairn.controller.service.counter.load()
        app.processEvents()
        samples = []
        draft = ""
        for index in range(60):
            draft += "typing a few more words " if index % 5 else "\n"
            start = time.perf_counter()
            cairn.controller.service.current.gauge.set_draft(draft)
            cairn.window.header.gauge.repaint()
            samples.append((time.perf_counter() - start) * 1000)
        cairn.window.close()
        cairn.close()
    ordered = sorted(samples)
    print(
        f"keystroke to gauge painted, after the {DRAFT_DEBOUNCE_MS} ms debounce, "
        f"{args.messages} live messages:"
    )
    print(
        f"  median {statistics.median(samples):.2f} ms   "
        f"p95 {ordered[int(len(ordered) * 0.95)]:.2f} ms"
        f"   max {ordered[-1]:.2f} ms"
    )


if __name__ == "__main__":
    main()
