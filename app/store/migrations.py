"""The schema, as numbered migrations keyed on `PRAGMA user_version` (DESIGN §2).

Each migration takes the database from `version - 1` to `version` in one
transaction; adding a table later (summary, event, message_fts) is one new
`Migration` appended to `MIGRATIONS`. Never edit a migration that has shipped, with one
exception: a walk over every message (filling the search index, giving checksums) may be
moved out of it to a back-fill that runs after the first paint (`defer`,
app/store/backfill.py); what the migration leaves is the same once the walk is done.
"""

from __future__ import annotations

import logging
import re
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from app.store.checksums import summary_checksum

log = logging.getLogger(__name__)

# Every character str.strip() strips (str.isspace), as SQLite's trim() takes them.
SQL_WHITESPACE = "char({})".format(
    ", ".join(str(code) for code in range(0x3001) if chr(code).isspace())
)


@dataclass(frozen=True)
class Migration:
    """One step of the schema: `statements` run in order, then `then` (if any), in one
    transaction; `then` is for a step that depends on what this SQLite can do."""

    version: int
    description: str
    statements: tuple[str, ...]
    then: Callable[[sqlite3.Connection], None] | None = None


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


def summary_text(row: str) -> str:
    """SQL for the words of a summary `row` (a table alias, `new` or `old`): its narrative,
    then every string in its key points and facets (JSON keys and numbers left out)."""

    def strings(column: str) -> str:
        return (
            f"coalesce((SELECT group_concat(j.value, ' ') FROM json_tree({row}.{column}) AS j "
            "WHERE j.type = 'text'), '')"
        )

    return f"{row}.narrative || ' ' || {strings('key_points')} || ' ' || {strings('facets')}"


# The full-text index (DESIGN §2 message_fts). One FTS5 table over what can be found:
# every message (archived ones included; rowid = message.id) and every summary
# (rowid = a negative key from summary_search_key, because a summary's id is text and
# its implicit rowid may change at VACUUM). It is an external-content table over the
# view search_document, so the text is not stored twice; triggers keep it in step in
# the same transaction as every write (import, undo, rewrite, deletions need nothing).
# Tokenizer: unicode61 (words of letters and digits in any script, case-folded) with
# remove_diacritics 2, so "cafe" finds "café" and "resume" finds "résumé", including
# the letters version 1 missed. No porter stemmer (English only, surprising in other
# languages); no prefix index (the query matches whole words).
FTS_TABLE = "message_fts"
_SUMMARY_KEY_TABLE = "summary_search_key"
_FTS_STATEMENTS = (
    f"""
    CREATE VIRTUAL TABLE {FTS_TABLE} USING fts5(
        body, content = 'search_document', content_rowid = 'doc_id',
        tokenize = 'unicode61 remove_diacritics 2'
    )
    """,
    f"""
    CREATE TRIGGER message_fts_insert AFTER INSERT ON message BEGIN
        INSERT INTO {FTS_TABLE} (rowid, body) VALUES (new.id, new.content);
    END
    """,
    # A streamed reply is saved about once a second: re-indexing it costs a delete and
    # an insert of its text (measured in bench/bench_search.py). Unchanged text
    # (finish_message re-saving it) costs nothing.
    f"""
    CREATE TRIGGER message_fts_update AFTER UPDATE OF content ON message
    WHEN old.content IS NOT new.content BEGIN
        INSERT INTO {FTS_TABLE} ({FTS_TABLE}, rowid, body) VALUES ('delete', old.id, old.content);
        INSERT INTO {FTS_TABLE} (rowid, body) VALUES (new.id, new.content);
    END
    """,
    f"""
    CREATE TRIGGER message_fts_delete AFTER DELETE ON message BEGIN
        INSERT INTO {FTS_TABLE} ({FTS_TABLE}, rowid, body) VALUES ('delete', old.id, old.content);
    END
    """,
    f"""
    CREATE TRIGGER summary_fts_insert AFTER INSERT ON summary BEGIN
        INSERT INTO {_SUMMARY_KEY_TABLE} (key, summary_id)
            SELECT coalesce(min(key), 0) - 1, new.id FROM {_SUMMARY_KEY_TABLE};
        INSERT INTO {FTS_TABLE} (rowid, body)
            SELECT key, {summary_text("new")} FROM {_SUMMARY_KEY_TABLE}
            WHERE summary_id = new.id;
    END
    """,
    f"""
    CREATE TRIGGER summary_fts_update AFTER UPDATE OF narrative, key_points, facets ON summary
    WHEN old.narrative IS NOT new.narrative OR old.key_points IS NOT new.key_points
        OR old.facets IS NOT new.facets BEGIN
        INSERT INTO {FTS_TABLE} ({FTS_TABLE}, rowid, body)
            SELECT 'delete', key, {summary_text("old")} FROM {_SUMMARY_KEY_TABLE}
            WHERE summary_id = old.id;
        INSERT INTO {FTS_TABLE} (rowid, body)
            SELECT key, {summary_text("new")} FROM {_SUMMARY_KEY_TABLE}
            WHERE summary_id = new.id;
    END
    """,
    f"""
    CREATE TRIGGER summary_fts_delete AFTER DELETE ON summary BEGIN
        INSERT INTO {FTS_TABLE} ({FTS_TABLE}, rowid, body)
            SELECT 'delete', key, {summary_text("old")} FROM {_SUMMARY_KEY_TABLE}
            WHERE summary_id = old.id;
        DELETE FROM {_SUMMARY_KEY_TABLE} WHERE summary_id = old.id;
    END
    """,
    # The summaries are indexed here (a few per hundred messages); the messages after the
    # first paint, by the back-fill `defer` names (app/store/backfill.py). (FTS5's
    # 'rebuild' command fails on a view with a UNION.)
    f"INSERT INTO {FTS_TABLE} (rowid, body) SELECT doc_id, body FROM search_document "
    "WHERE doc_id < 0",
)

