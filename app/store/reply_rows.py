"""How a reply's row ends when the API says more than "complete" (app.chat.stop_reasons).

`ReplyRows` shares its `SessionStore`'s connection, and so its thread. It returns the
ids of the rows it changed; the caller reads them back with `messages_by_id`.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from app.core.conversation import SENDABLE_STATUSES
from app.core.models import MessageStatus
from app.store.errors import MessageNotFoundError
from app.store.migrations import SQL_WHITESPACE
from app.store.transactions import write_transaction

_SENDABLE = ", ".join(f"'{status.value}'" for status in sorted(SENDABLE_STATUSES))


class ReplyRows:
    """Declined exchanges and empty failed replies, for one thread.

    Attributes:
        database: the file behind the connection, named in error messages.
    """

    def __init__(self, connection: sqlite3.Connection, *, database: Path | None) -> None:
        """Use `connection`, owned (and closed) by the `SessionStore` that made this."""
        self._connection = connection
        self.database = database

    def decline(self, reply_id: int) -> list[int]:
        """Mark a reply Claude declined, and the question it answered, as declined.

        The question is every message of the user's turn before the reply (after the
        last reply Claude sees), as `iter_turns` would have joined them: the refused
        turn must not be sent again, or Claude keeps declining
        (https://platform.claude.com/docs/en/test-and-evaluate/strengthen-guardrails/handle-streaming-refusals).
        Returns the ids of the rows changed, the reply's among them.
        """
        declined = MessageStatus.DECLINED.value
        with write_transaction(self._connection, "save the reply", self.database) as cursor:
            row = cursor.execute(
                "SELECT session_id, seq FROM message WHERE id = ?", (reply_id,)
            ).fetchone()
            if row is None:
                raise MessageNotFoundError(reply_id)
            session_id, seq = row
            changed = [
                message_id
                for (message_id,) in cursor.execute(
                    "SELECT id FROM message WHERE session_id = ?1 AND role = 'user' "
                    f"AND status IN ({_SENDABLE}) AND shelved_by IS NULL AND seq < ?2 "
                    "AND seq > coalesce((SELECT max(seq) FROM message WHERE session_id = ?1 "
                    "AND seq < ?2 AND shelved_by IS NULL "
                    f"AND role = 'assistant' AND status IN ({_SENDABLE}) "
                    f"AND trim(content, {SQL_WHITESPACE}) != ''), 0)",
                    (session_id, seq),
                ).fetchall()
            ]
            changed.append(reply_id)
            cursor.executemany(
                "UPDATE message SET status = ? WHERE id = ?",
                [(declined, message_id) for message_id in changed],
            )
            cursor.execute("UPDATE session SET version = version + 1 WHERE id = ?", (session_id,))
        return changed

    def discard_empty(self, reply_id: int) -> bool:
        """Delete a reply row that received nothing (still streaming, or failed); True
        when it went. A row with any text is kept: nothing the user saw is lost."""
        with write_transaction(self._connection, "save the reply", self.database) as cursor:
            cursor.execute(
                "UPDATE session SET version = version + 1 WHERE id = "
                "(SELECT session_id FROM message WHERE id = ?)",
                (reply_id,),
            )
            cursor.execute(
                "DELETE FROM message WHERE id = ? AND status IN ('streaming', 'error') "
                f"AND trim(content, {SQL_WHITESPACE}) = ''",
                (reply_id,),
            )
            return cursor.rowcount > 0
