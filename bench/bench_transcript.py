"""How fast the transcript opens, streams and shows a huge message.

Run: QT_QPA_PLATFORM=offscreen .venv/bin/python bench/bench_transcript.py [--runs 5]

Prints, in milliseconds:
- opening the newest 50 messages of a 10,000-message conversation: from the
  `set_messages` call to the first frame painted (`first frame`: what the user
  sees first), and to the frame after the whole page is built (`page
  complete`; the transcript builds the messages that fill the view first and
  the older ones of the page after that first frame), with the GUI thread's
  CPU time over that span (the bench's own heartbeat included); `call`: the
  call itself; `longest gap`: the longest the GUI thread went without returning to
  its event loop between the first frame and the page complete (a 1 ms QTimer
  heartbeat). The first open (cold), then the median of `--runs` other pages
  opened on an empty transcript (warm), and of `--runs` switches from one
  shown page to another (as a click in the sidebar does); and prepending an
  older page, to the next frame;
- one streaming update (`update_message_text`) of a reply growing to 5 KB and
  to 40 KB in 100 updates: the call alone, and the call plus layout and paint
  (wall time, median and p95, and the GUI thread's CPU time for the same);
- Python calls from Qt per streaming update (40 KB reply): every call Qt makes
  into the app's Python code (virtual overrides such as `heightForWidth` or
  `paintEvent`, event filters, slots) while the update is made, laid out and
  painted, counted with `sys.setprofile` in a separate pass. Each is a place
  where the GUI thread must hold the GIL, and so waits while another thread
  runs Python;
- showing a 1 MB message (many lines, and one single line: both plain text),
  and a message just under the plain-text threshold, rendered as Markdown,
  to the first frame.
- a long reply streamed at 60 characters an update (`--long-replies`: 2k, 8k and 20k
  characters of headings, prose with inline code, lists, tables, quotes and code):
  the GUI thread's CPU per update, the update and the frame it causes (median, p95,
  and the longest: the longest slice), and in all for the reply. `--compare CHECKOUT`
  runs that part alone in fresh processes, this checkout and CHECKOUT (main's, unpacked
  by `git archive`) alternated, `--runs` times each, and prints them side by side with
  the load average; `--tree CHECKOUT` runs the app from CHECKOUT.
- `--paced` (with `--long-replies`, and `--compare`): the same replies streamed as the
  window receives them, an update every 1/30 s (the chat layer's most), the event loop
  waiting in between, Qt's own 5 ms update delay: per reply, the GUI thread's CPU in all
  (every frame included), the frames painted and the pixels painted in the column. The
  unpaced run counts each update to its first frame only, while an update that grows the
  reply may take more frames; back to back, updates also share frames a person's pace
  would not.
QT_QPA_UPDATE_IDLE_TIME=0 (but with `--paced`), as in bench_sidebar.py: the offscreen
platform would otherwise wait 5 ms before each repaint (a real screen waits for its next
frame), and that wait would hide the work. Figures, not pass/fail; the machine may be shared,
so the CPU figures are steadier than the wall ones.
"""

from __future__ import annotations

import argparse
import collections
import itertools
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def _tree_argument() -> Path:
    """The checkout whose app is benched (`--tree`, read before anything imports it)."""
    if "--tree" in sys.argv:
        return Path(sys.argv[sys.argv.index("--tree") + 1]).resolve()
    return REPO


sys.path.insert(0, str(_tree_argument()))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Paced: Qt's own update delay, as the app runs (see the docstring).
os.environ.setdefault("QT_QPA_UPDATE_IDLE_TIME", "5" if "--paced" in sys.argv else "0")

from PySide6.QtCore import QEvent, QEventLoop, QObject, Qt, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication, QWidget  # noqa: E402

from app.core.models import Message, MessageStatus, Role  # noqa: E402
from app.ui.message_text import HUGE_MESSAGE_CHARS  # noqa: E402
from app.ui.transcript import TranscriptView  # noqa: E402

