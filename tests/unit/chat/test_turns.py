"""`HeldTells`: what a turn tells between Enter and its request leaving waits, then runs
in order, once each, one per turn of the loop (issue 20)."""

from __future__ import annotations

import threading

import pytest

from app.chat.loop import QueueLoop
from app.chat.turns import SHOW_ALL_WITHIN_SECONDS, SHOW_SENDING_WITHIN_SECONDS, HeldTells
from tests.fakes.clock import SecondsClock


def test_nothing_held_runs_at_once() -> None:
    ran: list[str] = []
    HeldTells(QueueLoop()).run(lambda: ran.append("now"))
    assert ran == ["now"]


def test_what_comes_while_held_waits_for_the_release_then_runs_in_order_one_per_turn() -> None:
    loop = QueueLoop(SecondsClock())
    held = HeldTells(loop)
    ran: list[str] = []
    held.hold(lambda: ran.append("row"))
    held.run(lambda: ran.append("stored"))
    held.run(lambda: ran.append("reply's row"))
    loop.run_pending()
    assert ran == []  # the wait has not passed, the request has not left

    loop.post(held.release)  # the request left
    loop.post(lambda: held.run(lambda: ran.append("text")))  # comes after what waited
    assert loop.run_pending() == 5  # the release, what waited (one each), then the text
    assert ran == ["row", "stored", "reply's row", "text"]
    held.run(lambda: ran.append("later"))  # nothing held any more
    assert ran[-1] == "later"


def held_past_the_row(ran: list[str]) -> tuple[SecondsClock, QueueLoop, HeldTells]:
    """A turn held with its row and the question stored, the row's wait just passed."""
    clock = SecondsClock()
    loop = QueueLoop(clock)
    held = HeldTells(loop)
    held.hold(lambda: ran.append("row"))
    held.run(lambda: ran.append("stored"))
    clock.now = SHOW_SENDING_WITHIN_SECONDS
    loop.run_pending()
    return clock, loop, held


def test_after_the_wait_the_row_shows_and_the_rest_waits_for_the_request() -> None:
    ran: list[str] = []
    _clock, loop, held = held_past_the_row(ran)
    assert ran == ["row"]  # a slow build: the user sees the message, the rest waits
    held.release()  # the request left
    loop.run_pending()
    held.run(lambda: ran.append("text"))
    assert ran == ["row", "stored", "text"]
    held.release()  # said again: nothing twice
    loop.run_pending()
    assert ran == ["row", "stored", "text"]


def test_what_waits_runs_after_a_while_when_the_request_never_says_it_left() -> None:
    ran: list[str] = []
    clock, loop, _held = held_past_the_row(ran)
    clock.now = SHOW_ALL_WITHIN_SECONDS
    loop.run_pending()
    assert ran == ["row", "stored"]


def test_the_last_tell_releases_at_once_and_runs_after_what_waited() -> None:
    loop = QueueLoop(SecondsClock())
    held = HeldTells(loop)
    ran: list[str] = []
    held.hold(lambda: ran.append("row"))
    held.run(lambda: ran.append("done"), last=True)  # the job failed before its request
    loop.run_pending()
    assert ran == ["row", "done"]


def test_a_turn_held_again_while_the_last_one_drains_comes_after_it() -> None:
    loop = QueueLoop(SecondsClock())
    held = HeldTells(loop)
    ran: list[str] = []
    held.hold(lambda: ran.append("first row"))
    # The first reply's end sends what waited: a new turn, held while it drains.
    held.run(lambda: (ran.append("first done"), held.hold(lambda: ran.append("next row"))))
    held.run(lambda: ran.append("first's last word"))
    held.release()
    loop.run_pending()
    assert ran == ["first row", "first done"]  # the rest waits for the new request
    held.release()
    loop.run_pending()
    assert ran == ["first row", "first done", "first's last word", "next row"]


def test_what_the_job_hands_over_while_held_waits_without_a_post_and_keeps_its_order() -> None:
    """The question stored and the reply's row, told from the job's thread just before the
    request leaves, wait with the turn without a post each (a wake-up of the loop's thread
    each, issue 20); the request's leaving runs them, in the order told."""
    loop = QueueLoop(SecondsClock())
    held = HeldTells(loop)
    ran: list[str] = []
    held.hold(lambda: ran.append("row"))
    worker = threading.Thread(
        target=lambda: (
            held.hand(lambda: ran.append("stored")),
            held.hand(lambda: ran.append("reply's row")),
        )
    )
    worker.start()
    worker.join()
    assert loop.run_pending() == 0, "nothing was posted"
    loop.post(held.release)  # the request left
    loop.post(lambda: held.run(lambda: ran.append("text")))
    loop.run_pending()
    assert ran == ["row", "stored", "reply's row", "text"]
    held.hand(lambda: ran.append("after"))  # nothing held: posted, run in its own turn
    assert ran[-1] == "text"
    assert loop.run_pending() == 1
    assert ran[-1] == "after"


@pytest.mark.parametrize("ending", ["done", "timeout"])
def test_what_was_handed_over_runs_before_what_is_told_after_it(ending: str) -> None:
    """A job that ends before its request left (its end is told last): what it handed over
    first runs first; so does what waited when the wait ran out."""
    clock = SecondsClock()
    loop = QueueLoop(clock)
    held = HeldTells(loop)
    ran: list[str] = []
    held.hold(lambda: ran.append("row"))
    held.hand(lambda: ran.append("stored"))
    held.hand(lambda: ran.append("reply's row"))
    if ending == "done":
        held.run(lambda: ran.append("done"), last=True)
    else:
        clock.now = SHOW_SENDING_WITHIN_SECONDS
        loop.run_pending()
        assert ran == ["row"]
        clock.now = SHOW_ALL_WITHIN_SECONDS
    loop.run_pending()
    assert ran == ["row", "stored", "reply's row"] + (["done"] if ending == "done" else [])
