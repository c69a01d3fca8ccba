"""A conversation's instructions for Claude (its system prompt, DESIGN §2 and §3).

`SessionInstructions` shares its `SessionStore`'s connection, and so its thread.
The text lives in `session.system_prompt`, a column since the first schema: it is
exported and imported with the conversation, and never summarized.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from app.store.errors import SessionNotFoundError
from app.store.transactions import write_transaction


class SessionInstructions:
    """Sets a conversation's instructions, for one thread.

    Attributes:
        database: the file behind the connection, named in error messages.
    """

    def __init__(self, connection: sqlite3.Connection, *, database: Path | None) -> None:
        """Use `connection`, owned (and closed) by the `SessionStore` that made this."""
        self._connection = connection
        self.database = database

    def set(self, session_id: str, text: str) -> None:
        """Make `text` the conversation's instructions ("" for none); bumps its version.

        Raises:
            SessionNotFoundError: there is no such conversation (it was deleted).
            StorageError: the disk refused the write.
        """
        action = "save the conversation's instructions"
        with write_transaction(self._connection, action, self.database) as cursor:
            cursor.execute(
                "UPDATE session SET system_prompt = ?, version = version + 1 WHERE id = ?",
                (text, session_id),
            )
            if cursor.rowcount == 0:
                raise SessionNotFoundError(session_id)
