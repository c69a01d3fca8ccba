"""QtEventLoop: what is posted runs on the GUI thread, in a turn of its own."""

from __future__ import annotations

import threading

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