# Back-fills: the part of a migration that walks every message (indexing it, giving it a
# checksum) is left to run after the window has painted, in batches, each its own
# transaction (app/store/backfill.py). A row of `backfill` names one such walk and how
# far it got: every message with id <= done_through is done; the row goes when all are.
# The runner's own bookkeeping, like user_version: made by the first migration that
# defers a walk, and by migration 15 for every database.
BACKFILL_TABLE = "backfill"
INDEX_BACKFILL = "message_fts"  # messages into the full-text index (migration 5)
CHECKSUM_BACKFILL = "message_checksum"  # each message's checksum (migration 13)
_BACKFILL_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS {BACKFILL_TABLE} (
    name         TEXT PRIMARY KEY NOT NULL,
    done_through INTEGER NOT NULL DEFAULT 0 CHECK (done_through >= 0)
) WITHOUT ROWID
"""


def defer(connection: sqlite3.Connection, name: str) -> None:
    """Leave the walk `name` over every message kept now to run after the first paint."""
    if connection.execute("SELECT 1 FROM message LIMIT 1").fetchone() is None:
        return  # nothing to walk: a new database
    connection.execute(_BACKFILL_SCHEMA)
    connection.execute(
        f"INSERT OR REPLACE INTO {BACKFILL_TABLE} (name, done_through) VALUES (?, 0)", (name,)
    )


def _full_text_index(connection: sqlite3.Connection) -> None:
    """Build the index where this SQLite has FTS5; otherwise leave search to LIKE."""
    connection.execute("SAVEPOINT full_text_index")
    try:
        connection.execute(_FTS_STATEMENTS[0])
    except sqlite3.DatabaseError as error:
        # "no such module: fts5" (built without it) or refused (SQLITE_AUTH); anything
        # else (damage, a full disk) is not ours to hide.
        missing = isinstance(error, sqlite3.OperationalError) and "fts5" in str(error)
        if not missing and error.sqlite_errorcode != sqlite3.SQLITE_AUTH:
            raise
        connection.execute("ROLLBACK TO full_text_index")
        connection.execute("RELEASE full_text_index")
        log.warning(
            "This SQLite cannot build a full-text index (%s); search reads the text "
            "directly instead, which is slower on a large history.",
            error,
        )
        return
    for statement in _FTS_STATEMENTS[1:]:
        connection.execute(statement)
    defer(connection, INDEX_BACKFILL)
    connection.execute("RELEASE full_text_index")


# What the History window lists for each conversation, kept by triggers so listing
# 10,000 conversations reads 10,000 rows instead of counting a million messages
# (1.6 s measured with grouped counts over the message indexes).
_CONVERSATION_COUNTS = (
    """
    CREATE TABLE session_count (
        session_id TEXT PRIMARY KEY NOT NULL REFERENCES session (id) ON DELETE CASCADE,
        messages   INTEGER NOT NULL DEFAULT 0,  -- every message kept, archived included
        archived   INTEGER NOT NULL DEFAULT 0,  -- of which covered by a summary
        summaries  INTEGER NOT NULL DEFAULT 0   -- active summaries
    ) WITHOUT ROWID
    """,
    "INSERT INTO session_count (session_id) SELECT id FROM session",
    "UPDATE session_count SET "
    "messages = (SELECT count(*) FROM message WHERE session_id = session_count.session_id), "
    "archived = (SELECT count(*) FROM message WHERE session_id = session_count.session_id "
    "AND summary_id IS NOT NULL), "
    "summaries = (SELECT count(*) FROM summary WHERE session_id = session_count.session_id "
    "AND state = 'active')",
    """
    CREATE TRIGGER session_count_insert AFTER INSERT ON session BEGIN
        INSERT INTO session_count (session_id) VALUES (new.id);
    END
    """,
    # Only UPDATEs below: when a conversation is deleted its row goes first (cascade),
    # and the cascaded deletes of its messages then change nothing.
    """
    CREATE TRIGGER session_count_message_insert AFTER INSERT ON message BEGIN
        UPDATE session_count SET messages = messages + 1,
            archived = archived + (new.summary_id IS NOT NULL)
        WHERE session_id = new.session_id;
    END
    """,
    """
    CREATE TRIGGER session_count_message_delete AFTER DELETE ON message BEGIN
        UPDATE session_count SET messages = messages - 1,
            archived = archived - (old.summary_id IS NOT NULL)
        WHERE session_id = old.session_id;
    END
    """,
    """
    CREATE TRIGGER session_count_message_cover AFTER UPDATE OF summary_id ON message
    WHEN (old.summary_id IS NULL) IS NOT (new.summary_id IS NULL) BEGIN
        UPDATE session_count SET archived = archived + (new.summary_id IS NOT NULL)
            - (old.summary_id IS NOT NULL)
        WHERE session_id = new.session_id;
    END
    """,
    """
    CREATE TRIGGER session_count_summary_insert AFTER INSERT ON summary
    WHEN new.state = 'active' BEGIN
        UPDATE session_count SET summaries = summaries + 1 WHERE session_id = new.session_id;
    END
    """,
    """
    CREATE TRIGGER session_count_summary_state AFTER UPDATE OF state ON summary
    WHEN (old.state = 'active') IS NOT (new.state = 'active') BEGIN
        UPDATE session_count SET summaries = summaries + (new.state = 'active')
            - (old.state = 'active')
        WHERE session_id = new.session_id;
    END
    """,
    """
    CREATE TRIGGER session_count_summary_delete AFTER DELETE ON summary
    WHEN old.state = 'active' BEGIN
        UPDATE session_count SET summaries = summaries - 1 WHERE session_id = old.session_id;
    END
    """,
)

_FULL_TEXT_SEARCH = Migration(
    version=5,
    description="the full-text index over messages and summaries; conversation counts",
    statements=(
        *_CONVERSATION_COUNTS,
        # A stable integer key per summary for the index (negative: messages use
        # their positive ids). Filled in by a trigger when the index exists.
        f"""
        CREATE TABLE {_SUMMARY_KEY_TABLE} (
            key        INTEGER PRIMARY KEY CHECK (key < 0),
            summary_id TEXT NOT NULL UNIQUE
        )
        """,
        f"INSERT INTO {_SUMMARY_KEY_TABLE} (key, summary_id) "
        "SELECT -row_number() OVER (ORDER BY rowid), id FROM summary",
        # What the index holds, one row per searchable text: it reads a message's or
        # summary's text by key through the primary keys.
        f"""
        CREATE VIEW search_document (doc_id, body) AS
            SELECT id, content FROM message
            UNION ALL
            SELECT k.key, {summary_text("s")}
            FROM {_SUMMARY_KEY_TABLE} AS k JOIN summary AS s ON s.id = k.summary_id
        """,
    ),
    then=_full_text_index,
)


# Migration 6 widens the message table's status CHECK in place (`_widen_status_check`);
# where the table's definition is not the one it expects, it rebuilds the table instead
# (https://www.sqlite.org/lang_altertable.html#otheralter). The rebuild's triggers and views
# that name `message` (the full-text index's, the conversation counts', search_document)
# are dropped first and made again from their own SQL afterwards, so the rename is not
# checked against a schema that names a table missing for a moment; indexes likewise.
_MESSAGE_V6 = """
CREATE TABLE message_v6 (
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
                   CHECK (status IN ('complete', 'streaming', 'stopped', 'error',
                                     'cut_off', 'paused', 'declined')),
    summary_id     TEXT REFERENCES summary (id),
    pinned         INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
    CHECK (pinned = 0 OR summary_id IS NULL)
)
"""
_MESSAGE_V6_COLUMNS = (
    "id, session_id, seq, role, content, created_at, token_estimate, usage, model, "
    "status, summary_id, pinned"
)


# The status CHECK as migrations 1-5 wrote it, and as migration 6 widens it.
_STATUS_CHECK_V1 = "CHECK (status IN ('complete', 'streaming', 'stopped', 'error'))"
_STATUS_CHECK_V6 = (
    "CHECK (status IN ('complete', 'streaming', 'stopped', 'error', "
    "'cut_off', 'paused', 'declined'))"
)


def _widen_status_check(connection: sqlite3.Connection) -> None:
    """Migration 6: the message table's status CHECK accepts three more statuses.

    Every row meets the wider CHECK already (it met the narrower one), and a CHECK is
    not part of how rows are stored: SQLite's documented simpler procedure for changing
    a table's constraints rewrites the table's definition in place
    (https://www.sqlite.org/lang_altertable.html#otheralter, "the following simpler
    procedure"), at no cost per row. The rebuild it replaces copied every message before
    the first paint (5.4 s at 200,000 messages, bench_startup --upgrade-messages). A
    definition that does not read as migrations 1-5 wrote it is rebuilt instead.
    """
    row = connection.execute(
        "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'message'"
    ).fetchone()
    sql = str(row[0]) if row is not None else ""
    if sql.count(_STATUS_CHECK_V1) != 1:
        _rebuild_message_table(connection)
        return
    widened = sql.replace(_STATUS_CHECK_V1, _STATUS_CHECK_V6)
    # The new definition must parse before it is written: a schema that does not
    # parse leaves the file unreadable. A temporary table of it is made and dropped.
    connection.execute(_TRIAL_TABLE.sub("CREATE TEMP TABLE message_v6_trial", widened, 1))
    connection.execute("DROP TABLE temp.message_v6_trial")
    version = int(connection.execute("PRAGMA schema_version").fetchone()[0])
    connection.execute("SAVEPOINT widen_status_check")
    connection.execute("PRAGMA writable_schema = ON")
    try:
        connection.execute(
            "UPDATE sqlite_schema SET sql = ? WHERE type = 'table' AND name = 'message'",
            (widened,),
        )
        connection.execute(f"PRAGMA schema_version = {version + 1:d}")
    except sqlite3.OperationalError as error:
        # A SQLite built defensive (SQLITE_DBCONFIG_DEFENSIVE) refuses to edit its schema.
        log.info("Rebuilding the message table instead of editing its definition: %s", error)
        connection.execute("PRAGMA writable_schema = OFF")
        connection.execute("ROLLBACK TO widen_status_check")
        connection.execute("RELEASE widen_status_check")
        _rebuild_message_table(connection)
        return
    connection.execute("PRAGMA writable_schema = OFF")
    connection.execute("RELEASE widen_status_check")


_TRIAL_TABLE = re.compile(r'CREATE TABLE\s+("message"|message)', re.IGNORECASE)


def _rebuild_message_table(connection: sqlite3.Connection) -> None:
    """The message table with migration 6's CHECK, its rows, indexes and triggers kept."""
    dependents = connection.execute(
        "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL AND ("
        "(type IN ('index', 'trigger') AND tbl_name = 'message') OR type = 'view') "
        "ORDER BY rowid"
    ).fetchall()
    for kind, name, _sql in dependents:
        if kind != "index":  # indexes go with their table
            connection.execute(f'DROP {kind.upper()} "{name}"')
    connection.execute(_MESSAGE_V6)
    connection.execute(
        f"INSERT INTO message_v6 ({_MESSAGE_V6_COLUMNS}) SELECT {_MESSAGE_V6_COLUMNS} FROM message"
    )
    connection.execute("DROP TABLE message")
    connection.execute("ALTER TABLE message_v6 RENAME TO message")
    # Views first: a trigger may read one.
    order = {"view": 0, "index": 1, "trigger": 2}
    for _kind, _name, sql in sorted(dependents, key=lambda row: order[row[0]]):
        connection.execute(sql)


_REPLY_ENDINGS = Migration(
    version=6,
    description="how a reply ended: cut off at its length limit, paused, declined",
    statements=(),
    then=_widen_status_check,
)


_ARCHIVE_LOOKUPS = Migration(
    version=7,
    description="the archive searches Claude ran while writing a reply",
    statements=(
        """
        CREATE TABLE lookup (
            message_id   INTEGER NOT NULL REFERENCES message (id) ON DELETE CASCADE,
            ordinal      INTEGER NOT NULL CHECK (ordinal > 0),
            query        TEXT NOT NULL,
            results_json TEXT NOT NULL,
            created_at   TEXT NOT NULL,
            PRIMARY KEY (message_id, ordinal)
        )
        """,
    ),
)

_MESSAGE_VERSIONS = Migration(
    version=8,
    description="versions of a message: edited questions and regenerated replies",
    statements=(
        # All versions of a message share `version_of` (the first version's id; NULL
        # while it has only one). A version not shown, and the messages that followed
        # it, carry `shelved_by` (that version's id): kept in the archive and search,
        # out of the transcript and of what is sent (app.store.versions).
        "ALTER TABLE message ADD COLUMN version_of INTEGER",
        "ALTER TABLE message ADD COLUMN shelved_by INTEGER",
        "CREATE INDEX message_versions ON message (version_of, seq) WHERE version_of IS NOT NULL",
        "CREATE INDEX message_shelved ON message (shelved_by) WHERE shelved_by IS NOT NULL",
    ),
)

_ATTACHMENTS = Migration(
    version=9,
    description="the files of a message: images, PDFs, text (content-addressed on disk)",
    statements=(
        # The bytes live in the attachments folder beside the database under their sha256
        # (app/store/attachments.py); a row says which message has which file, as named.
        """
        CREATE TABLE attachment (
            message_id INTEGER NOT NULL REFERENCES message (id) ON DELETE CASCADE,
            ordinal    INTEGER NOT NULL CHECK (ordinal > 0),
            sha256     TEXT NOT NULL CHECK (length(sha256) = 64),
            name       TEXT NOT NULL,
            media_type TEXT NOT NULL,
            kind       TEXT NOT NULL CHECK (kind IN ('image', 'pdf', 'text')),
            size       INTEGER NOT NULL CHECK (size >= 0),
            tokens     INTEGER NOT NULL CHECK (tokens >= 0),
            estimated  INTEGER NOT NULL DEFAULT 0 CHECK (estimated IN (0, 1)),
            width      INTEGER NOT NULL DEFAULT 0,
            height     INTEGER NOT NULL DEFAULT 0,
            pages      INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (message_id, ordinal)
        )
        """,
        "CREATE INDEX attachment_by_sha256 ON attachment (sha256)",
    ),
)

_THINKING = Migration(
    # Number 12 once the `disk` (10) and `recall` (11) migrations land beside it.
    version=10,
    description="the thinking shown above a reply (summarized) and how long it took",
    statements=(
        # The readable thinking of a reply ("Thought for N s", expand to read): kept with
        # it in the archive and export, never sent back to Claude nor summarized as the
        # reply's text (app.core.conversation sends `content` only).
        "ALTER TABLE message ADD COLUMN thinking TEXT NOT NULL DEFAULT ''",
        "ALTER TABLE message ADD COLUMN thinking_seconds REAL",
    ),
)

_UPLOADS = Migration(
    version=11,
    description="attached files uploaded once through the Files API, and their deletion",
    statements=(
        # A file kept under its sha256 is uploaded once per server it goes to: `server` is
        # the API address and a fingerprint of the key, whose workspace holds the upload
        # (app.store.uploads). A request refers to it by `file_id` instead of re-sending it.
        # `deleting`: no message has the file any more (its conversation, or the archived
        # originals that had it, were deleted); it is deleted on the server in the
        # background (app.chat.uploads), and the row goes when the server has let it go.
        """
        CREATE TABLE upload (
            server      TEXT NOT NULL,
            sha256      TEXT NOT NULL CHECK (length(sha256) = 64),
            file_id     TEXT NOT NULL,
            uploaded_at TEXT NOT NULL,
            state       TEXT NOT NULL DEFAULT 'live' CHECK (state IN ('live', 'deleting')),
            PRIMARY KEY (server, sha256)
        )
        """,
        "CREATE INDEX upload_by_sha256 ON upload (sha256)",
        "CREATE INDEX upload_deleting ON upload (server) WHERE state = 'deleting'",
        # Whether a server offers the Files API ('ga'; 'beta': only with the beta header;
        # 'none': files go as base64), decided once and remembered.
        """
        CREATE TABLE upload_server (
            server     TEXT PRIMARY KEY,
            support    TEXT NOT NULL CHECK (support IN ('ga', 'beta', 'none')),
            checked_at TEXT NOT NULL
        )
        """,
        # The last message that had a file is gone (a cascade from its conversation or
        # summary counts): its uploads are to be deleted. Attached again meanwhile: kept.
        """
        CREATE TRIGGER attachment_unused AFTER DELETE ON attachment
        WHEN NOT EXISTS (SELECT 1 FROM attachment WHERE sha256 = old.sha256)
        BEGIN
            UPDATE upload SET state = 'deleting' WHERE sha256 = old.sha256;
        END
        """,
        """
        CREATE TRIGGER attachment_used AFTER INSERT ON attachment
        BEGIN
            UPDATE upload SET state = 'live' WHERE sha256 = new.sha256 AND state = 'deleting';
        END
        """,
    ),
)

_REFUSALS = Migration(
    version=12,
    description="why Claude declined a reply, as the API explained it",
    statements=(
        # A declined reply's `stop_details.explanation`, shown beside "Ask another model"
        # after a restart too, and exported; NULL when the API gave none
        # (https://platform.claude.com/docs/build-with-claude/handling-stop-reasons).
        "ALTER TABLE message ADD COLUMN refusal TEXT",
    ),
)


def _fill_checksums(connection: sqlite3.Connection) -> None:
    """Give every summary already kept its checksum; the messages get theirs after the
    first paint (a back-fill: at a million messages, tens of seconds)."""
    defer(connection, CHECKSUM_BACKFILL)
    connection.executemany(
        "UPDATE summary SET checksum = ? WHERE id = ?",
        (
            (summary_checksum(str(narrative), str(key_points), str(facets)), summary_id)
            for summary_id, narrative, key_points, facets in connection.execute(
                "SELECT id, narrative, key_points, facets FROM summary"
            ).fetchall()
        ),
    )


# app/store/checksums.py: a 64-bit BLAKE2b of the text as written, so a bit the disk
# flipped is found; `damaged` marks a text no backup could put back.
_CHECKSUMMED_TABLES = ("message", "summary")
_DAMAGED_COLUMN = "damaged INTEGER NOT NULL DEFAULT 0"
_DAMAGED_CHECK = "CHECK (damaged IN (0, 1))"
# Migration 13 as it shipped: SQLite tests an added column's CHECK against every row
# already there (https://www.sqlite.org/lang_altertable.html#altertabaddcol), ~0.45 s at
# 200,000 messages before the first paint. Still what a SQLite that refuses to edit its
# schema runs.
_CHECKSUM_COLUMNS_SCANNED = tuple(
    statement
    for table in _CHECKSUMMED_TABLES
    for statement in (
        f"ALTER TABLE {table} ADD COLUMN checksum INTEGER",
        f"ALTER TABLE {table} ADD COLUMN {_DAMAGED_COLUMN} {_DAMAGED_CHECK}",
    )
)


class _SchemaNotEdited(Exception):
    """A table's definition is not the one expected, or this SQLite refused the edit."""


def _checksum_columns(connection: sqlite3.Connection) -> None:
    """Migration 13's columns, their CHECKs added without reading a row.

    An added column with a constant default and no constraint changes only the table's
    definition, not its rows (https://www.sqlite.org/lang_altertable.html, "No changes
    are made to table content for ... column addition without constraints"); with a
    CHECK, SQLite tests it against every row (~0.45 s at 200,000 messages before the
    first paint). Every row reads `damaged` as its default 0, which meets the CHECK, so
    the CHECK is written into the definition in place, as migration 6 widens its CHECK
    (SQLite's documented simpler procedure, #otheralter): the definition left is the
    very text the ALTER with the CHECK writes. Where SQLite refuses to edit its schema
    (SQLITE_DBCONFIG_DEFENSIVE), or its edit is not found, the columns are added as
    migration 13 shipped.
    """
    connection.execute("SAVEPOINT checksum_columns")
    try:
        edited = {table: _damaged_column_added(connection, table) for table in _CHECKSUMMED_TABLES}
        _write_definitions(connection, edited)
    except _SchemaNotEdited as error:
        log.info("Adding the checksum columns row by row instead: %s", error)
        connection.execute("ROLLBACK TO checksum_columns")
        for statement in _CHECKSUM_COLUMNS_SCANNED:
            connection.execute(statement)
    connection.execute("RELEASE checksum_columns")


def _definition(connection: sqlite3.Connection, table: str) -> str:
    row = connection.execute(
        "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?", (table,)
    ).fetchone()
    return str(row[0]) if row is not None else ""


def _damaged_column_added(connection: sqlite3.Connection, table: str) -> str:
    """Add `table`'s two columns without a CHECK; its definition with the CHECK where
    the ALTER with it would have written it, trial-parsed."""
    connection.execute(f"ALTER TABLE {table} ADD COLUMN checksum INTEGER")
    before = _definition(connection, table)
    connection.execute(f"ALTER TABLE {table} ADD COLUMN {_DAMAGED_COLUMN}")
    after = _definition(connection, table)
    # SQLite inserts ", <the column as written>" after the last column (before any
    # table constraint); the CHECK goes at the end of that text.
    inserted = f", {_DAMAGED_COLUMN}"
    candidates = {
        f"{before[:at]}{inserted} {_DAMAGED_CHECK}{before[at:]}"
        for at in range(len(before) + 1)
        if after[at : at + len(inserted)] == inserted
        and after[:at] + after[at + len(inserted) :] == before
    }
    if len(candidates) != 1:
        raise _SchemaNotEdited(f"the {table} table's new column was not found once")
    (edited,) = candidates
    # The new definition must parse before it is written (as in migration 6).
    trial = re.compile(rf'CREATE TABLE\s+(?:"{table}"|{table}\b)', re.IGNORECASE)
    try:
        connection.execute(trial.sub(f"CREATE TEMP TABLE {table}_trial", edited, 1))
        connection.execute(f"DROP TABLE temp.{table}_trial")
    except sqlite3.DatabaseError as error:
        raise _SchemaNotEdited(f"the {table} table's new definition: {error}") from error
    return edited


def _write_definitions(connection: sqlite3.Connection, definitions: dict[str, str]) -> None:
    version = int(connection.execute("PRAGMA schema_version").fetchone()[0])
    connection.execute("PRAGMA writable_schema = ON")
    try:
        for table, sql in definitions.items():
            connection.execute(
                "UPDATE sqlite_schema SET sql = ? WHERE type = 'table' AND name = ?",
                (sql, table),
            )
        connection.execute(f"PRAGMA schema_version = {version + 1:d}")
    except sqlite3.OperationalError as error:
        # A SQLite built defensive (SQLITE_DBCONFIG_DEFENSIVE) refuses to edit its schema.
        raise _SchemaNotEdited(str(error)) from error
    finally:
        connection.execute("PRAGMA writable_schema = OFF")


def _checksums(connection: sqlite3.Connection) -> None:
    _checksum_columns(connection)
    _fill_checksums(connection)


_CHECKSUMS = Migration(
    version=13,
    description="a checksum of each message's text and each summary; a mark for damaged ones",
    statements=(),
    then=_checksums,
)

_RECALLED_QUOTES = Migration(
    version=14,
    description="the quotes automatic recall took from the user's other conversations",
    statements=(
        # A reply's lookups (migration 7) also keep, as ordinal 0, the quotes automatic
        # recall sent Claude from the user's other conversations (Settings → Memory), so
        # the reply's line can name and open them and the export can list them
        # (app.core.lookup.RECALLED). The table is rebuilt: SQLite cannot change a CHECK.
        """
        CREATE TABLE lookup_new (
            message_id   INTEGER NOT NULL REFERENCES message (id) ON DELETE CASCADE,
            ordinal      INTEGER NOT NULL CHECK (ordinal >= 0),
            query        TEXT NOT NULL,
            results_json TEXT NOT NULL,
            created_at   TEXT NOT NULL,
            PRIMARY KEY (message_id, ordinal)
        )
        """,
        "INSERT INTO lookup_new (message_id, ordinal, query, results_json, created_at) "
        "SELECT message_id, ordinal, query, results_json, created_at FROM lookup",
        "DROP TABLE lookup",
        "ALTER TABLE lookup_new RENAME TO lookup",
    ),
)

# A message is in the full-text index unless the index's back-fill has not reached it
# yet: these triggers leave such a message to the back-fill, which reads its text as it
# is then. So a message written, changed or deleted while the back-fill runs is indexed
# exactly once, and FTS5 is never asked to delete what it does not hold (which would
# damage the index: https://www.sqlite.org/fts5.html#external_content_tables).
_NOT_PENDING = (
    f"NOT EXISTS (SELECT 1 FROM {BACKFILL_TABLE} WHERE name = '{INDEX_BACKFILL}' "
    "AND done_through < {row}.id)"
)
_PENDING_AWARE_TRIGGERS = (
    f"""
    CREATE TRIGGER message_fts_insert AFTER INSERT ON message
    WHEN {_NOT_PENDING.format(row="new")} BEGIN
        INSERT INTO {FTS_TABLE} (rowid, body) VALUES (new.id, new.content);
    END
    """,
    f"""
    CREATE TRIGGER message_fts_update AFTER UPDATE OF content ON message
    WHEN old.content IS NOT new.content AND {_NOT_PENDING.format(row="old")} BEGIN
        INSERT INTO {FTS_TABLE} ({FTS_TABLE}, rowid, body) VALUES ('delete', old.id, old.content);
        INSERT INTO {FTS_TABLE} (rowid, body) VALUES (new.id, new.content);
    END
    """,
    f"""
    CREATE TRIGGER message_fts_delete AFTER DELETE ON message
    WHEN {_NOT_PENDING.format(row="old")} BEGIN
        INSERT INTO {FTS_TABLE} ({FTS_TABLE}, rowid, body) VALUES ('delete', old.id, old.content);
    END
    """,
)


def _resumable_backfills(connection: sqlite3.Connection) -> None:
    """The back-fills' table, and the index's message triggers that heed it."""
    connection.execute(_BACKFILL_SCHEMA)
    indexed = connection.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (FTS_TABLE,)
    ).fetchone()
    if indexed is None:
        return  # no FTS5 here: search reads the text (LIKE)
    for name in ("message_fts_insert", "message_fts_update", "message_fts_delete"):
        connection.execute(f"DROP TRIGGER IF EXISTS {name}")
    for statement in _PENDING_AWARE_TRIGGERS:
        connection.execute(statement)


