"""Writing a file so that a crash leaves the old one or the new one, never half of either.

One way for every file Cairn writes whole (settings, caches, attachments, the
database's check record, exports): a temporary file in the same folder, written,
flushed and fsynced, renamed over the target (`platform.replace_file`: `os.replace`,
retried a moment while another Windows program holds the target), then the folder
fsynced so the new name itself survives a power cut (on POSIX a rename lives in the
folder, and is only durable once the folder is; app.core.platform).
"""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, TextIO

from app.core.platform import fsync_folder, replace_file


@contextlib.contextmanager
def atomic_file(path: Path, *, durable: bool = True) -> Iterator[BinaryIO]:
    """A file written beside `path` that takes its place once the block ends well.

    `durable=False` skips the syncs (of the file, and of the folder after the rename):
    for a file whose loss or damage after a power cut costs nothing but a redo, read
    back with a fallback (the token calibration, rewritten after every reply).

    An error inside the block, or in writing, leaves `path` as it was and no temporary
    file behind, and goes on up. The folder must exist. A failure to sync the folder
    after the rename is not raised: the new file is complete and in place, only its
    name's durability was at stake.
    """
    descriptor, temporary = tempfile.mkstemp(
        prefix=f".{path.name}.", suffix=".tmp", dir=path.parent
    )
    try:
        with os.fdopen(descriptor, "wb") as handle:
            yield handle
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        replace_file(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    if durable:
        with contextlib.suppress(OSError):
            fsync_folder(path.parent)


@contextlib.contextmanager
def atomic_text_file(path: Path) -> Iterator[TextIO]:
    """`atomic_file` as UTF-8 text with "\\n" line ends on every platform."""
    with atomic_file(path) as raw:
        stream = io.TextIOWrapper(raw, encoding="utf-8", newline="\n")
        try:
            yield stream
            stream.flush()
        finally:
            stream.detach()  # the binary file is atomic_file's to sync and close


def atomic_write(path: Path, data: bytes | str, *, durable: bool = True) -> None:
    """Write `data` (text as UTF-8) to `path` atomically, making its folder if needed
    (`durable`: see `atomic_file`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_file(path, durable=durable) as handle:
        handle.write(data.encode("utf-8") if isinstance(data, str) else data)
