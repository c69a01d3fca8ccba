"""atomic_write and atomic_file: the old file or the new one, never half, and the name synced."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core import files
from app.core.files import atomic_file, atomic_text_file, atomic_write


def test_atomic_write_replaces_the_file_and_makes_its_folder(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "settings.json"
    atomic_write(target, "first")
    atomic_write(target, b"second \xe2\x9c\x93")

    assert target.read_text(encoding="utf-8") == "second ✓"
    assert [p.name for p in target.parent.iterdir()] == ["settings.json"]


def test_a_failure_inside_leaves_the_old_file_and_no_temporary_one(tmp_path: Path) -> None:
    target = tmp_path / "export.json"
    target.write_text("old", encoding="utf-8")

    with pytest.raises(RuntimeError), atomic_file(target) as handle:
        handle.write(b"half of the ne")
        raise RuntimeError("the disk filled up")

    assert target.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["export.json"]


def test_the_folder_is_synced_after_the_rename(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[tuple[Path, bool]] = []
    target = tmp_path / "cache.json"
    monkeypatch.setattr(
        files, "fsync_folder", lambda folder: synced.append((folder, target.exists()))
    )

    atomic_write(target, "{}")

    assert synced == [(tmp_path, True)]


def test_a_file_not_worth_a_sync_is_written_whole_without_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[object] = []
    monkeypatch.setattr(files, "fsync_folder", synced.append)
    monkeypatch.setattr(files.os, "fsync", synced.append)
    target = tmp_path / "calibration.json"
    target.write_text("old", encoding="utf-8")

    atomic_write(target, "{}", durable=False)

    assert target.read_text(encoding="utf-8") == "{}"
    assert [p.name for p in tmp_path.iterdir()] == ["calibration.json"]
    assert synced == []


def test_text_is_utf8_with_newline_line_ends(tmp_path: Path) -> None:
    target = tmp_path / "notes.md"
    with atomic_text_file(target) as stream:
        stream.write("Crème brûlée\nline two\n")

    assert target.read_bytes() == "Crème brûlée\nline two\n".encode()
