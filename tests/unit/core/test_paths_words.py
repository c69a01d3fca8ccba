"""The words for a data folder Cairn cannot make: what it is for, and what to do."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from app.core.paths import AppPaths, describe_folder_error


def test_a_file_where_the_data_folder_should_be_is_said_plainly(tmp_path: Path) -> None:
    home = tmp_path / "cairn"
    home.write_text("not a folder")
    paths = AppPaths(data_dir=home / "data", config_dir=home / "config", log_dir=home / "logs")

    with pytest.raises(OSError) as caught:
        paths.ensure()
    words = describe_folder_error(caught.value)

    assert words.startswith("Cairn keeps your conversations and settings in folders")
    assert "there is a file" in words
    assert str(home) in words
    assert "Not a directory" not in words  # the system's words, not ours


@pytest.mark.parametrize(
    ("code", "words"),
    [
        (errno.EACCES, "isn't allowed to create it there"),
        (errno.EROFS, "isn't allowed to create it there"),
        (errno.ENOSPC, "the disk is full"),
        (errno.EIO, "Input/output error"),
    ],
)
def test_each_cause_has_its_own_words(code: int, words: str) -> None:
    error = OSError(code, os.strerror(code), "/home/ann/cairn/data")

    described = describe_folder_error(error)

    assert words in described
    assert "/home/ann/cairn/data" in described
