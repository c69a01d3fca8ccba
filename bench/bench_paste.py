"""A 10 MB paste in the real window: the GUI thread's time from Ctrl+V to the refusal.

Run: .venv/bin/python bench/bench_paste.py [--runs 3] [--megabytes 10]

Issue 20's target: "a 10 MB paste is refused (or accepted) in under 0.2 s of GUI time;
the composer never measures or highlights the whole text per keystroke".

Each run is a fresh process running `app.ui.app.run(["cairn"])` as `cairn` does
(offscreen; bench/real_window.py) on a folder holding one conversation of 20 messages
(bench_open.py's text), the fake Anthropic server in its own process. Once start-up
has settled, the text — realistic prose and code, as a long document or log pasted —
is put on the clipboard, then:
- paste: Ctrl+V pressed on the composer with QTest (QPlainTextEdit's own paste:
  `insertFromMimeData`), until the key press returns;
- settle: from then until the window is idle again (the 150 ms draft debounce, the
  gauge's count of the draft) and 1 s has passed — the user sees the text and the gauge;
- Enter: Return pressed on the composer, until the refusal (the banner) has painted,
  or the message went (then until the window is idle).
Per phase: the GUI thread's CPU (thread_time), wall time, the longest silence of a
1 ms heartbeat on the GUI thread (a stall the user feels), how much of the wall time the
GUI thread waited for a CPU (schedstat: the machine is shared) or was blocked (neither
running nor waiting for a CPU: the GIL held by another thread, a lock, I/O), and the
whole process's CPU. Also what the window shows
at the end: the banner's title, the composer's length. Medians of the runs, with the
load average. Figures, not pass/fail.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from real_window import (
    REPO,
    FakeServer,
    Heartbeat,
    child_environment,
    load_average,
    machine,
    median,
    prepare_home,
    run_cairn,
    settled,
    wait,
)

SETTLE_SECONDS = 1.0
TIMEOUT_SECONDS = 300.0


def pasted_text(megabytes: float) -> str:
    """About `megabytes` MB (UTF-8) of paragraphs and code blocks, as a long document."""
    from bench_open import message_text, sentence_pool

    rng = random.Random(10)
    pool = sentence_pool(rng)
    parts: list[str] = []
    size = 0
    target = int(megabytes * 1_000_000)
    while size < target:
        part = message_text(rng, pool, assistant=True)
        parts.append(part)
        size += len(part.encode()) + 2
    return "\n\n".join(parts)


def build_home_database() -> Path:
    """One conversation of 20 messages (cached in /tmp/cairn-bench/)."""
    from datetime import UTC, datetime

    from bench_open import CACHE, insert_conversation, sentence_pool

    from app.store import SCHEMA_VERSION, open_database
    from app.store.database import mark_clean_shutdown

    CACHE.mkdir(exist_ok=True)
    target = CACHE / f"paste-20-schema{SCHEMA_VERSION}.db"
    done = target.with_name(target.name + ".done")
    if target.is_file() and done.is_file():
        return target
    for stale in CACHE.glob(target.name + "*"):
        stale.unlink()
    rng = random.Random(20)
    opened = open_database(target)
    insert_conversation(
        opened.connection,
        "bench-paste",
        "Notes on the spring release",
        20,
        rng=rng,
        pool=sentence_pool(rng),
        start=datetime(2025, 9, 1, tzinfo=UTC),
    )
    opened.connection.close()
    mark_clean_shutdown(target)
    done.write_text("20 messages\n")
    return target


class Phase:
    """From `start()` to `stop()`: the wall clock, the GUI thread's CPU, its wait for a CPU
    (/proc schedstat: a busy machine), and the whole process's CPU (every thread)."""

    def __init__(self) -> None:
        self._stat = f"/proc/self/task/{threading.get_native_id()}/schedstat"
        self.began: tuple[float, ...] = (0.0, 0.0, 0.0, 0.0)
        self.ended: tuple[float, ...] = (0.0, 0.0, 0.0, 0.0)

    def _now(self) -> tuple[float, ...]:
        try:
            queued = int(Path(self._stat).read_text().split()[1]) / 1e9
        except (OSError, IndexError, ValueError):
            queued = float("nan")
        return time.perf_counter(), time.thread_time(), queued, time.process_time()

    def start(self) -> None:
        self.began = self._now()

    def stop(self, wall: float | None = None) -> None:
        self.ended = self._now()
        if wall is not None:
            self.ended = (wall, *self.ended[1:])

    def figures(self, heartbeat: Heartbeat) -> dict[str, float]:
        wall, cpu, queued, process = (
            (end - begin) * 1e3 for begin, end in zip(self.began, self.ended, strict=True)
        )
        return {
            "cpu": cpu,
            "wall": wall,
            "slice": heartbeat.longest(self.began[0], self.ended[0]),
            "queued": queued,
            # Neither running nor waiting for a CPU: waiting for the GIL (or a lock, or I/O).
            "blocked": max(0.0, wall - cpu - queued),
            "process": process,
        }


