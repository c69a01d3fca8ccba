"""How fast the conversation list fills and follows a turn, at 10,000 conversations.

Run: QT_QPA_PLATFORM=offscreen .venv/bin/python bench/bench_sidebar.py

The sidebar is shown (offscreen) at a usual size, scrolled to the top, and every update
is timed as the app runs it: the `Sidebar` method the controller calls, then the event
loop until the posted events are handled and the list's viewport has painted (into the
offscreen backing store: a real paint, with text). Columns, in milliseconds:
- `call`: the method alone (wall clock);
- `+paint`: the call, the event processing and the repaint it causes (wall clock),
  with whatever repaints along with the list (its scroll bar, when the rows change);
- `cpu`: the GUI thread's CPU time over the same span as `+paint`. Well below it means
  the machine was busy with something else, or Qt's raster engine handed a tall fill
  (the scroll bar's gradient) to its thread pool;
- `paints`: the viewport's paint events per update (1: the paint is in `+paint`; 0: the
  update changed nothing shown).
Qt delivers a repaint at the next vsync, or after an idle delay of 5 ms where there is
none (QWindow.requestUpdate). That is latency, not work: the GUI thread is free
meanwhile. The bench sets QT_QPA_UPDATE_IDLE_TIME=0 so that `+paint` is the work alone.

Figures (median, p95, max over 200 updates; one figure for a single run) for the updates
a turn makes (`upsert_session`, `remove_session`), without and with a filter typed (one
word, about a fifth of the titles), and for `set_sessions` and typing in the filter (both
model resets). Aim: ≤ 5 ms `+paint` per update (issue: "sidebar update at 10,000
conversations ≤ 5 ms"); ≤ 30 ms per keystroke in the filter. The old list widget
refilled twice per turn: 46 ms at 1,000 conversations, 573 ms at 10,000; the model
behind a QSortFilterProxyModel took 66 ms (median) per turn with a filter typed.
Figures, not pass/fail.
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
# Before the QApplication exists: the platform reads it once (see the docstring).
os.environ.setdefault("QT_QPA_UPDATE_IDLE_TIME", "0")

from PySide6.QtCore import QEvent, QEventLoop, QObject, QPoint, QTimer
from PySide6.QtWidgets import QApplication

from app.core.models import Session
from app.ui.sidebar import Sidebar

COUNT = 10_000
TURNS = 200
NOW = datetime(2026, 3, 5, 14, 30, tzinfo=UTC)
WORDS = ["budget", "trip", "garden", "python", "recipe", "contract", "essay", "bug", "review"]
FILTER = "garden"
PAINT_TIMEOUT_MS = 1000


class PaintCounter(QObject):
    """Counts the paint events of one widget."""

    def __init__(self) -> None:
        super().__init__()
        self.paints = 0

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.paints += 1
        return False


def synthetic_sessions(count: int) -> list[Session]:
    """`count` conversations, newest first, a minute apart, with varied titles."""
    rng = random.Random(7)
    return [
        Session(
            id=f"session-{index:05d}",
            title=f"{rng.choice(WORDS).title()} {rng.choice(WORDS)} #{index}",
            created_at=NOW - timedelta(minutes=index),
            updated_at=NOW - timedelta(minutes=index),
            model="claude-sonnet-4-5",
        )
        for index in range(count)
    ]


def settle(counter: PaintCounter, paints_before: int, expect_paint: bool) -> None:
    """Handle the posted events and, if `expect_paint`, wait for the viewport's paint.

    processEvents returns once the paint event it delivered has been handled, so the
    paint has finished when this returns.
    """
    QApplication.processEvents()
    if not expect_paint:
        return
    guard = QTimer()  # wakes the wait below should the paint never come
    guard.setSingleShot(True)
    guard.start(PAINT_TIMEOUT_MS)
    while counter.paints == paints_before and guard.isActive():
        QApplication.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents)
    guard.stop()
    if counter.paints == paints_before:
        raise RuntimeError("the list did not paint after an update")
    QApplication.processEvents()  # anything the paint posted in turn


class Timings:
    """Per-update figures: `call`, `+paint`, `cpu` (ms) and `paints` (see the docstring)."""

    def __init__(self) -> None:
        self.call: list[float] = []
        self.painted: list[float] = []
        self.cpu: list[float] = []
        self.paints: list[int] = []

    def measure(
        self, action: Callable[[], object], counter: PaintCounter, expect_paint: bool = True
    ) -> None:
        paints = counter.paints
        cpu_start = time.thread_time()
        start = time.perf_counter()
        action()
        called = time.perf_counter()
        settle(counter, paints, expect_paint)
        done = time.perf_counter()
        cpu = time.thread_time() - cpu_start
        # Outside the timing: any paint the update caused late still shows in `paints`.
        QApplication.processEvents()
        self.call.append((called - start) * 1000)
        self.painted.append((done - start) * 1000)
        self.cpu.append(cpu * 1000)
        self.paints.append(counter.paints - paints)

    def report(self, label: str) -> None:
        def figures(values: list[float]) -> str:
            if len(values) == 1:
                return f"{values[0]:6.2f}" + " " * 14
            p95 = statistics.quantiles(values, n=20)[-1]
            return f"{statistics.median(values):6.2f} {p95:6.2f} {max(values):6.2f}"

        paints = statistics.mean(self.paints)
        print(
            f"{label:<44} {figures(self.call)} | {figures(self.painted)}"
            f" | {figures(self.cpu)} | {paints:4.2f}"
        )


def header() -> None:
    print(
        f"{COUNT:,} conversations, sidebar shown offscreen at 300×800,"
        f" QT_QPA_UPDATE_IDLE_TIME={os.environ['QT_QPA_UPDATE_IDLE_TIME']}"
    )
    print(f"ms per update: median p95 max over {TURNS} (one figure: a single run)")
    print("  call    the Sidebar method alone, wall clock")
    print("  +paint  the call + handling the posted events + the viewport's repaint, wall clock")
    print("  cpu     the GUI thread's CPU time over the same span as +paint")
    print("  paints  viewport paint events per update (0: nothing shown changed)")
    print(f"{'':<44} {'call':^20} | {'+paint':^20} | {'cpu':^20} | paints")


class Bench:
    """The sidebar under test, the conversations it lists, and a clock for turns."""

    def __init__(self, sidebar: Sidebar, counter: PaintCounter) -> None:
        self.sidebar = sidebar
        self.counter = counter
        self.rng = random.Random(11)
        self.clock = NOW
        self.created = 0
        self.listed = 0  # conversations listed, shown or hidden

    # -- what to update --------------------------------------------------------------------

    def shown(self, first: int = 0) -> Session:
        """A conversation shown at a random row from `first` on."""
        model = self.sidebar.model
        return model.session_at(self.rng.randrange(first, model.rowCount()))

    def in_view(self, first: int = 0) -> Session:
        """A conversation in view, at a random row from `first` on."""
        view = self.sidebar.list
        top = view.indexAt(QPoint(1, 1)).row()
        bottom = view.indexAt(QPoint(1, view.viewport().height() - 1)).row()
        if bottom < 0:
            bottom = self.sidebar.model.rowCount() - 1
        return self.sidebar.model.session_at(self.rng.randint(max(first, top), bottom))

    def hidden(self) -> Session:
        """A conversation the filter hides."""
        model = self.sidebar.model
        while True:
            session_id = f"session-{self.rng.randrange(COUNT):05d}"
            session = model.session(session_id)
            if session is not None and model.row_of(session_id) is None:
                return session

    def touched(self, session: Session) -> Session:
        """`session` after a turn: active one second after the last turn."""
        self.clock += timedelta(seconds=1)
        return session.model_copy(update={"updated_at": self.clock})

    def renamed(self, session: Session) -> Session:
        """`session` with a new title that still matches the filter."""
        return session.model_copy(update={"title": f"{session.title} ({FILTER} notes)"})

    def new(self) -> Session:
        self.created += 1
        self.listed += 1
        self.clock += timedelta(seconds=1)
        return Session(
            id=f"new-{self.created:05d}",
            title=f"New {FILTER} conversation #{self.created}",
            created_at=self.clock,
            updated_at=self.clock,
            model="claude-sonnet-4-5",
        )

    # -- timing ----------------------------------------------------------------------------

    def upserts(self, make: Callable[[], Session], expect_paint: bool = True) -> Timings:
        """`TURNS` calls of `upsert_session(make())`."""
        timings = Timings()
        for _ in range(TURNS):
            session = make()
            upsert = partial(self.sidebar.upsert_session, session)
            timings.measure(upsert, self.counter, expect_paint)
        return timings

    def removals(self) -> Timings:
        """`TURNS` calls of `remove_session` of a conversation in view, not the current one
        (row 0)."""
        timings = Timings()
        for _ in range(TURNS):
            session_id = self.in_view(first=1).id
            self.listed -= 1
            timings.measure(partial(self.sidebar.remove_session, session_id), self.counter)
        return timings

    def typing(self, rounds: int) -> tuple[Timings, Timings]:
        """Type `FILTER` one key at a time, then clear it, `rounds` times."""
        keys, clears = Timings(), Timings()
        for _ in range(rounds):
            for length in range(1, len(FILTER) + 1):
                text = FILTER[:length]
                keys.measure(partial(self.sidebar.filter_edit.setText, text), self.counter)
            clears.measure(self.sidebar.filter_edit.clear, self.counter)
        return keys, clears


def main() -> None:
    app = QApplication.instance() or QApplication(sys.argv)
    sidebar = Sidebar()
    sidebar.resize(300, 800)
    sidebar.show()
    sidebar.list.setFocus()  # not the search box, whose blinking cursor would repaint
    counter = PaintCounter()
    sidebar.list.viewport().installEventFilter(counter)
    settle(counter, 0, expect_paint=True)
    bench = Bench(sidebar, counter)
    header()

    sessions = synthetic_sessions(COUNT)
    fill = Timings()
    fill.measure(lambda: sidebar.set_sessions(sessions, sessions[0].id), counter)
    assert sidebar.model.rowCount() == COUNT
    bench.listed = COUNT
    fill.report(f"set_sessions of {COUNT:,}, once (reset)")

    print("no filter")
    model = sidebar.model
    bench.upserts(lambda: bench.touched(model.session_at(0))).report(
        "  a turn in the top row (in place)"
    )
    bench.upserts(lambda: bench.touched(bench.shown(first=1))).report(
        "  a turn in a random row (moves to the top)"
    )
    bench.upserts(lambda: bench.renamed(bench.in_view())).report(
        "  a title change in place, a row in view"
    )
    bench.upserts(bench.new).report("  a new conversation (inserted at the top)")
    bench.removals().report("  a removal, a row in view")

    keys, clears = bench.typing(rounds=TURNS // len(FILTER))
    keys.report(f"typing “{FILTER}”, per key (reset)")
    clears.report(f"clearing the filter (reset; {len(clears.call)} runs)")

    sidebar.filter_edit.setText(FILTER)
    sidebar.list.scrollToTop()  # clearing the filter scrolled to the current row
    settle(counter, counter.paints, expect_paint=True)
    print(f"filter “{FILTER}” ({model.rowCount():,} of {bench.listed:,} shown)")
    bench.upserts(lambda: bench.touched(bench.shown(first=1))).report(
        "  a turn in a random shown row (to the top)"
    )
    bench.upserts(lambda: bench.touched(bench.hidden()), expect_paint=False).report(
        "  a turn in a hidden row (stays hidden)"
    )
    bench.upserts(lambda: bench.renamed(bench.in_view())).report(
        "  a title change in place, a row in view"
    )
    bench.upserts(bench.new).report("  a new conversation (inserted at the top)")
    bench.removals().report("  a removal, a row in view")

    sidebar.close()
    del app


if __name__ == "__main__":
    main()
