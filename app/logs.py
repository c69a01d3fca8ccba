"""Logging set-up: a rotating `cairn.log` plus warnings on stderr, both redacted (DESIGN §9)."""

from __future__ import annotations

import logging
import logging.handlers
import os
import sys
from io import TextIOWrapper
from pathlib import Path
from typing import cast

from app.secrets.redact import RedactingFilter

LOG_FILE_NAME = "cairn.log"
MAX_LOG_BYTES = 1_000_000
LOG_BACKUP_COUNT = 5
LOG_FORMAT = "%(asctime)s %(levelname)-7s %(name)s [%(threadName)s] %(message)s"

log = logging.getLogger(__name__)

# The handlers the last setup_logging() installed, so a second call replaces them.
_installed_handlers: list[logging.Handler] = []


class _PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """Creates the log files readable by their owner only: they can quote conversations."""

    def _open(self) -> TextIOWrapper:
        def owner_only(path: str, flags: int) -> int:
            return os.open(path, flags, 0o600)

        stream = open(  # noqa: SIM115 - the handler owns the stream and closes it
            self.baseFilename,
            self.mode,
            encoding=self.encoding,
            errors=self.errors,
            opener=owner_only,
        )
        return cast(TextIOWrapper, stream)


def setup_logging(log_dir: Path, *, level: int = logging.INFO) -> None:
    """Send log records at `level` and above to `log_dir/cairn.log`, warnings to stderr.

    Safe to call again: the handlers of an earlier call are replaced, not added to.
    When the folder can't be written, logs go to stderr only, after one warning;
    logging never stops the app from starting.
    """
    teardown_logging()
    formatter = logging.Formatter(LOG_FORMAT)
    redacting_filter = RedactingFilter()
    handlers: list[logging.Handler] = []

    file_error: OSError | None = None
    try:
        log_dir.mkdir(parents=True, exist_ok=True)
        file_handler = _PrivateRotatingFileHandler(
            log_dir / LOG_FILE_NAME,
            maxBytes=MAX_LOG_BYTES,
            backupCount=LOG_BACKUP_COUNT,
            encoding="utf-8",
        )
    except OSError as exc:
        file_error = exc
    else:
        file_handler.setLevel(level)
        handlers.append(file_handler)

    # A windowed app (pythonw, a frozen build) may have no stderr at all.
    if sys.stderr is not None:
        stderr_handler = logging.StreamHandler(sys.stderr)
        stderr_handler.setLevel(max(level, logging.WARNING))
        handlers.append(stderr_handler)

    root = logging.getLogger()
    root.setLevel(level)
    for handler in handlers:
        handler.setFormatter(formatter)
        handler.addFilter(redacting_filter)
        root.addHandler(handler)
    _installed_handlers.extend(handlers)

    if file_error is not None:
        log.warning(
            "Can't write the log file in %s (%s); logging to the terminal only",
            log_dir,
            file_error,
        )


def teardown_logging() -> None:
    """Remove and close the handlers `setup_logging` installed (on quit, and in tests)."""
    root = logging.getLogger()
    while _installed_handlers:
        handler = _installed_handlers.pop()
        root.removeHandler(handler)
        handler.close()
