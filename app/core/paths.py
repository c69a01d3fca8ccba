"""Where Cairn keeps its files (DESIGN §9).

`CAIRN_HOME` overrides all three folders, so tests and portable installs can
point Cairn at one directory.
"""

from __future__ import annotations

import errno
import logging
import os
import stat
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from app import APP_NAME
from app.core.platform import has_posix_permissions

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class AppPaths:
    data_dir: Path
    config_dir: Path
    log_dir: Path

    @property
    def database(self) -> Path:
        return self.data_dir / "cairn.db"

    @property
    def settings_file(self) -> Path:
        return self.config_dir / "settings.json"

    @property
    def log_file(self) -> Path:
        return self.log_dir / "cairn.log"

    @classmethod
    def from_environment(cls) -> AppPaths:
        home = os.environ.get("CAIRN_HOME")
        if home:
            root = Path(home).expanduser()
            return cls(root / "data", root / "config", root / "logs")
        return cls(
            Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)),
            Path(platformdirs.user_config_dir(APP_NAME, appauthor=False)),
            Path(platformdirs.user_log_dir(APP_NAME, appauthor=False)),
        )

    def ensure(self) -> None:
        """Create the folders, readable by the user alone; raises OSError when the disk
        refuses."""
        for folder in (self.data_dir, self.config_dir, self.log_dir):
            folder.mkdir(parents=True, exist_ok=True, mode=PRIVATE_FOLDER)

    def make_private(self) -> tuple[int, int]:
        """Make Cairn's folders and what they hold readable by the user alone (folders
        0700, files 0600), on POSIX systems; returns how many folders and files were
        open to others, and says so once in the log.

        A folder already 0700 is left unwalked: no other account can reach inside it,
        so this costs one `stat` per folder at each start once done. On Windows the
        folders sit in the user's own profile, whose permissions already keep other
        accounts out; nothing is changed there.
        """
        if not has_posix_permissions():
            return 0, 0
        folders = files = 0
        for top in dict.fromkeys((self.data_dir, self.config_dir, self.log_dir)):
            try:
                if stat.S_IMODE(top.stat().st_mode) & 0o077 == 0:
                    continue
            except OSError:
                continue
            for place, _subfolders, names in os.walk(top):
                folders += _tighten(Path(place), PRIVATE_FOLDER)
                for name in names:
                    files += _tighten(Path(place) / name, PRIVATE_FILE)
        if folders or files:
            log.info(
                "Made Cairn's folders private (readable by you alone): %d folders and %d "
                "files could be read by other accounts on this computer.",
                folders,
                files,
            )
        return folders, files


PRIVATE_FOLDER = 0o700
PRIVATE_FILE = 0o600


def _tighten(path: Path, mode: int) -> int:
    """Set `mode` on `path` (never through a link) when it is open to others; 1 if so."""
    try:
        info = path.lstat()
        if stat.S_ISLNK(info.st_mode) or stat.S_IMODE(info.st_mode) & 0o077 == 0:
            return 0
        path.chmod(mode)
    except OSError as error:
        log.warning("Cannot make %s private: %r", path, error)
        return 0
    return 1


FOLDER_ERROR_TITLE = "Cairn can't create its folder"

# The way to use another folder: the data folder is not a setting (Settings →
# Advanced only shows it), so the environment variable is the one way.
_ANOTHER_FOLDER = "Or make Cairn use another folder: set the CAIRN_HOME environment variable to it."


def describe_folder_error(error: OSError) -> str:
    """Why a folder of Cairn's could not be made, in plain words: what the folder is
    for, where it should be, why it can't be made, and what to do.

    The system's own wording ("Not a directory: /home/ann/cairn/data") names
    neither what the folder is for nor what to do about it.
    """
    place = str(error.filename) if error.filename is not None else "its usual place"
    lead = f"Cairn can't create the folder where it keeps your conversations ({place})"
    if error.errno in (errno.ENOTDIR, errno.EEXIST):
        in_the_way = _file_in_the_way(place) if error.filename is not None else None
        where = f" ({in_the_way})" if in_the_way and in_the_way != place else ""
        return (
            f"{lead}: there is a file where the folder should be{where}. Move or rename "
            f"that file, then start Cairn again. {_ANOTHER_FOLDER}"
        )
    if error.errno == errno.EROFS:
        return f"{lead}: that disk is read-only. {_ANOTHER_FOLDER}"
    if error.errno in (errno.EACCES, errno.EPERM):
        return (
            f"{lead}: you aren't allowed to create folders there. Fix the permissions of "
            f"that place, then start Cairn again. {_ANOTHER_FOLDER}"
        )
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        return f"{lead}: the disk is full. Free some space, then start Cairn again."
    reason = (error.strerror or str(error)).rstrip(".")
    return f"{lead}: the system said “{reason}”. {_ANOTHER_FOLDER}"


def _file_in_the_way(place: str) -> str | None:
    """The nearest file on the way to `place` (a folder must be where it is), if any."""
    for candidate in (Path(place), *Path(place).parents):
        if candidate.exists():
            return str(candidate) if not candidate.is_dir() else None
    return None
