"""What a conversation's replies read from Claude's prompt cache, summed from the
usage stored with each reply (DESIGN §2: `message.usage`)."""

from __future__ import annotations

import sqlite3

from app.core.caching import CacheUse

# Through the (session_id, seq) order of the message table's index: a conversation
# is read once when opened, then only the replies after the last one counted.
_CACHE_USE_SQL = (
    "SELECT coalesce(sum(json_extract(usage, '$.cache_read_input_tokens')), 0), "
    "coalesce(sum(json_extract(usage, '$.cache_creation_input_tokens')), 0), "
    "coalesce(sum(json_extract(usage, '$.input_tokens')), 0), max(seq) "
    "FROM message WHERE session_id = ? AND seq > ? AND role = 'assistant' "
    "AND usage IS NOT NULL"
)


def read_cache_use(
    connection: sqlite3.Connection, session_id: str, after_seq: int = 0
) -> tuple[CacheUse, int]:
    """The cache figures of the replies of `session_id` after `after_seq` that reported
    usage, and the seq of the last of them (`after_seq` when there is none)."""
    read, written, uncached, last_seq = connection.execute(
        _CACHE_USE_SQL, (session_id, after_seq)
    ).fetchone()
    use = CacheUse(read=int(read), written=int(written), total=int(read + written + uncached))
    return use, after_seq if last_seq is None else int(last_seq)
