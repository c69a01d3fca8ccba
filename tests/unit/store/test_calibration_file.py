"""The calibration file: saved atomically, read back after a restart, reset when damaged."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from pathlib import Path

import pytest

from app.core.calibration import Calibrations
from app.core.paths import AppPaths
from app.store.calibration_file import CALIBRATION_FILE_NAME, CalibrationFile

MODEL = "claude-sonnet-4-6"
STAMP = datetime(2026, 3, 5, 9, 30, tzinfo=UTC)


@pytest.fixture
def calibration_file() -> CalibrationFile:
    paths = AppPaths.from_environment()
    return CalibrationFile(paths.data_dir / CALIBRATION_FILE_NAME, clock=lambda: STAMP)


def learned() -> Calibrations:
    calibrations = Calibrations()
    calibrations.learn(MODEL, 2_000, 2_180)
    calibrations.learn("claude-haiku-4-5", 1_500, 1_800)
    return calibrations


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


def test_it_lives_in_the_data_folder() -> None:
    paths = AppPaths.from_environment()

    assert CalibrationFile.in_data_dir(paths).path == paths.data_dir / "calibration.json"


def test_a_missing_file_means_uncalibrated(calibration_file: CalibrationFile) -> None:
    assert calibration_file.load().snapshot() == {}


def test_calibration_survives_a_restart(calibration_file: CalibrationFile) -> None:
    assert calibration_file.save(learned())

    reopened = CalibrationFile(calibration_file.path).load()

    assert reopened.snapshot() == learned().snapshot()
    assert reopened.for_model(MODEL).apply(2_000) == 2_180
    data = json.loads(calibration_file.path.read_text(encoding="utf-8"))
    assert data["schema_version"] == 1
    assert [p.name for p in calibration_file.path.parent.iterdir()] == ["calibration.json"]


@pytest.mark.parametrize(
    "content",
    [
        "{not json",
        "",
        "[]",
        '{"schema_version": 1, "models": {"claude-x": {"ratio": 1e9}}}',
        '{"schema_version": 7, "models": {}}',
    ],
)
def test_a_damaged_file_is_moved_aside_and_calibration_starts_over(
    calibration_file: CalibrationFile, content: str, caplog: pytest.LogCaptureFixture
) -> None:
    calibration_file.path.parent.mkdir(parents=True)
    calibration_file.path.write_text(content, encoding="utf-8")

    loaded = calibration_file.load()

    assert loaded.snapshot() == {}
    aside = calibration_file.path.with_name("calibration.json.damaged-20260305-093000")
    assert aside.read_text(encoding="utf-8") == content
    assert not calibration_file.path.exists()
    (warning,) = warnings_of(caplog)
    assert "damaged" in warning and "reset" in warning


def test_undecodable_bytes_are_a_warning_too(
    calibration_file: CalibrationFile, caplog: pytest.LogCaptureFixture
) -> None:
    calibration_file.path.parent.mkdir(parents=True)
    calibration_file.path.write_bytes(b"\xff\xfe\x00junk")

    assert calibration_file.load().snapshot() == {}
    assert warnings_of(caplog)


def test_a_folder_that_cannot_be_written_costs_a_warning_not_a_crash(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    not_a_folder = tmp_path / "a-file"
    not_a_folder.write_text("", encoding="utf-8")

    saved = CalibrationFile(not_a_folder / "calibration.json").save(learned())

    assert saved is False
    assert any("Could not save" in message for message in warnings_of(caplog))


def test_a_save_replaces_the_previous_file_whole(calibration_file: CalibrationFile) -> None:
    calibration_file.save(learned())
    later = learned()
    later.learn(MODEL, 3_000, 3_600)

    calibration_file.save(later)

    assert calibration_file.load().snapshot() == later.snapshot()
