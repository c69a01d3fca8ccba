"""Finding what was said, and the shape of the history (DESIGN §2 message_fts, §8).

`ArchiveSearch` answers `app.core.search` queries from the full-text index that
migration 5 built (`message_fts`), or, where this SQLite has no FTS5, by reading the
text with LIKE (slower; said once in the log). Like the other stores it wraps one
connection and belongs to the thread that made it.

The user's text is only ever words: it is split into runs of letters and digits
(any script), each run quoted as an FTS string, and the runs ANDed; nothing the user
types is read as search syntax. Text without a letter or digit finds nothing.

What a hit says (`SearchHit`):
- a live message: `summary_id` None, `archived` False;
- an archived message: `archived` True, `summary_id` the *active* summary covering it
  now (its summary's chain walked up through `parent_id`);
- a summary: active and superseded summaries are searched (a superseded one's words
  live on only in condensed form inside its parent, so its own text is still worth
  finding); `summary_id` is the active summary at the top of its chain (itself when
  active: the card the window can show), `archived` True when it is superseded. Undone
  summaries are not searched.
"""

from __future__ import annotations

import logging
import re
import sqlite3
import unicodedata
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from app.core.search import (
    Author,
    ConversationOverview,
    SearchHit,
    SearchOrder,
    SearchPage,
    SearchQuery,
    SnippetPart,
    TimelineEntry,
)
from app.core.summary import Summary
from app.store.backfill import index_pending
from app.store.database import connect
from app.store.migrations import FTS_TABLE, summary_text
from app.store.sessions import _stamp
from app.store.summaries import _SUMMARY_COLUMNS, _summary_from_row
from app.store.transactions import translated_errors

log = logging.getLogger(__name__)

# Words of a query beyond this many are ignored: a pasted page is not a search.
MAX_WORDS = 16
# Words around the best match in a snippet.
SNIPPET_WORDS = 16
# Runs of letters and digits, as FTS5's unicode61 tokenizer splits text.
_WORD = re.compile(r"[^\W_]+")
_SPACE = re.compile(r"\s+")
_warned_no_index = False


def query_words(text: str) -> list[str]:
    """The words of the user's text (letters and digits), at most `MAX_WORDS`."""
    return _WORD.findall(text)[:MAX_WORDS]


