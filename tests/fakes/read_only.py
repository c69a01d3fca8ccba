"""A folder made read-only for real, for the length of a `with`: permissions for an
ordinary user; for root (which writes through any chmod) a read-only bind mount of the
folder on itself. Skips the test where neither can be had."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def read_only(folder: Path) -> Iterator[Path]:
    if os.geteuid() != 0:
        mode = folder.stat().st_mode & 0o777
        folder.chmod(0o555)
        try:
            yield folder
        finally:
            folder.chmod(mode)
        return
    bound = subprocess.run(
        ["mount", "-o", "bind,ro", str(folder), str(folder)], capture_output=True, check=False
    )
    if bound.returncode != 0:
        pytest.skip(f"cannot make {folder} read-only as root: {bound.stderr!r}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)
