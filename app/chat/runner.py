"""Background work for the chat service: one thread per job, results back on the loop.

A job's work runs on a thread of its own and never touches the service: it
gets its inputs when it starts, and its result (or failure) is posted back to
the loop's thread, where `done` or `failed` runs. Cancelling is cooperative
(napari's `abort_requested`): the job's `cancelled` flag is set and its cancel
hook runs (a reply closes its stream at once); threads are never killed.
`shutdown` cancels every job and waits for its thread.

A job started with `kept_thread=True` (a reply) runs on one of a few threads the
runner keeps between such jobs, idle, waiting for the next: what the job keeps for
its thread with `kept_for_thread` (a reply's store and its SQLite connection, which
belongs to the thread that made it) is there for the next job on that thread, instead
of made again, and closed on that thread when it ends (`shutdown`, or idle too long).
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar, cast

from app.chat.loop import EventLoop
from app.core.errors import UserFacingError
from app.core.platform import nicer_thread

log = logging.getLogger(__name__)

T = TypeVar("T")
K = TypeVar("K")

# Idle kept threads at most (more jobs at once run on threads of their own, as any job).
KEPT_IDLE_THREADS = 2
# A kept thread idle this long ends (closing what it kept): ten minutes between two
# questions is a pause; the next reply opens its store again (about 2 ms).
KEPT_IDLE_SECONDS = 600.0

# Job threads run this much nicer than the process's main (GUI) thread: when a job and
# the GUI thread want the same CPU — a reply's stream parsed while the window shows its
# text — the window goes first, and its GIL hand-backs are not queued behind the job
# (issue 20: the GUI's longest silence in a turn). Linux only, where niceness is per
# thread and, under autogroups or cgroups, counts only against the app's own threads.
JOB_NICENESS = 10

# A kept thread's queue of jobs (None: end now).
_Jobs = queue.SimpleQueue["Job[Any] | None"]


def behind_the_window() -> None:
    """This thread at JOB_NICENESS above the main thread's niceness (at most 19), so a job
    started from another job is no nicer than one started from the window. Nothing where
    niceness is not per thread (macOS, Windows) or cannot be changed."""
    try:
        nicer_thread(JOB_NICENESS)
    except OSError:  # not allowed (a sandbox): the job runs as before
        log.debug("could not lower a job thread's priority", exc_info=True)


# What the calling thread keeps for its next jobs (`kept_for_thread`): set on a kept
# thread only, by key, with how to close it.
_THREAD = threading.local()

SOMETHING_WENT_WRONG = (
    "Something went wrong inside Cairn. Your messages are safe. "
    "The details were written to the log file."
)


def something_went_wrong() -> UserFacingError:
    """What a bug looks like to the user (the traceback goes to the log)."""
    return UserFacingError(SOMETHING_WENT_WRONG, title="Something went wrong", retryable=True)


class Job(Generic[T]):
    """One piece of background work, from start to its result on the loop's thread.

    Attributes:
        name: for the log and for thread names.
    """

    def __init__(
        self,
        name: str,
        work: Callable[[Job[T]], T],
        *,
        done: Callable[[T], None],
        failed: Callable[[UserFacingError], None] | None = None,
        on_cancel: Callable[[], None] | None = None,
        kept_thread: bool = False,
    ) -> None:
        self.name = name
        self.kept_thread = kept_thread  # run on one of the runner's kept threads
        self._work = work
        self._done = done
        self._failed = failed
        self._on_cancel = on_cancel
        self._cancel = threading.Event()
        self._finished = threading.Event()
        self.thread: threading.Thread | None = None

    @property
    def cancelled(self) -> bool:
        """Set from any thread by `cancel`; the work checks it at its safe points."""
        return self._cancel.is_set()

    @property
    def finished(self) -> bool:
        """The work returned (its result may not have been delivered yet)."""
        return self._finished.is_set()

    def cancel(self) -> None:
        """Ask the work to stop; callable from any thread, any number of times."""
        if self._cancel.is_set():
            return
        self._cancel.set()
        if self._on_cancel is not None:
            self._on_cancel()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the work to return; True when it did."""
        return self._finished.wait(timeout)


