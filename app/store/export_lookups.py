"""The archive searches Claude ran (table `lookup`) in an export, and back on import.

A lookup belongs to a reply. Message row ids are not exported (app.store.export), so
a lookup names its reply by the reply's `seq`, as summaries cite messages; an import
finds the new row of that seq. Each excerpt it returned is kept exactly as it was
sent to Claude: the JSON the `lookup` table holds, field for field.

The Markdown export gives each reply that searched one line, the transcript's own
("Looked in earlier messages: 2 found"), with what was searched for; the quotes automatic
recall took from the user's other conversations (ordinal 0, `RECALLED`) are named on it
("Quoted 2 messages from your other conversations (“Trip to Porto”)").
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from app.core.lookup import Lookup, LookupHit, summary_line

if TYPE_CHECKING:
    from app.store.export import LookupRecord

# The lookups of one conversation, as the export holds them: by reply, in the order they ran.
LOOKUPS_QUERY = (
    "SELECT m.seq AS message_seq, l.ordinal, l.query, l.results_json AS results, l.created_at "
    "FROM lookup AS l JOIN message AS m ON m.id = l.message_id "
    "WHERE m.session_id = ? ORDER BY m.seq, l.ordinal"
)


def lookup_problems(lookups: Sequence[LookupRecord], replies: Iterable[int]) -> list[str]:
    """What does not add up in a conversation's lookups, given the seqs of its replies."""
    problems: list[str] = []
    known = set(replies)
    seen: set[tuple[int, int]] = set()
    for lookup in lookups:
        key = (lookup.message_seq, lookup.ordinal)
        if lookup.message_seq not in known:
            problems.append(
                f"an archive search belongs to message {lookup.message_seq}, "
                "which is not one of Claude's replies in the file"
            )
        elif key in seen:
            problems.append(
                f"message {lookup.message_seq} has two archive searches numbered {lookup.ordinal}"
            )
        seen.add(key)
    return problems


def insert_lookups(
    cursor: sqlite3.Cursor, session_id: str, lookups: Sequence[LookupRecord]
) -> None:
    """Add a conversation's lookups; its messages are inserted already (new row ids)."""
    if not lookups:
        return
    row_of = dict(cursor.execute("SELECT seq, id FROM message WHERE session_id = ?", (session_id,)))
    cursor.executemany(
        "INSERT INTO lookup (message_id, ordinal, query, results_json, created_at) "
        "VALUES (?, ?, ?, ?, ?)",
        [
            (
                row_of[lookup.message_seq],
                lookup.ordinal,
                lookup.query,
                json.dumps([hit.model_dump() for hit in lookup.results], ensure_ascii=False),
                lookup.created_at,
            )
            for lookup in lookups
        ],
    )


def lookups_by_reply(records: Iterable[dict[str, Any]]) -> dict[int, list[dict[str, Any]]]:
    """The exported lookups of a conversation, by the seq of their reply."""
    found: dict[int, list[dict[str, Any]]] = {}
    for record in records:
        found.setdefault(int(record["message_seq"]), []).append(record)
    return found


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>])")


def markdown_lookup_line(records: Sequence[dict[str, Any]]) -> str:
    """One line for a reply's searches: the transcript's line and what was searched for."""
    lookups = tuple(
        Lookup(
            message_id=0,
            ordinal=int(record["ordinal"]),
            query=str(record["query"]),
            hits=tuple(LookupHit.from_json(hit) for hit in record["results"]),
            created_at=datetime.fromisoformat(str(record["created_at"])),
        )
        for record in records
    )
    searched = [lookup for lookup in lookups if not lookup.automatic]
    queries = ", ".join(f"“{_escaped(' '.join(lookup.query.split()))}”" for lookup in searched)
    line = _escaped(summary_line(lookups))
    return f"_{line} — searched for {queries}._" if searched else f"_{line}._"


def _escaped(text: str) -> str:
    """`text` as Markdown shows it literally (a query may hold * or _)."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)
