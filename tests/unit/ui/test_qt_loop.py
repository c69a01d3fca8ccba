"""QtEventLoop: what is posted runs on the GUI thread, in a turn of its own."""

from __future__ import annotations

import threading

from PySide6.QtCore import QEvent, QObject
from pytestqt.qtbot import QtBot

from app.ui.qt_loop import QtEventLoop


def test_a_callback_posted_on_the_gui_thread_runs_after_the_caller_not_inside_it(
    qtbot: QtBot,
) -> None:
    loop = QtEventLoop()
    ran: list[str] = []

    def caller() -> None:
        loop.post(lambda: ran.append("posted"))
        ran.append("caller ends")

    caller()
    assert ran == ["caller ends"]
    qtbot.waitUntil(lambda: ran == ["caller ends", "posted"])
    loop.close()


def test_a_callback_posted_from_a_worker_runs_on_the_gui_thread(qtbot: QtBot) -> None:
    loop = QtEventLoop()
    ran_on: list[threading.Thread] = []
    worker = threading.Thread(
        target=lambda: loop.post(lambda: ran_on.append(threading.current_thread()))
    )
    worker.start()
    worker.join()
    qtbot.waitUntil(lambda: bool(ran_on))
    assert ran_on == [threading.main_thread()]
    loop.close()


def test_nothing_posted_runs_once_the_loop_is_closed(qtbot: QtBot) -> None:
    loop = QtEventLoop()
    ran: list[str] = []
    loop.post(lambda: ran.append("closed before its turn"))
    loop.call_later(0, lambda: ran.append("timer"))
    loop.close()
    done: list[bool] = []
    other = QtEventLoop()
    other.post(lambda: done.append(True))
    qtbot.waitUntil(lambda: bool(done))
    assert ran == []
    other.close()


def test_timers_fire_once_each_cancelled_ones_never_and_stopped_ones_are_reused(
    qtbot: QtBot,
) -> None:
    """A turn starts a few timers: each fires once at most, in time order, a cancelled one
    never (even when its QTimer went on to serve another call), and a few stopped QTimers
    are kept for the next instead of new ones made (issue 20)."""
    from PySide6.QtCore import QTimer

    loop = QtEventLoop()
    fired: list[str] = []
    for round_ in range(3):
        late = loop.call_later(0.03, lambda r=round_: fired.append(f"late {r}"))
        early = loop.call_later(0.0, lambda r=round_: fired.append(f"early {r}"))
        dropped = loop.call_later(0.01, lambda r=round_: fired.append(f"dropped {r}"))
        dropped.cancel()
        again = loop.call_later(0.02, lambda r=round_: fired.append(f"again {r}"))
        qtbot.waitUntil(lambda r=round_: fired[-1:] == [f"late {r}"])
        dropped.cancel()  # cancelling what is done does nothing
        early.cancel()
        late.cancel()
        assert again is not dropped
        assert loop.active_timers == 0
    assert fired == [f"{name} {r}" for r in range(3) for name in ("early", "again", "late")]
    assert len(loop.findChildren(QTimer)) <= 4, "stopped timers are reused, not made anew"
    loop.close()
    assert loop.active_timers == 0


class _PostedEvents(QObject):
    """Counts the queued calls Qt delivers to `watched` (each a posted event, and a wake-up
    of the GUI thread when it slept)."""

    def __init__(self, watched: QObject) -> None:
        super().__init__()
        self.count = 0
        watched.installEventFilter(self)

    def eventFilter(self, _watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.MetaCall:
            self.count += 1
        return False


def test_what_a_worker_posts_at_once_runs_in_one_turn_in_order(qtbot: QtBot) -> None:
    """A reply's job hands over its question stored, its row and its request sent within a
    millisecond: one queued call runs them, in the order posted (issue 20)."""
    loop = QtEventLoop()
    events = _PostedEvents(loop)
    ran: list[int] = []

    def hand_over() -> None:
        for number in range(3):
            loop.post(lambda number=number: ran.append(number))

    worker = threading.Thread(target=hand_over)
    worker.start()
    worker.join()
    qtbot.waitUntil(lambda: len(ran) == 3)
    assert ran == [0, 1, 2]
    assert events.count == 1
    loop.close()


def test_what_a_callback_posts_runs_in_a_turn_of_its_own_after_what_waited(
    qtbot: QtBot,
) -> None:
    """A callback that posts (`HeldTells` shows one thing per loop turn) never runs what it
    posted inside its own turn: that comes after what was posted before it ran."""
    loop = QtEventLoop()
    events = _PostedEvents(loop)
    ran: list[str] = []

    def first() -> None:
        ran.append("first")
        loop.post(lambda: ran.append("posted by first"))
        ran.append("first ends")

    loop.post(first)
    loop.post(lambda: ran.append("second"))
    qtbot.waitUntil(lambda: len(ran) == 4)
    assert ran == ["first", "first ends", "second", "posted by first"]
    assert events.count == 2
    loop.close()


def test_a_callback_that_raises_does_not_keep_the_ones_after_it_from_running(
    qtbot: QtBot,
) -> None:
    loop = QtEventLoop()
    ran: list[str] = []

    def fails() -> None:
        ran.append("fails")
        raise RuntimeError("a bug in one callback")

    loop.post(lambda: ran.append("before"))
    loop.post(fails)
    loop.post(lambda: ran.append("after"))
    with qtbot.capture_exceptions() as raised:
        qtbot.waitUntil(lambda: ran[-1:] == ["after"])
    assert ran == ["before", "fails", "after"]
    assert [str(error) for _type, error, _traceback in raised] == ["a bug in one callback"]
    loop.close()