class ArchiveSearch:
    """Searches every conversation, and lists conversations and their timelines.

    Attributes:
        database: the file behind the connection, named in error messages.
        indexed: whether the full-text index is there (False: LIKE is used).
    """

    def __init__(self, connection: sqlite3.Connection, *, database: Path | None = None) -> None:
        """Take ownership of `connection` (autocommit, from `open_database`/`connect`)."""
        global _warned_no_index
        self._connection = connection
        self.database = database
        with self._read("search your conversations"):
            self._has_fts = _has_fts(connection)
            # The index is filled after the first paint of an upgrade (app.store.backfill);
            # until then the text is read, and looked at again at each search.
            self._filling = self._has_fts and index_pending(connection)
        if not self._has_fts and not _warned_no_index:
            _warned_no_index = True
            log.warning("No full-text index in this database: search reads the text (LIKE).")

    @classmethod
    def open(cls, path: Path | str) -> ArchiveSearch:
        """A search on a new connection of its own, for the calling thread."""
        return cls(connect(path), database=Path(path))

    def close(self) -> None:
        """Close the connection; the search cannot be used afterwards."""
        self._connection.close()

    @property
    def indexed(self) -> bool:
        """Whether the full-text index is there and filled (False: LIKE is used)."""
        if self._filling:
            self._filling = index_pending(self._connection)
        return self._has_fts and not self._filling

    def interrupt(self) -> None:
        """Stop the query running now (from any thread); it fails as a StorageError."""
        self._connection.interrupt()

    # --- searching ---------------------------------------------------------------

    def search(self, query: SearchQuery) -> SearchPage:
        """One page of what matches `query`, with `total` over every page."""
        words = query_words(query.text)
        if not words or query.limit <= 0:
            return SearchPage(query=query, hits=(), total=0)
        with self._read("search your conversations"):
            at_least = False
            if self.indexed and _unfiltered(query):
                rows, total, at_least = _RecentFirst(self._connection, words).page(query)
            else:
                rows, total = self._filtered(query, words)
            hits = tuple(self._hit(row, words) for row in rows)
        return SearchPage(
            query=query, hits=hits, total=total, at_least=at_least, partial=self._filling
        )

    def _filtered(self, query: SearchQuery, words: Sequence[str]) -> tuple[list[_Row], int]:
        ranges = None
        if self.indexed and query.session_id is not None:
            # One conversation: only the index rows between its first and last message
            # (and summary), so a common word costs what the conversation holds.
            ranges = [
                (int(low), int(high))
                for low, high in self._connection.execute(
                    "SELECT min(id), max(id) FROM message WHERE session_id = ? UNION ALL "
                    "SELECT min(k.key), max(k.key) FROM summary AS s "
                    "JOIN summary_search_key AS k ON k.summary_id = s.id WHERE s.session_id = ?",
                    (query.session_id, query.session_id),
                )
                if low is not None
            ]
        ranked = query.order is SearchOrder.BEST
        matches = _Matches(words, self.indexed, ranked=ranked, ranges=ranges)
        where, parameters = matches.where(query)
        rows = self._connection.execute(
            f"SELECT {_ROW}, count(*) OVER () FROM {matches.source} WHERE {where} "
            f"ORDER BY {_ORDER[query.order]} LIMIT ? OFFSET ?",
            (*matches.parameters, *parameters, query.limit, max(0, query.offset)),
        ).fetchall()
        if rows:
            total = int(rows[0][-1])
        else:
            (total,) = self._connection.execute(
                f"SELECT count(*) FROM {matches.source} WHERE {where}",
                (*matches.parameters, *parameters),
            ).fetchone()
        return [_Row(*row[:-1]) for row in rows], int(total)

    def matching_sessions(self, text: str, limit: int = 500) -> list[str]:
        """Ids of the conversations whose messages or summaries hold every word, best first
        (most recently mentioned first when the words are very common)."""
        words = query_words(text)
        if not words or limit <= 0:
            return []
        with self._read("search your conversations"):
            recent = _RecentFirst(self._connection, words)
            if self.indexed and recent.count(at_most=RANK_AT_MOST + 1) > RANK_AT_MOST:
                return self._recent_sessions(words, limit)
            matches = _Matches(words, self.indexed)
            where, parameters = matches.where(SearchQuery(text=text))
            rows = self._connection.execute(
                # LIMIT -1 keeps the matches a subquery: bm25() cannot run inside GROUP BY.
                "SELECT session, min(rank), max(created_at) FROM ("
                "SELECT coalesce(m.session_id, s.session_id) AS session, rank, "
                f"coalesce(m.created_at, s.created_at) AS created_at FROM {matches.source} "
                f"WHERE {where} LIMIT -1) GROUP BY session ORDER BY 2, 3 DESC LIMIT ?",
                (*matches.parameters, *parameters, limit),
            ).fetchall()
        return [str(row[0]) for row in rows]

    def _recent_sessions(self, words: Sequence[str], limit: int) -> list[str]:
        """Newest matches first, stopping at `limit` conversations: a word in most
        messages finds its conversations without reading every match."""
        found: dict[str, None] = {}
        cursor = self._connection.execute(
            "SELECT coalesce(m.session_id, s.session_id) FROM (SELECT rowid AS doc_id FROM "
            f"{FTS_TABLE} WHERE {FTS_TABLE} MATCH ?) AS hit "
            "LEFT JOIN message AS m ON m.id = hit.doc_id "
            "LEFT JOIN summary_search_key AS k ON k.key = hit.doc_id "
            "LEFT JOIN summary AS s ON s.id = k.summary_id AND s.state != 'undone' "
            "WHERE m.id IS NOT NULL OR s.id IS NOT NULL ORDER BY hit.doc_id DESC",
            (fts_match(words),),
        )
        try:
            for (session_id,) in cursor:
                found[str(session_id)] = None
                if len(found) >= limit:
                    break
        finally:
            cursor.close()
        return list(found)

    # --- the history ---------------------------------------------------------------

    def conversations(self) -> list[ConversationOverview]:
        """Every conversation with its counts (kept by triggers), most recently active first."""
        with self._read("list your conversations"):
            rows = self._connection.execute(
                "SELECT c.id, c.title, c.created_at, c.updated_at, coalesce(n.messages, 0), "
                "coalesce(n.archived, 0), coalesce(n.summaries, 0) FROM session AS c "
                "LEFT JOIN session_count AS n ON n.session_id = c.id "
                "ORDER BY c.updated_at DESC, c.id"
            ).fetchall()
        return [
            ConversationOverview(
                session_id=row[0],
                title=row[1],
                created_at=datetime.fromisoformat(row[2]),
                updated_at=datetime.fromisoformat(row[3]),
                messages=row[4],
                archived=row[5],
                summaries=row[6],
            )
            for row in rows
        ]

    def timeline(self, session_id: str) -> list[TimelineEntry]:
        """The active summaries in order (compressed ones with what they folded in, oldest
        first), then the live messages as one entry when there are any."""
        with self._read("load the conversation's history"):
            summaries = [
                _summary_from_row(row)
                for row in self._connection.execute(
                    f"SELECT {_SUMMARY_COLUMNS} FROM summary WHERE session_id = ? "
                    "AND state != 'undone' ORDER BY first_seq, created_at, rowid",
                    (session_id,),
                )
            ]
            stretches = {
                row[0]: _Stretch(row[1], row[2], _moment(row[3]), _moment(row[4]), row[5])
                for row in self._connection.execute(
                    "SELECT summary_id, min(seq), max(seq), min(created_at), max(created_at), "
                    "count(*) FROM message WHERE session_id = ? GROUP BY summary_id",
                    (session_id,),
                )
            }
        children: dict[str, list[Summary]] = {}
        for summary in summaries:
            if summary.parent_id is not None:
                children.setdefault(summary.parent_id, []).append(summary)
        entries = [
            _entry(summary, children, stretches)
            for summary in summaries
            if summary.state == "active"
        ]
        live = stretches.get(None)
        if live is not None:
            entries.append(
                TimelineEntry(None, live.first, live.last, live.first_at, live.last_at, live.count)
            )
        return entries

    # --- helpers -----------------------------------------------------------------------

    def _hit(self, row: _Row, words: Sequence[str]) -> SearchHit:
        if row.summary_id is None:
            (body,) = self._connection.execute(
                "SELECT content FROM message WHERE id = ?", (row.message_id,)
            ).fetchone()
            covering = self._active_top(row.covering) if row.covering is not None else None
            author, archived = Author(str(row.role)), row.covering is not None
        else:
            (body,) = self._connection.execute(
                f"SELECT {summary_text('s')} FROM summary AS s WHERE s.id = ?", (row.summary_id,)
            ).fetchone()
            covering = self._active_top(row.summary_id)
            author, archived = Author.SUMMARY, row.state == "superseded"
        (title,) = self._connection.execute(
            "SELECT title FROM session WHERE id = ?", (row.session_id,)
        ).fetchone()
        return SearchHit(
            session_id=row.session_id,
            session_title=title,
            author=author,
            message_id=row.message_id,
            seq=row.seq,
            summary_id=covering,
            archived=archived,
            created_at=datetime.fromisoformat(row.created_at),
            snippet=snippet(body, words),
        )

    def _active_top(self, summary_id: str) -> str | None:
        """The active summary at the top of `summary_id`'s chain (None if it has none)."""
        row = self._connection.execute(
            "WITH RECURSIVE chain (id, parent_id, state) AS ("
            "SELECT id, parent_id, state FROM summary WHERE id = ? UNION ALL "
            "SELECT s.id, s.parent_id, s.state FROM summary AS s JOIN chain "
            "ON s.id = chain.parent_id) "
            "SELECT id FROM chain WHERE parent_id IS NULL AND state = 'active'",
            (summary_id,),
        ).fetchone()
        return str(row[0]) if row is not None else None

    def _read(self, action: str) -> AbstractContextManager[None]:
        return translated_errors(action, self.database)


