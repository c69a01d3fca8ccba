"""A small file of the app's beside the database, which it can always do without.

The token calibration and the model cache: each is read whole, written atomically
(app.core.files), and rebuilt when lost or damaged, so neither ever troubles the user.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import ClassVar, Self

from app.core.dates import utc_now
from app.core.paths import AppPaths


class DataFile:
    """One such file.

    Attributes:
        path: the file.
        FILE_NAME: its name in the data folder.
    """

    FILE_NAME: ClassVar[str]

    def __init__(self, path: Path, *, clock: Callable[[], datetime] = utc_now) -> None:
        self.path = path
        self._clock = clock

    @classmethod
    def in_data_dir(cls, paths: AppPaths) -> Self:
        """The app's own: FILE_NAME in the data folder."""
        return cls(paths.data_dir / cls.FILE_NAME)
