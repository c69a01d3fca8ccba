"""QueueLoop: posted callbacks and timers run on the owner's thread, when it asks."""

from __future__ import annotations

import threading

import pytest

from app.chat.loop import QueueLoop
from tests.fakes.clock import SecondsClock


def test_callbacks_posted_from_any_thread_run_on_the_owners() -> None:
    loop = QueueLoop()
    ran_on: list[str] = []
    worker = threading.Thread(
        target=lambda: loop.post(lambda: ran_on.append(threading.current_thread().name))
    )
    worker.start()
    worker.join()
    assert ran_on == [], "nothing runs behind the owner's back"
    loop.run_until(lambda: bool(ran_on))
    assert ran_on == [threading.current_thread().name]


def test_timers_run_when_due_in_order_and_can_be_cancelled() -> None:
    clock = SecondsClock(100.0)
    loop = QueueLoop(clock)
    ran: list[str] = []
    loop.call_later(0.5, lambda: ran.append("late"))
    loop.call_later(0.1, lambda: ran.append("soon"))
    loop.call_later(0.2, lambda: ran.append("cancelled")).cancel()
    assert loop.run_pending() == 0
    clock.now += 0.3
    assert loop.run_pending() == 1 and ran == ["soon"]
    clock.now += 1
    loop.run_pending()
    assert ran == ["soon", "late"]


def test_run_until_gives_up_after_its_timeout() -> None:
    with pytest.raises(TimeoutError):
        QueueLoop().run_until(lambda: False, timeout=0.05)


def test_a_chain_of_steps_each_in_a_turn_of_its_own_runs_to_its_end() -> None:
    clock = SecondsClock(100.0)
    loop = QueueLoop(clock)
    ran: list[str] = []

    def first() -> None:
        ran.append("first")
        loop.call_later(0, second)

    def second() -> None:
        ran.append("second")
        loop.post(lambda: ran.append("third"))
        loop.call_later(0.5, lambda: ran.append("later"))

    def start() -> None:
        loop.call_later(0, first)

    loop.post(start)
    assert loop.run_pending() == 4
    assert ran == ["first", "second", "third"], "what is due now runs; what is not, waits"
    clock.now += 0.5
    assert loop.run_pending() == 1 and ran[-1] == "later"
