"""What the summary trigger measures, kept with the conversation (DESIGN §3, §4).

`LiveTailStore` owns the figures the trigger and the gauge read: the live tail
in compact form (no text), each message's token estimate (counted once, when
its final text is stored, or back-filled later), and the trigger's own memory.
It shares its `SessionStore`'s connection, and so its thread.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from app.core.conversation import SENDABLE_STATUSES
from app.core.live_tail import LiveTail
from app.store.errors import SessionNotFoundError
from app.store.migrations import SQL_WHITESPACE
from app.store.transactions import translated_errors, write_transaction

TokenCounterFunction = Callable[[str], int]

# The statuses Claude sees (`SENDABLE_STATUSES`), as an SQL list.
_SENDABLE = ", ".join(f"'{status.value}'" for status in sorted(SENDABLE_STATUSES))


class LiveTailStore:
    """Reads and writes the live tail's figures and the trigger's state, for one thread.

    Attributes:
        database: the file behind the connection, named in error messages.
    """

    def __init__(
        self,
        connection: sqlite3.Connection,
        *,
        database: Path | None,
        token_counter: TokenCounterFunction,
    ) -> None:
        """Use `connection`, owned (and closed) by the `SessionStore` that made this."""
        self._connection = connection
        self._token_counter = token_counter
        self.database = database

    def estimate(self, content: str) -> int:
        """The stored token estimate of a message's text: 0 when blank (never sent)."""
        return self._token_counter(content) if content.strip() else 0

    def live_tail(self, session_id: str) -> LiveTail:
        """The live tail in compact form (no text), oldest first.

        Reads no message's text: a blank message counts 0 tokens (it is never sent),
        so a stored estimate says whether Claude would see it. Only a row without an
        estimate yet (streaming, or not back-filled) is looked into, and estimated
        from its length; blank means what `str.strip()` strips, as in `iter_turns`.
        """
        with self._read("load the conversation"):
            cursor = self._connection.execute(
                "SELECT id, seq, role = 'user', "
                "coalesce(token_estimate, (length(content) + 3) / 4), "
                f"status IN ({_SENDABLE}) AND CASE WHEN token_estimate IS NULL "
                f"THEN trim(content, {SQL_WHITESPACE}) != '' ELSE token_estimate > 0 END, "
                # The local calendar day (`app.core.conversation.local_day`), as an ordinal.
                "pinned, CAST(julianday(created_at, 'localtime') - 1721424.5 AS INTEGER) "
                "FROM message WHERE session_id = ? AND summary_id IS NULL AND shelved_by IS NULL "
                "ORDER BY seq",
                (session_id,),
            )
            return LiveTail.from_rows(cursor)

    def trigger_state(self, session_id: str) -> dict[str, Any] | None:
        """What `set_trigger_state` kept for the conversation; None when nothing was
        kept, or what was kept cannot be read (the trigger then starts afresh)."""
        with self._read("load the conversation"):
            row = self._connection.execute(
                "SELECT trigger_state FROM session WHERE id = ?", (session_id,)
            ).fetchone()
        if row is None or row[0] is None:
            return None
        try:
            state = json.loads(row[0])
        except ValueError:
            return None
        return state if isinstance(state, dict) else None

    def set_trigger_state(self, session_id: str, state: Mapping[str, Any]) -> None:
        """Keep the summary trigger's memory with the conversation (JSON-ready values).

        Leaves `version` alone: no summary is planned against it.
        """
        with self._write("save the conversation's summary settings") as cursor:
            cursor.execute(
                "UPDATE session SET trigger_state = ? WHERE id = ?",
                (json.dumps(dict(state), sort_keys=True), session_id),
            )
            if cursor.rowcount == 0:
                raise SessionNotFoundError(session_id)

    def backfill_token_estimates(
        self, counter_fn: TokenCounterFunction | None = None, batch: int = 500
    ) -> int:
        """Count the messages stored without a token estimate; returns how many.

        For rows from before estimates were stored, and replies a crash cut off.
        Run it from a worker at start-up: each batch is counted outside any
        transaction, then written in one short one, so the GUI thread's writes
        wait at most one batch's UPDATEs. Replies still streaming are skipped.
        """
        if batch < 1:
            raise ValueError("batch must be at least 1")
        count = counter_fn if counter_fn is not None else self._token_counter
        filled, after_id = 0, 0
        while True:
            with self._read("count the tokens of older messages"):
                rows = self._connection.execute(
                    "SELECT id, content FROM message WHERE token_estimate IS NULL "
                    "AND status != 'streaming' AND id > ? ORDER BY id LIMIT ?",
                    (after_id, batch),
                ).fetchall()
            if not rows:
                return filled
            estimates = [
                (count(content) if content.strip() else 0, message_id)
                for message_id, content in rows
            ]
            with self._write("save the token counts of older messages") as cursor:
                # `token_estimate IS NULL` again: a reply finished meanwhile has its own.
                cursor.executemany(
                    "UPDATE message SET token_estimate = ? "
                    "WHERE id = ? AND token_estimate IS NULL AND status != 'streaming'",
                    estimates,
                )
                filled += cursor.rowcount
            after_id = rows[-1][0]

    def _write(self, action: str) -> AbstractContextManager[sqlite3.Cursor]:
        """One BEGIN IMMEDIATE … COMMIT (see `write_transaction`)."""
        return write_transaction(self._connection, action, self.database)

    def _read(self, action: str) -> AbstractContextManager[None]:
        return translated_errors(action, self.database)
