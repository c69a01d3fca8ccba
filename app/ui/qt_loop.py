"""The chat service's event loop on Qt's: callbacks run on the GUI thread.

`post` may be called from any thread: it emits a signal of an object living on
the GUI thread, always queued there (from the GUI thread too: the callback runs in
a turn of the event loop of its own, as `QueueLoop` runs it, never inside the
caller's). Callbacks posted before that turn comes run in it, in order: one queued
signal (a posted event, a wake-up of the GUI thread) for what a worker hands over at
once — a reply's question stored, its row and its request sent come together — not
one each (issue 20). Timers are QTimers, stopped on `close`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, QTimer, Signal

Callback = Callable[[], None]


class _QtTimer:
    """A running single-shot timer; done once it fired or was cancelled."""

    def __init__(self, loop: QtEventLoop, timer: QTimer) -> None:
        self._loop = loop
        self._timer: QTimer | None = timer

    def cancel(self) -> None:
        if self._timer is not None:
            self._loop._retire(self._timer, self)
            self._timer = None

    def _fired(self) -> None:
        self._timer = None


# Stopped QTimers kept for the next `call_later`: a turn starts a few (the row's 50 ms,
# the text's pace) and each new one was a QObject made, connected and deleted (issue 20).
_SPARE_TIMERS = 4


class QtEventLoop(QObject):
    """An `app.chat.loop.EventLoop` whose callbacks run on this object's thread."""

    _posted = Signal(object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        # Each running timer, with its handle and what it calls; stopped ones to reuse.
        self._timers: dict[QTimer, tuple[_QtTimer, Callback]] = {}
        self._spare: list[QTimer] = []
        self._closed = False
        # What was posted and waits for its turn (the signal that runs it is on its way).
        self._lock = threading.Lock()
        self._waiting: list[Callback] = []
        self._posted.connect(self._run, Qt.ConnectionType.QueuedConnection)

    def post(self, callback: Callback) -> None:
        with self._lock:
            self._waiting.append(callback)
            if len(self._waiting) > 1:
                return  # the turn of what came first runs it too
        self._posted.emit(self._run_waiting)

    def call_later(self, seconds: float, callback: Callback) -> _QtTimer:
        timer = self._spare.pop() if self._spare else self._new_timer()
        handle = _QtTimer(self, timer)
        self._timers[timer] = (handle, callback)
        timer.start(max(0, round(seconds * 1000)))
        return handle

    @property
    def active_timers(self) -> int:
        return sum(1 for timer in self._timers if timer.isActive())

    def close(self) -> None:
        """Stop every timer; nothing posted or due runs any more."""
        self._closed = True
        for handle, _callback in list(self._timers.values()):
            handle.cancel()
        for timer in self._spare:
            timer.deleteLater()
        self._spare.clear()

    def _new_timer(self) -> QTimer:
        timer = QTimer(self)
        timer.setSingleShot(True)
        # This object's own method, no closure: nothing outlives the loop holding it.
        timer.timeout.connect(self._fire)
        return timer

    def _fire(self) -> None:
        timer = self.sender()
        if not isinstance(timer, QTimer):
            return
        due = self._timers.pop(timer, None)
        if due is None:
            return
        handle, callback = due
        handle._fired()
        self._keep(timer)
        if not self._closed:
            callback()

    def _retire(self, timer: QTimer, handle: _QtTimer) -> None:
        due = self._timers.get(timer)
        if due is not None and due[0] is handle:
            del self._timers[timer]
            timer.stop()
            self._keep(timer)

    def _keep(self, timer: QTimer) -> None:
        """A stopped timer: kept for the next `call_later`, unless enough are."""
        if len(self._spare) < _SPARE_TIMERS and not self._closed:
            self._spare.append(timer)
        else:
            timer.deleteLater()

    def _run(self, callback: Callback) -> None:
        if not self._closed:
            callback()

    def _run_waiting(self) -> None:
        """Run what was posted until now, in order; what these post runs in a turn of its own."""
        with self._lock:
            waiting, self._waiting = self._waiting, []
        for position, callback in enumerate(waiting):
            if self._closed:
                return
            try:
                callback()
            except BaseException:
                # Qt reports a slot's exception and goes on: so do the ones after it.
                self._post_first(waiting[position + 1 :])
                raise

    def _post_first(self, callbacks: list[Callback]) -> None:
        """Run `callbacks` in the next turn, before anything posted since."""
        if not callbacks:
            return
        with self._lock:
            self._waiting[:0] = callbacks
            if len(self._waiting) > len(callbacks):
                return
        self._posted.emit(self._run_waiting)
