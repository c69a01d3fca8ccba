"""A conversation's summaries: what is not covered by the service's tests."""

from __future__ import annotations

import threading

from app.chat.loop import QueueLoop
from app.chat.summaries import _in_turns, _TriggerWrites


def test_the_newest_trigger_memory_stays_whatever_order_its_writes_run_in() -> None:
    writes = _TriggerWrites()
    older, newer = writes.next_number(), writes.next_number()
    written: list[str] = []
    newer_first = threading.Thread(
        target=lambda: writes.write(newer, lambda: written.append("new"))
    )
    newer_first.start()
    newer_first.join()
    writes.write(older, lambda: written.append("old"))
    assert written == ["new"], "an older memory never overwrites a newer one"


def test_steps_run_in_order_each_in_a_turn_of_the_loop_of_its_own() -> None:
    loop = QueueLoop()
    ran: list[str] = []
    _in_turns(loop, [lambda: ran.append("cards"), lambda: ran.append("gauge")])
    assert ran == [], "nothing runs inside the caller's turn"
    loop.run_pending()
    assert ran == ["cards", "gauge"]
