"""The words for a data folder Cairn cannot make: what it is for, and what to do."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from app.core.paths import AppPaths, describe_folder_error


def test_a_file_where_the_data_folder_should_be_is_said_plainly(tmp_path: Path) -> None:
    home = tmp_path / "cairn"
    home.write_text("not a folder", encoding="utf-8")
    paths = AppPaths(data_dir=home / "data", config_dir=home / "config", log_dir=home / "logs")

    with pytest.raises(OSError) as caught:
        paths.ensure()
    words = describe_folder_error(caught.value)

    assert words.startswith(
        f"Cairn can't create the folder where it keeps your conversations ({home / 'data'}): "
        f"there is a file where the folder should be ({home}). Move or rename that file"
    )
    assert "CAIRN_HOME" in words
    assert "Not a directory" not in words  # the system's words, not ours


def test_a_file_with_the_folder_s_own_name_is_not_named_twice(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.write_text("not a folder", encoding="utf-8")

    with pytest.raises(OSError) as caught:
        data.mkdir(parents=True, exist_ok=True)
    words = describe_folder_error(caught.value)

    assert f"({data}): there is a file where the folder should be. Move" in words


@pytest.mark.parametrize(
    ("code", "words"),
    [
        (errno.EACCES, "you aren't allowed to create folders there. Fix the permissions"),
        (errno.EPERM, "you aren't allowed to create folders there. Fix the permissions"),
        (errno.EROFS, "that disk is read-only."),
        (errno.ENOSPC, "the disk is full. Free some space"),
        (errno.EDQUOT, "the disk is full. Free some space"),
        (errno.EIO, "the system said “Input/output error”."),
    ],
)
def test_each_cause_has_its_own_words(code: int, words: str) -> None:
    error = OSError(code, os.strerror(code), "/home/ann/cairn/data")

    described = describe_folder_error(error)

    assert described.startswith(
        "Cairn can't create the folder where it keeps your conversations (/home/ann/cairn/data): "
    )
    assert words in described


def test_a_folder_without_a_name_still_gets_words() -> None:
    described = describe_folder_error(OSError(errno.EACCES, "Permission denied"))

    assert "(its usual place)" in described
