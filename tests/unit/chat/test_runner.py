"""JobRunner: work on its own thread, outcomes on the loop's, cancel and shutdown."""

from __future__ import annotations

import logging
import threading

import pytest

from app.chat.loop import QueueLoop
from app.chat.runner import SOMETHING_WENT_WRONG, Job, JobRunner
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
