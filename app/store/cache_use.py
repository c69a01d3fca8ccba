"""What a conversation's replies used (read from Claude's prompt cache, wrote, cost),
summed from the usage and model stored with each reply (DESIGN §2: `message.usage`)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from app.core.caching import CacheUse
from app.core.models import Usage

# Through the (session_id, seq) order of the message table's index: a conversation
# is read once when opened, then only the replies after the last one counted. One row
# per model, since each model has its own price.
_CACHE_USE_SQL = (
    "SELECT model, coalesce(sum(json_extract(usage, '$.cache_read_input_tokens')), 0), "
    "coalesce(sum(json_extract(usage, '$.cache_creation_input_tokens')), 0), "
    "coalesce(sum(json_extract(usage, '$.input_tokens')), 0), "
    "coalesce(sum(json_extract(usage, '$.output_tokens')), 0), max(seq), "
    # Requests counted, so a price banded by prompt size reads the average prompt.
    "coalesce(sum(coalesce(json_extract(usage, '$.requests'), 1)), 0) "
    "FROM message WHERE session_id = ? AND seq > ? AND role = 'assistant' "
    "AND usage IS NOT NULL GROUP BY model"
)


def read_cache_use(
    connection: sqlite3.Connection, session_id: str, after_seq: int = 0
) -> tuple[CacheUse, int]:
    """The figures of the replies of `session_id` after `after_seq` that reported
    usage, and the seq of the last of them (`after_seq` when there is none)."""
    use, last = CacheUse(), after_seq
    for model, read, written, uncached, output, last_seq, requests in connection.execute(
        _CACHE_USE_SQL, (session_id, after_seq)
    ):
        usage = Usage(
            input_tokens=int(uncached),
            output_tokens=int(output),
            cache_creation_input_tokens=int(written),
            cache_read_input_tokens=int(read),
            requests=max(1, int(requests)),
        )
        use = use.combined(CacheUse.of(usage, model))
        last = max(last, int(last_seq))
    return use, last


@dataclass(frozen=True)
class CacheRead:
    """The figures of the replies after `after_seq` (`use`) and the last one's seq
    (`last_seq`), as a reply's job reads them once its reply is saved (app.chat.cache_use)."""

    after_seq: int
    use: CacheUse
    last_seq: int
