"""A test that hangs is ended by pytest-timeout, even inside Qt's C++ event loop.

The method configured in pyproject.toml ("thread") must end a test that waits in
`QDialog.exec()`: a SIGALRM handler ("signal") would only run once Python got
control back, which that loop never gives it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]

HANGING_TEST = """
from PySide6.QtWidgets import QDialog


def test_waits_for_a_dialog_nobody_closes(qapp):
    QDialog().exec()
"""


@pytest.mark.timeout(30)
def test_a_test_stuck_in_a_modal_dialog_is_ended_by_the_timeout(tmp_path: Path) -> None:
    test_file = tmp_path / "test_hang.py"
    test_file.write_text(HANGING_TEST, encoding="utf-8")
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        # Our configuration (the timeout method), with only the limit shortened.
        "-c",
        str(REPO_ROOT / "pyproject.toml"),
        "--rootdir",
        str(tmp_path),
        "-o",
        "timeout=2",
        str(test_file),
    ]
    # subprocess's own timeout only turns a hang into a failure; what shows that
    # pytest-timeout ended the test is its banner and the test's stack.
    result = subprocess.run(
        command,
        cwd=tmp_path,
        env=dict(os.environ, QT_QPA_PLATFORM="offscreen"),
        capture_output=True,
        text=True,
        timeout=20,
        check=False,
        encoding="utf-8",
    )

    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "+ Timeout +" in output
    assert "test_waits_for_a_dialog_nobody_closes" in output  # the stack names the test
