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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.core.conversation import common_prefix
from app.core.models import Message

# Everything about a message but its text and its version's place (counted from other
# rows): what tells whether a row is the one read before. Not its conversation: the
# query asks for one.
_SIGNATURE = (
    "id, seq, role, created_at, token_estimate, usage, model, status, pinned, "
    "version_of, damaged, thinking, thinking_seconds, refusal, checksum"
)
_ID, _VERSION_OF, _CHECKSUM = 0, 9, 14
_LIVE = "WHERE session_id = ? AND summary_id IS NULL AND shelved_by IS NULL"

Signature = tuple[Any, ...]


@dataclass(frozen=True)
class _Tail:
    """A live tail as last read: its rows' signatures and messages, in order, and the
    trusted ones by id."""

    rows: list[Signature]
    messages: list[Message]
    trusted: int  # how many of the first rows are trusted (checksum, no versions)
    by_id: dict[int, tuple[Signature, Message]]  # every trusted row


class LiveMessages:
    """The `Message`s of the live tails read lately, by database and conversation.

    Thread-safe: the chat and summary workers read on their own connections at once.
    It keeps the tails of the last `_KEPT_TAILS` conversations read (one tail each, as
    of its last read), so what it holds is bounded by a few live tails.

    Between two turns a tail is the one before with its newest rows changed and new
    ones after: the rows it starts with, the same signatures in the same order (one
    comparison of the two lists, in C), are the messages read then, without a look at
    each; only the rows after them are looked up one by one.
    """

    _KEPT_TAILS = 8

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # (database, session id) -> that tail as last read
        self._tails: dict[tuple[Path, str], _Tail] = {}

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
            before = self._tails.get(key)
        known = before.by_id if before is not None else {}
        started = not connection.in_transaction
        if started:
            connection.execute("BEGIN")  # one snapshot for both queries (WAL)
        try:
            rows: list[Signature] = connection.execute(
                f"SELECT {_SIGNATURE} FROM message {_LIVE} ORDER BY seq", (session_id,)
            ).fetchall()
            shared = 0 if before is None else min(before.trusted, common_prefix(before.rows, rows))
            wanted = [row[_ID] for row in rows[shared:] if _known(known, row) is None]
            fresh = {message.id: message for message in read_rows(connection, wanted)}
        finally:
            if started:
                connection.execute("COMMIT")
        messages = [] if before is None else before.messages[:shared]
        by_id = {} if before is None else dict(before.by_id)
        if before is not None:
            for row in before.rows[shared:]:
                by_id.pop(row[_ID], None)
        trusted, leading = shared, True  # the rows so far each trusted, one a message
        for row in rows[shared:]:
            message = _known(known, row) or fresh.get(row[_ID])
            if message is None:
                leading = False
                continue  # not there any more (it cannot be, in one snapshot)
            messages.append(message)
            if row[_CHECKSUM] is not None and row[_VERSION_OF] is None:
                by_id[row[_ID]] = (row, message)
                trusted += leading
            else:
                leading = False
        with self._lock:
            self._tails.pop(key, None)
            self._tails[key] = _Tail(rows, messages, trusted, by_id)
            while len(self._tails) > self._KEPT_TAILS:
                del self._tails[next(iter(self._tails))]
        return list(messages)


def _known(known: dict[int, tuple[Signature, Message]], row: Signature) -> Message | None:
    entry = known.get(row[_ID])
    if entry is None or entry[0] != row:
        return None
    return entry[1]