NOW = datetime(2026, 3, 5, 14, 30, tzinfo=UTC)
APP_CODE = str(_tree_argument() / "app") + os.sep


def _keep_none_alive() -> None:
    """Work around PySide6 6.12 on Python 3.11: every call that returns nothing drops
    a reference to None (harmless from 3.12, where None is immortal), and after some
    thousands of calls Python aborts with "deallocating None". Give None a reference
    count no run can use up, as 3.12 does."""
    if sys.version_info < (3, 12):
        import ctypes

        ctypes.c_ssize_t.from_address(id(None)).value += 1 << 40


def synthetic_conversation(count: int) -> list[Message]:
    """Alternating turns: questions, and replies with headings, lists, tables and code."""
    messages = []
    for index in range(1, count + 1):
        if index % 2:
            role, content = Role.USER, f"Question {index}: could you explain part {index}? " * 2
        else:
            role = Role.ASSISTANT
            parts = [
                f"## Part {index}",
                "Here is the **short** answer, with `inline code` and a "
                "[link](https://example.org).",
                "- first point\n- second point\n- third point",
            ]
            if index % 4 == 0:
                parts.append("| name | value |\n|---|---|\n| a | 1 |\n| b | 2 |")
            if index % 6 == 0:
                parts.append(
                    "```python\n" + "\n".join(f"value_{n} = {n} * 2" for n in range(12)) + "\n```"
                )
            parts.append("That is all " * 20)
            content = "\n\n".join(parts)
        messages.append(
            Message(
                id=index,
                session_id="bench",
                seq=index,
                role=role,
                content=content,
                created_at=NOW,
            )
        )
    return messages


class Window(QWidget):
    """The top-level window: notes when each frame has been painted.

    Qt paints a window while it handles the window's UpdateRequest, so the
    end of that is the moment a frame is complete.
    """

    def __init__(self) -> None:
        super().__init__()
        self.frames: list[float] = []

    def event(self, event: QEvent) -> bool:
        handled = super().event(event)
        if event.type() == QEvent.Type.UpdateRequest:
            self.frames.append(time.perf_counter())
        return handled


class PaintProbe(QObject):
    """Notes when a widget is painted."""

    def __init__(self) -> None:
        super().__init__()
        self.painted = False

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.painted = True
        return False


class Heartbeat:
    """A 1 ms precise QTimer on the GUI thread noting each beat's time."""

    def __init__(self) -> None:
        self.beats: list[float] = []
        self._timer = QTimer()
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(1)
        self._timer.timeout.connect(lambda: self.beats.append(time.perf_counter()))

    def start(self) -> None:
        self.beats.clear()
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()

    def longest_gap(self, start: float, end: float) -> float:
        """The longest time between two beats (or `start`/`end` and a beat) within the span."""
        marks = [start, *(beat for beat in self.beats if start < beat < end), end]
        return max(later - earlier for earlier, later in itertools.pairwise(marks))


def run_until(app: QApplication, done: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.perf_counter() + timeout
    while not done():
        if time.perf_counter() > deadline:
            raise RuntimeError("timed out")
        app.processEvents()


def until_painted(app: QApplication, probe: PaintProbe) -> None:
    """Run the event loop until the next paint (layout first, as Qt orders it)."""
    probe.painted = False
    run_until(app, lambda: probe.painted, timeout=2)


def next_frame(app: QApplication, window: Window) -> float:
    """Run the event loop until the window paints its next frame; when that was."""
    seen = len(window.frames)
    run_until(app, lambda: len(window.frames) > seen)
    return window.frames[seen]


def is_building(view: TranscriptView) -> bool:
    return bool(getattr(view, "building", False))


@dataclass
class Opening:
    call: float
    first_frame: float
    complete: float
    cpu: float
    longest_gap: float


def open_page(
    app: QApplication,
    window: Window,
    view: TranscriptView,
    heartbeat: Heartbeat,
    page: Sequence[Message],
) -> Opening:
    """`set_messages` → first frame → the frame after the whole page is built."""
    heartbeat.start()
    start, start_cpu = time.perf_counter(), time.thread_time()
    view.set_messages(page, has_earlier=True)
    called = time.perf_counter()
    first = next_frame(app, window)
    complete = first
    if is_building(view):
        run_until(app, lambda: not is_building(view))
        complete = next_frame(app, window)
    cpu = time.thread_time() - start_cpu
    heartbeat.stop()
    gap = heartbeat.longest_gap(first, complete) if complete > first else 0.0
    return Opening(called - start, first - start, complete - start, cpu, gap)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:7.1f} ms"


