"""Where Cairn keeps its files (DESIGN §9).

`CAIRN_HOME` overrides all three folders, so tests and portable installs can
point Cairn at one directory.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from app import APP_NAME


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
        """Create the folders; raises OSError when the disk refuses."""
        for folder in (self.data_dir, self.config_dir, self.log_dir):
            folder.mkdir(parents=True, exist_ok=True)


def describe_folder_error(error: OSError) -> str:
    """Why Cairn's folders could not be made, in plain words, with what to do.

    The system's own wording ("Not a directory: /home/ann/cairn/data") names
    neither what the folder is for nor what to do about it.
    """
    place = error.filename if error.filename is not None else "its folder"
    if error.errno in (errno.ENOTDIR, errno.EEXIST):
        return (
            f"Cairn keeps your conversations and settings in folders, but where one "
            f"should be ({place}) there is a file. Move or rename that file, or point "
            "Cairn to another folder with the CAIRN_HOME setting, then start Cairn again."
        )
    if error.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return (
            f"Cairn keeps your conversations and settings in a folder at {place}, but it "
            "isn't allowed to create it there. Make sure you may write to that place, or "
            "point Cairn to another folder with the CAIRN_HOME setting."
        )
    if error.errno == errno.ENOSPC:
        return (
            f"Cairn can't make the folder for your conversations ({place}): the disk is "
            "full. Free some space, then start Cairn again."
        )
    return (
        f"Cairn can't make the folder for your conversations and settings ({place}): "
        f"{error.strerror or error}. Point Cairn to another folder with the CAIRN_HOME "
        "setting, then start Cairn again."
    )
