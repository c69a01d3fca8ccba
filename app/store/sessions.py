"""Conversations and their messages, kept in SQLite (DESIGN §2).

A `SessionStore` wraps one connection and belongs to the thread that made it
(sqlite3's `check_same_thread` stays on): the GUI thread builds one on the
connection `open_database` returned, and each worker thread opens its own with
`SessionStore.open(path)`. Every write is a short transaction, committed and
durable (`synchronous=FULL`) when the method returns.

Each message's token estimate (raw cl100k tokens of its content, uncalibrated)
is counted once, when its final text is stored, so measuring the context never
re-tokenizes history (DESIGN §4). A reply still streaming has none yet; rows
without one are filled in by `backfill_token_estimates`. Those figures, the
compact live tail and the trigger's state belong to `LiveTailStore`, which
shares the connection.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Collection, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Self

from app.core.caching import CacheUse
from app.core.dates import Clock, utc_now
from app.core.live_tail import LiveTail, TailEntry
from app.core.models import Message, MessageStatus, Role, Session, Usage
from app.core.recall_quotes import whole_quote_tokens
from app.core.tokens import count_tokens
from app.store.attachment_files import files_of, forget_files
from app.store.batches import in_batches
from app.store.cache_use import read_cache_use
from app.store.checksums import text_checksum
from app.store.database import checkpoint, connect
from app.store.errors import (
    MessageArchivedError,
    MessageNotFoundError,
    SessionNotFoundError,
)
from app.store.instructions import SessionInstructions
from app.store.live_messages import LIVE_MESSAGES
from app.store.live_tail import LiveTailStore, TokenCounterFunction
from app.store.owned import ConnectionStore
from app.store.reply_rows import ReplyRows
from app.store.transactions import translated_errors, write_transaction
from app.store.versions import VersionRows, insert_message

if TYPE_CHECKING:
    from app.store.recall import RecallIndex

_SESSION_COLUMNS = "id, title, created_at, updated_at, model, system_prompt, version"
_MESSAGE_COLUMNS = (
    "id, session_id, seq, role, content, created_at, token_estimate, usage, model, status, "
    "summary_id, pinned, version_of, damaged, "
    # Which version it is, of how many (app.store.versions): counted for grouped rows only.
    "CASE WHEN version_of IS NULL THEN 1 ELSE (SELECT count(*) FROM message AS v "
    "WHERE v.version_of = message.version_of AND v.seq <= message.seq) END, "
    "CASE WHEN version_of IS NULL THEN 1 ELSE (SELECT count(*) FROM message AS v "
    "WHERE v.version_of = message.version_of) END, "
    "thinking, thinking_seconds, refusal"
)


class SessionStore(ConnectionStore):
    """Reads and writes conversations for one thread.

    `updated_at` moves when the conversation does (a message added or finished),
    so renaming keeps a conversation's place in the list; `version` moves on
    every write except the streamed-text saves of `update_message_content`.
    """

    def __init__(
        self,
        connection: sqlite3.Connection,
        *,
        database: Path | None = None,
        clock: Clock = utc_now,
        token_counter: TokenCounterFunction = count_tokens,
    ) -> None:
        """Take ownership of `connection` (autocommit, from `open_database`/`connect`).

        `token_counter` counts a message's text when the caller gives no estimate.
        """
        super().__init__(connection, database=database, clock=clock)
        # The live tail's figures and the trigger's state, on the same connection.
        self._tail = LiveTailStore(connection, database=database, token_counter=token_counter)
        # Declined exchanges and empty failed replies (app.chat.stop_reasons).
        self.replies = ReplyRows(connection, database=database)
        self.instructions = SessionInstructions(connection, database=database)  # system prompt
        # Edited questions and regenerated replies: their versions (app.store.versions).
        self.versions = VersionRows(
            connection, database=database, stamp=lambda: _stamp(self._now())
        )

    @classmethod
    def open(
        cls,
        path: Path | str,
        *,
        clock: Clock = utc_now,
        token_counter: TokenCounterFunction = count_tokens,
    ) -> Self:
        """A store on a new connection of its own, for the calling thread."""
        return cls(connect(path), database=Path(path), clock=clock, token_counter=token_counter)

    # --- sessions --------------------------------------------------------------

    def create_session(self, title: str, model: str, system_prompt: str = "") -> Session:
        """A new, empty conversation."""
        now = self._now()
        session_id = str(uuid.uuid4())
        with self._write("start a new conversation") as cursor:
            cursor.execute(
                "INSERT INTO session (id, title, created_at, updated_at, model, system_prompt) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (session_id, title, _stamp(now), _stamp(now), model, system_prompt),
            )
        return Session(
            id=session_id,
            title=title,
            created_at=now,
            updated_at=now,
            model=model,
            system_prompt=system_prompt,
            version=0,
        )

    def list_sessions(self) -> list[Session]:
        """Every conversation, the most recently active first."""
        with self._read("list your conversations"):
            rows = self._connection.execute(
                f"SELECT {_SESSION_COLUMNS} FROM session ORDER BY updated_at DESC, rowid DESC"
            ).fetchall()
        return [_session_from_row(row) for row in rows]

    def get_session(self, session_id: str) -> Session | None:
        """The conversation with this id, or None when there is none."""
        with self._read("open the conversation"):
            return self._session_or_none(session_id)

    def rename_session(self, session_id: str, title: str) -> Session:
        """Give the conversation a new title."""
        return self._set_session("title", title, session_id, "rename the conversation")

    def set_session_model(self, session_id: str, model: str) -> Session:
        """Choose the model that answers in this conversation from now on."""
        return self._set_session("model", model, session_id, "change the conversation's model")

    def _set_session(
        self, column: Literal["title", "model"], value: str, session_id: str, doing: str
    ) -> Session:
        with self._write(doing) as cursor:
            cursor.execute(
                f"UPDATE session SET {column} = ?, version = version + 1 WHERE id = ?",
                (value, session_id),
            )
            return self._updated_session(cursor, session_id)

    def delete_session(self, session_id: str) -> None:
        """Delete the conversation and, by ON DELETE CASCADE, its messages and summaries.

        The deletion is recorded in the audit trail (`event`), which outlives it; the
        attached files no other message uses go with it.
        """
        now = self._now()
        with self._write("delete the conversation") as cursor:
            (messages,) = cursor.execute(
                "SELECT count(*) FROM message WHERE session_id = ?", (session_id,)
            ).fetchone()
            files = files_of(cursor, "SELECT id FROM message WHERE session_id = ?", (session_id,))
            cursor.execute("DELETE FROM session WHERE id = ?", (session_id,))
            if cursor.rowcount == 0:
                raise SessionNotFoundError(session_id)
            cursor.execute(
                "INSERT INTO event (session_id, kind, outcome, reason, detail, created_at) "
                "VALUES (?, 'delete_originals', 'ok', 'conversation deleted', ?, ?)",
                (session_id, f"{messages} messages", _stamp(now)),
            )
        forget_files(self._connection, self.database, files)

    # --- messages --------------------------------------------------------------

    def append_message(
        self,
        session_id: str,
        role: Role,
        content: str,
        *,
        status: MessageStatus = MessageStatus.COMPLETE,
        model: str | None = None,
        usage: Usage | None = None,
        token_estimate: int | None = None,
    ) -> Message:
        """Add a message at the end of the conversation; committed when it returns.

        Takes the next seq and bumps the session's version and `updated_at` in
        the same transaction, under the write lock, so two threads never share
        a seq. Without a `token_estimate` the content is counted here, before
        the transaction (a reply still streaming gets its count when finished).
        """
        if token_estimate is None and status is not MessageStatus.STREAMING:
            token_estimate = self._tail.estimate(content)
        now = self._now()
        usage_json = usage.model_dump_json() if usage is not None else None
        with self._write("save your message") as cursor:
            message_id, seq = insert_message(
                cursor,
                session_id,
                role,
                content,
                _stamp(now),
                status=status,
                model=model,
                usage_json=usage_json,
                token_estimate=token_estimate,
                quote_tokens=whole_quote_tokens(content) if content else None,
            )
        return Message(
            id=message_id,
            session_id=session_id,
            seq=seq,
            role=role,
            content=content,
            created_at=now,
            token_estimate=token_estimate,
            usage=usage,
            model=model,
            status=status,
        )

    def append_question(
        self, session_id: str, text: str, *, token_estimate: int | None, model: str
    ) -> tuple[Message, Message]:
        """The user's question and the row its reply streams into (empty, streaming, for
        `model`), added at the end in one transaction: one durable commit where two
        would be, and both rows or neither (a question is never stored without the row
        its reply goes in, so a failure here hands the whole question back)."""
        if token_estimate is None:
            token_estimate = self._tail.estimate(text)
        quoted = whole_quote_tokens(text)  # ~10 µs for a question of a line or two
        now = self._now()
        stamp = _stamp(now)
        with self._write("save your message") as cursor:
            question_id, question_seq = insert_message(
                cursor,
                session_id,
                Role.USER,
                text,
                stamp,
                token_estimate=token_estimate,
                quote_tokens=quoted,
            )
            reply_id, reply_seq = insert_message(
                cursor,
                session_id,
                Role.ASSISTANT,
                "",
                stamp,
                status=MessageStatus.STREAMING,
                model=model,
            )
        question = Message(
            id=question_id,
            session_id=session_id,
            seq=question_seq,
            role=Role.USER,
            content=text,
            created_at=now,
            token_estimate=token_estimate,
        )
        reply = Message(
            id=reply_id,
            session_id=session_id,
            seq=reply_seq,
            role=Role.ASSISTANT,
            content="",
            created_at=now,
            model=model,
            status=MessageStatus.STREAMING,
        )
        return question, reply

    def update_message_content(self, message_id: int, content: str) -> None:
        """Save the text streamed so far; one small UPDATE, durable on return.

        Leaves the session's version alone: these saves come every second while
        a reply streams, and are not changes anyone needs to check against.
        The token estimate is cleared (the text is not final): `finish_message`
        counts it, or `backfill_token_estimates` after a crash.
        """
        with self._write("save the reply") as cursor:
            cursor.execute(
                "UPDATE message SET content = ?, checksum = ?, damaged = 0, "
                "token_estimate = NULL, quote_tokens = NULL WHERE id = ?",
                (content, text_checksum(content), message_id),
            )
            if cursor.rowcount == 0:
                raise MessageNotFoundError(message_id)

    def finish_message(
        self,
        message_id: int,
        content: str,
        status: MessageStatus,
        usage: Usage | None = None,
        model: str | None = None,
        *,
        token_estimate: int | None = None,
        thinking: str | None = None,
        thinking_seconds: float | None = None,
        refusal: str | None = None,
    ) -> Message:
        """Store a reply's final text and status; `usage`/`model` kept when None, and
        its thinking (what is shown, and for how long it thought) and a refusal's
        explanation kept when None.

        The final text's token estimate is counted here unless given.
        """
        if status is MessageStatus.STREAMING:
            raise ValueError("finish_message needs a final status, not 'streaming'")
        if token_estimate is None:
            token_estimate = self._tail.estimate(content)
        now = self._now()
        usage_json = usage.model_dump_json() if usage is not None else None
        with self._write("save the reply") as cursor:
            cursor.execute(
                "UPDATE message SET content = ?, checksum = ?, damaged = 0, status = ?, "
                "usage = coalesce(?, usage), model = coalesce(?, model), token_estimate = ?, "
                "quote_tokens = ?, thinking = coalesce(?, thinking), "
                "thinking_seconds = coalesce(?, thinking_seconds), "
                "refusal = coalesce(?, refusal) WHERE id = ?",
                (
                    content,
                    text_checksum(content),
                    MessageStatus(status).value,
                    usage_json,
                    model,
                    token_estimate,
                    whole_quote_tokens(content),
                    thinking,
                    thinking_seconds,
                    refusal,
                    message_id,
                ),
            )
            if cursor.rowcount == 0:
                raise MessageNotFoundError(message_id)
            cursor.execute(
                "UPDATE session SET version = version + 1, updated_at = ? "
                "WHERE id = (SELECT session_id FROM message WHERE id = ?)",
                (_stamp(now), message_id),
            )
            row = cursor.execute(
                f"SELECT {_MESSAGE_COLUMNS} FROM message WHERE id = ?", (message_id,)
            ).fetchone()
        checkpoint(self._connection)  # a finished reply: out of the log into the file
        return _message_from_row(row)

    def set_pinned(self, message_id: int, pinned: bool) -> Message:
        """Pin a message (never summarized, always in the live context) or unpin it.

        Bumps the session's version, so a summary planned before the change is
        checked against it. A message inside a summary cannot be pinned: undo
        the summary first (`MessageArchivedError`). Unpinning always works.
        """
        with self._write("pin the message") as cursor:
            row = cursor.execute(
                "SELECT session_id, summary_id FROM message WHERE id = ?", (message_id,)
            ).fetchone()
            if row is None:
                raise MessageNotFoundError(message_id)
            session_id, summary_id = row
            if pinned and summary_id is not None:
                raise MessageArchivedError(
                    "This message is part of a summary, so it can't be pinned. Undo the "
                    "summary first, then pin the message."
                )
            cursor.execute(
                "UPDATE message SET pinned = ? WHERE id = ?", (int(bool(pinned)), message_id)
            )
            cursor.execute("UPDATE session SET version = version + 1 WHERE id = ?", (session_id,))
            row = cursor.execute(
                f"SELECT {_MESSAGE_COLUMNS} FROM message WHERE id = ?", (message_id,)
            ).fetchone()
        return _message_from_row(row)

    def count_messages(self, session_id: str) -> int:
        """How many messages the conversation holds, archived ones included."""
        with self._read("count the messages"):
            (total,) = self._connection.execute(
                "SELECT count(*) FROM message WHERE session_id = ?", (session_id,)
            ).fetchone()
        return int(total)

    def messages(
        self, session_id: str, *, before_seq: int | None = None, limit: int | None = None
    ) -> list[Message]:
        """The newest `limit` messages older than `before_seq`, oldest first.

        Pages a long transcript backwards without loading all of it; both
        arguments None gives the whole conversation.
        """
        if limit is not None and limit < 0:
            raise ValueError("limit must be zero or more")
        # Walks the (session_id, seq) index backwards from before_seq.
        query = (
            f"SELECT {_MESSAGE_COLUMNS} FROM message "
            "WHERE session_id = ? AND seq < ? AND shelved_by IS NULL ORDER BY seq DESC LIMIT ?"
        )
        parameters = (
            session_id,
            before_seq if before_seq is not None else _NO_UPPER_SEQ,
            limit if limit is not None else -1,
        )
        with self._read("load the conversation"):
            rows = self._connection.execute(query, parameters).fetchall()
        rows.reverse()
        return [_message_from_row(row) for row in rows]

    def cache_use(self, session_id: str, after_seq: int = 0) -> tuple[CacheUse, int]:
        """What replies after `after_seq` read from the prompt cache; the last one's seq."""
        with self._read("load the conversation"):
            return read_cache_use(self._connection, session_id, after_seq)

    def live_messages(self, session_id: str) -> list[Message]:
        """The live tail: messages no summary covers (summary_id NULL), oldest first:
        what the next request sends. Read again, O(changed): the messages read before and
        unchanged since are the `Message`s made then, and only the rows changed since
        are read (`app.store.live_messages`, migration 16's stamps)."""
        with self._read("load the conversation"):
            if self.database is None:
                return read_live_messages(self._connection, session_id)
            return LIVE_MESSAGES.read(
                self._connection, self.database, session_id, read_messages_by_id
            )

    def recall_index(self) -> RecallIndex:
        """The archive of any conversation, searched on this store's connection (recall)."""
        from app.store.recall import RecallIndex  # here: it reads this module (a cycle)

        return RecallIndex(self._connection, database=self.database)

    def live_tail(self, session_id: str) -> LiveTail:
        """The live tail in compact form (no text), oldest first (see `LiveTailStore`)."""
        return self._tail.live_tail(session_id)

    def live_entries(self, session_id: str) -> list[TailEntry]:
        """The live tail's entries, oldest first (see `live_tail`)."""
        return self.live_tail(session_id).entries

    def messages_by_id(self, message_ids: Collection[int]) -> list[Message]:
        """The messages with these ids (any session), oldest first."""
        if not message_ids:
            return []
        with self._read("load the messages"):
            rows = self._connection.execute(
                f"SELECT {_MESSAGE_COLUMNS} FROM message "
                "WHERE id IN (SELECT value FROM json_each(?)) ORDER BY session_id, seq",
                (json.dumps(sorted(message_ids)),),
            ).fetchall()
        return [_message_from_row(row) for row in rows]

    def trigger_state(self, session_id: str) -> dict[str, Any] | None:
        """The summary trigger's memory of the conversation (see `LiveTailStore`)."""
        return self._tail.trigger_state(session_id)

    def set_trigger_state(self, session_id: str, state: Mapping[str, Any]) -> None:
        """Keep the summary trigger's memory with the conversation (see `LiveTailStore`)."""
        self._tail.set_trigger_state(session_id, state)

    def backfill_token_estimates(
        self, counter_fn: TokenCounterFunction | None = None, batch: int = 500
    ) -> int:
        """Count the messages stored without a token estimate (see `LiveTailStore`)."""
        return self._tail.backfill_token_estimates(counter_fn, batch)

    def recover_interrupted(self) -> int:
        """Replies left 'streaming' by a crash: `ReplyRows.recover_interrupted`."""
        return self.replies.recover_interrupted()

    # --- plumbing ----------------------------------------------------------------

    def _now(self) -> datetime:
        return self._clock().astimezone(UTC)

    def _session_or_none(self, session_id: str) -> Session | None:
        row = self._connection.execute(
            f"SELECT {_SESSION_COLUMNS} FROM session WHERE id = ?", (session_id,)
        ).fetchone()
        return _session_from_row(row) if row is not None else None

    def _updated_session(self, cursor: sqlite3.Cursor, session_id: str) -> Session:
        if cursor.rowcount == 0:
            raise SessionNotFoundError(session_id)
        session = self._session_or_none(session_id)
        assert session is not None  # updated a moment ago in this transaction
        return session

    def _write(self, action: str) -> AbstractContextManager[sqlite3.Cursor]:
        """One BEGIN IMMEDIATE … COMMIT (see `write_transaction`)."""
        return write_transaction(self._connection, action, self.database)

    def _read(self, action: str) -> AbstractContextManager[None]:
        return translated_errors(action, self.database)


