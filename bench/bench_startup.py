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

class FirstPaint(QObject):
    def eventFilter(self, watched, event):
        if event.type() == QEvent.Type.Paint and type(watched).__name__ == "MainWindow":
            print(f"PAINT {time.time():.6f}", flush=True)
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


def one_run() -> float:
    with tempfile.TemporaryDirectory() as home:
        prepare_home(Path(home))
        env = dict(os.environ, CAIRN_HOME=home, QT_QPA_PLATFORM="offscreen")
        env["ANTHROPIC_API_KEY"] = "sk-ant-bench"  # skip the first-run dialog
        env["ANTHROPIC_BASE_URL"] = "http://127.0.0.1:9"  # nothing listens: no network
        started = time.time()
        result = subprocess.run(
            [sys.executable, "-c", CHILD], cwd=REPO, env=env, capture_output=True, text=True,
            timeout=60,
        )
        for line in result.stdout.splitlines():
            if line.startswith("PAINT "):
                return (float(line.split()[1]) - started) * 1000
        raise RuntimeError(f"no first paint reported:\n{result.stdout}\n{result.stderr}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    one_run()  # warm the page cache, as a second launch of a desktop app would be
    samples = [one_run() for _ in range(args.runs)]
    bare = []
    for _ in range(args.runs):
        started = time.time()
        subprocess.run(
            [sys.executable, "-c", "import PySide6.QtWidgets"], check=True, timeout=60
        )
        bare.append((time.time() - started) * 1000)
    print(f"cold start to first paint, {args.runs} runs (offscreen):")
    print(f"  median {statistics.median(samples):7.1f} ms   min {min(samples):7.1f} ms   "
          f"max {max(samples):7.1f} ms")
    print(f"  for scale, a bare interpreter importing QtWidgets: median "
          f"{statistics.median(bare):.1f} ms")


if __name__ == "__main__":
    main()
