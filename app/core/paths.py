"""Where Cairn keeps its files (DESIGN §9).

`CAIRN_HOME` overrides all three folders, so tests and portable installs can
point Cairn at one directory.
"""

from __future__ import annotations

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
