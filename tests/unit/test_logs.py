"""setup_logging: a redacted rotating file, warnings on stderr, and no crash without a disk."""

from __future__ import annotations

import logging
import logging.handlers
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.logs import LOG_BACKUP_COUNT, MAX_LOG_BYTES, setup_logging, teardown_logging
from app.secrets.redact import RedactingFilter

KEY = "sk-ant-api03-TopSecret_value-1234"
log = logging.getLogger("tests.logs")


@pytest.fixture(autouse=True)
def restore_root_logger() -> Iterator[None]:
    root = logging.getLogger()
    level = root.level
    handlers = list(root.handlers)
    yield
    teardown_logging()
    root.setLevel(level)
    assert root.handlers == handlers, "setup_logging left handlers behind"


def _our_handlers(before: list[logging.Handler]) -> list[logging.Handler]:
    return [h for h in logging.getLogger().handlers if h not in before]


def test_records_go_to_the_log_file_at_the_chosen_level(tmp_path: Path) -> None:
    log_dir = tmp_path / "logs" / "nested"

    setup_logging(log_dir)
    log.debug("too detailed")
    log.info("conversation opened")

    text = (log_dir / "cairn.log").read_text(encoding="utf-8")
    assert "INFO    tests.logs [MainThread] conversation opened" in text
    assert "too detailed" not in text


def test_debug_level_is_honoured(tmp_path: Path) -> None:
    setup_logging(tmp_path, level=logging.DEBUG)
    log.debug("now detailed")

    assert "now detailed" in (tmp_path / "cairn.log").read_text(encoding="utf-8")


def test_the_log_file_is_private_to_its_owner(tmp_path: Path) -> None:
    setup_logging(tmp_path)

    mode = stat.S_IMODE((tmp_path / "cairn.log").stat().st_mode)
    assert mode == 0o600


def test_keys_and_tracebacks_are_redacted_in_the_file(tmp_path: Path) -> None:
    setup_logging(tmp_path)

    log.info("using %s", KEY)
    try:
        raise RuntimeError(f"server refused {KEY}")
    except RuntimeError:
        log.warning("request failed", exc_info=True)

    text = (tmp_path / "cairn.log").read_text(encoding="utf-8")
    assert KEY not in text
    assert "using [redacted]" in text
    assert "RuntimeError: server refused [redacted]" in text


def test_every_handler_carries_the_redacting_filter(tmp_path: Path) -> None:
    before = list(logging.getLogger().handlers)

    setup_logging(tmp_path)

    handlers = _our_handlers(before)
    assert len(handlers) == 2
    assert all(any(isinstance(f, RedactingFilter) for f in h.filters) for h in handlers)


def test_the_file_rotates_at_one_megabyte_keeping_five(tmp_path: Path) -> None:
    before = list(logging.getLogger().handlers)
    setup_logging(tmp_path)
    (file_handler,) = [
        h for h in _our_handlers(before) if isinstance(h, logging.handlers.RotatingFileHandler)
    ]
    assert (file_handler.maxBytes, file_handler.backupCount) == (1_000_000, 5)
    assert (MAX_LOG_BYTES, LOG_BACKUP_COUNT) == (1_000_000, 5)

    line = "x" * 1000
    for _ in range(MAX_LOG_BYTES // 1000 + 50):
        log.info(line)

    assert (tmp_path / "cairn.log.1").exists()
    assert (tmp_path / "cairn.log").stat().st_size < MAX_LOG_BYTES
    assert stat.S_IMODE((tmp_path / "cairn.log").stat().st_mode) == 0o600


def test_stderr_gets_warnings_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    setup_logging(tmp_path)

    log.info("quiet detail")
    log.warning("worth seeing %s", KEY)

    err = capsys.readouterr().err
    assert "quiet detail" not in err
    assert "worth seeing [redacted]" in err


def test_calling_twice_does_not_duplicate_output(tmp_path: Path) -> None:
    before = list(logging.getLogger().handlers)

    setup_logging(tmp_path)
    setup_logging(tmp_path)
    log.info("only once")

    assert len(_our_handlers(before)) == 2
    assert (tmp_path / "cairn.log").read_text(encoding="utf-8").count("only once") == 1


def test_an_unwritable_log_folder_falls_back_to_stderr_with_one_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A folder "inside" a regular file can't be created, even by root.
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("", encoding="utf-8")
    before = list(logging.getLogger().handlers)

    setup_logging(blocker / "logs")
    log.warning("still heard")

    err = capsys.readouterr().err
    assert err.count("Can't write the log file") == 1
    assert "still heard" in err
    (handler,) = _our_handlers(before)
    assert isinstance(handler, logging.StreamHandler)
    assert not isinstance(handler, logging.FileHandler)
