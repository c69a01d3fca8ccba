"""The token calibration, kept as JSON beside the database (DESIGN §4, §9).

Losing it costs accuracy until the next reply, nothing more, so nothing here
bothers the user: a damaged file is moved aside with a warning in the log and
calibration starts over; a failed save is logged and tried again next time.

A reply learns from its usage every time, and most replies move a model's ratio by a
hair: `keep` writes the file when the gauge would show it (a model calibrated, or
its ratio off what the file holds by `NOTICEABLE_CHANGE`), else at most every
`SAVE_EVERY_SECONDS` (at the next reply past it) and at `flush` (quitting). A crash
loses at most such hairs, which the next reply learns again.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from app.core.calibration import Calibration, Calibrations
from app.core.dates import utc_now
from app.core.files import atomic_write
from app.store.data_file import DataFile

log = logging.getLogger(__name__)

CALIBRATION_FILE_NAME = "calibration.json"

# A ratio this far (relative) from the one on disk is written at once: the gauge's
# target is ±5 % (DESIGN §4), so a 1 % move is one a user could see after a restart.
NOTICEABLE_CHANGE = 0.01
# A calibration kept in memory only (smaller moves) is written by the first reply that
# learns once the last write is this old.
SAVE_EVERY_SECONDS = 60.0


class CalibrationFile(DataFile):
    """Loads and saves `Calibrations` at `path` (`calibration.json`), atomically."""

    FILE_NAME = CALIBRATION_FILE_NAME

    def __init__(
        self,
        path: Path,
        *,
        clock: Callable[[], datetime] = utc_now,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(path, clock=clock)
        self._monotonic = monotonic
        self._lock = threading.Lock()  # reply workers of several conversations keep at once
        # What the file holds, as this process last read or wrote it (None: not known).
        self._on_disk: dict[str, Calibration] | None = None
        self._saved_at = float("-inf")  # when (`monotonic`) it was last written
        self._waiting: Calibrations | None = None  # learned since, not written yet

    def load(self) -> Calibrations:
        """The saved calibrations; empty when there are none or the file is damaged."""
        calibrations = self._load()
        with self._lock:
            self._on_disk = calibrations.snapshot()
        return calibrations

    def _load(self) -> Calibrations:
        try:
            raw = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return Calibrations()
        except (OSError, UnicodeDecodeError) as error:
            log.warning(
                "Could not read the token calibration %s (%s); starting over", self.path, error
            )
            return Calibrations()
        try:
            return Calibrations.from_dict(json.loads(raw))
        except ValueError as error:  # json.JSONDecodeError is a ValueError
            self._set_aside(error)
            return Calibrations()

    def keep(self, calibrations: Calibrations) -> bool:
        """After a reply learned: write the calibrations now when the change would show
        (see the module's docstring) or the last write is `SAVE_EVERY_SECONDS` old, else
        later (`flush`). False when a write was due and the disk refused it."""
        with self._lock:
            recent = self._monotonic() - self._saved_at < SAVE_EVERY_SECONDS
            if recent and not self._noticeable(calibrations.snapshot()):
                self._waiting = calibrations
                return True
        return self.save(calibrations)

    def flush(self) -> bool:
        """Write what `keep` left for later, if anything (when quitting); False when the
        disk refused it."""
        with self._lock:
            waiting = self._waiting
        return True if waiting is None else self.save(waiting)

    def _noticeable(self, now: dict[str, Calibration]) -> bool:
        on_disk = self._on_disk
        if on_disk is None:
            return True
        for model, calibration in now.items():
            saved = on_disk.get(model)
            if saved is None or saved.calibrated != calibration.calibrated:
                return True
            if abs(calibration.ratio - saved.ratio) > NOTICEABLE_CHANGE * saved.ratio:
                return True
        return False

    def save(self, calibrations: Calibrations) -> bool:
        """Write the calibrations; False (and a warning in the log) when the disk refused."""
        revision = calibrations.revision  # before the snapshot: a learn between is kept waiting
        snapshot = calibrations.snapshot()
        text = json.dumps(Calibrations(snapshot).to_dict(), indent=2, sort_keys=True) + "\n"
        try:
            # Not synced: it is written after every reply, and a file lost or damaged
            # by a power cut costs accuracy until the next reply (see above), so it is
            # not worth two fsyncs a turn.
            atomic_write(self.path, text, durable=False)
        except OSError as error:
            log.warning("Could not save the token calibration to %s: %s", self.path, error)
            return False
        with self._lock:
            self._on_disk, self._saved_at = snapshot, self._monotonic()
            if self._waiting is calibrations and calibrations.revision == revision:
                self._waiting = None
        return True

    def _set_aside(self, error: Exception) -> None:
        stamp = self._clock().strftime("%Y%m%d-%H%M%S")
        aside = self.path.with_name(f"{self.path.name}.damaged-{stamp}")
        with contextlib.suppress(OSError):
            self.path.replace(aside)
        log.warning(
            "Token calibration %s was damaged (%s); moved to %s and reset",
            self.path,
            error,
            aside.name,
        )
