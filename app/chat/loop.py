"""Where the chat service's callbacks run: the thread that owns the conversations.

The service is not thread-safe on purpose: all of its state belongs to one
thread (the GUI thread in the app), as Anki's collection does. Background
work reaches it only through `EventLoop.post`, which runs a callback on that
thread. The window supplies a loop built on Qt's (`app.ui.qt_loop`); tests and
benchmarks use `QueueLoop`, which runs what was posted when asked. (The command
line needs neither: it calls the store directly, app.cli.)
"""

from __future__ import annotations

import heapq
import itertools
import queue
import threading
import time
from collections.abc import Callable
from typing import Protocol

Callback = Callable[[], None]


class Timer(Protocol):
    def cancel(self) -> None:
        """Do not run the callback (no effect once it ran)."""
        ...


class EventLoop(Protocol):
    """Runs callbacks on the owning thread."""

    def post(self, callback: Callback) -> None:
        """Run `callback` soon on the owning thread. Callable from any thread."""
        ...

    def call_later(self, seconds: float, callback: Callback) -> Timer:
        """Run `callback` on the owning thread after `seconds`. Call from that thread."""
        ...


class _QueuedTimer:
    def __init__(self) -> None:
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class QueueLoop:
    """An `EventLoop` whose callbacks run when its owner calls `run_pending`/`run_until`.

    For tests and benchmarks: no Qt, and no callback ever runs behind the
    caller's back. `post` is thread-safe; everything else belongs to the owner.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._posted: queue.SimpleQueue[Callback] = queue.SimpleQueue()
        self._timers: list[tuple[float, int, _QueuedTimer, Callback]] = []
        self._order = itertools.count()
        self._wake = threading.Event()

    def post(self, callback: Callback) -> None:
        self._posted.put(callback)
        self._wake.set()

    def call_later(self, seconds: float, callback: Callback) -> Timer:
        timer = _QueuedTimer()
        due = self._clock() + max(0.0, seconds)
        heapq.heappush(self._timers, (due, next(self._order), timer, callback))
        return timer

    def run_pending(self) -> int:
        """Run every posted callback and every timer that is due, and what those post or
        schedule to run now (a chain of `call_later(0)`, as the window's loop runs each
        in a turn of its own), until nothing is left to run now; returns how many ran."""
        ran = 0
        while True:
            step = self._run_posted() + self._run_due()
            if not step:
                return ran
            ran += step

    def _run_posted(self) -> int:
        ran = 0
        while True:
            try:
                callback = self._posted.get_nowait()
            except queue.Empty:
                return ran
            callback()
            ran += 1

    def _run_due(self) -> int:
        ran = 0
        now = self._clock()
        while self._timers and self._timers[0][0] <= now:
            _due, _order, timer, callback = heapq.heappop(self._timers)
            if not timer.cancelled:
                callback()
                ran += 1
        return ran

    def run_until(self, done: Callable[[], bool], timeout: float = 10.0) -> None:
        """Run callbacks as they come until `done()` is true.

        Raises:
            TimeoutError: `done()` is still false after `timeout` seconds.
        """
        deadline = time.monotonic() + timeout
        while not done():
            self._wake.clear()
            if self.run_pending():
                continue
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"still waiting after {timeout} s")
            next_timer = self._timers[0][0] - self._clock() if self._timers else remaining
            self._wake.wait(max(0.0, min(remaining, next_timer, 0.05)))
