"""How a reply's row ends when the API says more than "complete" (app.chat.stop_reasons).

`ReplyRows` shares its `SessionStore`'s connection, and so its thread. It returns the
ids of the rows it changed; the caller reads them back with `messages_by_id`.
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

from app.core.conversation import SENDABLE_STATUSES
from app.core.models import MessageStatus
from app.store.errors import MessageNotFoundError
from app.store.migrations import SQL_WHITESPACE
from app.store.transactions import write_transaction

log = logging.getLogger(__name__)

_SENDABLE = ", ".join(f"'{status.value}'" for status in sorted(SENDABLE_STATUSES))


class ReplyRows:
    """Declined exchanges, empty failed replies and interrupted ones, for one thread.

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
        return self._set_question_status(
            reply_id,
            "save the reply",
            MessageStatus.DECLINED,
            of=f"status IN ({_SENDABLE})",
            # The last reply Claude sees: sendable, and with text.
            after=f"status IN ({_SENDABLE}) AND trim(content, {SQL_WHITESPACE}) != ''",
            reply_too=True,
        )

    def restore_declined(self, reply_id: int) -> list[int]:
        """The question of a declined reply goes back into what Claude sees, to be asked
        of another model ("retry on a fallback model":
        https://platform.claude.com/docs/build-with-claude/handling-stop-reasons): the
        user's declined messages just before the reply become complete again. Returns
        their ids; the reply itself stays declined (it is shelved as a version)."""
        return self._set_question_status(
            reply_id,
            "save the question",
            MessageStatus.COMPLETE,
            of=f"status = '{MessageStatus.DECLINED.value}'",
            after="1",  # any reply still in the conversation
            reply_too=False,
        )

    def _set_question_status(
        self,
        reply_id: int,
        doing: str,
        status: MessageStatus,
        *,
        of: str,
        after: str,
        reply_too: bool,
    ) -> list[int]:
        """Give `status` to the question of reply `reply_id`: the user's messages (those
        whose row matches the SQL `of`) between the reply and the last assistant row
        before it that matches the SQL `after`, shelved versions left out; to the reply as
        well when `reply_too`. One transaction; returns the ids of the rows changed."""
        with write_transaction(self._connection, doing, self.database) as cursor:
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
                    f"AND {of} AND shelved_by IS NULL AND seq < ?2 "
                    "AND seq > coalesce((SELECT max(seq) FROM message WHERE session_id = ?1 "
                    f"AND seq < ?2 AND shelved_by IS NULL AND role = 'assistant' AND {after}), 0)",
                    (session_id, seq),
                ).fetchall()
            ]
            if reply_too:
                changed.append(reply_id)
            cursor.executemany(
                "UPDATE message SET status = ? WHERE id = ?",
                [(status.value, message_id) for message_id in changed],
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

    def recover_interrupted(self) -> int:
        """Mark replies left 'streaming' (Cairn closed or crashed while one streamed, or
        before the disk took its end) as 'stopped', their text kept: Continue goes on
        from it. One that received nothing is removed, as a failed one is: its question
        offers Retry. Returns how many were stopped.

        Call once at startup, after the instance lock is held: another running
        Cairn's live reply would otherwise be cut off.
        """
        writing = write_transaction(self._connection, "recover interrupted replies", self.database)
        with writing as cursor:
            cursor.execute(
                "UPDATE session SET version = version + 1 WHERE id IN "
                "(SELECT session_id FROM message WHERE status = 'streaming')"
            )
            cursor.execute(
                "DELETE FROM message WHERE status = 'streaming' "
                f"AND trim(content, {SQL_WHITESPACE}) = ''"
            )
            removed = cursor.rowcount
            cursor.execute("UPDATE message SET status = 'stopped' WHERE status = 'streaming'")
            stopped = int(cursor.rowcount)
        if removed:
            log.info("Removed %d interrupted replies that had received nothing", removed)
        return stopped