class JobRunner:
    """Starts jobs on their own threads and delivers their outcome on the loop's thread."""

    def __init__(self, loop: EventLoop) -> None:
        self._loop = loop
        self._lock = threading.Lock()
        self._jobs: set[Job[Any]] = set()
        self._closed = False
        # Kept threads waiting for a job: each one's queue (None: end now), and itself.
        self._idle: list[tuple[_Jobs, threading.Thread]] = []
        self._kept: set[threading.Thread] = set()  # every kept thread still running

    @property
    def running(self) -> int:
        """Jobs whose thread has not finished yet."""
        with self._lock:
            return sum(1 for job in self._jobs if not job.finished)

    def start(self, job: Job[T]) -> Job[T]:
        """Run `job`; its `done`/`failed` run later on the loop's thread (never after
        `shutdown`)."""
        with self._lock:
            if self._closed:
                job.cancel()
                return job
            self._jobs.add(job)
            if job.kept_thread and self._idle:
                waiting, job.thread = self._idle.pop()
                waiting.put(job)
                return job
        if job.kept_thread:
            jobs: _Jobs = queue.SimpleQueue()
            thread = threading.Thread(
                target=self._serve, args=(job, jobs), name=f"cairn-{job.name}"
            )
            with self._lock:
                self._kept.add(thread)
        else:
            thread = threading.Thread(target=self._run_alone, args=(job,), name=f"cairn-{job.name}")
        thread.daemon = True
        job.thread = thread
        thread.start()
        return job

    def _serve(self, job: Job[Any], jobs: _Jobs) -> None:
        """A kept thread: `job`, then the next ones handed to it while it waits idle."""
        behind_the_window()
        _THREAD.kept = {}
        me = (jobs, threading.current_thread())
        try:
            next_job: Job[Any] | None = job
            while next_job is not None:
                threading.current_thread().name = f"cairn-{next_job.name}"
                self._run(next_job)
                with self._lock:
                    if self._closed or len(self._idle) >= KEPT_IDLE_THREADS:
                        return
                    self._idle.append(me)
                try:
                    next_job = jobs.get(timeout=KEPT_IDLE_SECONDS)
                except queue.Empty:
                    with self._lock:
                        if me not in self._idle:  # handed a job (or None) just now
                            next_job = jobs.get()
                            continue
                        self._idle.remove(me)
                    return
        finally:
            _close_kept()
            with self._lock:
                self._kept.discard(me[1])

    def shutdown(self, timeout: float = 15.0) -> None:
        """Cancel every job and wait for its thread; later deliveries are dropped."""
        with self._lock:
            self._closed = True
            jobs = list(self._jobs)
            idle, self._idle = self._idle, []
            kept = set(self._kept)
        for waiting, _thread in idle:
            waiting.put(None)  # an idle kept thread closes what it kept, and ends
        for job in jobs:
            job.cancel()
        for job in jobs:
            if job.thread is not None:
                job.thread.join(timeout)
                if job.thread.is_alive():
                    log.warning("A background task did not stop in time: %s", job.name)
        for thread in kept:
            thread.join(timeout)

    def _run_alone(self, job: Job[T]) -> None:
        behind_the_window()
        self._run(job)

    def _run(self, job: Job[T]) -> None:
        failure: UserFacingError | None = None
        try:
            result = job._work(job)
        except UserFacingError as error:
            failure = error
        except Exception:
            log.exception("Unexpected failure in a background task (%s)", job.name)
            failure = something_went_wrong()
        job._finished.set()
        if failure is not None:
            reported = failure
            self._deliver(job, lambda: self._fail(job, reported))
        else:
            self._deliver(job, lambda: job._done(result))

    def _fail(self, job: Job[T], error: UserFacingError) -> None:
        if job._failed is not None:
            job._failed(error)
        else:
            log.warning("%s failed: %s (%s)", job.name, error.message, error.detail)

    def _deliver(self, job: Job[T], callback: Callable[[], None]) -> None:
        def deliver() -> None:
            with self._lock:
                self._jobs.discard(job)
                if self._closed:
                    return
            callback()

        self._loop.post(deliver)


def kept_for_thread(
    key: object, make: Callable[[], K], close: Callable[[K], None]
) -> tuple[K, bool]:
    """What `make()` made, kept by the calling thread under `key` for its next jobs when
    it is one of a runner's kept threads (`Job(kept_thread=True)`), with True: the thread
    closes it with `close` when it ends. Elsewhere made anew, with False: the caller
    closes it. Made again after `drop_kept(key)`."""
    kept: dict[object, tuple[Any, Callable[[Any], None]]] | None = getattr(_THREAD, "kept", None)
    if kept is None:
        return make(), False
    entry = kept.get(key)
    if entry is None:
        entry = (make(), cast(Callable[[Any], None], close))
        kept[key] = entry
    return cast(K, entry[0]), True


def drop_kept(key: object) -> None:
    """Close and forget what the calling thread kept under `key` (after a failure, say:
    the next job makes it afresh)."""
    kept: dict[object, tuple[Any, Callable[[Any], None]]] | None = getattr(_THREAD, "kept", None)
    entry = None if kept is None else kept.pop(key, None)
    if entry is not None:
        _close(entry)


def _close_kept() -> None:
    """Close everything the calling (kept) thread kept, as it ends."""
    kept: dict[object, tuple[Any, Callable[[Any], None]]] = getattr(_THREAD, "kept", {})
    _THREAD.kept = None
    for entry in kept.values():
        _close(entry)


def _close(entry: tuple[Any, Callable[[Any], None]]) -> None:
    value, close = entry
    try:
        close(value)
    except Exception:
        log.exception("Could not close what a background thread kept")
