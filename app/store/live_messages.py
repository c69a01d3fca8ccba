"""The live tail's messages, each turned into a `Message` once.

Every request sends the whole live tail, and a reply's worker reads it from the disk
each turn (its own connection, DESIGN §7). Reading the rows is cheap; making a
`Message` of each (pydantic parses the enums, the date, the usage) is most of the
cost, and it grows with the history. Between two turns almost every row is as it
was, so `LiveMessages` keeps the `Message`s it made, by database and id, beside
everything in their row but the text, and the text's checksum (`app.store.checksums`,
kept with every write of a text): a row read again with all of that unchanged is the
same message, and its `Message` (immutable) is handed back instead of made again.

What is not checked by value is never trusted: a row without a checksum, and a
version of an edited or regenerated message (whose "2 / 3" is counted from other rows),
are read in full every time.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from app.core.models import Message

# Everything about a message but its text and its version's place (counted from other
# rows): what tells whether a row is the one read before.
_SIGNATURE = (
    "id, session_id, seq, role, created_at, token_estimate, usage, model, status, pinned, "
    "version_of, damaged, thinking, thinking_seconds, refusal, checksum"
)
_ID, _VERSION_OF, _CHECKSUM = 0, 10, 15
_LIVE = "WHERE session_id = ? AND summary_id IS NULL AND shelved_by IS NULL"

Signature = tuple[Any, ...]


class LiveMessages:
    """The `Message`s of the live tails read lately, by database and conversation.

    Thread-safe: the chat and summary workers read on their own connections at once.
    It keeps the tails of the last `_KEPT_TAILS` conversations read (one tail each, as
    of its last read), so what it holds is bounded by a few live tails.
    """

    _KEPT_TAILS = 8

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # (database, session id) -> message id -> (its row's signature, the Message)
        self._tails: dict[tuple[Path, str], dict[int, tuple[Signature, Message]]] = {}

    def read(
        self,
        connection: sqlite3.Connection,
        database: Path,
        session_id: str,
        read_rows: Callable[[sqlite3.Connection, Sequence[int]], Iterable[Message]],
    ) -> list[Message]:
        """The live tail of `session_id`, oldest first; `read_rows(connection, ids)` makes
        the `Message`s of the rows not known (the store's own reading)."""
        key = (database, session_id)
        with self._lock:
            known = self._tails.get(key, {})
        started = not connection.in_transaction
        if started:
            connection.execute("BEGIN")  # one snapshot for both queries (WAL)
        try:
            rows = connection.execute(
                f"SELECT {_SIGNATURE} FROM message {_LIVE} ORDER BY seq", (session_id,)
            ).fetchall()
            wanted = [row[_ID] for row in rows if _known(known, row) is None]
            fresh = {message.id: message for message in read_rows(connection, wanted)}
        finally:
            if started:
                connection.execute("COMMIT")
        tail: dict[int, tuple[Signature, Message]] = {}
        messages: list[Message] = []
        for row in rows:
            message = _known(known, row) or fresh.get(row[_ID])
            if message is None:
                continue  # not there any more (it cannot be, in one snapshot)
            messages.append(message)
            if row[_CHECKSUM] is not None and row[_VERSION_OF] is None:
                tail[row[_ID]] = (tuple(row), message)
        with self._lock:
            self._tails.pop(key, None)
            self._tails[key] = tail
            while len(self._tails) > self._KEPT_TAILS:
                del self._tails[next(iter(self._tails))]
        return messages


def _known(known: dict[int, tuple[Signature, Message]], row: Sequence[Any]) -> Message | None:
    entry = known.get(row[_ID])
    if entry is None or entry[0] != tuple(row):
        return None
    return entry[1]
