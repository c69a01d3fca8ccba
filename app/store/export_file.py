"""Where an export may be written, and writing it there without clobbering anything.

- An existing file is replaced only when asked (`replace`: `cairn export --force`, or
  the window's "Replace?"); without it the export is refused, the file untouched.
  The check and the write are one step: the finished file is linked in under its
  name, which fails if one appeared meanwhile.
- Only ordinary files are written: never a device (`/dev/full`), a folder, a pipe,
  or one of them behind a symbolic link. A link to an ordinary file is written
  through: the file it points to is the one replaced.
- The file is readable by its owner alone (0600), like everything Cairn keeps,
  unless the user picked a shared place: replacing a file keeps that file's
  permissions, and a folder shared with a group (its set-group-ID bit set) gets
  the group's read and write.
- Errors come in plain words, naming the file.
"""

from __future__ import annotations

import enum
import errno
import os
import stat
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO

from app.core.errors import UserFacingError
from app.core.platform import (
    fsync_folder,
    has_posix_permissions,
    replace_file,
    set_descriptor_mode,
)

PRIVATE = 0o600
GROUP_SHARED = 0o660


class ExportFormat(enum.StrEnum):
    JSON = "json"
    MARKDOWN = "markdown"


class ImportRefusedError(UserFacingError):
    """The file cannot be imported as it is; nothing was written."""

    title = "Couldn't import this file"


class AlreadyImportedError(ImportRefusedError):
    """A conversation of the file is already in Cairn (same id): import it as a copy instead.

    Attributes:
        titles: the titles of the conversations already there.
    """

    title = "Already in Cairn"

    def __init__(self, message: str, *, titles: Sequence[str]) -> None:
        super().__init__(message)
        self.titles = list(titles)
        # The file it came from, so the window can offer to import it as a copy.
        self.source: Path | None = None


class ExportError(UserFacingError):
    """The export file could not be written; nothing was changed."""

    title = "Couldn't export"


class ExportExistsError(ExportError):
    """The file is there already: replace it only when the user says so."""

    title = "The file already exists"


def export_target(destination: Path | str, *, replace: bool) -> Path:
    """The ordinary file an export to `destination` writes (a link's target), checked.

    Raises `ExportExistsError` when it exists and `replace` is False, `ExportError`
    for a name that is no file (empty, a folder, a device).
    """
    if str(destination).strip() == "" or Path(destination).name in ("", ".", ".."):
        raise ExportError("Choose a file name to export to.")
    path = Path(destination).expanduser()
    if path.is_symlink():
        path = path.resolve()
    try:
        info = path.stat()
    except FileNotFoundError:
        return path
    except OSError as error:
        raise write_error(path, error) from error
    if stat.S_ISDIR(info.st_mode):
        raise ExportError(
            f"{path} is a folder. Choose a file name (inside it, for example) to export to."
        )
    if not stat.S_ISREG(info.st_mode):
        raise ExportError(
            f"{path} is not an ordinary file (it is a device or another special file). "
            "Cairn writes exports only to ordinary files: choose another name."
        )
    if not replace:
        raise ExportExistsError(
            f"{path} already exists. Choose another name, or replace it (the window asks; "
            "on the command line, add --force)."
        )
    return path


@contextmanager
def atomic_export(target: Path, *, replace: bool) -> Iterator[IO[str]]:
    """A text file written beside `target` and put in its place only when complete."""
    existing = _mode_of(target)
    try:
        descriptor, temporary = tempfile.mkstemp(
            prefix=f".{target.name}.", suffix=".tmp", dir=target.parent
        )
    except OSError as error:
        raise write_error(target, error) from error
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8", newline="\n") as stream:
            yield stream
            stream.flush()
            _set_mode(stream.fileno(), existing, target.parent)
            os.fsync(stream.fileno())
        _put_in_place(temporary, target, replace=replace)
    except OSError as error:
        _remove(temporary)
        raise write_error(target, error) from error
    except BaseException:
        _remove(temporary)
        raise
    with suppress(OSError):  # the file is complete; only its durability is at stake
        fsync_folder(target.parent)


def write_error(target: Path, error: OSError) -> ExportError:
    if error.errno == errno.EEXIST:
        return ExportExistsError(
            f"{target} appeared while Cairn was writing the export; it was left as it is. "
            "Export again to replace it."
        )
    return ExportError(
        f"Cairn couldn't write {target}: {error.strerror or error}. Check that the folder "
        "exists, that you may write to it and that the disk has room, then try again.",
        detail=repr(error),
    )


def _put_in_place(temporary: str, target: Path, *, replace: bool) -> None:
    if replace:
        replace_file(temporary, target)
        return
    try:
        # A link fails if a file took the name since it was checked: nothing is clobbered.
        os.link(temporary, target)
    except OSError as error:
        if error.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
            raise
        if target.exists():  # a file system without links (FAT): check once more
            raise FileExistsError(errno.EEXIST, "exists", str(target)) from error
        replace_file(temporary, target)
        return
    _remove(temporary)  # the export is in place; a leftover name costs nothing


def _mode_of(target: Path) -> int | None:
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except OSError:
        return None


def _set_mode(descriptor: int, existing: int | None, folder: Path) -> None:
    """0600, a replaced file's own permissions, or a shared group folder's."""
    if not has_posix_permissions():
        return  # the folder's ACLs decide; a new file in the user's profile is private
    mode = PRIVATE
    if existing is not None:
        mode = existing
    else:
        with suppress(OSError):
            if folder.stat().st_mode & stat.S_ISGID:
                mode = GROUP_SHARED
    set_descriptor_mode(descriptor, mode)


def _remove(path: str) -> None:
    with suppress(OSError):
        os.unlink(path)
