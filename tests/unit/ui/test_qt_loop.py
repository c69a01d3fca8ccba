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
