"""One Cairn at a time per data folder, by an OS file lock on `cairn.lock`.

The operating system drops the lock when the process ends, crash or not, so a
stale lock file never keeps Cairn from starting.
"""

# portability: platform branches live here (msvcrt locks on Windows, fcntl elsewhere).

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import TracebackType

from app.core.errors import AlreadyRunningError, StorageError

if sys.platform == "win32":
    import msvcrt
else:
    import fcntl

LOCK_FILE_NAME = "cairn.lock"


class InstanceLock:
    """Held while this process is the Cairn that owns `data_dir`.

    Attributes:
        path: the lock file, `<data_dir>/cairn.lock`.
    """

    def __init__(self, data_dir: Path | str) -> None:
        self.path = Path(data_dir) / LOCK_FILE_NAME
        self._descriptor: int | None = None

    @property
    def held(self) -> bool:
        """Whether this object holds the lock now."""
        return self._descriptor is not None

    def acquire(self) -> None:
        """Take the lock, or raise `AlreadyRunningError` if another Cairn has it.

        Acquiring a lock this object already holds does nothing.
        """
        if self._descriptor is not None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # Not inherited by child processes (PEP 446), so a program Cairn
            # starts cannot keep the lock alive after Cairn quits.
            descriptor = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as error:
            raise StorageError(
                f"Cairn can't create its lock file in {self.path.parent}: "
                f"{error.strerror or error}. Make sure the folder is not read-only and "
                "belongs to you, then start Cairn again.",
                detail=repr(error),
            ) from error
        try:
            _lock(descriptor)
        except OSError as error:
            os.close(descriptor)
            raise AlreadyRunningError(
                "Cairn is already running. Switch to its window, or close it before "
                "starting Cairn again.",
                detail=f"{self.path} is locked: {error!r}",
            ) from error
        self._descriptor = descriptor
        _write_pid(descriptor)

    def release(self) -> None:
        """Let the lock go; releasing a lock not held does nothing."""
        descriptor, self._descriptor = self._descriptor, None
        if descriptor is None:
            return
        try:
            _unlock(descriptor)
        finally:
            os.close(descriptor)

    def __enter__(self) -> InstanceLock:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release()


def _write_pid(descriptor: int) -> None:
    """Note who holds the lock, for a person reading the file; best effort."""
    try:
        os.ftruncate(descriptor, 0)
        os.lseek(descriptor, 0, os.SEEK_SET)
        os.write(descriptor, f"{os.getpid()}\n".encode())
    except OSError:
        pass


if sys.platform == "win32":

    def _lock(descriptor: int) -> None:
        # Lock the first byte; LK_NBLCK fails at once instead of retrying.
        os.lseek(descriptor, 0, os.SEEK_SET)
        msvcrt.locking(descriptor, msvcrt.LK_NBLCK, 1)

    def _unlock(descriptor: int) -> None:
        os.lseek(descriptor, 0, os.SEEK_SET)
        msvcrt.locking(descriptor, msvcrt.LK_UNLCK, 1)

else:

    def _lock(descriptor: int) -> None:
        # flock belongs to the open file, not the process: a second InstanceLock
        # in the same process is refused too, and the lock dies with the process.
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)

    def _unlock(descriptor: int) -> None:
        fcntl.flock(descriptor, fcntl.LOCK_UN)
