"""The schema, as numbered migrations keyed on `PRAGMA user_version` (DESIGN §2).

Each migration takes the database from `version - 1` to `version` in one
transaction; adding a table later (summary, event, message_fts) is one new
`Migration` appended to `MIGRATIONS`. Never edit a migration that has shipped.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

# Every character str.strip() strips (str.isspace), as SQLite's trim() takes them.
SQL_WHITESPACE = "char({})".format(
    ", ".join(str(code) for code in range(0x3001) if chr(code).isspace())
)


@dataclass(frozen=True)
class Migration:
    """One step of the schema: `statements` run in order, in one transaction."""

    version: int
    description: str
    statements: tuple[str, ...]


_SESSIONS_AND_MESSAGES = Migration(
    version=1,
    description="conversations and their messages",
    statements=(
        # `last_seq` is the highest seq ever handed out in this session, so a
        # seq is never reused even after messages are deleted (MAX(seq)+1 would).
        """
        CREATE TABLE session (
            id            TEXT PRIMARY KEY NOT NULL,
            title         TEXT NOT NULL,
            created_at    TEXT NOT NULL,
            updated_at    TEXT NOT NULL,
            model         TEXT NOT NULL,
            system_prompt TEXT NOT NULL DEFAULT '',
            version       INTEGER NOT NULL DEFAULT 0 CHECK (version >= 0),
            last_seq      INTEGER NOT NULL DEFAULT 0 CHECK (last_seq >= 0)
        )
        """,
        "CREATE INDEX session_by_updated_at ON session (updated_at)",
        # summary_id has no REFERENCES yet: the summary table arrives in its own
        # migration, which can add the constraint by rebuilding this table.
        """
        CREATE TABLE message (
            id             INTEGER PRIMARY KEY,
            session_id     TEXT NOT NULL REFERENCES session (id) ON DELETE CASCADE,
            seq            INTEGER NOT NULL CHECK (seq > 0),
            role           TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
            content        TEXT NOT NULL,
            created_at     TEXT NOT NULL,
            token_estimate INTEGER CHECK (token_estimate IS NULL OR token_estimate >= 0),
            usage          TEXT,  -- JSON of app.core.models.Usage
            model          TEXT,
            status         TEXT NOT NULL DEFAULT 'complete'
                           CHECK (status IN ('complete', 'streaming', 'stopped', 'error')),
            summary_id     TEXT
        )
        """,
        # Paging a transcript backwards and counting walk this index; it also
        # makes a duplicate seq impossible.
        "CREATE UNIQUE INDEX message_by_session_seq ON message (session_id, seq)",
        # Only crash leftovers are 'streaming' at startup: keep finding them cheap.
        "CREATE INDEX message_streaming ON message (id) WHERE status = 'streaming'",
    ),
)

_LIVE_TAIL_AND_ESTIMATES = Migration(
    version=2,
    description="indexes for the live tail and for messages without a token estimate",
    statements=(
        # The next request reads only the live tail (summary_id IS NULL): with
        # this index that costs O(tail), however large the archive grows.
        "CREATE INDEX message_live ON message (session_id, seq) WHERE summary_id IS NULL",
        # Rows from before token estimates were stored, and replies a crash cut
        # off, wait for SessionStore.backfill_token_estimates; finding them is
        # O(how many) instead of a scan of every message at each start.
        "CREATE INDEX message_unestimated ON message (id) WHERE token_estimate IS NULL",
    ),
)

_MESSAGE_COPY_COLUMNS = (
    "id, session_id, seq, role, content, created_at, token_estimate, usage, model, status"
)

_SUMMARIES_EVENTS_AND_PINS = Migration(
    version=3,
    description="summaries, the audit trail, and pinned messages",
    statements=(
        # A summary covers messages (condensed) or older summaries (compressed).
        # `parent_id` is the compressed summary that folded this one in: set
        # exactly when the state is 'superseded' (DESIGN §2, §3 invariant 1).
        # `content` (app.core.summary.SummaryContent) is split into the
        # narrative, TEXT of its own for a later full-text index, and two JSON
        # columns: key_points (a list of SourcedPoint) and facets (decisions,
        # action_items, open_questions, entities, notes).
        """
        CREATE TABLE summary (
            id             TEXT PRIMARY KEY NOT NULL,
            session_id     TEXT NOT NULL REFERENCES session (id) ON DELETE CASCADE,
            tier           TEXT NOT NULL CHECK (tier IN ('condensed', 'compressed')),
            parent_id      TEXT REFERENCES summary (id),
            depth          INTEGER NOT NULL DEFAULT 1 CHECK (depth >= 1),
            first_seq      INTEGER NOT NULL CHECK (first_seq > 0),
            last_seq       INTEGER NOT NULL CHECK (last_seq >= first_seq),
            narrative      TEXT NOT NULL,
            key_points     TEXT NOT NULL DEFAULT '[]',
            facets         TEXT NOT NULL DEFAULT '{}',
            source_tokens  INTEGER NOT NULL CHECK (source_tokens >= 0),
            summary_tokens INTEGER NOT NULL CHECK (summary_tokens >= 0),
            mode           TEXT NOT NULL CHECK (mode IN ('llm', 'hybrid', 'rule')),
            model          TEXT,
            trigger        TEXT NOT NULL CHECK (trigger IN ('auto', 'manual', 'emergency')),
            instructions   TEXT,
            state          TEXT NOT NULL DEFAULT 'active'
                           CHECK (state IN ('active', 'superseded', 'undone')),
            created_at     TEXT NOT NULL,
            CHECK ((state = 'superseded') = (parent_id IS NOT NULL))
        )
        """,
        # What the next request reads: the active summaries of one session, in order.
        "CREATE INDEX summary_by_session_state ON summary (session_id, state, first_seq)",
        # Walking a chain down (undo, "show original messages"); also serves the
        # parent_id foreign key.
        "CREATE INDEX summary_by_parent ON summary (parent_id) WHERE parent_id IS NOT NULL",
        # The audit trail deliberately has no foreign keys: it outlives the
        # conversation and the summaries it talks about, so the deletion of a
        # conversation, recorded here, can still be read afterwards. It holds
        # numbers, reasons and error classes, never message text.
        """
        CREATE TABLE event (
            id            INTEGER PRIMARY KEY,
            session_id    TEXT NOT NULL,
            kind          TEXT NOT NULL CHECK (kind IN ('summarize', 'undo', 'delete_originals')),
            outcome       TEXT NOT NULL CHECK (
                              outcome IN ('ok', 'fallback', 'failed', 'aborted', 'conflict',
                                          'partial')
                          ),
            summary_id    TEXT,
            reason        TEXT NOT NULL DEFAULT '',
            ratio_before  REAL,
            ratio_after   REAL,
            tokens_before INTEGER,
            tokens_after  INTEGER,
            duration_ms   REAL,
            error_class   TEXT,
            detail        TEXT,
            created_at    TEXT NOT NULL
        )
        """,
        "CREATE INDEX event_by_session_time ON event (session_id, created_at, id)",
        # The message table is rebuilt (https://www.sqlite.org/lang_altertable.html#otheralter)
        # to give summary_id the foreign key migration 1 promised, and to add
        # `pinned`. A pinned message is never covered (the CHECK), so it is
        # always live: the live-tail index `message_live` (summary_id IS NULL)
        # keeps finding pinned messages without change.
        """
        CREATE TABLE message_v3 (
            id             INTEGER PRIMARY KEY,
            session_id     TEXT NOT NULL REFERENCES session (id) ON DELETE CASCADE,
            seq            INTEGER NOT NULL CHECK (seq > 0),
            role           TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
            content        TEXT NOT NULL,
            created_at     TEXT NOT NULL,
            token_estimate INTEGER CHECK (token_estimate IS NULL OR token_estimate >= 0),
            usage          TEXT,  -- JSON of app.core.models.Usage
            model          TEXT,
            status         TEXT NOT NULL DEFAULT 'complete'
                           CHECK (status IN ('complete', 'streaming', 'stopped', 'error')),
            summary_id     TEXT REFERENCES summary (id),
            pinned         INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
            CHECK (pinned = 0 OR summary_id IS NULL)
        )
        """,
        # Before this migration no summary existed, so every message was live:
        # summary_id starts NULL (a stray value could only break the new key).
        f"INSERT INTO message_v3 ({_MESSAGE_COPY_COLUMNS}) "
        f"SELECT {_MESSAGE_COPY_COLUMNS} FROM message",
        # Nothing references message, so dropping it cascades nowhere.
        "DROP TABLE message",
        "ALTER TABLE message_v3 RENAME TO message",
        "CREATE UNIQUE INDEX message_by_session_seq ON message (session_id, seq)",
        "CREATE INDEX message_streaming ON message (id) WHERE status = 'streaming'",
        "CREATE INDEX message_live ON message (session_id, seq) WHERE summary_id IS NULL",
        "CREATE INDEX message_unestimated ON message (id) WHERE token_estimate IS NULL",
        # The originals of a summary (undo, "show original messages"); also
        # serves the summary_id foreign key.
        "CREATE INDEX message_by_summary ON message (summary_id, seq) WHERE summary_id IS NOT NULL",
    ),
)

_TRIGGER_STATE = Migration(
    version=4,
    description="the summary trigger's memory; blank messages count no tokens",
    statements=(
        # JSON written by app.chat (TriggerMemory and the seq it was taken at); NULL
        # until the trigger first changes. Not part of `version`: nothing is checked
        # against it.
        "ALTER TABLE session ADD COLUMN trigger_state TEXT",
        # A blank message is never sent, so it counts 0 tokens from now on; the live
        # tail is then read without touching any message's text (SessionStore.live_tail).
        "UPDATE message SET token_estimate = 0 WHERE token_estimate > 0 "
        f"AND trim(content, {SQL_WHITESPACE}) = ''",
    ),
)

MIGRATIONS: tuple[Migration, ...] = (
    _SESSIONS_AND_MESSAGES,
    _LIVE_TAIL_AND_ESTIMATES,
    _SUMMARIES_EVENTS_AND_PINS,
    _TRIGGER_STATE,
)

SCHEMA_VERSION = MIGRATIONS[-1].version


def user_version(connection: sqlite3.Connection) -> int:
    """The schema version recorded in the database file."""
    version = connection.execute("PRAGMA user_version").fetchone()[0]
    return int(version)


def migrate(connection: sqlite3.Connection, migrations: tuple[Migration, ...] = MIGRATIONS) -> int:
    """Apply the migrations the database lacks; returns the final version.

    `connection` must be in autocommit mode (`isolation_level=None`): each step
    is its own BEGIN IMMEDIATE … COMMIT, and a failing step rolls back whole,
    leaving the database at the previous version.
    """
    _check_numbering(migrations)
    for migration in migrations:
        if user_version(connection) >= migration.version:
            continue
        connection.execute("BEGIN IMMEDIATE")
        try:
            # Re-read under the write lock: another connection may have done it.
            if user_version(connection) < migration.version:
                for statement in migration.statements:
                    connection.execute(statement)
                # user_version is in the file header, so it commits with the rest.
                connection.execute(f"PRAGMA user_version = {migration.version:d}")
            connection.execute("COMMIT")
        except BaseException:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            raise
    return user_version(connection)


def _check_numbering(migrations: tuple[Migration, ...]) -> None:
    expected = list(range(1, len(migrations) + 1))
    actual = [migration.version for migration in migrations]
    if actual != expected:
        raise ValueError(f"migrations must be numbered 1..n without gaps, got {actual}")