def app_child(megabytes: float) -> None:
    def script(controller: Any, window: Any, started: Callable[[], bool]) -> Iterator[Any]:
        from PySide6.QtCore import QEvent, QObject, Qt
        from PySide6.QtTest import QTest
        from PySide6.QtWidgets import QApplication

        from app.chat.events import Activity

        service = controller.service

        def idle() -> bool:
            current = service.current
            return (
                current.state.activity is Activity.IDLE
                and not current.has_jobs
                and service.runner.running == 0
            )

        yield started
        yield settled(controller, time.perf_counter())
        text = pasted_text(megabytes)
        clipboard = QApplication.clipboard()
        clipboard.setText(text)
        yield wait(0.5)
        editor, banner = window.composer.editor, window.banner
        editor.setFocus(Qt.FocusReason.OtherFocusReason)
        heartbeat = Heartbeat()
        heartbeat.start()
        paste, settle, enter = Phase(), Phase(), Phase()
        paste.start()
        QTest.keyClick(editor, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
        paste.stop()
        settle.start()
        settle_until = time.perf_counter() + SETTLE_SECONDS
        yield lambda: time.perf_counter() >= settle_until and idle()
        settle.stop()
        painted: list[float] = []

        class BannerPaint(QObject):
            def eventFilter(self, watched: QObject, event: QEvent) -> bool:
                if event.type() == QEvent.Type.Paint and not painted:
                    painted.append(time.perf_counter())
                return False

        watch = BannerPaint()
        banner.installEventFilter(watch)
        sent_before = len(service.current.state.tail)
        enter.start()
        QTest.keyClick(editor, Qt.Key.Key_Return)
        yield lambda: bool(painted) or (len(service.current.state.tail) > sent_before and idle())
        enter.stop(painted[0] if painted else None)
        heartbeat.stop()
        banner.removeEventFilter(watch)
        result = {
            "characters": len(text),
            "bytes": len(text.encode()),
            "paste": paste.figures(heartbeat),
            "settle": settle.figures(heartbeat),
            "enter": enter.figures(heartbeat),
            "refused": bool(painted),
            "banner": banner.title_label.text() if hasattr(banner, "title_label") else "",
            "composer": len(editor.toPlainText()),
        }
        print("PASTE " + json.dumps(result), flush=True)

    run_cairn(script)


def one_run(template: Path, megabytes: float) -> dict[str, Any]:
    from app.core.catalog import FALLBACK_MODELS

    with tempfile.TemporaryDirectory(prefix="cairn-bench-paste-") as folder:
        work = Path(folder)
        home = work / "home"
        prepare_home(home, template, FALLBACK_MODELS)
        with FakeServer(work) as server:
            completed = subprocess.run(
                [sys.executable, __file__, "--child", str(megabytes)],
                cwd=REPO,
                env=child_environment(home, server.base_url),
                capture_output=True,
                text=True,
                timeout=TIMEOUT_SECONDS * 2,
            )
    for line in completed.stdout.splitlines():
        if line.startswith("PASTE "):
            result: dict[str, Any] = json.loads(line.removeprefix("PASTE "))
            return result
    raise RuntimeError(f"the child reported nothing:\n{completed.stdout}\n{completed.stderr}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--megabytes", type=float, default=10.0)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        app_child(float(args.child))
        return
    sys.path.insert(0, str(REPO))
    template = build_home_database()
    print(f"machine: {machine()}")
    print(f"load average at start: {load_average()}")
    print(
        "per phase, ms: the GUI thread's CPU / wall / longest heartbeat silence; of the wall "
        "time, the GUI thread waiting for a CPU (queued) and neither running nor queued "
        "(blocked: the GIL, a lock, I/O — or, while settling, idle); the whole process's CPU"
    )
    print(f"{'':10}" + "  ".join(f"{phase:^46}" for phase in PHASES))
    print(f"{'':10}" + "  ".join(f"{HEADER:>46}" for _ in PHASES))
    results = []
    for index in range(1, args.runs + 1):
        result = one_run(template, args.megabytes)
        results.append(result)
        print(f"  run {index}  " + row(result) + f"   (load {load_average()})", flush=True)
    medians = {
        phase: {key: median([r[phase][key] for r in results]) for key in KEYS} for phase in PHASES
    }
    print("  median " + row(medians))
    total = sum(medians[phase]["cpu"] for phase in PHASES)
    wall = sum(medians[phase]["wall"] for phase in PHASES)
    first = results[0]
    print(
        f"pasted {first['bytes'] / 1e6:.1f} MB ({first['characters']:,} characters); "
        f"from Ctrl+V to the refusal on screen, medians summed: GUI CPU {total / 1000:.2f} s, "
        f"wall {wall / 1000:.2f} s; "
        + (
            f"refused: banner “{first['banner']}”"
            if first["refused"]
            else "not refused: the message was sent"
        )
        + f"; composer still holds {first['composer']:,} characters"
    )
    print(f"load average at end: {load_average()}")


PHASES = ("paste", "settle", "enter")
KEYS = ("cpu", "wall", "slice", "queued", "blocked", "process")
HEADER = "CPU / wall / slice | queued blocked | proc"


def row(result: dict[str, Any]) -> str:
    return "  ".join(
        f"{f['cpu']:>6.0f} /{f['wall']:>6.0f} /{f['slice']:>6.0f} | {f['queued']:>6.0f} "
        f"{f['blocked']:>6.0f} | {f['process']:>5.0f}"
        for f in (result[phase] for phase in PHASES)
    )


if __name__ == "__main__":
    main()
