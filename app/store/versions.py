"""Versions of a message: an edited question, a regenerated reply (DESIGN §8, issue 11).

Every version stays a row of its own, so the archive and search keep all of them.
The versions of a message share `version_of` (the first version's id). Only one
version is shown; the others, and the messages that followed each of them (its
branch), carry `shelved_by` = that version's id: out of the transcript and out of
what is sent to Claude, never deleted. Showing another version shelves the shown
branch under its head and takes the other one off the shelf.

Seq order stays the order of the shown path: a new version is appended after
everything, and its branch after it. A branch can move only while no summary
reaches it (a summary's range would otherwise hide or swallow shelved rows).
`VersionRows` shares its `SessionStore`'s connection, and so its thread.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from app.core.errors import InvalidInputError
from app.core.models import MessageStatus, Role
from app.store.checksums import text_checksum
from app.store.errors import MessageNotFoundError, SessionNotFoundError
from app.store.migrations import SQL_WHITESPACE
from app.store.transactions import write_transaction

SUMMARIZED_TITLE = "This message is in a summary"
SUMMARIZED_WORDS = (
    "Cairn summarized this part of the conversation, so its messages "
    "can't be edited or swapped for another version. Undo the summary first, then try again."
)


@dataclass(frozen=True)
class BranchChange:
    """What a version change did: the rows taken out of the shown path (oldest first)
    and the rows put into it (oldest first); the caller reads the latter back."""

    shelved: tuple[int, ...]
    shown: tuple[int, ...]


class VersionRows:
    """Makes and switches the versions of messages, for one thread.

    Attributes:
        database: the file behind the connection, named in error messages.
    """

    def __init__(
        self, connection: sqlite3.Connection, *, database: Path | None, stamp: Callable[[], str]
    ) -> None:
        """Use `connection`, owned (and closed) by the `SessionStore` that made this;
        `stamp` is the time now as stored."""
        self._connection = connection
        self.database = database
        self._stamp = stamp

    def regenerate(self, replaced_id: int, model: str) -> tuple[int, int]:
        """Shelve Claude's reply `replaced_id` and add an empty streaming row as its next
        version, in one transaction; returns the new row's id and seq."""
        with write_transaction(self._connection, "save the reply", self.database) as cursor:
            session_id, seq, _role, group = _shown_row(cursor, replaced_id)
            _check_free_of_summaries(cursor, session_id, seq)
            shelved = _shelve_from(cursor, session_id, seq, replaced_id)
            if shelved != [replaced_id]:
                raise InvalidInputError(
                    "Only Claude's latest reply can be written again.",
                    title="Can't regenerate this reply",
                )
            cursor.execute("UPDATE message SET version_of = ? WHERE id = ?", (group, replaced_id))
            return insert_message(
                cursor,
                session_id,
                Role.ASSISTANT,
                "",
                self._stamp(),
                status=MessageStatus.STREAMING,
                model=model,
                version_of=group,
            )

    def discard_regenerated(self, placeholder_id: int, replaced_id: int) -> bool:
        """The new version received nothing: delete its row and show the replaced reply
        again, in one transaction. True when it went; a row with text stays."""
        with write_transaction(self._connection, "save the reply", self.database) as cursor:
            cursor.execute(
                "DELETE FROM message WHERE id = ? AND status IN ('streaming', 'error') "
                f"AND trim(content, {SQL_WHITESPACE}) = ''",
                (placeholder_id,),
            )
            if cursor.rowcount == 0:
                return False
            cursor.execute(
                "UPDATE message SET shelved_by = NULL WHERE shelved_by = ?", (replaced_id,)
            )
            _ungroup_if_alone(cursor, replaced_id)
            _bump(cursor, replaced_id)
            return True

    def edit(self, message_id: int, content: str, token_estimate: int) -> BranchChange:
        """Shelve the question `message_id` and all that followed it, and add `content`
        as its next version at the end; the new row is the last of `shown`."""
        with write_transaction(self._connection, "save your message", self.database) as cursor:
            session_id, seq, role, group = _shown_row(cursor, message_id)
            if role != Role.USER.value:
                raise InvalidInputError(
                    "Only your own messages can be edited.", title="Can't edit this message"
                )
            _check_free_of_summaries(cursor, session_id, seq)
            shelved = _shelve_from(cursor, session_id, seq, message_id)
            cursor.execute("UPDATE message SET version_of = ? WHERE id = ?", (group, message_id))
            new_id, _seq = insert_message(
                cursor,
                session_id,
                Role.USER,
                content,
                self._stamp(),
                token_estimate=token_estimate,
                version_of=group,
            )
            return BranchChange(tuple(shelved), (new_id,))

    def show(self, message_id: int, number: int) -> BranchChange:
        """Show version `number` (from 1) of the message `message_id` is a version of,
        with the branch that followed it; the shown branch goes on the shelf."""
        with write_transaction(self._connection, "show that version", self.database) as cursor:
            row = cursor.execute(
                "SELECT session_id, version_of FROM message WHERE id = ?", (message_id,)
            ).fetchone()
            if row is None:
                raise MessageNotFoundError(message_id)
            session_id, group = row
            versions = cursor.execute(
                "SELECT id, seq, shelved_by FROM message WHERE version_of = ? ORDER BY seq",
                (group if group is not None else message_id,),
            ).fetchall()
            if not 1 <= number <= len(versions):
                raise MessageNotFoundError(message_id)
            shown = next((v for v in versions if v[2] is None), None)
            target_id = versions[number - 1][0]
            if shown is None or shown[0] == target_id:
                return BranchChange((), ())
            _check_free_of_summaries(cursor, session_id, min(v[1] for v in versions))
            shelved = _shelve_from(cursor, session_id, shown[1], shown[0])
            back = [
                message
                for (message,) in cursor.execute(
                    "SELECT id FROM message WHERE shelved_by = ? ORDER BY seq", (target_id,)
                ).fetchall()
            ]
            cursor.execute(
                "UPDATE message SET shelved_by = NULL WHERE shelved_by = ?", (target_id,)
            )
            _bump(cursor, message_id)
            return BranchChange(tuple(shelved), tuple(back))