_RESUMABLE_BACKFILLS = Migration(
    version=15,
    description="walks over every message run after the first paint, resumably",
    statements=(),
    then=_resumable_backfills,
)

# Which of a conversation's live messages changed since a tail was read
# (app.store.live_messages): every change to a live message — written, edited, streamed,
# finished, shelved, deleted, archived by a summary or made live again by undoing one,
# imported, whatever wrote it — moves the conversation's `live_rev` and stamps the row
# with it (`rev`), by trigger, so no path can forget to. A live row leaving the tail
# (deleted, archived) also stamps `live_cut`: the tail is then read whole. Archived
# rows' changes move nothing. The index holds live rows only.
_LIVE_CHANGES = Migration(
    version=16,
    description="which live messages changed since a tail was read",
    statements=(
        "ALTER TABLE session_count ADD COLUMN live_rev INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE session_count ADD COLUMN live_cut INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE message ADD COLUMN rev INTEGER NOT NULL DEFAULT 0",
        "CREATE INDEX message_live_rev ON message (session_id, rev) WHERE summary_id IS NULL",
        """
        CREATE TRIGGER live_rev_insert AFTER INSERT ON message
        WHEN new.summary_id IS NULL BEGIN
            UPDATE session_count SET live_rev = live_rev + 1 WHERE session_id = new.session_id;
            UPDATE message SET rev = (
                SELECT live_rev FROM session_count WHERE session_id = new.session_id
            ) WHERE id = new.id;
        END
        """,
        # Not when only `rev` changed: the trigger's own stamp.
        """
        CREATE TRIGGER live_rev_update AFTER UPDATE ON message
        WHEN (old.summary_id IS NULL OR new.summary_id IS NULL) AND new.rev IS old.rev BEGIN
            UPDATE session_count SET live_rev = live_rev + 1,
                live_cut = CASE WHEN new.summary_id IS NULL THEN live_cut ELSE live_rev + 1 END
            WHERE session_id = new.session_id;
            UPDATE message SET rev = (
                SELECT live_rev FROM session_count WHERE session_id = new.session_id
            ) WHERE id = new.id;
        END
        """,
        """
        CREATE TRIGGER live_rev_delete AFTER DELETE ON message
        WHEN old.summary_id IS NULL BEGIN
            UPDATE session_count SET live_rev = live_rev + 1, live_cut = live_rev + 1
            WHERE session_id = old.session_id;
        END
        """,
    ),
)


