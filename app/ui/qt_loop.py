"""The chat service's event loop on Qt's: callbacks run on the GUI thread.

`post` may be called from any thread: it emits a signal of an object living on
the GUI thread, always queued there (from the GUI thread too: the callback runs in
a turn of the event loop of its own, as `QueueLoop` runs it, never inside the
caller's). Timers are QTimers, stopped on `close`.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, QTimer, Signal

Callback = Callable[[], None]


class _QtTimer:
    """A running single-shot QTimer; gone (deleted) once it fired or was cancelled."""

    def __init__(self, loop: QtEventLoop, timer: QTimer) -> None:
        self._loop = loop
        self._timer: QTimer | None = timer

    def cancel(self) -> None:
        if self._timer is not None:
            self._loop._retire(self._timer)
            self._timer = None

    def _fired(self) -> None:
        self._timer = None


class QtEventLoop(QObject):
    """An `app.chat.loop.EventLoop` whose callbacks run on this object's thread."""

    _posted = Signal(object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._timers: set[QTimer] = set()
        self._closed = False
        self._posted.connect(self._run, Qt.ConnectionType.QueuedConnection)

    def post(self, callback: Callback) -> None:
        self._posted.emit(callback)

    def call_later(self, seconds: float, callback: Callback) -> _QtTimer:
        timer = QTimer(self)
        timer.setSingleShot(True)
        self._timers.add(timer)
        handle = _QtTimer(self, timer)

        def fire() -> None:
            handle._fired()
            self._retire(timer)
            if not self._closed:
                callback()

        timer.timeout.connect(fire)
        timer.start(max(0, round(seconds * 1000)))
        return handle

    @property
    def active_timers(self) -> int:
        return sum(1 for timer in self._timers if timer.isActive())

    def close(self) -> None:
        """Stop every timer; nothing posted or due runs any more."""
        self._closed = True
        for timer in list(self._timers):
            self._retire(timer)

    def _retire(self, timer: QTimer) -> None:
        if timer in self._timers:
            self._timers.discard(timer)
            timer.stop()
            timer.deleteLater()

    def _run(self, callback: Callback) -> None:
        if not self._closed:
            callback()
