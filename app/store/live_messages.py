"""The live tail's messages, each turned into a `Message` once, each read again only
when it changed.

Every request sends the whole live tail, and a reply's worker reads it from the disk
each turn (its own connection, DESIGN §7). Making a `Message` of each row (pydantic
parses the enums, the date, the usage) costs most, and even reading every row's
columns to see which changed grows with the history. Between two turns a few rows
changed: the question, the reply's row, an edit.

The database says which (migration 16): every change to a live message, by whatever
wrote it (a trigger, not the store's methods), moves its conversation's `live_rev`
and stamps the row with it (`rev`); a live row leaving the tail (deleted, archived by
a summary) also stamps `live_cut`. So `LiveMessages` keeps, per conversation, the
tail as last read and the `live_rev` it was read at, and reads only the rows stamped
since — through an index of live rows by (conversation, rev): O(changed), not
O(tail). When a row left the tail, the tail's ids and stamps are read (two integers a
row, no `Message` made) and only the rows stamped since are read in full. A version of
an edited or regenerated message, whose "2 / 3" is counted from other rows, is read
again every time.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from app.core.models import Message

_LIVE = "WHERE session_id = ? AND summary_id IS NULL AND shelved_by IS NULL"


@dataclass(frozen=True)
class _Tail:
    """A live tail as last read."""

    rev: int  # the conversation's `live_rev` when it was read
    cut: int  # and its `live_cut`
    by_id: dict[int, Message]  # every message, in the order of `seq`
    # the ids of versions (their place counted from other rows), in any order
    versions: tuple[int, ...]


class LiveMessages:
    """The `Message`s of the live tails read lately, by database and conversation.

    Thread-safe: the chat and summary workers read on their own connections at once.
    It keeps the tails of the last `_KEPT_TAILS` conversations read (one tail each, as
    of its last read), so what it holds is bounded by a few live tails.
    """

    _KEPT_TAILS = 8

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # (database, session id) -> that tail as last read
        self._tails: dict[tuple[Path, str], _Tail] = {}

    def forget(self, database: Path) -> None:
        """Forget every tail read of `database` (its pages were replaced: a restore)."""
        file = database.resolve()
        with self._lock:
            for key in [key for key in self._tails if key[0].resolve() == file]:
                del self._tails[key]

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
        started = not connection.in_transaction
        if started:
            connection.execute("BEGIN")  # one snapshot for every query (WAL)
        try:
            tail = self._read(connection, session_id, before, read_rows)
        finally:
            if started:
                connection.execute("COMMIT")
        if tail is None:
            return []  # no such conversation (its counts row is made with it)
        with self._lock:
            self._tails.pop(key, None)
            self._tails[key] = tail
            while len(self._tails) > self._KEPT_TAILS:
                del self._tails[next(iter(self._tails))]
        return list(tail.by_id.values())

    def _read(
        self,
        connection: sqlite3.Connection,
        session_id: str,
        before: _Tail | None,
        read_rows: Callable[[sqlite3.Connection, Sequence[int]], Iterable[Message]],
    ) -> _Tail | None:
        stamp = connection.execute(
            "SELECT live_rev, live_cut FROM session_count WHERE session_id = ?", (session_id,)
        ).fetchone()
        if stamp is None:  # no such conversation (its counts come with it: migration 5)
            return None
        rev, cut = stamp
        if before is not None and (rev, cut) == (before.rev, before.cut) and not before.versions:
            return before  # nothing changed
        if before is None or cut != before.cut or rev < before.rev:
            # A row left the tail (or it was never read, or the file went back: a
            # restore): the tail's ids and stamps, and only the rows changed since read.
            rows = connection.execute(
                f"SELECT id, rev, version_of IS NOT NULL FROM message {_LIVE} ORDER BY seq",
                (session_id,),
            ).fetchall()
            known = before.by_id if before is not None and rev >= before.rev else {}
            since = before.rev if before is not None else 0
            wanted = [row[0] for row in rows if row[2] or row[1] > since or row[0] not in known]
            fresh = {message.id: message for message in read_rows(connection, wanted)}
            by_id: dict[int, Message] = {}
            for message_id, _rev, _version in rows:
                message = fresh.get(message_id) or known.get(message_id)
                if message is not None:
                    by_id[message_id] = message
            return _tail(rev, cut, by_id)
        # Only rows changed since (stamped after it), and the versions, read again.
        changed = connection.execute(
            "SELECT id, shelved_by IS NULL FROM message "
            "WHERE session_id = ? AND summary_id IS NULL AND rev > ?",
            (session_id, before.rev),
        ).fetchall()
        gone = {row[0] for row in changed if not row[1]}
        wanted_ids = {row[0] for row in changed if row[1]}.union(before.versions) - gone
        fresh_rows = sorted(read_rows(connection, sorted(wanted_ids)), key=_seq)
        by_id = dict(before.by_id)
        for message_id in gone:
            by_id.pop(message_id, None)
        # New rows come after the others, in the order of `seq`, almost always: then the
        # dict's order (a replaced row keeps its place) is the tail's without a sort.
        last = next(reversed(by_id.values())).seq if by_id else None
        in_order = True
        for message in fresh_rows:
            held = by_id.get(message.id)
            if held is None:
                in_order = in_order and (last is None or message.seq > last)
                last = message.seq if last is None else max(last, message.seq)
            elif held.seq != message.seq:
                in_order = False
            by_id[message.id] = message
        if not in_order:
            by_id = dict(sorted(by_id.items(), key=lambda item: item[1].seq))
        # The versions are among the rows read now (every version before is read again,
        # and a message kept is the object read then, no version): no walk of the tail.
        versions = tuple(m.id for m in fresh_rows if m.version_of is not None and m.id in by_id)
        return _Tail(rev, cut, by_id, versions)


def _tail(rev: int, cut: int, by_id: dict[int, Message]) -> _Tail:
    versions = tuple(m.id for m in by_id.values() if m.version_of is not None)
    return _Tail(rev, cut, by_id, versions)


def _seq(message: Message) -> int:
    return message.seq


# One for the process: every store of a database (one a thread) shares what was read.
LIVE_MESSAGES = LiveMessages()
