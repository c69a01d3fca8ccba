"""InstanceLock: one Cairn per data folder, checked against a real second process."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.errors import AlreadyRunningError, StorageError
from app.store import InstanceLock

REPO = Path(__file__).resolve().parents[3]

# Holds the lock, says so, then waits for stdin to close (or to be killed).
HOLDER = """
import sys
from app.store import InstanceLock
lock = InstanceLock(sys.argv[1])
lock.acquire()
print("locked", flush=True)
sys.stdin.read()
"""

# Tries the lock once; the exit code tells the parent what happened.
TRIER = """
import sys
from app.core.errors import AlreadyRunningError
from app.store import InstanceLock
try:
    InstanceLock(sys.argv[1]).acquire()
except AlreadyRunningError as error:
    print(error.message)
    sys.exit(3)
"""


def python(code: str, data_dir: Path, **options: object) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", code, str(data_dir)],
        cwd=REPO,
        text=True,
        encoding="utf-8",
        stdout=subprocess.PIPE,
        stdin=subprocess.PIPE,
        **options,  # type: ignore[call-overload]
    )


@pytest.fixture
def holder(tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding the lock on `tmp_path`."""
    process = python(HOLDER, tmp_path)
    assert process.stdout is not None
    assert process.stdout.readline() == "locked\n"
    yield process
    if process.poll() is None:
        process.kill()
    process.wait(timeout=30)
    process.stdout.close()
    if process.stdin is not None:
        process.stdin.close()


def test_acquire_and_release(tmp_path: Path) -> None:
    lock = InstanceLock(tmp_path / "new-folder")
    assert not lock.held
    lock.acquire()
    assert lock.held
    assert lock.path == tmp_path / "new-folder" / "cairn.lock"
    assert lock.path.read_text(encoding="utf-8") == f"{os.getpid()}\n"
    lock.release()
    assert not lock.held


def test_context_manager_releases_on_error(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), InstanceLock(tmp_path) as lock:
        assert lock.held
        raise RuntimeError("boom")
    assert not lock.held
    with InstanceLock(tmp_path) as again:
        assert again.held


def test_acquire_twice_and_release_twice_do_nothing(tmp_path: Path) -> None:
    lock = InstanceLock(tmp_path)
    lock.acquire()
    lock.acquire()
    assert lock.held
    lock.release()
    lock.release()
    assert not lock.held


def test_a_second_lock_in_the_same_process_is_refused(tmp_path: Path) -> None:
    with InstanceLock(tmp_path), pytest.raises(AlreadyRunningError):
        InstanceLock(tmp_path).acquire()


def test_another_process_holding_the_lock_refuses_this_one(
    tmp_path: Path, holder: subprocess.Popen[str]
) -> None:
    lock = InstanceLock(tmp_path)
    with pytest.raises(AlreadyRunningError) as caught:
        lock.acquire()
    assert "Cairn is already running" in caught.value.message
    assert not lock.held
    # The lock dies with its process, even when the process is killed.
    holder.kill()
    holder.wait(timeout=30)
    with lock:
        assert lock.held


def test_lock_released_by_a_clean_exit_is_free(
    tmp_path: Path, holder: subprocess.Popen[str]
) -> None:
    assert holder.stdin is not None
    holder.stdin.close()
    assert holder.wait(timeout=30) == 0
    with InstanceLock(tmp_path) as lock:
        assert lock.held


def test_this_process_holding_the_lock_refuses_another(tmp_path: Path) -> None:
    with InstanceLock(tmp_path):
        trier = python(TRIER, tmp_path)
        output, _ = trier.communicate(timeout=60)
    assert trier.returncode == 3
    assert "already running" in output
    trier = python(TRIER, tmp_path)
    trier.communicate(timeout=60)
    assert trier.returncode == 0


def test_an_unusable_folder_is_a_storage_error(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    with pytest.raises(StorageError) as caught:
        InstanceLock(blocker / "data").acquire()
    assert str(blocker / "data") in caught.value.message
