"""Private by default (issue 21 item 8): Cairn's folders are readable by the user alone
(0700) and its files too (0600), those it makes and those it finds; said once in the log."""

from __future__ import annotations

import logging
import stat
import sys
from datetime import date
from pathlib import Path

import pytest

from app.core.models import Role
from app.core.paths import AppPaths
from app.store import SessionStore, open_database
from app.store.attachments import AttachmentFiles
from app.store.backup import take_daily_backup
from app.store.database import mark_clean_shutdown

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def open_to_others(paths: AppPaths) -> list[str]:
    found = []
    for top in (paths.data_dir, paths.config_dir, paths.log_dir):
        for path in [top, *top.rglob("*")]:
            if not path.is_symlink() and mode(path) & 0o077:
                found.append(f"{path} {oct(mode(path))}")
    return found


def use_cairn(paths: AppPaths) -> None:
    paths.ensure()
    paths.make_private()
    opened = open_database(paths.database)
    store = SessionStore(opened.connection, database=opened.path)
    session = store.create_session("Private", "claude-sonnet-4-6")
    store.append_message(session.id, Role.USER, "My account number is 12-3456.")
    AttachmentFiles(paths.database).put(b"a scanned letter")
    take_daily_backup(paths.database, today=date(2026, 3, 1))
    store.close()
    mark_clean_shutdown(paths.database)


def test_what_cairn_makes_is_readable_by_the_user_alone(tmp_path: Path) -> None:
    paths = AppPaths.from_environment()
    use_cairn(paths)
    assert open_to_others(paths) == []
    assert mode(paths.data_dir) == 0o700 and mode(paths.database) == 0o600


def test_what_cairn_finds_open_is_tightened_once_and_said(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    paths = AppPaths.from_environment()
    use_cairn(paths)
    for path in [paths.data_dir, *paths.data_dir.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    caplog.set_level(logging.INFO)

    folders, files = paths.make_private()

    assert folders >= 3 and files >= 3  # data, backups, attachments; db, backup, file
    assert open_to_others(paths) == []
    said = [r for r in caplog.records if "Made Cairn's folders private" in r.getMessage()]
    assert len(said) == 1
    assert paths.make_private() == (0, 0), "said once: nothing left to tighten"