# --- the query ---------------------------------------------------------------------

# What each row of a search carries before it becomes a SearchHit.
_ROW = (
    "rank, coalesce(m.session_id, s.session_id), m.id, m.seq, m.role, m.summary_id, "
    "s.id, s.state, coalesce(m.created_at, s.created_at), coalesce(m.seq, s.first_seq) "
    "AS position"
)
_ORDER = {
    SearchOrder.BEST: "rank, 9 DESC, position DESC",
    SearchOrder.NEWEST: "9 DESC, position DESC",
    # A summary before the originals it covers, as the transcript shows them.
    SearchOrder.IN_ORDER: "2, position, m.id IS NOT NULL, 9",
}


@dataclass(frozen=True)
class _Row:
    rank: float
    session_id: str
    message_id: int | None
    seq: int | None
    role: str | None
    covering: str | None
    summary_id: str | None
    state: str | None
    created_at: str
    position: int


class _Matches:
    """Where the words are found: the full-text index, or LIKE over the text."""

    def __init__(
        self,
        words: Sequence[str],
        indexed: bool,
        *,
        ranked: bool = True,
        ranges: Sequence[tuple[int, int]] | None = None,
    ) -> None:
        """`ranked`: compute bm25 (it counts every match of each word once per query, so
        only when the order needs it); `ranges`: only index rows with these rowids."""
        self.parameters: tuple[object, ...]
        if indexed:
            # Every word quoted: an FTS string, never an operator ("NEAR", "-", "*").
            match = fts_match(words)
            rank = f"bm25({FTS_TABLE})" if ranked else "0.0"
            select = (
                f"SELECT rowid AS doc_id, {rank} AS rank FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH ?"
            )
            if ranges is None:
                hits, self.parameters = select, (match,)
            else:
                parts = [f"{select} AND rowid BETWEEN ? AND ?" for _ in ranges] or [
                    f"{select} AND 0"
                ]
                hits = " UNION ALL ".join(parts)
                bounds: list[tuple[object, ...]] = [(match, low, high) for low, high in ranges]
                bounds = bounds or [(match,)]
                self.parameters = tuple(value for group in bounds for value in group)
            self.source = (
                f"({hits}) AS hit "
                "LEFT JOIN message AS m ON m.id = hit.doc_id "
                "LEFT JOIN summary_search_key AS k ON k.key = hit.doc_id "
                "LEFT JOIN summary AS s ON s.id = k.summary_id"
            )
            self._message_match = self._summary_match = "1"
        else:
            self.source = (
                "(SELECT 0.0 AS rank, 'message' AS kind, id AS doc_id FROM message UNION ALL "
                "SELECT 0.0, 'summary', rowid FROM summary) AS hit "
                "LEFT JOIN message AS m ON hit.kind = 'message' AND m.id = hit.doc_id "
                "LEFT JOIN summary AS s ON hit.kind = 'summary' AND s.rowid = hit.doc_id"
            )
            self.parameters = ()
            patterns = [f"%{_escape_like(word)}%" for word in words]
            self._message_match = " AND ".join(["m.content LIKE ? ESCAPE '\\'"] * len(words))
            self._summary_match = " AND ".join(
                [f"({summary_text('s')}) LIKE ? ESCAPE '\\'"] * len(words)
            )
            self._patterns = tuple(patterns)

    def where(self, query: SearchQuery) -> tuple[str, tuple[object, ...]]:
        """The WHERE clause for `query`'s filters, and its parameters."""
        roles = [a.value for a in query.authors if a is not Author.SUMMARY]
        if not query.authors:
            roles = [Author.YOU.value, Author.CLAUDE.value]
        with_summaries = not query.authors or Author.SUMMARY in query.authors
        message: list[str] = ["m.id IS NOT NULL", self._message_match]
        summary: list[str] = ["s.id IS NOT NULL", "s.state != 'undone'", self._summary_match]
        message_parameters: list[object] = list(getattr(self, "_patterns", ()))
        summary_parameters: list[object] = list(getattr(self, "_patterns", ()))
        for clause, value in (
            ("session_id = ?", query.session_id),
            ("created_at >= ?", _stamp(query.since) if query.since else None),
            ("created_at < ?", _stamp(query.until) if query.until else None),
        ):
            if value is not None:
                message.append(f"m.{clause}")
                summary.append(f"s.{clause}")
                message_parameters.append(value)
                summary_parameters.append(value)
        message.append(f"m.role IN ({', '.join('?' * len(roles))})" if roles else "0")
        message_parameters.extend(roles)
        if not with_summaries:
            summary.append("0")
        return (
            f"(({' AND '.join(message)}) OR ({' AND '.join(summary)}))",
            (*message_parameters, *summary_parameters),
        )


