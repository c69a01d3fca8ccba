"""The archive of one conversation, searched for automatic recall (issue 12, DESIGN §3).

`RecallIndex.archived_matches` returns the archived messages of a conversation
(covered by a summary: `summary_id` set, which includes the sources of compressed
summaries) that hold any of a message's salient terms, best first by bm25 from the
full-text index of migration 5, or read with LIKE where this SQLite has no FTS5.

It is the reusable "search one conversation's archive" of the store: any caller
that needs archived originals for a few terms (the recall block, a search tool)
can use it. Like the other stores it wraps one connection of the calling thread.

Cost: the index is read only between the conversation's first and last message
ids, and a term that matches more than COMMON_AT_MOST messages there is left out
(it says little about which message is meant, and bm25 would have to score every
match): a turn costs a few index lookups, whatever the archive holds.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from app.core.models import Role
from app.core.recall import ArchivedMatch, RecallTerm
from app.store.database import connect
from app.store.migrations import FTS_TABLE
from app.store.search import _escape_like, _has_index
from app.store.transactions import translated_errors

# Candidates read for ranking: the block holds far fewer quotes than this.
CANDIDATES = 16
# For a question (it asks for a kind of fact): the message that answered it may rank
# below talk of the same subject by bm25, and is found by the kind it holds.
QUESTION_CANDIDATES = 32
# A term matching more of the conversation's messages than this is too common to rank by.
COMMON_AT_MOST = 300

_COLUMNS = "m.id, m.seq, m.role, m.created_at, m.content"


class RecallIndex:
    """Finds a conversation's archived messages that hold given terms.

    Attributes:
        database: the file behind the connection, named in error messages.
        indexed: whether the full-text index is there (False: LIKE is used).
    """

    def __init__(self, connection: sqlite3.Connection, *, database: Path | None = None) -> None:
        """Use `connection` (autocommit); the caller keeps owning it."""
        self._connection = connection
        self.database = database
        with translated_errors("look in the archive", database):
            self.indexed = _has_index(connection)

    @classmethod
    def open(cls, path: Path | str) -> RecallIndex:
        """An index reader on a new connection of its own, for the calling thread."""
        return cls(connect(path), database=Path(path))

    def close(self) -> None:
        """Close the connection (only for one made by `open`)."""
        self._connection.close()

    def archived_matches(
        self,
        session_id: str,
        terms: Sequence[RecallTerm],
        limit: int = CANDIDATES,
        *,
        other_forms: bool = False,
    ) -> list[ArchivedMatch]:
        """Archived messages of `session_id` holding any of `terms`, best first (bm25;
        newest first without the index), at most `limit`.

        With `other_forms`, a word in no message as written is looked up in its other
        forms ("insurer" → "insurance"): a lookup a form, so only for a question.
        """
        if not terms or limit <= 0:
            return []
        with translated_errors("look in the archive", self.database):
            if self.indexed:
                return self._indexed(session_id, terms, limit, other_forms)
            return self._scanned(session_id, terms, limit)

    def _indexed(
        self, session_id: str, terms: Sequence[RecallTerm], limit: int, other_forms: bool
    ) -> list[ArchivedMatch]:
        bounds = self._id_range(session_id)
        if bounds is None:
            return []
        low, high = bounds
        phrases = [_phrase(term) for term in terms]
        counts = self._counts(phrases, low, high)
        if other_forms:
            unseen = [t for t, n in zip(terms, counts, strict=True) if not n and t.forms[1:]]
            phrases += [_other_forms(term) for term in unseen]
            counts += self._counts(phrases[len(counts) :], low, high) if unseen else []
        # Not asked again: a phrase in no message here, nor one in too many of them.
        telling = [p for p, n in zip(phrases, counts, strict=True) if 0 < n <= COMMON_AT_MOST]
        if not telling:
            return []
        rows = self._connection.execute(
            f"SELECT {_COLUMNS}, hit.rank FROM ("
            f"SELECT rowid AS doc_id, bm25({FTS_TABLE}) AS rank FROM {FTS_TABLE} "
            f"WHERE {FTS_TABLE} MATCH ? AND rowid BETWEEN ? AND ? LIMIT -1) AS hit "
            "JOIN message AS m ON m.id = hit.doc_id "
            "WHERE m.session_id = ? AND m.summary_id IS NOT NULL "
            "ORDER BY hit.rank, m.seq DESC LIMIT ?",
            (" OR ".join(telling), low, high, session_id, limit),
        ).fetchall()
        return [_match(row) for row in rows]

    def _id_range(self, session_id: str) -> tuple[int, int] | None:
        """The conversation's first and last message ids (ids grow with seq)."""
        first, last = self._connection.execute(
            "SELECT (SELECT id FROM message WHERE session_id = ?1 ORDER BY seq LIMIT 1), "
            "(SELECT id FROM message WHERE session_id = ?1 ORDER BY seq DESC LIMIT 1)",
            (session_id,),
        ).fetchone()
        if first is None or last is None:
            return None
        return min(int(first), int(last)), max(int(first), int(last))

    def _counts(self, phrases: Sequence[str], low: int, high: int) -> list[int]:
        """How many of the conversation's index rows hold each phrase, up to one past
        COMMON_AT_MOST: one statement for all of them."""
        one = (
            f"(SELECT count(*) FROM (SELECT 1 FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH ? "
            "AND rowid BETWEEN ? AND ? LIMIT ?))"
        )
        parameters = [v for p in phrases for v in (p, low, high, COMMON_AT_MOST + 1)]
        row = self._connection.execute(
            f"SELECT {', '.join([one] * len(phrases))}", parameters
        ).fetchone()
        return [int(count) for count in row]

    def _scanned(
        self, session_id: str, terms: Sequence[RecallTerm], limit: int
    ) -> list[ArchivedMatch]:
        # Without the index: each word of a term as a LIKE pattern (all of them required),
        # any term; `rank_matches` then orders by what they hold.
        clauses: list[str] = []
        parameters: list[object] = [session_id]
        for term in terms:
            clauses.append(
                "(" + " AND ".join(["m.content LIKE ? ESCAPE '\\'"] * len(term.words)) + ")"
            )
            parameters.extend(f"%{_escape_like(word)}%" for word in term.words)
        rows = self._connection.execute(
            f"SELECT {_COLUMNS}, 0.0 FROM message AS m "
            "WHERE m.session_id = ? AND m.summary_id IS NOT NULL AND "
            f"({' OR '.join(clauses)}) ORDER BY m.seq DESC LIMIT ?",
            (*parameters, limit * 4),
        ).fetchall()
        return [_match(row) for row in rows]


def _other_forms(term: RecallTerm) -> str:
    """The term's other forms, each an exact word, joined by OR: never a prefix query,
    which would read every word of the index that starts so."""
    return " OR ".join(f'"{form}"' for form in term.forms[1:])


def _phrase(term: RecallTerm) -> str:
    """An FTS phrase of the term's words: never read as an operator."""
    return '"' + " ".join(term.words) + '"'


def _match(row: tuple[object, ...]) -> ArchivedMatch:
    message_id, seq, role, created_at, content, rank = row
    return ArchivedMatch(
        message_id=int(str(message_id)),
        seq=int(str(seq)),
        role=Role(str(role)),
        created_at=datetime.fromisoformat(str(created_at)),
        content=str(content),
        rank=float(str(rank)),
    )