# Larger than any seq a session will reach; keeps one query plan for both cases.
_NO_UPPER_SEQ = (1 << 63) - 1


def read_live_messages(connection: sqlite3.Connection, session_id: str) -> list[Message]:
    """The live tail: messages no summary covers (summary_id NULL), oldest first: what the
    next request sends; O(tail) through the `message_live` index."""
    rows = connection.execute(
        f"SELECT {_MESSAGE_COLUMNS} FROM message "
        "WHERE session_id = ? AND summary_id IS NULL AND shelved_by IS NULL ORDER BY seq",
        (session_id,),
    ).fetchall()
    return [_message_from_row(row) for row in rows]


def read_messages_by_id(connection: sqlite3.Connection, ids: Sequence[int]) -> list[Message]:
    """The messages of `ids` that exist, in no particular order."""
    messages: list[Message] = []
    for batch, marks in in_batches(ids):
        rows = connection.execute(
            f"SELECT {_MESSAGE_COLUMNS} FROM message WHERE id IN ({marks})",
            tuple(batch),
        ).fetchall()
        messages.extend(_message_from_row(row) for row in rows)
    return messages


def _stamp(moment: datetime) -> str:
    """ISO 8601 in UTC with microseconds: sorts as text in time order."""
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def _session_from_row(row: Any) -> Session:
    session_id, title, created_at, updated_at, model, system_prompt, version = row
    return Session(
        id=session_id,
        title=title,
        created_at=datetime.fromisoformat(created_at),
        updated_at=datetime.fromisoformat(updated_at),
        model=model,
        system_prompt=system_prompt,
        version=version,
    )


def _message_from_row(row: Any) -> Message:
    # pydantic parses the raw column values itself (the enums, the ISO date): twice as
    # fast as converting them first, and a live tail of 1,000+ rows is read every turn.
    (
        message_id,
        session_id,
        seq,
        role,
        content,
        created_at,
        token_estimate,
        usage,
        model,
        status,
        summary_id,
        pinned,
        version_of,
        damaged,
        version_number,
        version_count,
        thinking,
        thinking_seconds,
        refusal,
    ) = row
    return Message(
        id=message_id,
        session_id=session_id,
        seq=seq,
        role=role,
        content=content,
        created_at=created_at,
        token_estimate=token_estimate,
        usage=Usage.model_validate_json(usage) if usage is not None else None,
        model=model,
        status=status,
        summary_id=summary_id,
        pinned=bool(pinned),
        version_of=version_of,
        damaged=bool(damaged),
        version_number=version_number,
        version_count=version_count,
        thinking=thinking,
        thinking_seconds=thinking_seconds,
        refusal=refusal,
    )