# Beyond this many matches of a query, "best" is newest first: bm25 costs a count of
# every match of each word per query (0.2 s for a word in 95% of a million messages),
# and a word that common says little about which message is best.
RANK_AT_MOST = 5_000
# Counting stops here over every conversation: a word in most of a million messages took
# ~200 ms to count exactly (bench/bench_search.py); past this, "10,000+ found" says enough.
COUNT_AT_MOST = 10_000


def _unfiltered(query: SearchQuery) -> bool:
    everyone = not query.authors or query.authors == frozenset(Author)
    plain = query.session_id is None and query.since is None and query.until is None
    return everyone and plain and query.order is not SearchOrder.IN_ORDER


class _RecentFirst:
    """A page over every conversation, read from the index alone (no join per match).

    Messages (rowid > 0) come newest first by rowid, which follows the order they were
    stored in; summaries (rowid < 0) newest first by ascending key. Ranked by bm25 when
    there are at most RANK_AT_MOST matches. Undone summaries are dropped here.
    """

    def __init__(self, connection: sqlite3.Connection, words: Sequence[str]) -> None:
        self._connection = connection
        self._match = fts_match(words)

    def page(self, query: SearchQuery) -> tuple[list[_Row], int, bool]:
        """The page, the number of matches, and whether that number is only a lower bound
        (COUNT_AT_MOST messages counted and more left)."""
        wanted = max(0, query.offset) + query.limit
        messages = self._count("rowid > 0", at_most=COUNT_AT_MOST + 1)
        at_least = messages > COUNT_AT_MOST
        messages = min(messages, COUNT_AT_MOST)
        summaries = self._count("rowid < 0")
        ranked = query.order is SearchOrder.BEST and messages + summaries <= RANK_AT_MOST
        found = self._side("rowid > 0", "rowid DESC", wanted, ranked)
        found += self._side("rowid < 0", "rowid", wanted, ranked)
        rows = [self._row(doc_id, rank) for doc_id, rank in found]
        rows.sort(key=lambda row: (row.created_at, row.position), reverse=True)
        if ranked:
            rows.sort(key=lambda row: row.rank)  # stable: newest first among equals
        return rows[max(0, query.offset) : wanted], messages + summaries, at_least

    def count(self, *, at_most: int) -> int:
        """The matches in the index (messages and summaries, undone ones included),
        counted up to `at_most`."""
        (count,) = self._connection.execute(
            f"SELECT count(*) FROM (SELECT 1 FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH ? LIMIT ?)",
            (self._match, at_most),
        ).fetchone()
        return int(count)

    def _count(self, side: str, *, at_most: int = -1) -> int:
        """The matches on one side, counted up to `at_most` (-1: all of them)."""
        (count,) = self._connection.execute(
            f"SELECT count(*) FROM (SELECT 1 FROM {self._matches(side)} LIMIT ?)",
            (self._match, at_most),
        ).fetchone()
        return int(count)

    def _matches(self, side: str, *, ranked: bool = False) -> str:
        """The index rows on one `side` (messages or summaries; undone summaries left out:
        a summary is joined, but there are few of them beside the messages)."""
        # LIMIT -1 keeps bm25() in the index's own query (it cannot run in a join); the
        # unranked query stays flat, so the index walks rowids in order and stops early.
        rank, apart = (f"bm25({FTS_TABLE})", " LIMIT -1") if ranked else ("0.0", "")
        hits = (
            f"(SELECT rowid AS doc_id, {rank} AS rank FROM {FTS_TABLE} "
            f"WHERE {FTS_TABLE} MATCH ? AND {side}{apart}) AS hit"
        )
        if side.endswith("> 0"):
            return hits
        return (
            f"{hits} JOIN summary_search_key AS k ON k.key = hit.doc_id "
            "JOIN summary AS s ON s.id = k.summary_id AND s.state != 'undone'"
        )

    def _side(self, side: str, newest: str, wanted: int, ranked: bool) -> list[tuple[int, float]]:
        order = "hit.rank" if ranked else newest.replace("rowid", "hit.doc_id")
        sql = (
            f"SELECT hit.doc_id, hit.rank FROM {self._matches(side, ranked=ranked)} "
            f"ORDER BY {order} LIMIT ?"
        )
        return [(int(d), float(r)) for d, r in self._connection.execute(sql, (self._match, wanted))]

    def _row(self, doc_id: int, rank: float) -> _Row:
        row = self._connection.execute(
            f"SELECT {_ROW} FROM (SELECT ? AS doc_id, ? AS rank) AS hit "
            "LEFT JOIN message AS m ON m.id = hit.doc_id "
            "LEFT JOIN summary_search_key AS k ON k.key = hit.doc_id "
            "LEFT JOIN summary AS s ON s.id = k.summary_id",
            (doc_id, rank),
        ).fetchone()
        return _Row(*row)


