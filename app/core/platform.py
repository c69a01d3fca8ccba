"""What differs between Windows, macOS and Linux, in one place.

# portability: platform branches live here (tests/unit/test_portability.py)

Everything else in app/ is written once for every system; the portability check
in the suite fails on a platform branch, a POSIX-only call or a POSIX path
outside the modules that carry the line above. Each function reads
`sys.platform` when called, so a test can play Windows or macOS on Linux.

Sources for the rules:
- Windows file names: https://learn.microsoft.com/en-us/windows/win32/fileio/naming-a-file
  ("Naming Conventions": reserved characters, reserved device names, no
  trailing space or period).
- `os.fsync` is `_commit` on Windows, which needs a descriptor open for writing:
  https://learn.microsoft.com/en-us/cpp/c-runtime-library/reference/commit
- SQLite `file:` URIs: https://www.sqlite.org/uri.html (the authority must be
  empty or "localhost"); https://www.sqlite.org/pragma.html#pragma_fullfsync.
"""

from __future__ import annotations

import io
import os
import re
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path, PurePath, PureWindowsPath
from typing import TextIO


def is_windows() -> bool:
    return sys.platform == "win32"


def is_macos() -> bool:
    return sys.platform == "darwin"


# --- durable writes ----------------------------------------------------------------


def fsync_folder(folder: Path) -> None:
    """Make the new names in `folder` durable (POSIX; Windows has no folder to sync).

    The one fsync of a read-only descriptor allowed: POSIX opens a folder only
    for reading, and Windows, which refuses that, is left out.
    """
    if is_windows():
        return
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


# --- who may read Cairn's files ------------------------------------------------------


def has_posix_permissions() -> bool:
    """Whether files carry POSIX permission bits Cairn should tighten (0700/0600).

    On Windows the data sits in the user's own profile, whose ACLs already keep other
    accounts out; `chmod` there only toggles read-only, so nothing is changed.
    """
    return not is_windows()


def set_descriptor_mode(descriptor: int, mode: int) -> None:
    """`fchmod` an open file on POSIX; nothing on Windows (see `has_posix_permissions`)."""
    if has_posix_permissions():
        os.fchmod(descriptor, mode)


def sqlite_durability_pragmas() -> tuple[str, ...]:
    """Pragmas that make `synchronous = FULL` reach the disk itself on this system.

    macOS's fsync() leaves the data in the drive's own cache; SQLite asks for
    F_FULLFSYNC instead only with `fullfsync` on (which also covers checkpoints).
    """
    return ("PRAGMA fullfsync = ON",) if is_macos() else ()


# Windows errors for a file another program holds open (antivirus, OneDrive,
# the search indexer): ERROR_ACCESS_DENIED, ERROR_SHARING_VIOLATION,
# ERROR_LOCK_VIOLATION. They pass within moments.
_HELD_BY_ANOTHER_PROGRAM = frozenset({5, 32, 33})
# About a second in all, then the error is the caller's to explain.
REPLACE_RETRY_DELAYS = (0.01, 0.02, 0.05, 0.1, 0.15, 0.25, 0.4)


