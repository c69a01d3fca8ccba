"""Background work for the chat service: one thread per job, results back on the loop.

A job's work runs on a thread of its own and never touches the service: it
gets its inputs when it starts, and its result (or failure) is posted back to
the loop's thread, where `done` or `failed` runs. Cancelling is cooperative
(napari's `abort_requested`): the job's `cancelled` flag is set and its cancel
hook runs (a reply closes its stream at once); threads are never killed.
`shutdown` cancels every job and waits for its thread.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from app.chat.loop import EventLoop
from app.core.errors import UserFacingError

log = logging.getLogger(__name__)

T = TypeVar("T")

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
    ) -> None:
        self.name = name
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
        thread = threading.Thread(target=self._run, args=(job,), name=f"cairn-{job.name}")
        thread.daemon = True
        job.thread = thread
        thread.start()
        return job

    def shutdown(self, timeout: float = 15.0) -> None:
        """Cancel every job and wait for its thread; later deliveries are dropped."""
        with self._lock:
            self._closed = True
            jobs = list(self._jobs)
        for job in jobs:
            job.cancel()
        for job in jobs:
            if job.thread is not None:
                job.thread.join(timeout)
                if job.thread.is_alive():
                    log.warning("A background task did not stop in time: %s", job.name)

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
