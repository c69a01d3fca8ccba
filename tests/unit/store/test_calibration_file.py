"""The calibration file: saved atomically, read back after a restart, reset when damaged."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from pathlib import Path

import pytest

from app.core.calibration import Calibrations
from app.core.paths import AppPaths
from app.store.calibration_file import (
    CALIBRATION_FILE_NAME,
    SAVE_EVERY_SECONDS,
    CalibrationFile,
)

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


class Seconds:
    """A hand-set `time.monotonic` for the file's wait between writes."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def written(calibration_file: CalibrationFile) -> dict[str, object]:
    return CalibrationFile(calibration_file.path).load().snapshot()  # type: ignore[return-value]


def test_keep_writes_what_the_gauge_would_show_at_once_and_hairs_later(
    tmp_path: Path,
) -> None:
    seconds = Seconds()
    calibration_file = CalibrationFile(tmp_path / CALIBRATION_FILE_NAME, monotonic=seconds)
    calibrations = calibration_file.load()
    calibrations.learn(MODEL, 2_000, 2_200)  # a model calibrated: shown at once

    assert calibration_file.keep(calibrations)
    assert written(calibration_file) == calibrations.snapshot()

    seconds.now += 1
    calibrations.learn(MODEL, 2_000, 2_202)  # a hair (0.05 %): kept for later
    first = written(calibration_file)
    assert calibration_file.keep(calibrations)
    assert written(calibration_file) == first

    seconds.now += 1
    calibrations.learn(MODEL, 2_000, 2_600)  # the ratio moves by several percent: at once
    assert calibration_file.keep(calibrations)
    assert written(calibration_file) == calibrations.snapshot()

    seconds.now += 1
    calibrations.learn("claude-haiku-4-5", 1_500, 1_800)  # another model calibrated
    assert calibration_file.keep(calibrations)
    assert written(calibration_file) == calibrations.snapshot()


def test_a_hair_waits_at_most_save_every_seconds_and_is_flushed_when_quitting(
    tmp_path: Path,
) -> None:
    seconds = Seconds()
    calibration_file = CalibrationFile(tmp_path / CALIBRATION_FILE_NAME, monotonic=seconds)
    calibrations = calibration_file.load()
    calibrations.learn(MODEL, 2_000, 2_200)
    calibration_file.keep(calibrations)

    calibrations.learn(MODEL, 2_000, 2_202)
    calibration_file.keep(calibrations)
    assert written(calibration_file) != calibrations.snapshot()
    seconds.now += SAVE_EVERY_SECONDS
    calibrations.learn(MODEL, 2_000, 2_203)
    calibration_file.keep(calibrations)  # the last write is old: this one goes now
    assert written(calibration_file) == calibrations.snapshot()

    calibrations.learn(MODEL, 2_000, 2_204)
    calibration_file.keep(calibrations)
    assert written(calibration_file) != calibrations.snapshot()
    assert calibration_file.flush()
    assert written(calibration_file) == calibrations.snapshot()
    assert calibration_file.flush()  # nothing waiting: nothing to do


def test_a_refused_write_is_tried_again_at_the_next_reply(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    not_a_folder = tmp_path / "a-file"
    not_a_folder.write_text("", encoding="utf-8")
    calibration_file = CalibrationFile(not_a_folder / CALIBRATION_FILE_NAME)
    calibrations = calibration_file.load()
    calibrations.learn(MODEL, 2_000, 2_200)

    assert calibration_file.keep(calibrations) is False
    calibrations.learn(MODEL, 2_000, 2_201)
    assert calibration_file.keep(calibrations) is False  # still due: nothing was written
    assert len([m for m in warnings_of(caplog) if "Could not save" in m]) == 2