# What a message's quote body counts when recall quotes it whole
# (app.core.recall.whole_quote_tokens): stored when the message is saved, so fitting the
# recall block counts a quote's heading only (issue 22: ~20 exact counts of bodies were
# 1.8-2.7 ms of a turn). NULL: not known (recall counts the quote), or the message is
# longer than any excerpt. A text changed without its count (a damaged text put back
# from a backup) loses it, by trigger; the writers that change a text set it. Messages
# saved before this version keep NULL, and are counted when quoted, as before: filling
# them would be a walk after the upgrade (~30 s at a million messages, sending held
# meanwhile, app.ui.upgrade) for a saving of ~0.1 ms a quote.
_QUOTE_TOKENS = Migration(
    version=17,
    description="each message's quote count, for fitting the recall block",
    statements=(
        "ALTER TABLE message ADD COLUMN quote_tokens INTEGER",
        """
        CREATE TRIGGER message_quote_tokens_stale AFTER UPDATE OF content ON message
        WHEN new.quote_tokens IS NOT NULL AND new.quote_tokens IS old.quote_tokens
            AND new.content IS NOT old.content BEGIN
            UPDATE message SET quote_tokens = NULL WHERE id = new.id;
        END
        """,
    ),
)

MIGRATIONS: tuple[Migration, ...] = (
    _SESSIONS_AND_MESSAGES,
    _LIVE_TAIL_AND_ESTIMATES,
    _SUMMARIES_EVENTS_AND_PINS,
    _TRIGGER_STATE,
    _FULL_TEXT_SEARCH,
    _REPLY_ENDINGS,
    _ARCHIVE_LOOKUPS,
    _MESSAGE_VERSIONS,
    _ATTACHMENTS,
    _THINKING,
    _UPLOADS,
    _REFUSALS,
    _CHECKSUMS,
    _RECALLED_QUOTES,
    _RESUMABLE_BACKFILLS,
    _LIVE_CHANGES,
    _QUOTE_TOKENS,
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
    leaving the database at the previous version. A new database (version 0) is
    made in one transaction instead: it holds nothing to keep between steps, and
    one commit (one write and fsync of the log) replaces 15 before the first start's
    first paint (open_database on an empty folder: median 25 → 19 ms).
    """
    _check_numbering(migrations)
    if user_version(connection) == 0 and migrations:
        return _create(connection, migrations)
    for migration in migrations:
        if user_version(connection) >= migration.version:
            continue
        with _immediate(connection):
            # Re-read under the write lock: another connection may have done it.
            if user_version(connection) < migration.version:
                _apply(connection, migration)
    return user_version(connection)


def _create(connection: sqlite3.Connection, migrations: tuple[Migration, ...]) -> int:
    """Every migration over a new database, in one transaction: all or nothing."""
    with _immediate(connection):
        # Re-read under the write lock: another connection may have begun it.
        start = user_version(connection)
        for migration in migrations:
            if start < migration.version:
                _apply(connection, migration)
    return user_version(connection)


@contextmanager
def _immediate(connection: sqlite3.Connection) -> Iterator[None]:
    """BEGIN IMMEDIATE … COMMIT; anything raised inside rolls it back whole."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        yield
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise


def _apply(connection: sqlite3.Connection, migration: Migration) -> None:
    for statement in migration.statements:
        connection.execute(statement)
    if migration.then is not None:
        migration.then(connection)
    # user_version is in the file header, so it commits with the rest.
    connection.execute(f"PRAGMA user_version = {migration.version:d}")


def _check_numbering(migrations: tuple[Migration, ...]) -> None:
    expected = list(range(1, len(migrations) + 1))
    actual = [migration.version for migration in migrations]
    if actual != expected:
        raise ValueError(f"migrations must be numbered 1..n without gaps, got {actual}")