def median_and_p95(values: Sequence[float]) -> str:
    ordered = sorted(values)
    return f"{ms(statistics.median(ordered))} median, {ms(ordered[int(len(ordered) * 0.95)])} p95"


# --- Python calls from Qt --------------------------------------------------------------------


def _is_qt(function: Any) -> bool:
    """Whether a C function the profiler saw being called belongs to Qt (PySide)."""
    owner = getattr(function, "__self__", None)
    if owner is None:
        return str(getattr(function, "__qualname__", "")).startswith("Q")
    kind = owner if isinstance(owner, type) else type(owner)
    return any(base.__module__.startswith("PySide6") for base in kind.__mro__)


class PythonCallsFromQt:
    """Counts the calls Qt makes into the app's Python code, by function (`sys.setprofile`).

    A call counts when the function runs in app/ and its caller is a Qt function
    (the event loop, a layout, a paint…), not Python code or a Python builtin.
    """

    def __init__(self) -> None:
        self.by_function: collections.Counter[str] = collections.Counter()
        self._callers: list[Any] = []

    def __enter__(self) -> PythonCallsFromQt:
        self._callers.clear()
        sys.setprofile(self._profile)
        return self

    def __exit__(self, *exc: object) -> None:
        sys.setprofile(None)

    @property
    def total(self) -> int:
        return sum(self.by_function.values())

    def _profile(self, frame: FrameType, event: str, arg: Any) -> None:
        if event == "c_call":
            self._callers.append(arg)
        elif event in ("c_return", "c_exception", "return"):
            if self._callers:
                self._callers.pop()
        elif event == "call":
            caller = self._callers[-1] if self._callers else None
            if (
                caller is not None
                and frame.f_code.co_filename.startswith(APP_CODE)
                and _is_qt(caller)
            ):
                self.by_function[frame.f_code.co_qualname] += 1
            self._callers.append(None)


# --- the parts ----------------------------------------------------------------------------


def bench_opening(app: QApplication, window: Window, view: TranscriptView, runs: int) -> None:
    everything = synthetic_conversation(10_000)
    heartbeat = Heartbeat()

    def page(number: int) -> list[Message]:
        end = len(everything) - number * 50
        return everything[end - 50 : end]

    fresh: list[Opening] = []
    for number in range(runs + 1):
        fresh.append(open_page(app, window, view, heartbeat, page(number)))
        view.clear()
        app.processEvents()
    switches: list[Opening] = []
    view.set_messages(page(runs + 1), has_earlier=True)
    run_until(app, lambda: not is_building(view))
    for number in range(runs + 2, 2 * runs + 2):
        switches.append(open_page(app, window, view, heartbeat, page(number)))
    view.set_messages(page(0), has_earlier=True)
    run_until(app, lambda: not is_building(view))
    next_frame(app, window)
    start = time.perf_counter()
    view.prepend_messages(page(1), has_earlier=True)
    prepend = next_frame(app, window) - start

    def column(openings: Sequence[Opening], field: str) -> str:
        return ms(statistics.median(getattr(opening, field) for opening in openings))

    print("Open the newest 50 of 10,000 messages (set_messages ->)")
    print("                          cold         warm       switch")
    for label, field in (
        ("first frame", "first_frame"),
        ("page complete", "complete"),
        ("  its CPU time", "cpu"),
        ("call", "call"),
        ("longest gap in between", "longest_gap"),
    ):
        print(
            f"  {label:<22}{ms(getattr(fresh[0], field))}   {column(fresh[1:], field)}"
            f"   {column(switches, field)}"
        )
    print(f"  prepend 50 older, to the next frame {ms(prepend)}")


