"""Turning sqlite3 failures into Cairn's errors, in plain words.

The environment's faults (disk full, read-only folder, a busy or damaged file)
become `StorageError`s the user can act on; misuse of the API (a closed
connection, a broken constraint) is our bug and becomes `BugError`.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from app.core.errors import (
    BugError,
    CairnError,
    InvalidInputError,
    StorageError,
    UserFacingError,
)

# Primary result codes (https://www.sqlite.org/rescode.html); extended codes
# carry the primary one in their low byte.
SQLITE_PERM = 3
SQLITE_BUSY = 5
SQLITE_LOCKED = 6
SQLITE_NOMEM = 7
SQLITE_READONLY = 8
SQLITE_IOERR = 10
SQLITE_CORRUPT = 11
SQLITE_FULL = 13
SQLITE_CANTOPEN = 14
SQLITE_AUTH = 23
SQLITE_NOTADB = 26

DAMAGE_CODES = frozenset({SQLITE_CORRUPT, SQLITE_NOTADB})


class RecordNotFoundError(BugError, LookupError):
    """A session or message id that is not (or no longer) in the database."""


class SessionNotFoundError(RecordNotFoundError):
    """No conversation with this id."""


class MessageNotFoundError(RecordNotFoundError):
    """No message with this id."""


class SummaryNotFoundError(RecordNotFoundError):
    """No summary with this id."""


class MessageArchivedError(UserFacingError, ValueError):
    """The message is inside a summary, so it cannot be pinned until the summary is undone."""

    title = "This message is in a summary"


class SummaryNotActiveError(UserFacingError, ValueError):
    """The summary was already undone, or merged into a newer one: it cannot be undone."""

    title = "This summary can't be undone"


def primary_code(error: sqlite3.Error) -> int | None:
    """The primary SQLite result code of `error`, when sqlite3 reported one."""
    code = getattr(error, "sqlite_errorcode", None)
    return code & 0xFF if isinstance(code, int) else None


def is_damage(error: sqlite3.Error) -> bool:
    """Whether `error` says the file is not a database or is corrupt."""
    return primary_code(error) in DAMAGE_CODES


def _detail(error: BaseException) -> str:
    name = getattr(error, "sqlite_errorname", None)
    return f"{type(error).__name__}: {error}" + (f" ({name})" if name else "")


def translate(error: Exception, *, action: str, database: Path | None) -> CairnError:
    """The Cairn error to raise for `error`, met while trying to `action`.

    `action` completes "Cairn couldn't …" ("save your message"); `database` is
    the file in use, so the words can name the folder the user should check.
    """
    if isinstance(error, UnicodeEncodeError):
        # Lone surrogates (half an emoji) cannot be stored as UTF-8.
        return InvalidInputError(
            "This text contains a damaged character (often half of an emoji that was "
            "cut when copying). Delete it and try again.",
            detail=_detail(error),
        )
    if not isinstance(error, sqlite3.Error) or isinstance(
        error,
        sqlite3.IntegrityError
        | sqlite3.ProgrammingError
        | sqlite3.InterfaceError
        | sqlite3.NotSupportedError,
    ):
        return BugError(f"Database misuse while trying to {action}: {_detail(error)}")

    detail = _detail(error)
    folder = str(database.parent) if database is not None else "Cairn's data folder"
    file = str(database) if database is not None else "Cairn's database"
    code = primary_code(error)
    if code == SQLITE_FULL:
        return StorageError(
            f"Cairn couldn't {action}: the disk is full. Free some space on the disk "
            f"that holds {folder}, then try again.",
            retryable=True,
            detail=detail,
        )
    if code in (SQLITE_READONLY, SQLITE_PERM, SQLITE_AUTH):
        return StorageError(
            f"Cairn couldn't {action}: it isn't allowed to write to its data folder "
            f"({folder}). Make sure the folder is not read-only and belongs to you, "
            "then start Cairn again.",
            detail=detail,
        )
    if code in (SQLITE_BUSY, SQLITE_LOCKED):
        return StorageError(
            f"Cairn couldn't {action}: its database is busy, perhaps because another "
            "program is using it. Try again in a moment.",
            retryable=True,
            detail=detail,
        )
    if code == SQLITE_CANTOPEN:
        return StorageError(
            f"Cairn couldn't {action}: it can't open its database file ({file}). "
            f"Check that the folder {folder} exists and that you may write to it.",
            detail=detail,
        )
    if code in DAMAGE_CODES:
        return StorageError(
            f"Cairn couldn't {action}: its database file ({file}) is damaged. Restart "
            "Cairn: it will set the damaged file aside and start a fresh one. "
            "Nothing will be deleted.",
            detail=detail,
        )
    if code == SQLITE_NOMEM:
        return StorageError(
            f"Cairn couldn't {action}: the computer ran out of memory. Close some "
            "programs, then try again.",
            retryable=True,
            detail=detail,
        )
    if code == SQLITE_IOERR:
        return StorageError(
            f"Cairn couldn't {action}: the disk reported an error while using {file}. "
            "Check that the disk is connected and working, then try again.",
            retryable=True,
            detail=detail,
        )
    return StorageError(
        f"Cairn couldn't {action} because its database reported a problem. Try again; "
        "if it keeps happening, restart Cairn.",
        retryable=True,
        detail=detail,
    )
