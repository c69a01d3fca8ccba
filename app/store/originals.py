"""Deleting archived originals: the one place Cairn deletes messages a summary covers
(DESIGN §2: an explicit act of the user, with a confirmation, recorded in `event`).

Two acts: the originals of one summary (the messages it covers, directly or down its
chain), or every archived message of a conversation (live ones stay). Each is one
transaction that deletes the rows and appends a `delete_originals` event whose detail
holds only the number of messages, never their text. The summaries stay as they were.

How the rest of Cairn knows, without a schema change: from those events.
`without_originals` names the condensed summaries whose originals were deleted — by an
event naming the summary or one it was folded into, or by a conversation-wide event
(no summary id) made after the summary — so `SummaryStore.check_coverage` does not call
them a gap; `deleted_on` gives the date the summary card shows; an undo of a summary
whose chain covers no message left is refused (`OriginalsDeletedError`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from app.core.errors import UserFacingError
from app.store.attachment_files import files_of, forget_files
from app.store.errors import SummaryNotFoundError
from app.store.owned import ConnectionStore
from app.store.sessions import _stamp
from app.store.transactions import translated_errors, write_transaction

# The summary and every summary folded into it, down the chain.
_CHAIN = (
    "WITH RECURSIVE chain (id) AS ("
    " SELECT ? UNION SELECT summary.id FROM summary JOIN chain"
    " ON summary.parent_id = chain.id) "
)


class OriginalsDeletedError(UserFacingError):
    """An undo of a summary whose original messages were deleted: nothing to put back."""

    title = "Nothing to put back"

    def __init__(self) -> None:
        super().__init__(
            "The original messages of this summary were deleted, so there is nothing to "
            "put back. The summary stays as it is."
        )


class OriginalsStore(ConnectionStore):
    """Counts and deletes archived originals, for one thread.

    Attributes:
        database: the file behind the connection, named in error messages.
    """

    def count_of_summary(self, summary_id: str) -> int:
        """How many original messages the summary still covers, down its chain."""
        with translated_errors("count the original messages", self.database):
            row = self._connection.execute(
                f"{_CHAIN}SELECT count(*) FROM message WHERE summary_id IN (SELECT id FROM chain)",
                (summary_id,),
            ).fetchone()
        return int(row[0])

    def count_archived(self, session_id: str) -> int:
        """How many archived (summarized) messages the conversation holds."""
        with translated_errors("count the original messages", self.database):
            row = self._connection.execute(
                "SELECT count(*) FROM message WHERE session_id = ? AND summary_id IS NOT NULL",
                (session_id,),
            ).fetchone()
        return int(row[0])

    def delete_of_summary(self, summary_id: str) -> int:
        """Delete the originals a summary covers (down its chain); returns how many.

        Raises `SummaryNotFoundError` for an unknown summary.
        """
        with write_transaction(
            self._connection, "delete the original messages", self.database
        ) as cursor:
            row = cursor.execute(
                "SELECT session_id FROM summary WHERE id = ?", (summary_id,)
            ).fetchone()
            if row is None:
                raise SummaryNotFoundError(summary_id)
            session_id = str(row[0])
            files = files_of(
                cursor,
                f"SELECT id FROM message WHERE summary_id IN ({_CHAIN}SELECT id FROM chain)",
                (summary_id,),
            )
            # The chain in a subquery: a DELETE that starts with WITH reports no rowcount.
            deleted = cursor.execute(
                f"DELETE FROM message WHERE summary_id IN ({_CHAIN}SELECT id FROM chain)",
                (summary_id,),
            ).rowcount
            self._record(cursor, session_id, summary_id, deleted)
        forget_files(self._connection, self.database, files)
        return deleted

    def delete_archived(self, session_id: str) -> int:
        """Delete every archived message of the conversation (live ones stay); how many."""
        with write_transaction(
            self._connection, "delete the original messages", self.database
        ) as cursor:
            files = files_of(
                cursor,
                "SELECT id FROM message WHERE session_id = ? AND summary_id IS NOT NULL",
                (session_id,),
            )
            deleted = cursor.execute(
                "DELETE FROM message WHERE session_id = ? AND summary_id IS NOT NULL",
                (session_id,),
            ).rowcount
            self._record(cursor, session_id, None, deleted)
        forget_files(self._connection, self.database, files)
        return deleted

    def deleted_on(self, summary_id: str) -> datetime | None:
        """When the originals of this summary were deleted, or None if they were not."""
        with translated_errors("load the original messages", self.database):
            row = self._connection.execute(
                "SELECT session_id, created_at FROM summary WHERE id = ?", (summary_id,)
            ).fetchone()
            if row is None:
                return None
            session_id, created_at = str(row[0]), str(row[1])
            # Down the chain (what it folded in) and up it (what folded it in).
            chain = {
                str(found[0])
                for found in self._connection.execute(
                    f"{_CHAIN}SELECT id FROM chain UNION SELECT id FROM ("
                    " WITH RECURSIVE up (id, parent) AS ("
                    "  SELECT id, parent_id FROM summary WHERE id = ?"
                    "  UNION SELECT summary.id, summary.parent_id FROM summary"
                    "  JOIN up ON summary.id = up.parent)"
                    " SELECT id FROM up)",
                    (summary_id, summary_id),
                )
            }
            events = _deletions(self._connection, session_id)
        moments = [
            stamp
            for named, stamp in events
            if (named is None and stamp >= created_at) or named in chain
        ]
        return datetime.fromisoformat(max(moments)) if moments else None

    def _record(
        self, cursor: sqlite3.Cursor, session_id: str, summary_id: str | None, deleted: int
    ) -> None:
        cursor.execute(
            "INSERT INTO event (session_id, kind, outcome, summary_id, reason, detail, "
            "created_at) VALUES (?, 'delete_originals', 'ok', ?, ?, ?, ?)",
            (
                session_id,
                summary_id,
                "summary" if summary_id is not None else "conversation",
                f"{deleted} messages",
                _stamp(self._clock().astimezone(UTC)),
            ),
        )


def without_originals(
    connection: sqlite3.Connection, session_id: str, summaries: Iterable[Any]
) -> set[str]:
    """The condensed summaries whose originals were deleted on purpose.

    `summaries` are rows starting (id, session_id, tier, parent_id, …) as
    `SummaryStore.check_coverage` reads them; `created_at` is read here.
    """
    events = _deletions(connection, session_id)
    if not events:
        return set()
    rows = {str(row[0]): row for row in summaries}
    created = dict(
        connection.execute("SELECT id, created_at FROM summary WHERE session_id = ?", (session_id,))
    )
    named = {summary_id for summary_id, _ in events if summary_id is not None}
    everything_before = max(
        (stamp for summary_id, stamp in events if summary_id is None), default=""
    )
    found: set[str] = set()
    for summary_id, row in rows.items():
        if row[1] != session_id or row[2] != "condensed":
            continue
        if str(created.get(summary_id, "~")) <= everything_before:
            found.add(summary_id)
            continue
        current: str | None = summary_id
        seen: set[str] = set()
        while current is not None and current not in seen:
            if current in named:
                found.add(summary_id)
                break
            seen.add(current)
            parent = rows.get(current)
            current = None if parent is None else parent[3]
    return found


def chain_has_originals(cursor: sqlite3.Cursor, summary_id: str) -> bool:
    """Whether any message is still covered by the summary or one folded into it."""
    row = cursor.execute(
        f"{_CHAIN}SELECT EXISTS (SELECT 1 FROM message WHERE summary_id IN (SELECT id FROM chain))",
        (summary_id,),
    ).fetchone()
    return bool(row[0])


def _deletions(connection: sqlite3.Connection, session_id: str) -> list[tuple[str | None, str]]:
    return [
        (None if row[0] is None else str(row[0]), str(row[1]))
        for row in connection.execute(
            "SELECT summary_id, created_at FROM event "
            "WHERE session_id = ? AND kind = 'delete_originals' AND outcome = 'ok'",
            (session_id,),
        )
    ]
