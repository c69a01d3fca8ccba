"""The token calibration, kept as JSON beside the database (DESIGN §4, §9).

Losing it costs accuracy until the next reply, nothing more, so nothing here
bothers the user: a damaged file is moved aside with a warning in the log and
calibration starts over; a failed save is logged and tried again next time.
"""

from __future__ import annotations

import contextlib
import json
import logging

from app.core.calibration import Calibrations
from app.core.files import atomic_write
from app.store.data_file import DataFile

log = logging.getLogger(__name__)

CALIBRATION_FILE_NAME = "calibration.json"


class CalibrationFile(DataFile):
    """Loads and saves `Calibrations` at `path` (`calibration.json`), atomically."""

    FILE_NAME = CALIBRATION_FILE_NAME

    def load(self) -> Calibrations:
        """The saved calibrations; empty when there are none or the file is damaged."""
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

    def save(self, calibrations: Calibrations) -> bool:
        """Write the calibrations; False (and a warning in the log) when the disk refused."""
        text = json.dumps(calibrations.to_dict(), indent=2, sort_keys=True) + "\n"
        try:
            # Not synced: it is written after every reply, and a file lost or damaged
            # by a power cut costs accuracy until the next reply (see above), so it is
            # not worth two fsyncs a turn.
            atomic_write(self.path, text, durable=False)
        except OSError as error:
            log.warning("Could not save the token calibration to %s: %s", self.path, error)
            return False
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
