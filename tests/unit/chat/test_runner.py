"""JobRunner: work on its own thread, outcomes on the loop's, cancel and shutdown."""

from __future__ import annotations

import logging
import os
import sys
import threading

import pytest

from app.chat.loop import QueueLoop
from app.chat.runner import (
    JOB_NICENESS,
    SOMETHING_WENT_WRONG,
    Job,
    JobRunner,
    drop_kept,
    kept_for_thread,
)
from app.core.errors import UserFacingError


def test_the_result_arrives_on_the_loops_thread() -> None:
    loop = QueueLoop()
    runner = JobRunner(loop)
    worked_on: list[str] = []
    done_on: list[tuple[str, int]] = []

    def work(_job: Job[int]) -> int:
        worked_on.append(threading.current_thread().name)
        return 42

    runner.start(
        Job(
            "answer",
            work,
            done=lambda value: done_on.append((threading.current_thread().name, value)),
        )
    )
    loop.run_until(lambda: bool(done_on))
    assert worked_on == ["cairn-answer"]
    assert done_on == [(threading.current_thread().name, 42)]
    assert runner.running == 0


def test_failures_arrive_in_plain_words_and_bugs_are_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    loop = QueueLoop()
    runner = JobRunner(loop)
    failures: list[UserFacingError] = []

    def plain(_job: Job[None]) -> None:
        raise UserFacingError("The disk is full.")

    def bug(_job: Job[None]) -> None:
        raise KeyError("oops")

    runner.start(Job("plain", plain, done=lambda _v: None, failed=failures.append))
    runner.start(Job("bug", bug, done=lambda _v: None, failed=failures.append))
    loop.run_until(lambda: len(failures) == 2)
    assert sorted(f.message for f in failures) == sorted(
        ["The disk is full.", SOMETHING_WENT_WRONG]
    )
    assert any(r.levelno == logging.ERROR and "bug" in r.getMessage() for r in caplog.records)
    caplog.clear()


def test_cancel_sets_the_flag_and_runs_the_hook_once() -> None:
    loop = QueueLoop()
    runner = JobRunner(loop)
    release = threading.Event()
    hooks: list[int] = []
    results: list[bool] = []

    def work(job: Job[bool]) -> bool:
        release.wait(5)
        return job.cancelled

    job = runner.start(Job("wait", work, done=results.append, on_cancel=lambda: hooks.append(1)))
    job.cancel()
    job.cancel()
    release.set()
    loop.run_until(lambda: bool(results))
    assert results == [True] and hooks == [1]


def test_shutdown_cancels_waits_and_drops_late_results() -> None:
    loop = QueueLoop()
    runner = JobRunner(loop)
    delivered: list[str] = []

    def work(job: Job[str]) -> str:
        while not job.cancelled:
            threading.Event().wait(0.01)
        return "stopped"

    runner.start(Job("loop", work, done=delivered.append))
    runner.shutdown(timeout=5)
    assert runner.running == 0
    loop.run_pending()
    assert delivered == [], "nothing is delivered after shutdown"
    late = runner.start(Job("late", lambda _job: "x", done=delivered.append))
    assert late.cancelled and late.thread is None


def test_a_kept_threads_next_job_finds_what_the_last_one_kept_and_shutdown_closes_it() -> None:
    loop = QueueLoop()
    runner = JobRunner(loop)
    made: list[object] = []
    closed: list[tuple[object, str]] = []
    seen: list[tuple[object, bool, str]] = []
    done: list[int] = []

    def make() -> object:
        made.append(object())
        return made[-1]

    def close(value: object) -> None:
        closed.append((value, threading.current_thread().name))

    def work(_job: Job[int]) -> int:
        value, kept = kept_for_thread("store", make, close)
        seen.append((value, kept, threading.current_thread().name))
        return len(seen)

    for _ in range(3):  # one after the other: the second and third reuse the first's
        runner.start(Job("reply", work, done=done.append, kept_thread=True))
        loop.run_until(lambda: len(done) == len(seen))
        loop.run_until(lambda: runner.running == 0)
    assert len(made) == 1
    assert [kept for _value, kept, _name in seen] == [True, True, True]
    assert {value for value, _kept, _name in seen} == {made[0]}
    assert closed == []
    runner.shutdown()
    assert closed == [(made[0], "cairn-reply")]  # closed on the thread that made it


def test_what_a_plain_jobs_thread_would_keep_is_made_anew_and_dropped_values_are_closed() -> None:
    loop = QueueLoop()
    runner = JobRunner(loop)
    results: list[tuple[int, bool]] = []
    closed: list[int] = []
    count = iter(range(100))

    def work(job: Job[None]) -> None:
        value, kept = kept_for_thread("store", lambda: next(count), closed.append)
        results.append((value, kept))
        if kept:
            drop_kept("store")

    runner.start(Job("plain", work, done=lambda _v: None))
    loop.run_until(lambda: len(results) == 1)
    runner.start(Job("kept", work, done=lambda _v: None, kept_thread=True))
    loop.run_until(lambda: len(results) == 2)
    runner.start(Job("kept", work, done=lambda _v: None, kept_thread=True))
    loop.run_until(lambda: len(results) == 3)
    runner.shutdown()
    assert results == [(0, False), (1, True), (2, True)]
    assert closed == [1, 2]  # dropped ones closed at once; the plain job's left to it


def test_jobs_at_once_on_kept_threads_each_get_their_own() -> None:
    loop = QueueLoop()
    runner = JobRunner(loop)
    both = threading.Barrier(2, timeout=10)
    values: list[object] = []

    def work(_job: Job[None]) -> None:
        value, _kept = kept_for_thread("store", object, lambda _v: None)
        values.append(value)
        both.wait()  # both running at once

    for _ in range(2):
        runner.start(Job("reply", work, done=lambda _v: None, kept_thread=True))
    loop.run_until(lambda: runner.running == 0 and len(values) == 2)
    runner.shutdown()
    assert values[0] is not values[1]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread niceness")
@pytest.mark.parametrize("kept", [False, True])
def test_jobs_run_nicer_than_the_window_and_the_window_keeps_its_priority(kept: bool) -> None:
    loop = QueueLoop()
    runner = JobRunner(loop)
    window = os.getpriority(os.PRIO_PROCESS, os.getpid())
    inner: list[int] = []

    def nested(_job: Job[int]) -> int:
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    def work(_job: Job[int]) -> int:
        # A job started from a job's thread is no nicer than one started from the window.
        runner.start(Job("inner", nested, done=inner.append))
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    done: list[int] = []
    runner.start(Job("outer", work, done=done.append, kept_thread=kept))
    loop.run_until(lambda: bool(done) and bool(inner))
    runner.shutdown()
    expected = min(19, window + JOB_NICENESS)
    assert done == [expected]
    assert inner == [expected]
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == window