def start_reply(app: QApplication, view: TranscriptView, reply_id: int) -> PaintProbe:
    """A new streaming reply at the bottom, and a probe noting when it is painted."""
    view.append_message(
        Message(
            id=reply_id,
            session_id="bench",
            seq=reply_id,
            role=Role.ASSISTANT,
            content="",
            created_at=NOW,
            status=MessageStatus.STREAMING,
        )
    )
    app.processEvents()
    reply_widget = view.message_widget(reply_id)
    assert reply_widget is not None
    probe = PaintProbe()
    reply_widget.installEventFilter(probe)
    return probe


def bench_streaming(app: QApplication, view: TranscriptView) -> None:
    everything = synthetic_conversation(200)
    sentence = "Streaming text with **bold**, `code` and a list:\n\n- one\n- two\n\n"
    code = "```python\n" + "".join(f"line_{n} = compute({n})\n" for n in range(60)) + "```\n\n"
    short_reply = ((sentence * 30)[:2500] + code + (sentence * 30))[:5000]
    paragraph = "A long essay paragraph with *some* emphasis and words, " * 6 + "\n\n"
    long_reply = (paragraph * 200)[:40_000]
    reply_id = 100_000
    for label, full, step in (("5 KB", short_reply, 50), ("40 KB", long_reply, 400)):
        view.set_messages(everything[-50:], has_earlier=True)
        run_until(app, lambda: not is_building(view))
        probe = start_reply(app, view, reply_id)
        calls, painted, cpu = [], [], []
        for end in range(step, len(full) + 1, step):
            start, start_cpu = time.perf_counter(), time.thread_time()
            view.update_message_text(reply_id, full[:end])
            calls.append(time.perf_counter() - start)
            until_painted(app, probe)
            painted.append(time.perf_counter() - start)
            cpu.append(time.thread_time() - start_cpu)
        reply_id += 1
        print(f"Streaming a reply to {label} in {len(calls)} updates")
        print(f"  update_message_text     {median_and_p95(calls)}")
        print(f"  + layout and paint      {median_and_p95(painted)}")
        print(f"    its CPU time          {median_and_p95(cpu)}")

    # Python calls from Qt, in a pass of their own (the profiler slows everything).
    view.set_messages(everything[-50:], has_earlier=True)
    run_until(app, lambda: not is_building(view))
    probe = start_reply(app, view, reply_id)
    counts: list[int] = []
    totals: collections.Counter[str] = collections.Counter()
    for end in range(400, len(long_reply) + 1, 400):
        with PythonCallsFromQt() as calls_from_qt:
            view.update_message_text(reply_id, long_reply[:end])
            until_painted(app, probe)
        counts.append(calls_from_qt.total)
        totals.update(calls_from_qt.by_function)
    top = ", ".join(f"{name} {count / len(counts):.1f}" for name, count in totals.most_common(6))
    print("Python calls from Qt per streaming update (40 KB reply)")
    print(
        f"  {statistics.mean(counts):.1f} mean, {statistics.median(counts):.0f} median, "
        f"{max(counts)} max; most: {top}"
    )