def insert_message(
    cursor: sqlite3.Cursor,
    session_id: str,
    role: Role,
    content: str,
    stamp: str,
    *,
    status: MessageStatus = MessageStatus.COMPLETE,
    model: str | None = None,
    usage_json: str | None = None,
    token_estimate: int | None = None,
    version_of: int | None = None,
    quote_tokens: int | None = None,
) -> tuple[int, int]:
    """Add a row at the end of its conversation, inside the caller's write transaction:
    the next seq, the session's version and `updated_at` bumped. Returns (id, seq)."""
    cursor.execute(
        "UPDATE session SET last_seq = last_seq + 1, version = version + 1, "
        "updated_at = ? WHERE id = ?",
        (stamp, session_id),
    )
    if cursor.rowcount == 0:
        raise SessionNotFoundError(session_id)
    (seq,) = cursor.execute("SELECT last_seq FROM session WHERE id = ?", (session_id,)).fetchone()
    cursor.execute(
        "INSERT INTO message (session_id, seq, role, content, created_at, "
        "token_estimate, usage, model, status, version_of, checksum, quote_tokens) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            session_id,
            seq,
            Role(role).value,
            content,
            stamp,
            token_estimate,
            usage_json,
            model,
            MessageStatus(status).value,
            version_of,
            text_checksum(content),
            quote_tokens,
        ),
    )
    message_id = cursor.lastrowid
    assert message_id is not None  # an INSERT always sets it
    return message_id, int(seq)


def _shown_row(cursor: sqlite3.Cursor, message_id: int) -> tuple[str, int, str, int]:
    """The session, seq, role and version group of a shown message."""
    row = cursor.execute(
        "SELECT session_id, seq, role, coalesce(version_of, id), shelved_by FROM message "
        "WHERE id = ?",
        (message_id,),
    ).fetchone()
    if row is None:
        raise MessageNotFoundError(message_id)
    session_id, seq, role, group, shelved_by = row
    if shelved_by is not None:
        raise InvalidInputError(
            "That version is no longer the one shown. Nothing was changed.",
            title="Can't change this message",
        )
    return session_id, seq, role, group


def _check_free_of_summaries(cursor: sqlite3.Cursor, session_id: str, seq: int) -> None:
    """Refuse, in words, when a summary covers `seq` or anything after it."""
    row = cursor.execute(
        "SELECT 1 FROM summary WHERE session_id = ? AND state = 'active' AND last_seq >= ? LIMIT 1",
        (session_id, seq),
    ).fetchone()
    if row is not None:
        raise InvalidInputError(SUMMARIZED_WORDS, title=SUMMARIZED_TITLE)


def _shelve_from(cursor: sqlite3.Cursor, session_id: str, seq: int, head: int) -> list[int]:
    """Shelve the shown messages from `seq` on under `head`; their ids, oldest first."""
    shelved = [
        message_id
        for (message_id,) in cursor.execute(
            "SELECT id FROM message WHERE session_id = ? AND seq >= ? AND shelved_by IS NULL "
            "ORDER BY seq",
            (session_id, seq),
        ).fetchall()
    ]
    cursor.execute(
        "UPDATE message SET shelved_by = ? WHERE session_id = ? AND seq >= ? "
        "AND shelved_by IS NULL",
        (head, session_id, seq),
    )
    return shelved


def _ungroup_if_alone(cursor: sqlite3.Cursor, message_id: int) -> None:
    """A version left alone is a plain message again (no "‹ 1 / 1 ›")."""
    cursor.execute(
        "UPDATE message SET version_of = NULL WHERE id = ?1 AND "
        "(SELECT count(*) FROM message WHERE version_of = "
        "(SELECT version_of FROM message WHERE id = ?1)) = 1",
        (message_id,),
    )


def _bump(cursor: sqlite3.Cursor, message_id: int) -> None:
    cursor.execute(
        "UPDATE session SET version = version + 1 WHERE id = "
        "(SELECT session_id FROM message WHERE id = ?)",
        (message_id,),
    )