def replace_file(
    source: str | os.PathLike[str],
    target: str | os.PathLike[str],
    *,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """`os.replace`, retried briefly on Windows while another program holds a file."""
    for delay in (*REPLACE_RETRY_DELAYS, None):
        try:
            os.replace(source, target)
            return
        except PermissionError as error:
            held = getattr(error, "winerror", None) in _HELD_BY_ANOTHER_PROGRAM
            if delay is None or not (is_windows() and held):
                raise
        sleep(delay)


# --- names and addresses ---------------------------------------------------------------


def sqlite_uri(path: PurePath, mode: str) -> str:
    """A `file:` URI SQLite opens for the absolute `path`, with `?mode=`.

    `Path.as_uri()` puts a network share's server in the URI's authority
    (file://server/share/…), which SQLite refuses ("invalid uri authority"):
    a share keeps an empty authority and its two slashes in the path instead
    (file:////server/share/…), and a drive path reads file:///C:/….
    Percent-encoding keeps '?', '#' and '%' in a name from cutting the path.
    """
    if not isinstance(path, PureWindowsPath):
        return f"{path.as_uri()}?mode={mode}"
    text = str(path)
    if text.startswith("\\\\?\\UNC\\"):  # \\?\UNC\server\share: the long form of a share
        text = "\\\\" + text[len("\\\\?\\UNC\\") :]
    elif text.startswith("\\\\?\\"):  # \\?\C:\…: the long form of a drive path
        text = text[len("\\\\?\\") :]
    slashed = text.replace("\\", "/")
    location = "//" + slashed if slashed.startswith("//") else "///" + slashed
    encoded = "".join(chr(b) if b in _URI_PLAIN else f"%{b:02X}" for b in location.encode())
    return f"file:{encoded}?mode={mode}"


# RFC 3986's unreserved characters, and the separators a path keeps as they are.
_URI_PLAIN = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/:")


_RESERVED_CHARACTERS = re.compile(r'[<>:"/\\|?*\x00-\x1f]+')
_DEVICE_NAMES = frozenset(
    {"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"}
    | {f"{port}{number}" for port in ("COM", "LPT") for number in "0123456789¹²³"}
)
FILE_NAME_LIMIT = 80


def portable_file_name(text: str, *, fallback: str = "Conversation") -> str:
    """A file name (no extension) from `text` that Windows, macOS and Linux all accept.

    Drops what Windows reserves (<>:"/\\|?* and control characters), trailing
    dots and spaces, and sets device names (CON, COM1, NUL.txt…) apart by a
    word, whatever the system: an export is often copied to a Windows computer.
    """
    cleaned = " ".join(_RESERVED_CHARACTERS.sub(" ", text).split())
    cleaned = cleaned[:FILE_NAME_LIMIT].rstrip(" .").lstrip(" ")
    if not cleaned:
        return fallback
    # "NUL.txt" and "nul .tar.gz" are the device too: the part before the first dot counts.
    first, dot, rest = cleaned.partition(".")
    if first.rstrip(" ").upper() in _DEVICE_NAMES:
        return f"{first.rstrip(' ')} {fallback.lower()}{dot}{rest}"
    return cleaned


# --- the console -------------------------------------------------------------------


def utf8_stream(stream: TextIO) -> TextIO:
    """`stream` (stdout, stderr) set to write UTF-8, whatever the console's encoding.

    On Windows, Python 3.11 writes a redirected stdout (`cairn search … > out.txt`)
    in the ANSI code page (cp1252…), which cannot encode most of the world's text.
    """
    if isinstance(stream, io.TextIOWrapper) and stream.encoding.lower().replace("-", "") != "utf8":
        stream.reconfigure(encoding="utf-8", errors="replace")
    return stream


def niceness(pid: int = 0) -> int | None:
    """A process's niceness (this one: pid 0); None where the system has none (Windows)."""
    if not hasattr(os, "getpriority"):
        return None
    return os.getpriority(os.PRIO_PROCESS, pid)


def raise_niceness(pid: int, target: int) -> None:
    """Give a process (this one: pid 0) the niceness `target` if it has less (never raise
    its priority); nothing where the system has none.

    Raises:
        OSError: the process is gone, or the system refuses.
    """
    if hasattr(os, "getpriority") and os.getpriority(os.PRIO_PROCESS, pid) < target:
        os.setpriority(os.PRIO_PROCESS, pid, target)


def nicer_thread(by: int) -> None:
    """Make the calling thread `by` nicer than the process's main thread (at most 19):
    on Linux, where niceness is per thread (and, under autogroups or cgroups, counts
    only against the app's own threads); nothing elsewhere.

    Raises:
        OSError: the system refuses (a sandbox).
    """
    if not sys.platform.startswith("linux"):
        return
    target = min(19, os.getpriority(os.PRIO_PROCESS, os.getpid()) + by)
    os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), target)