def bench_huge(app: QApplication, window: Window, view: TranscriptView) -> None:
    line = "A pasted log line with some words in it, number 0123456789.\n"
    cases = {
        "1 MB, many lines (plain)": line * (1_000_000 // len(line)),
        "1 MB, one line (plain)": "word " * 200_000,
        f"{HUGE_MESSAGE_CHARS // 1000 - 2} KB Markdown (rendered)": (
            "Some **markdown** text with `code` and words. " * 40 + "\n\n"
        )
        * (HUGE_MESSAGE_CHARS // 1900),
    }
    print("Show one very large message, set_messages -> first frame")
    for label, text in cases.items():
        message = Message(
            id=1,
            session_id="bench",
            seq=1,
            role=Role.USER if "plain" in label else Role.ASSISTANT,
            content=text,
            created_at=NOW,
        )
        view.clear()
        app.processEvents()
        start = time.perf_counter()
        view.set_messages([message], has_earlier=False)
        frame = next_frame(app, window)
        print(f"  {label:<26}{ms(frame - start)}  ({len(text):,} chars)")


# --- long replies, streamed ---------------------------------------------------------------

LONG_REPLY_SIZES = (2000, 8000, 20_000)
LONG_REPLY_STEP = 60


def long_reply(size: int) -> str:
    """A reply as Claude writes them: sections with a heading, prose with inline code, a
    list, and now and then a table or a quote; one code block, early, so the prose after
    it grows into pieces of up to 8,000 characters (`split_prose`); `size` characters."""
    parts: list[str] = []
    section = 0
    while sum(map(len, parts)) < size:
        section += 1
        parts.append(f"## Step {section}: what to change\n\n")
        parts.append(
            f"First open `config_{section}.toml` and look for the **timeout** setting; "
            "it is read by `load_settings()` when the service starts, so a change needs "
            "a restart. The value is in seconds, and the default is fine for most "
            "people, but a slow disk may need more.\n\n"
        )
        parts.append("- check the `path` entry\n- keep a backup\n- restart the service\n\n")
        if section % 3 == 0:
            parts.append(
                "| setting | default | meaning |\n|---|---|---|\n"
                "| `timeout` | 30 | seconds to wait |\n| `retries` | 3 | attempts |\n\n"
            )
        if section % 4 == 0:
            parts.append("> Note: the service reads the file once, at start.\n\n")
        if section == 2:
            parts.append("```python\nsettings = load_settings()\nprint(settings.timeout)\n```\n\n")
    return "".join(parts)[:size]


def bench_long_replies(app: QApplication, window: Window, view: TranscriptView) -> dict[str, Any]:
    """GUI-thread CPU per streaming update (to the frame it causes) of long replies."""
    everything = synthetic_conversation(200)
    figures: dict[str, Any] = {}
    for number, size in enumerate(LONG_REPLY_SIZES):
        view.set_messages(everything[-50:], has_earlier=True)
        run_until(app, lambda: not is_building(view))
        reply_id = 200_000 + number
        start_reply(app, view, reply_id)
        next_frame(app, window)
        full = long_reply(size)
        cpu: list[float] = []
        for end in [*range(LONG_REPLY_STEP, len(full), LONG_REPLY_STEP), len(full)]:
            start_cpu = time.thread_time()
            view.update_message_text(reply_id, full[:end])
            next_frame(app, window)
            cpu.append(time.thread_time() - start_cpu)
        figures[str(size)] = cpu
    return figures


# The chat layer shows a reply's text at most about 30 times a second (TEXT_INTERVAL_SECONDS).
PACED_INTERVAL_MS = 33


class PaintedPixels(QObject):
    """Adds up the pixels `widget` is asked to paint."""

    def __init__(self, widget: QWidget) -> None:
        super().__init__()
        self.pixels = 0
        self._widget = widget
        widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            region = event.region()  # type: ignore[attr-defined]
            self.pixels += sum(rect.width() * rect.height() for rect in region)
        return False

    def stop(self) -> None:
        self._widget.removeEventFilter(self)


def wait_ms(milliseconds: int) -> None:
    """Let the event loop run for `milliseconds`, waiting for events (not polling)."""
    loop = QEventLoop()
    QTimer.singleShot(milliseconds, loop.quit)
    loop.exec()


def bench_paced_replies(
    app: QApplication, window: Window, view: TranscriptView
) -> dict[str, dict[str, float]]:
    """The long replies streamed at the window's pace: CPU, frames and pixels painted."""
    everything = synthetic_conversation(200)
    figures: dict[str, dict[str, float]] = {}
    for number, size in enumerate(LONG_REPLY_SIZES):
        view.set_messages(everything[-50:], has_earlier=True)
        run_until(app, lambda: not is_building(view))
        reply_id = 300_000 + number
        start_reply(app, view, reply_id)
        wait_ms(200)
        full = long_reply(size)
        ends = [*range(LONG_REPLY_STEP, len(full), LONG_REPLY_STEP), len(full)]
        painted = PaintedPixels(view.message_column)
        frames = len(window.frames)
        cpu = time.thread_time()
        for end in ends:
            view.update_message_text(reply_id, full[:end])
            wait_ms(PACED_INTERVAL_MS)
        cpu = time.thread_time() - cpu
        painted.stop()
        figures[str(size)] = {
            "updates": len(ends),
            "cpu_ms": cpu * 1e3,
            "frames": len(window.frames) - frames,
            "mpx": painted.pixels / 1e6,
        }
    return figures


def run_long_replies(app: QApplication, window: Window, view: TranscriptView) -> None:
    if "--paced" in sys.argv:
        paced = bench_paced_replies(app, window, view)
        if "--json" in sys.argv:
            print(json.dumps(paced))
            return
        print(f"Long replies streamed {LONG_REPLY_STEP} characters every {PACED_INTERVAL_MS} ms")
        for size, figure in paced.items():
            print(
                f"  {int(size):>6,} chars, {figure['updates']:.0f} updates: GUI-thread CPU "
                f"{ms(figure['cpu_ms'] / 1e3)} in all, {figure['frames']:.0f} frames, "
                f"{figure['mpx']:.1f} Mpx painted in the column"
            )
        return
    figures = bench_long_replies(app, window, view)
    if "--json" in sys.argv:
        print(json.dumps(figures))
        return
    print(f"Long replies streamed {LONG_REPLY_STEP} characters an update (GUI-thread CPU)")
    for size, cpu in figures.items():
        ordered = sorted(cpu)
        print(
            f"  {int(size):>6,} chars, {len(cpu)} updates: per update {ms(statistics.median(cpu))}"
            f" median, {ms(ordered[int(len(ordered) * 0.95)])} p95, {ms(max(cpu))} longest;"
            f" {ms(sum(cpu))} in all"
        )


def alternated_runs(
    other: Path, runs: int, flags: list[str], what: str
) -> tuple[dict[str, Path], dict[str, list[dict[str, Any]]]]:
    """This script with `flags` and `--json`, in this checkout ("branch") and `other`
    ("main") alternated, each run in a fresh process: each tree's figures, run by run.
    Prints `what` was run, the trees and the load average before and after."""
    trees = {"main": other.resolve(), "branch": REPO}
    figures: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
    load_before = os.getloadavg()
    for run in range(runs):
        order = list(trees) if run % 2 == 0 else list(reversed(trees))
        for name in order:
            output = subprocess.run(
                [sys.executable, __file__, *flags, "--json", "--tree", str(trees[name])],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            figures[name].append(json.loads(output.strip().splitlines()[-1]))
    load_after = os.getloadavg()
    print(f"{what}; {runs} runs each, main and branch alternated, fresh process per run")
    print(f"  main: {trees['main']}, branch: {REPO}")
    print(
        f"  load average {' '.join(f'{v:.2f}' for v in load_before)} before, "
        f"{' '.join(f'{v:.2f}' for v in load_after)} after; {os.cpu_count()} CPUs"
    )
    return trees, figures


def compare_paced_replies(other: Path, runs: int) -> None:
    """`--paced`: this checkout and `other` alternated, each run in a fresh process."""
    trees, runs_figures = alternated_runs(
        other,
        runs,
        ["--long-replies", "--paced"],
        f"Long replies streamed {LONG_REPLY_STEP} characters every {PACED_INTERVAL_MS} ms",
    )
    results: dict[str, dict[str, list[dict[str, float]]]] = {name: {} for name in trees}
    for name, per_run in runs_figures.items():
        for figures in per_run:
            for size, figure in figures.items():
                results[name].setdefault(size, []).append(figure)
    print("  reply     tree    GUI CPU in all (median, min-max)   frames   Mpx painted")
    for size in (str(size) for size in LONG_REPLY_SIZES):
        for name in trees:
            per_run = results[name][size]
            cpu = [figure["cpu_ms"] / 1e3 for figure in per_run]
            print(
                f"  {int(size):>6,}  {name:<7} {ms(statistics.median(cpu))}"
                f" ({ms(min(cpu)).strip()}-{ms(max(cpu)).strip()})"
                f"  {statistics.median(figure['frames'] for figure in per_run):7.0f}"
                f"  {statistics.median(figure['mpx'] for figure in per_run):10.1f}"
            )


def compare_long_replies(other: Path, runs: int) -> None:
    """This checkout and `other` alternated, each run in a fresh process."""
    trees, runs_figures = alternated_runs(
        other,
        runs,
        ["--long-replies"],
        f"Long replies streamed {LONG_REPLY_STEP} characters an update, GUI-thread CPU",
    )
    results: dict[str, dict[str, list[list[float]]]] = {name: {} for name in trees}
    for name, per_run in runs_figures.items():
        for figures in per_run:
            for size, cpu in figures.items():
                results[name].setdefault(size, []).append(cpu)
    print(
        "  reply     tree    per update: median      p95  longest   in all (median of runs,"
        " min-max)"
    )
    for size in (str(size) for size in LONG_REPLY_SIZES):
        for name in trees:
            per_run = results[name][size]
            medians = [statistics.median(cpu) for cpu in per_run]
            p95s = [sorted(cpu)[int(len(cpu) * 0.95)] for cpu in per_run]
            longest = [max(cpu) for cpu in per_run]
            totals = [sum(cpu) for cpu in per_run]
            print(
                f"  {int(size):>6,}  {name:<7} {ms(statistics.median(medians))}"
                f" {ms(statistics.median(p95s))} {ms(statistics.median(longest))}"
                f" {ms(statistics.median(totals))} ({ms(min(totals)).strip()}"
                f"-{ms(max(totals)).strip()})"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="pages opened warm (default 5)")
    parser.add_argument("--long-replies", action="store_true", help="only the long replies")
    parser.add_argument("--json", action="store_true", help="long replies' figures as JSON")
    parser.add_argument("--tree", type=Path, help="run the app from this checkout")
    parser.add_argument(
        "--compare", type=Path, help="long replies: this checkout against this one, alternated"
    )
    parser.add_argument(
        "--paced",
        action="store_true",
        help="long replies streamed at the window's pace (an update every 33 ms): CPU in all, "
        "frames and pixels painted",
    )
    arguments = parser.parse_args()
    if arguments.compare is not None:
        if arguments.paced:
            compare_paced_replies(arguments.compare, arguments.runs)
        else:
            compare_long_replies(arguments.compare, arguments.runs)
        return
    _keep_none_alive()
    app = QApplication.instance() or QApplication(sys.argv)
    assert isinstance(app, QApplication)
    window = Window()
    window.resize(1100, 850)
    view = TranscriptView(window, open_url=lambda url: True, clock=lambda: NOW)
    view.resize(1000, 800)
    window.show()
    app.processEvents()
    if arguments.long_replies:
        run_long_replies(app, window, view)
        return
    print(f"QT_QPA_UPDATE_IDLE_TIME={os.environ['QT_QPA_UPDATE_IDLE_TIME']}, view 1000×800")
    bench_opening(app, window, view, arguments.runs)
    bench_streaming(app, view)
    bench_huge(app, window, view)
    run_long_replies(app, window, view)


if __name__ == "__main__":
    main()