def fts_match(words: Sequence[str]) -> str:
    """The FTS5 query for `words`: each an FTS string (never an operator), all required."""
    return " ".join(f'"{word}"' for word in words)


def _has_index(connection: sqlite3.Connection) -> bool:
    """Whether the full-text index is there and holds every message."""
    return _has_fts(connection) and not index_pending(connection)


def _has_fts(connection: sqlite3.Connection) -> bool:
    row = connection.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (FTS_TABLE,)
    ).fetchone()
    if row is None:
        return False
    try:
        connection.execute(f"SELECT rowid FROM {FTS_TABLE} LIMIT 0").fetchall()
    except sqlite3.OperationalError:  # made by a SQLite with FTS5, opened by one without
        return False
    return True


def _escape_like(word: str) -> str:
    return word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


# --- snippets ------------------------------------------------------------------------


@lru_cache(maxsize=4096)
def _folded(word: str) -> str:
    """A word as the index compares it: case and accents folded."""
    decomposed = unicodedata.normalize("NFKD", word.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def snippet(text: str, words: Iterable[str], size: int = SNIPPET_WORDS) -> tuple[SnippetPart, ...]:
    """About `size` words of `text` around where most of `words` are found, those marked."""
    wanted = {_folded(word) for word in words}
    tokens = list(_WORD.finditer(text))
    if not tokens:
        return (SnippetPart(_SPACE.sub(" ", text).strip()[:120]),) if text.strip() else ()
    matched = [_folded(t.group()) in wanted for t in tokens]
    if not any(matched):  # LIKE found it inside a longer word
        matched = [any(w in _folded(t.group()) for w in wanted) for t in tokens]
    start = _best_window(tokens, matched, wanted, size)
    end = min(len(tokens), start + size)
    parts: list[SnippetPart] = []
    if start > 0:
        parts.append(SnippetPart("…"))
    cursor = tokens[start].start()
    for index in range(start, end):
        token = tokens[index]
        if matched[index]:
            if token.start() > cursor:
                parts.append(SnippetPart(_SPACE.sub(" ", text[cursor : token.start()])))
            parts.append(SnippetPart(token.group(), matched=True))
            cursor = token.end()
    tail = text[cursor : tokens[end - 1].end()]
    if tail:
        parts.append(SnippetPart(_SPACE.sub(" ", tail)))
    if end < len(tokens):
        parts.append(SnippetPart("…"))
    return tuple(_merged(parts))


def _best_window(
    tokens: Sequence[re.Match[str]], matched: Sequence[bool], wanted: set[str], size: int
) -> int:
    """The first token of the window with the most different matched words (earliest wins),
    starting a few words before its first match so the match has some context."""
    best_start, best_score = 0, -1
    for index, hit in enumerate(matched):
        if not hit:
            continue
        window = range(index, min(len(tokens), index + size))
        score = len({_folded(tokens[i].group()) for i in window if matched[i]})
        if score > best_score:
            best_start, best_score = index, score
    lead = min(3, size // 4)
    return max(0, min(best_start - lead, len(tokens) - size))


def _merged(parts: list[SnippetPart]) -> list[SnippetPart]:
    merged: list[SnippetPart] = []
    for part in parts:
        if merged and not part.matched and not merged[-1].matched:
            merged[-1] = SnippetPart(merged[-1].text + part.text)
        else:
            merged.append(part)
    return merged


# --- the timeline -------------------------------------------------------------------


@dataclass(frozen=True)
class _Stretch:
    first: int
    last: int
    first_at: datetime | None
    last_at: datetime | None
    count: int


def _moment(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text is not None else None


def _entry(
    summary: Summary, children: dict[str, list[Summary]], stretches: dict[Any, _Stretch]
) -> TimelineEntry:
    inner = tuple(_entry(child, children, stretches) for child in children.get(summary.id, []))
    own = stretches.get(summary.id)
    dated = [e for e in inner if e.first_at is not None] + (
        [TimelineEntry(None, 0, 0, own.first_at, own.last_at, own.count)] if own else []
    )
    first_at = min((e.first_at for e in dated if e.first_at), default=None)
    last_at = max((e.last_at for e in dated if e.last_at), default=None)
    return TimelineEntry(
        summary=summary,
        first_seq=summary.first_seq,
        last_seq=summary.last_seq,
        first_at=first_at,
        last_at=last_at,
        messages=sum(e.messages for e in inner) + (own.count if own else 0),
        children=inner,
    )
