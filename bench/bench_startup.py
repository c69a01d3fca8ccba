"""Cold start: from launching `python -m app` to the window's first paint.

Run: .venv/bin/python bench/bench_startup.py [--runs N]

Each run is a fresh process on a fresh CAIRN_HOME (with one conversation of
200 messages so the window has something to show), under the offscreen
platform. The child prints the wall-clock time of the main window's first
paint; the parent subtracts the time it started the child. Prints figures;
not a pass/fail test.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# Runs the real entry point, with a hook that reports the first paint and quits.
CHILD = r"""
import sys, time
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication

import app.ui.app as cairn_app

state = {"filled": False}
original_fill = cairn_app.CairnSession._after_first_paint
def fill(self):
    original_fill(self)
    state["filled"] = True
    self.window.update()
cairn_app.CairnSession._after_first_paint = fill

class FirstPaint(QObject):
    # Reports the first paint, then the first paint with the conversation in it.
    def eventFilter(self, watched, event):
        if event.type() == QEvent.Type.Paint and type(watched).__name__ == "MainWindow":
            if "painted" not in state:
                state["painted"] = True
                print(f"PAINT {time.time():.6f}", flush=True)
            elif state["filled"]:
                print(f"FILLED {time.time():.6f}", flush=True)
                QTimer.singleShot(0, QApplication.instance().quit)
                QApplication.instance().removeEventFilter(self)
        return False

hook = FirstPaint()
original_init = QApplication.__init__
def patched(self, *args, **kwargs):
    original_init(self, *args, **kwargs)
    self.installEventFilter(hook)
QApplication.__init__ = patched
sys.argv = ["cairn"]
from app.__main__ import main
sys.exit(main())
"""


def prepare_home(home: Path) -> None:
    from app.core.models import Role
    from app.store import SessionStore, open_database

    store = SessionStore(open_database(home / "data" / "cairn.db").connection)
    session = store.create_session("A long conversation", "claude-sonnet-4-6")
    for index in range(200):
        role = Role.USER if index % 2 == 0 else Role.ASSISTANT
        store.append_message(session.id, role, f"Message {index}: " + "some words " * 40)
    store.close()


def one_run() -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as home:
        prepare_home(Path(home))
        env = dict(os.environ, CAIRN_HOME=home, QT_QPA_PLATFORM="offscreen")
        env["ANTHROPIC_API_KEY"] = "sk-ant-bench"  # skip the first-run dialog
        env["ANTHROPIC_BASE_URL"] = "http://127.0.0.1:9"  # nothing listens: no network
        started = time.time()
        result = subprocess.run(
            [sys.executable, "-c", CHILD],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        marks = dict(line.split() for line in result.stdout.splitlines() if line[:1].isupper())
        if "PAINT" not in marks or "FILLED" not in marks:
            raise RuntimeError(f"no paint reported:\n{result.stdout}\n{result.stderr}")
        return (
            (float(marks["PAINT"]) - started) * 1000,
            (float(marks["FILLED"]) - started) * 1000,
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    one_run()  # warm the page cache, as a second launch of a desktop app would be
    runs = [one_run() for _ in range(args.runs)]
    samples = [shown for shown, _ in runs]
    filled = [full for _, full in runs]
    bare = []
    for _ in range(args.runs):
        started = time.time()
        subprocess.run([sys.executable, "-c", "import PySide6.QtWidgets"], check=True, timeout=60)
        bare.append((time.time() - started) * 1000)
    print(f"cold start to first paint, {args.runs} runs (offscreen):")
    print(
        f"  median {statistics.median(samples):7.1f} ms   min {min(samples):7.1f} ms   "
        f"max {max(samples):7.1f} ms"
    )
    print(
        f"  conversation (newest 50 of 200 messages) on screen: median "
        f"{statistics.median(filled):.1f} ms"
    )
    print(
        f"  for scale, a bare interpreter importing QtWidgets: median "
        f"{statistics.median(bare):.1f} ms"
    )


if __name__ == "__main__":
    main()
