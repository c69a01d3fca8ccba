"""Windows' rules for files, played on Linux: what the store must survive there.

- `os.fsync` is `_commit` on Windows, which refuses a descriptor opened for
  reading only (EBADF): https://learn.microsoft.com/en-us/cpp/c-runtime-library/reference/commit
- A file open in any process cannot be deleted (ERROR_SHARING_VIOLATION):
  https://learn.microsoft.com/en-us/windows/win32/api/fileapi/nf-fileapi-deletefilew
  ("If an application attempts to delete a file that has other handles open…").

On Windows itself the real system applies the rules and nothing is patched; on
Linux the fakes read this process's open files from /proc. Elsewhere (macOS)
the tests that need them skip, saying so.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

_ON_WINDOWS = sys.platform == "win32"
_CAN_PLAY_WINDOWS = sys.platform.startswith("linux")


def _skip_unless_playable() -> None:
    if not (_ON_WINDOWS or _CAN_PLAY_WINDOWS):
        pytest.skip("Windows' file rules are played on Linux (/proc) or met on Windows itself")


def is_read_only(descriptor: int) -> bool:
    """Whether `descriptor` was opened for reading only (POSIX)."""
    import fcntl  # POSIX only; this module runs it on Linux

    return fcntl.fcntl(descriptor, fcntl.F_GETFL) & os.O_ACCMODE == os.O_RDONLY


def refuse_read_only_fsync(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """`os.fsync` as Windows has it, and `sys.platform` "win32" while the test runs.

    Returns the descriptors synced (for asserting on).
    """
    _skip_unless_playable()
    monkeypatch.setattr(sys, "platform", "win32")
    synced: list[int] = []
    real_fsync = os.fsync

    def fsync(target: Any) -> None:
        descriptor = target if isinstance(target, int) else target.fileno()
        if not _ON_WINDOWS and is_read_only(descriptor):
            raise OSError(errno.EBADF, "Bad file descriptor")
        real_fsync(descriptor)
        synced.append(descriptor)

    monkeypatch.setattr(os, "fsync", fsync)
    return synced


def _open_files() -> set[Path]:
    folder = Path("/proc/self/fd")
    found: set[Path] = set()
    for entry in folder.iterdir():
        try:
            found.add(Path(os.readlink(entry)))
        except OSError:
            continue  # closed meanwhile (the listing's own descriptor)
    return found


def _resolved(path: Any, dir_fd: int | None) -> Path:
    if dir_fd is not None and not os.path.isabs(os.fsdecode(path)):
        return Path(os.readlink(f"/proc/self/fd/{dir_fd}")) / os.fsdecode(path)
    return Path(os.path.abspath(os.fsdecode(path)))


def refuse_deleting_open_files(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """`os.unlink`/`os.remove` as Windows has them: an open file can't be deleted.

    Returns the files refused (for asserting on).
    """
    _skip_unless_playable()
    refused: list[Path] = []
    if _ON_WINDOWS:
        return refused

    def guarded(real: Callable[..., None]) -> Callable[..., None]:
        def delete(path: Any, *, dir_fd: int | None = None) -> None:
            target = _resolved(path, dir_fd)
            if target in _open_files():
                refused.append(target)
                raise PermissionError(
                    errno.EACCES,
                    "The process cannot access the file because it is being used by "
                    "another process",
                    os.fsdecode(path),
                )
            real(path, dir_fd=dir_fd)

        return delete

    monkeypatch.setattr(os, "unlink", guarded(os.unlink))
    monkeypatch.setattr(os, "remove", guarded(os.remove))
    return refused


def sharing_violation(path: str) -> PermissionError:
    """The error `os.replace` raises on Windows while another program holds `path`."""
    error = PermissionError(
        errno.EACCES,
        "The process cannot access the file because it is being used by another process",
        path,
    )
    error.winerror = 32  # type: ignore[attr-defined]  # set by Python on Windows only
    return error
