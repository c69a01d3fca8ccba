"""The archive of one conversation, searched for automatic recall (issues 12, 22; DESIGN §3).

`RecallIndex.pool` gathers the candidates for a message's query among the archived
messages of a conversation (covered by a summary: `summary_id` set, which includes the
sources of compressed summaries) from the full-text index of migration 5 — or with
LIKE where this SQLite has no FTS5 — and `app.core.recall_rank` ranks them with
Cairn's own scoring. Any-word semantics: a message holding one of the terms is a
candidate; one holding several ranks higher.

`RecallIndex.participants` learns the names the conversation's people are greeted by
("Hi Maya!"): they are never search terms.

Cost, whatever the archive holds (bench/bench_recall.py: ≤ 5 ms a turn at 100,000
archived messages, common words included): the index is read only between the
conversation's first and last message ids; one read of each term's newest rowids (one
past RARE_AT_MOST) says how rare it is (a common term's count is estimated from the span
they take, never counted); a rarer term's messages are read whole (rowids only), a
common term's only where they also hold another term, newest first, with the few that
hold every term however old (no bm25, which costs a count of every match); only the best
`POOL` are read in full, with the turns around them. Like the other stores it wraps one
connection of the calling thread.
"""

from __future__ import annotations

import functools
import heapq
import re
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from operator import itemgetter
from pathlib import Path
from typing import Any, TypeVar

from app.core.conversation import local_day
from app.core.models import Role
from app.core.recall import (
    ArchivedMatch,
    RecallQuery,
    RecallTerm,
    archived_match,
    fold,
    is_common_word,
)
from app.core.recall_dates import DayRange
from app.core.recall_rank import RecallPool, span_worth, term_values
from app.store.database import connect
from app.store.migrations import FTS_TABLE
from app.store.search import _escape_like, _has_index
from app.store.transactions import translated_errors

# Candidates read in full for ranking (the block holds far fewer quotes than this), and
# of those, the best whose neighbouring turns are read too.
POOL = 60
NEIGHBOURED = POOL
# Of those, the best whose turns two away are read too (Claude's question about it and the
# user's answer): fewer rows read and ranked (bench_path 155k:100k: ~240 -> ~180 a turn).
TWO_AWAY = 30
# A term in at most this many of the conversation's messages: all of them are candidates.
RARE_AT_MOST = 300
# A term in more: the newest of its messages that also hold another term, at most this many.
COMMON_ROWS = 100
# A term its commonest forms find in fewer messages than this is looked up in all its
# forms too (one read more, of a rare word: cheap).
FEW_IDS = 3
FORM_RETRIES = 2
# Of the days a question names: the messages written then, when no term finds any.
DAY_ROWS = 40
# A span asked about ("in April", "a few weeks ago") where the question's words find fewer
# of its messages than this: the span's most telling messages (`span_worth`) are
# candidates too, at most FILL_ROWS (the block quotes at most 20; each brings its
# neighbours); of its messages at most SPAN_ROWS are read (a longer span: every so many
# pairs of turns).
FEW_IN_SPAN = 3
FILL_ROWS = 24
SPAN_ROWS = 200
# Greetings read to learn who is talking (the participants' own names).
GREETING_ROWS = 150
# Learned again once the conversation has this many more messages.
PARTICIPANTS_AGE = 200
# Kept for callers that name the old depths: a pool is always this deep now.
CANDIDATES = QUESTION_CANDIDATES = POOL

# Read with a rank (0.0: no bm25) and the stored quote count (migration 17) after them.
_COLUMNS = "m.id, m.seq, m.role, m.created_at, m.content"
_GREETING_WORDS = (
    "hi hello hey hiya dear morning evening afternoon night thanks thank cheers welcome "
    "care bye soon"
)
# "Hi Maya", "Good morning, Maya", "Thanks Claude" at the start; ", Maya!" ending a sentence.
_ADDRESSED = re.compile(
    r"^\W*(?:hi|hello|hey|hiya|dear|morning|evening|afternoon|good\s+\w+|thanks|thank\s+you|"
    r"cheers|welcome\s+back|night)\b[,!]?\s+([A-Z][\w'’-]+)"
    r"|,\s*([A-Z][\w'’-]+)\s*[.!?]",
    re.MULTILINE,
)
_participants_cache: dict[tuple[str, str], tuple[frozenset[str], int]] = {}
# Conversations whose archive is kept in memory between turns (`_Archive`), and how much
# of each: the lookups' rowids (~15 a turn, up to 301 ids each: ~10 KB) and the messages
# read (up to ~300 a turn, a few KB each) — a few MB a conversation at most.
ARCHIVES_KEPT = 4
# Terms' FTS expressions kept (`_expression`; ~100 characters each: ~60 KB at most).
EXPRESSIONS_KEPT = 512
LOOKUPS_KEPT = 512
ROWS_KEPT = 3_000


@dataclass
class _Archive:
    """What recall read of one conversation's archive, kept between turns while the
    archive is unchanged (`shape`: its first id, its last archived message's id and how
    many messages it holds — a summary made or undone, a message deleted changes it).

    An archived message's text does not change while the app runs (only a reply being
    streamed, never archived, is rewritten; a salvage runs before the window opens), and
    the index finds the same rows for the same words in the same range: a turn reads
    from SQLite only the words and messages no earlier turn read. Up to ~28 ms of the
    reply worker's CPU a turn on bench_path's 155k:100k conversation went on reading
    these again (issue 20, issue 22).
    """

    shape: tuple[int, int, int]
    lookups: dict[tuple[str, int, int, int | None], frozenset[int]] = field(default_factory=dict)
    rows: dict[int, ArchivedMatch | None] = field(default_factory=dict)
    by_seq: dict[int, int | None] = field(default_factory=dict)
    spans: dict[DayRange, tuple[int, int, int, int] | None] = field(default_factory=dict)
    days: dict[tuple[int, int], frozenset[int]] = field(default_factory=dict)
    fills: dict[tuple[int, int], dict[int, tuple[int, float]]] = field(default_factory=dict)


_archives: dict[tuple[str, str], _Archive] = {}
# (seq, created_at) of a conversation's first and last messages.
_Ends = tuple[tuple[Any, ...], tuple[Any, ...]]
_K = TypeVar("_K")
_V = TypeVar("_V")


class RecallIndex:
    """Finds a conversation's archived messages for a message's query.

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

    # --- who is talking

    def participants(self, session_id: str) -> frozenset[str]:
        """The folded names the conversation's people are greeted and thanked by ("maya"
        in "Hi Maya!", "claude" in "Thanks Claude"): never search terms. Learned from the
        newest greetings, again every `PARTICIPANTS_AGE` messages."""
        with translated_errors("look in the archive", self.database):
            bounds = self._id_range(session_id)
            if bounds is None:
                return frozenset()
            key = (str(self.database), session_id)
            known = _participants_cache.get(key)
            if known is not None and bounds[1] - known[1] < PARTICIPANTS_AGE:
                return known[0]
            names = self._greeted(session_id, *bounds)
        _participants_cache[key] = (names, bounds[1])
        return names

    def _greeted(self, session_id: str, low: int, high: int) -> frozenset[str]:
        if self.indexed:
            words = " OR ".join(f'"{word}"' for word in _GREETING_WORDS.split())
            rows = self._connection.execute(
                f"SELECT m.content FROM (SELECT rowid AS doc_id FROM {FTS_TABLE} WHERE "
                f"{FTS_TABLE} MATCH ? AND rowid BETWEEN ? AND ? ORDER BY rowid DESC LIMIT ?) "
                "AS hit JOIN message AS m ON m.id = hit.doc_id WHERE m.session_id = ?",
                (words, low, high, GREETING_ROWS * 2, session_id),
            ).fetchall()
        else:
            rows = self._connection.execute(
                "SELECT content FROM message WHERE session_id = ? ORDER BY seq DESC LIMIT ?",
                (session_id, GREETING_ROWS * 2),
            ).fetchall()
        counts: Counter[str] = Counter()
        for (content,) in rows[:GREETING_ROWS]:
            for match in _ADDRESSED.finditer(str(content)[:400]):
                name = fold(match.group(1) or match.group(2))
                if len(name) >= 3 and not is_common_word(name):
                    counts[name] += 1
        return frozenset(name for name, seen in counts.items() if seen >= 3) | {"claude"}

    # --- the pool

    def pool(self, session_id: str, query: RecallQuery, depth: int = POOL) -> RecallPool:
        """The candidates for `query` among the archived messages of `session_id`, with
        the turns around the best of them and each term's frequency (`recall_rank`)."""
        if not query.terms and query.days is None:
            return RecallPool()
        with translated_errors("look in the archive", self.database):
            bounds = self._id_range(session_id)
            if bounds is None:
                return RecallPool()
            if not self.indexed:
                return self._scanned(session_id, query, depth)
            archive = self._archive(session_id, bounds[0])
            if archive is not None:  # the live messages are never candidates: not read
                bounds = bounds[0], archive.shape[1]
            return self._pooled(session_id, query, depth, bounds, archive=archive)

    def pool_elsewhere(
        self, session_id: str, query: RecallQuery, depth: int = POOL // 2
    ) -> RecallPool:
        """The candidates for `query` in every conversation but `session_id` (the user's
        consent, Settings → Memory), each naming its conversation; no neighbours."""
        if not query.terms or not self.indexed:
            return RecallPool()
        with translated_errors("look in your other conversations", self.database):
            (high,) = self._connection.execute("SELECT max(id) FROM message").fetchone()
            if high is None:
                return RecallPool()
            plain = RecallQuery(query.terms, query.wanted, None, query.role)
            return self._pooled(session_id, plain, depth, (1, int(high)), elsewhere=True)

    def archived_matches(
        self, session_id: str, terms: Sequence[RecallTerm], limit: int = POOL, **_: object
    ) -> list[ArchivedMatch]:
        """Archived messages of `session_id` holding any of `terms`, at most `limit` (the
        pool's candidates, unranked)."""
        return list(self.pool(session_id, RecallQuery(tuple(terms)), limit).matches)

    def _pooled(
        self,
        session_id: str,
        query: RecallQuery,
        depth: int,
        bounds: tuple[int, int],
        *,
        elsewhere: bool = False,
        archive: _Archive | None = None,
    ) -> RecallPool:
        low, high = bounds
        terms = query.terms
        expressions = [_expression(term) for term in terms]
        # One read a term: its rowids, newest first, one past RARE_AT_MOST; only a common
        # term is counted further (its rarity) and read again where another term is too.
        found: dict[int, frozenset[int]] = {}
        counts: list[int] = []
        retries = FORM_RETRIES
        for n, expression in enumerate(expressions):
            ids = self._lookup(archive, expression, low, high, RARE_AT_MOST + 1)
            if len(ids) < FEW_IDS and len(terms[n].forms) > 2 and query.wanted and retries:
                # A question's word rarely said so: perhaps in a rarer form ("accounting":
                # "accountant"); for its most telling words only (each costs a read).
                retries -= 1
                expressions[n] = _expression(terms[n], every_form=True)
                ids = self._lookup(archive, expressions[n], low, high, RARE_AT_MOST + 1)
            counts.append(_how_many(ids, low, high))
            found[n] = ids
        common = [i for i, count in enumerate(counts) if count > RARE_AT_MOST]
        present = [i for i, count in enumerate(counts) if count > 0]
        holding_all: frozenset[int] = frozenset()
        if common and len(present) >= 2:
            # The messages holding every term found: few, and the likeliest, however old.
            holding_all = self._holding_all(archive, expressions, found, counts, present, bounds)
        shared = _shared(found, present) if common and len(present) >= 2 else frozenset()
        for i in common:
            # Of a common term's newest messages, those that hold another term too (each
            # term's rowids are read already: no query more); alone, its newest few.
            if len(present) >= 2:
                found[i] &= shared
            else:
                found[i] = frozenset(sorted(found[i], reverse=True)[:COMMON_ROWS])
        if holding_all:
            for i in present:
                found[i] |= holding_all
        in_days: tuple[int, int] | None = None
        extra: frozenset[int] = frozenset()
        span = self._days_span(session_id, query.days, archive) if query.days is not None else None
        if span is not None:
            in_days = span[0], min(span[1], high)  # past the archive: live, never candidates
            for i in present:
                if counts[i] > RARE_AT_MOST:
                    found[i] |= self._lookup(archive, expressions[i], *in_days, COMMON_ROWS)
            if query.days is not None and query.days.exact:
                extra = self._day_rows(session_id, span[2], span[3], archive)
        filled: dict[int, tuple[int, float]] = {}
        if span is not None and in_days is not None and not elsewhere and not extra:
            within = {d for ids in found.values() for d in ids if in_days[0] <= d <= in_days[1]}
            if len(within) < FEW_IN_SPAN:
                # The question's words find (almost) nothing in the span it asks about:
                # the span's most telling messages, by their own words (issue 22).
                filled = self._span_fill(session_id, span[2], span[3], archive)  # archived only
                extra = frozenset(filled)
        size = (high - low + 1) if elsewhere else self._size(session_id) or (high - low + 1)
        values = term_values(terms, counts, size)
        scores = _summed(found, values, extra)
        for doc_id, (_seq, worth) in filled.items():
            scores[doc_id] += worth * 0.01  # below any term found, best first among them
        if in_days is not None:
            for doc_id in scores:
                if in_days[0] <= doc_id <= in_days[1]:
                    scores[doc_id] = scores[doc_id] * 2.5 + 0.01
        # By (score, id), as a key would order them, with no Python call a rowid.
        best = [doc_id for _score, doc_id in heapq.nlargest(depth * 2, _scored(scores))]

        if elsewhere:
            rows = self._rows_elsewhere(session_id, best)
            rows.sort(key=lambda row: -scores.get(row[0], 0.0))
            holding = _terms_held(found, [row[0] for row in rows[:depth]])
            theirs = tuple(
                replace(_match(row[:7], holding[row[0]]), session_id=row[7], conversation=row[8])
                for row in rows[:depth]
            )
            return RecallPool(theirs, {}, tuple(counts), size)
        # The best `depth` of them that are archived messages of this conversation, read
        # best first until there are enough (nearly always at once: the range read ends
        # at the archive's last message), not all of `best`.
        order = sorted(best, key=lambda doc_id: (-scores[doc_id], doc_id))
        read: list[ArchivedMatch] = []
        start = 0
        while len(read) < depth and start < len(order):
            batch = order[start : start + depth - len(read)]
            start += len(batch)
            read.extend(self._archived_by_id(session_id, batch, archive))
        read.sort(key=lambda match: (-scores[match.message_id], match.message_id))
        chosen = read[:depth]
        chosen.extend(self._keyed(session_id, query, {m.seq for m in chosen}, archive=archive))
        # The turns just before and after each candidate (what it answers, its answer);
        # the ones two away (the question Claude asked about it and its answer) only for
        # the best: a candidate further down is seldom quoted for a two-turn exchange.
        # Each with the id it has when the conversation's messages around it were written
        # one after the other (nearly always): read by id, not by (session_id, seq).
        around = {
            m.seq + step: m.message_id + step for m in chosen[:NEIGHBOURED] for step in (-1, 1)
        }
        around |= {m.seq + step: m.message_id + step for m in chosen[:TWO_AWAY] for step in (-2, 2)}
        for match in chosen:
            around.pop(match.seq, None)
        near = self._archived_by_seq(session_id, sorted(around), archive, guessed=around)
        # The terms each holds, from the rowids read: one pass a term over those messages.
        holding = _terms_held(found, [m.message_id for m in (*chosen, *near)])
        matches = tuple(_holding(match, holding[match.message_id]) for match in chosen)
        neighbours = {m.seq: m for m in matches}
        # A neighbour as kept (its terms beside it, not in a copy of it made for this turn).
        held: dict[int, frozenset[int]] = {}
        for neighbour in near:
            neighbours[neighbour.seq] = neighbour
            held[neighbour.seq] = holding[neighbour.message_id]
        by_seq = {seq: worth for seq, worth in filled.values()}
        return RecallPool(matches, neighbours, tuple(counts), size, by_seq, held)

    def _holding_all(
        self,
        archive: _Archive | None,
        expressions: Sequence[str],
        found: dict[int, frozenset[int]],
        counts: Sequence[int],
        present: Sequence[int],
        bounds: tuple[int, int],
    ) -> frozenset[int]:
        """The newest `COMMON_ROWS` messages between `bounds` holding every term `present`
        (at least one of them common). A rarer term's rowids (`found`) are all of its
        messages, and a common term's are all of its messages from its oldest one read
        (`horizon`) on: the messages that may hold every term are the rarer terms' in
        common, less those past a common term's horizon that it lacks. None: the index is
        not asked (two rare words never said together: ~1.6 ms of FTS a turn at 155k:100k);
        all past every horizon: they are the answer; else the index is asked between the
        oldest and newest of them only (the same rows: none holding every term lies
        outside)."""
        every = " AND ".join(expressions[i] for i in present)
        rare = sorted((i for i in present if counts[i] <= RARE_AT_MOST), key=lambda i: counts[i])
        if not rare:
            return self._lookup(archive, every, *bounds, COMMON_ROWS)
        maybe = set(found[rare[0]])
        for i in rare[1:]:
            maybe &= found[i]
        newest_read = 0
        for i in present:
            if counts[i] > RARE_AT_MOST and maybe:
                horizon = min(found[i])
                newest_read = max(newest_read, horizon)
                ids = found[i]
                maybe = {doc_id for doc_id in maybe if doc_id < horizon or doc_id in ids}
        if not maybe:
            return frozenset()
        if min(maybe) >= newest_read:
            return frozenset(sorted(maybe, reverse=True)[:COMMON_ROWS])
        return self._lookup(archive, every, min(maybe), max(maybe), COMMON_ROWS)

    def _archive(self, session_id: str, first: int) -> _Archive | None:
        """The conversation's archive as kept between turns (`_Archive`; anew when it
        changed), None when it has none: its shape is read (three seeks), not its rows."""
        archived, last = self._connection.execute(
            "SELECT (SELECT archived FROM session_count WHERE session_id = ?1), "
            "(SELECT id FROM message WHERE session_id = ?1 AND seq <= "
            "(SELECT max(last_seq) FROM summary WHERE session_id = ?1 AND state = 'active') "
            "ORDER BY seq DESC LIMIT 1)",
            (session_id,),
        ).fetchone()
        if archived is None or last is None or int(last) < first:
            return None
        shape = (first, int(last), int(archived))
        if self.database is None:
            return _Archive(shape)  # kept for this turn only
        key = (str(self.database), session_id)
        archive = _archives.get(key)
        if archive is None or archive.shape != shape:
            while len(_archives) >= ARCHIVES_KEPT:
                _archives.pop(next(iter(_archives)), None)
            archive = _archives[key] = _Archive(shape)
        return archive

    def _lookup(
        self, archive: _Archive | None, expression: str, low: int, high: int, newest: int | None
    ) -> frozenset[int]:
        """`_rowids`, as an earlier turn read them when it did."""
        if archive is None:
            return self._rowids(expression, low, high, newest=newest)
        key = (expression, low, high, newest)
        known = archive.lookups.get(key)
        if known is None:
            if len(archive.lookups) >= LOOKUPS_KEPT:
                archive.lookups = {}
            known = self._rowids(expression, low, high, newest=newest)
            archive.lookups[key] = known
        return known

    def _archived_by_id(
        self, session_id: str, ids: Sequence[int], archive: _Archive | None
    ) -> list[ArchivedMatch]:
        """The archived messages of `session_id` among `ids`, by id (those an earlier turn
        read are not read again)."""
        if archive is None:
            return [_match(row) for row in self._rows_by_id(session_id, sorted(ids))]
        _make_room(archive, len(ids))
        rows, by_seq = archive.rows, archive.by_seq
        missing = [doc_id for doc_id in ids if doc_id not in rows]
        if missing:
            read = {row[0]: _match(row) for row in self._rows_by_id(session_id, missing)}
            for doc_id in missing:
                match = rows[doc_id] = read.get(doc_id)
                if match is not None:
                    by_seq[match.seq] = doc_id
        return [match for doc_id in sorted(ids) if (match := rows.get(doc_id)) is not None]

    def _archived_by_seq(
        self,
        session_id: str,
        seqs: Sequence[int],
        archive: _Archive | None,
        guessed: Mapping[int, int] | None = None,
    ) -> list[ArchivedMatch]:
        """The archived messages of `session_id` at `seqs` (sorted), by seq (those an
        earlier turn read are not read again). `guessed`: the id each seq likely has,
        read by id first (`_rows_guessed`)."""
        if archive is None:
            return [_match(row) for row in self._rows_guessed(session_id, seqs, guessed)]
        _make_room(archive, len(seqs))
        rows, by_seq = archive.rows, archive.by_seq
        missing = [seq for seq in seqs if seq not in by_seq]
        if missing:
            for row in self._rows_guessed(session_id, missing, guessed):
                match = _match(row)
                rows[match.message_id] = match
                by_seq[match.seq] = match.message_id
            for seq in missing:
                by_seq.setdefault(seq, None)
        found: list[ArchivedMatch] = []
        for seq in seqs:
            doc_id = by_seq.get(seq)
            kept = rows.get(doc_id) if doc_id is not None else None
            if kept is not None:
                found.append(kept)
        return found

    def _keyed(
        self,
        session_id: str,
        query: RecallQuery,
        known: set[int],
        archive: _Archive | None = None,
    ) -> list[ArchivedMatch]:
        """The archived messages the summaries' search keys name (`RecallQuery.keyed`)
        that are not among the candidates yet: candidates too, however they are worded."""
        wanted = sorted(seq for seq, _terms in query.keyed if seq not in known)
        return self._archived_by_seq(session_id, wanted, archive)

    def _rowids(
        self, expression: str, low: int, high: int, *, newest: int | None = None
    ) -> frozenset[int]:
        limit = f" ORDER BY rowid DESC LIMIT {int(newest)}" if newest is not None else ""
        # One row of the rowids joined, not a row (a tuple, for the collector) a rowid:
        # ~15 % less a read of 301, and ~1,500 fewer objects a turn (issue 20).
        (joined,) = self._connection.execute(
            f"SELECT group_concat(rowid) FROM (SELECT rowid FROM {FTS_TABLE} WHERE "
            f"{FTS_TABLE} MATCH ? AND rowid BETWEEN ? AND ?{limit})",
            (expression, low, high),
        ).fetchone()
        return frozenset(map(int, joined.split(","))) if joined else frozenset()

    def _rows_by_id(self, session_id: str, ids: Sequence[int]) -> list[tuple[Any, ...]]:
        if not ids:
            return []
        marks = ", ".join("?" * len(ids))
        return self._connection.execute(
            # "+": by rowid, never by an index over a whole conversation's messages.
            f"SELECT {_COLUMNS}, 0.0, m.quote_tokens FROM message AS m WHERE m.id IN ({marks}) "
            "AND +m.session_id = ? AND +m.summary_id IS NOT NULL",
            (*ids, session_id),
        ).fetchall()

    def _rows_elsewhere(self, session_id: str, ids: Sequence[int]) -> list[tuple[Any, ...]]:
        """Messages of other conversations (any, live or archived), with their conversation's
        id and title."""
        if not ids:
            return []
        marks = ", ".join("?" * len(ids))
        return self._connection.execute(
            f"SELECT {_COLUMNS}, 0.0, m.quote_tokens, s.id, s.title FROM message AS m "
            "JOIN session AS s ON s.id = m.session_id "
            f"WHERE m.id IN ({marks}) AND +m.session_id != ? AND m.shelved_by IS NULL",
            (*ids, session_id),
        ).fetchall()

    def _rows_guessed(
        self, session_id: str, seqs: Sequence[int], guessed: Mapping[int, int] | None
    ) -> list[tuple[Any, ...]]:
        """`_rows_by_seq(seqs)`, the same rows: those at the ids `guessed` read by id (a seek
        in the table, not one in the (session_id, seq) index and then one in the table:
        ~0.4 ms of the ~150 neighbours a turn at bench_path's 155k:100k, issue 20), the
        seqs their guess missed by seq. A row is its seq's whatever way it is read: a
        conversation holds one message at each seq."""
        if not guessed:
            return self._rows_by_seq(session_id, seqs)
        wanted = set(seqs)
        found = [
            row
            for row in self._rows_by_id(session_id, sorted({guessed[seq] for seq in seqs}))
            if row[1] in wanted
        ]
        wanted.difference_update(row[1] for row in found)
        if wanted:
            found += self._rows_by_seq(session_id, sorted(wanted))
            found.sort(key=itemgetter(1))  # by seq, as that read gives them
        return found

    def _rows_by_seq(self, session_id: str, seqs: Sequence[int]) -> list[tuple[Any, ...]]:
        if not seqs:
            return []
        marks = ", ".join("?" * len(seqs))
        return self._connection.execute(
            # "+": by (session_id, seq), never the archived messages' own index.
            f"SELECT {_COLUMNS}, 0.0, m.quote_tokens FROM message AS m WHERE m.session_id = ? "
            f"AND m.seq IN ({marks}) AND +m.summary_id IS NOT NULL",
            (session_id, *seqs),
        ).fetchall()

    def _day_rows(
        self, session_id: str, first_seq: int, last_seq: int, archive: _Archive | None = None
    ) -> frozenset[int]:
        """The ids of the archived messages written on the days asked about (the first),
        between their seqs: a range of the (session_id, seq) index (by id, it was a walk
        from the conversation's first message: 7 ms at 100,000)."""
        if archive is not None:
            return _kept(
                archive.days,
                (first_seq, last_seq),
                lambda: self._day_rows(session_id, first_seq, last_seq),
            )
        return frozenset(
            int(doc_id)
            for (doc_id,) in self._connection.execute(
                "SELECT id FROM message WHERE session_id = ? AND seq BETWEEN ? AND ? "
                "AND +summary_id IS NOT NULL ORDER BY seq LIMIT ?",
                (session_id, first_seq, last_seq, DAY_ROWS),
            )
        )

    def _span_fill(
        self, session_id: str, first_seq: int, last_seq: int, archive: _Archive | None = None
    ) -> dict[int, tuple[int, float]]:
        """The span's `FILL_ROWS` most telling archived messages (`span_worth`), id ->
        (seq, worth): one read of the span's range of the (session_id, seq) index, at most
        `SPAN_ROWS` rows (a longer span: every so many pairs of turns, the pairs whole)."""
        if archive is not None:
            return _kept(
                archive.fills,
                (first_seq, last_seq),
                lambda: self._span_fill(session_id, first_seq, last_seq),
            )
        pairs = -(-(last_seq - first_seq + 1) // 2)
        step = max(1, -(-pairs // (SPAN_ROWS // 2)))
        if step == 1:
            rows = self._connection.execute(
                "SELECT id, seq, role, substr(content, 1, 200) FROM message "
                "WHERE session_id = ? AND seq BETWEEN ? AND ? AND +summary_id IS NOT NULL",
                (session_id, first_seq, last_seq),
            ).fetchall()
        else:
            # Every `step`-th pair of turns, by seq: a seek each in the (session_id, seq)
            # index, not a walk of the whole span's entries (~67,000 in a month at 100k).
            starts = range(first_seq, last_seq + 1, 2 * step)
            seqs = [seq for start in starts for seq in (start, start + 1) if seq <= last_seq]
            marks = ", ".join("?" * len(seqs))
            rows = self._connection.execute(
                "SELECT id, seq, role, substr(content, 1, 200) FROM message "
                f"WHERE session_id = ? AND seq IN ({marks}) AND +summary_id IS NOT NULL",
                (session_id, *seqs),
            ).fetchall()
        rows.sort(key=itemgetter(1))  # seqs and ids are ints: no Python call a row
        ids = dict(zip(map(itemgetter(1), rows), map(itemgetter(0), rows), strict=True))
        worth = span_worth([(seq, _ROLES[role], str(text)) for _id, seq, role, text in rows])
        # By (worth, seq), as a key would order them, with no Python call a message.
        best = heapq.nlargest(FILL_ROWS, zip(worth.values(), worth.keys(), strict=True))
        return {ids[seq]: (seq, value) for value, seq in best}

    def _days_span(
        self, session_id: str, days: DayRange, archive: _Archive | None = None
    ) -> tuple[int, int, int, int] | None:
        """The ids, then the seqs, of the first and last of the conversation's messages
        written on `days` (local), found by bisecting its seqs: a message's time grows
        with its seq. Kept with the archive: the days asked about are mostly in it, and a
        day whose messages are still being written is asked about again only once it is."""
        if archive is not None:
            return _kept(archive.spans, days, lambda: self._days_span(session_id, days))
        ends = self._ends(session_id)
        if ends is None or not _may_hold(ends, days):
            return None
        first = self._first_seq_on_or_after(session_id, days.first.toordinal(), ends)
        after = self._first_seq_on_or_after(session_id, days.last.toordinal() + 1, ends)
        if first is None or (after is not None and after[0] <= first[0]):
            return None
        last = self._connection.execute(
            "SELECT id, seq FROM message WHERE session_id = ? AND seq < ? "
            "ORDER BY seq DESC LIMIT 1",
            (session_id, after[0] if after is not None else 2**62),
        ).fetchone()
        if last is None:
            return None
        return first[1], int(last[0]), first[0], int(last[1])

    def _ends(self, session_id: str) -> _Ends | None:
        """(seq, created_at) of the conversation's first and last messages: two index
        seeks (min() and max() together would scan its seqs), read once for both ends of
        a span (`_days_span`)."""
        first = self._connection.execute(
            "SELECT seq, created_at FROM message WHERE session_id = ? ORDER BY seq LIMIT 1",
            (session_id,),
        ).fetchone()
        last = self._connection.execute(
            "SELECT seq, created_at FROM message WHERE session_id = ? ORDER BY seq DESC LIMIT 1",
            (session_id,),
        ).fetchone()
        return None if first is None or last is None else (tuple(first), tuple(last))

    def _first_seq_on_or_after(
        self,
        session_id: str,
        day: int,
        ends: _Ends,
    ) -> tuple[int, int] | None:
        """(seq, id) of the first message written on local day `day` or later: a search
        of its seqs that guesses from the times it has read (the seq a steady pace would
        have written at the day's start) and bisects every other read, so ~5 reads, not
        ~17, find it at 100,000 messages, and never more than twice a bisection's.
        `ends`: the conversation's `_ends`."""
        first, last = ends
        # The first message at or after seq `s` is on `day` or later for every `s` from
        # the one sought on (times grow with seq): the search narrows [low, high] to it.
        low, high = int(first[0]), int(last[0]) + 1
        low_time, high_time = _moment(first[1]), _moment(last[1])
        start = datetime.combine(date.fromordinal(day), datetime.min.time()).timestamp()
        guess = True
        # The first message at or after seq `high` when the search read it (it is then on
        # `day` or later): the answer once the search ends, not read again.
        at_high: tuple[int, int] | None = None
        while low < high:
            middle = (low + high) // 2
            if guess and high_time > low_time:
                share = (start - low_time) / (high_time - low_time)
                middle = low + min(max(int(share * (high - low)), 0), high - low - 1)
            guess = not guess
            row = self._connection.execute(
                "SELECT seq, created_at, id FROM message WHERE session_id = ? AND seq >= ? "
                "ORDER BY seq LIMIT 1",
                (session_id, middle),
            ).fetchone()
            if row is None or local_day(datetime.fromisoformat(str(row[1]))) >= day:
                high = middle
                at_high = None
                if row is not None:
                    high_time = _moment(row[1])
                    at_high = int(row[0]), int(row[2])
            else:
                low = int(row[0]) + 1
                low_time = _moment(row[1])
        if at_high is not None:
            return at_high
        row = self._connection.execute(
            "SELECT seq, id, created_at FROM message WHERE session_id = ? AND seq >= ? "
            "ORDER BY seq LIMIT 1",
            (session_id, low),
        ).fetchone()
        if row is None or local_day(datetime.fromisoformat(str(row[2]))) < day:
            return None
        return int(row[0]), int(row[1])

    def _size(self, session_id: str) -> int:
        row = self._connection.execute(
            "SELECT messages FROM session_count WHERE session_id = ?", (session_id,)
        ).fetchone()
        return int(row[0]) if row is not None else 0

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

    def _scanned(self, session_id: str, query: RecallQuery, limit: int) -> RecallPool:
        # Without the index: each word of a term as a LIKE pattern (all of them required),
        # any term; the ranking reads what they hold from the text.
        terms = query.terms
        filled = self._scanned_fill(session_id, query)
        if not terms and not filled:
            return RecallPool()
        clauses: list[str] = []
        parameters: list[object] = [session_id]
        for term in terms:
            clauses.append(
                "(" + " AND ".join(["m.content LIKE ? ESCAPE '\\'"] * len(term.words)) + ")"
            )
            parameters.extend(f"%{_escape_like(word)}%" for word in term.words)
        rows = (
            self._connection.execute(
                f"SELECT {_COLUMNS}, 0.0, m.quote_tokens FROM message AS m "
                "WHERE m.session_id = ? AND m.summary_id IS NOT NULL AND "
                f"({' OR '.join(clauses)}) ORDER BY m.seq DESC LIMIT ?",
                (*parameters, limit * 4),
            ).fetchall()
            if terms
            else []
        )
        found = [_match(row) for row in rows]
        if filled:
            found += [_match(row) for row in self._rows_by_id(session_id, sorted(filled))]
        matches = (*found, *self._keyed(session_id, query, {m.seq for m in found}))
        around = sorted({m.seq + step for m in matches[:NEIGHBOURED] for step in (-2, -1, 1, 2)})
        neighbours = {m.seq: m for m in matches}
        for row in self._rows_by_seq(session_id, around):
            neighbour = _match(row)
            neighbours.setdefault(neighbour.seq, neighbour)
        by_seq = {seq: worth for seq, worth in filled.values()}
        return RecallPool(matches, neighbours, filled=by_seq)

    def _scanned_fill(self, session_id: str, query: RecallQuery) -> dict[int, tuple[int, float]]:
        """Without the index, as `_pooled` does: a loose span asked about whose words are
        in fewer than `FEW_IN_SPAN` of its archived messages brings its most telling ones."""
        if query.days is None or query.days.exact:
            return {}
        span = self._days_span(session_id, query.days)
        if span is None:
            return {}
        within = 0
        for term in query.terms:
            words = " AND ".join(["content LIKE ? ESCAPE '\\'"] * len(term.words))
            (held,) = self._connection.execute(
                "SELECT count(*) FROM message WHERE session_id = ? AND seq BETWEEN ? AND ? "
                f"AND summary_id IS NOT NULL AND {words}",
                (session_id, span[2], span[3], *(f"%{_escape_like(w)}%" for w in term.words)),
            ).fetchone()
            within += int(held)
        return self._span_fill(session_id, span[2], span[3]) if within < FEW_IN_SPAN else {}


def _may_hold(ends: _Ends, days: DayRange) -> bool:
    """Whether the conversation's messages (`ends`: its first's and last's seq and time)
    may have been written on `days`: not when they all end before or begin after them.
    A question's days are often past the conversation ("last year" of an older one,
    "in July" asked in November of a conversation of spring, when no message since):
    answered with none of the bisection's four to six reads."""
    (_first_seq, first_time), (_last_seq, last_time) = ends
    return days.first.toordinal() <= local_day(
        datetime.fromisoformat(str(last_time))
    ) and days.last.toordinal() >= local_day(datetime.fromisoformat(str(first_time)))


def _moment(stamp: object) -> float:
    """A stored time as seconds since the epoch (a time without a zone: local)."""
    return datetime.fromisoformat(str(stamp)).timestamp()


def _kept(kept: dict[_K, _V], key: _K, read: Callable[[], _V]) -> _V:
    """What `kept` (one of an archive's memories) holds for `key`, read once."""
    if key not in kept:
        kept[key] = read()
    return kept[key]


def _make_room(archive: _Archive, coming: int) -> None:
    """Drop the older half of the messages kept when `coming` more would pass ROWS_KEPT
    (new values, not emptied in place: another thread may be reading the old ones)."""
    if len(archive.rows) + coming <= ROWS_KEPT:
        return
    kept = list(archive.rows.items())[len(archive.rows) // 2 :]
    archive.rows = dict(kept)
    archive.by_seq = {match.seq: doc_id for doc_id, match in kept if match is not None}


def _shared(found: dict[int, frozenset[int]], present: Sequence[int]) -> frozenset[int]:
    """The rowids two or more of the `present` terms hold: of a term's rowids, those that
    another term holds too are its rowids among these (one pass over the terms, not a
    union of all the others' rowids for each common term)."""
    seen: set[int] = set()
    shared: set[int] = set()
    for i in present:
        ids = found[i]
        shared |= ids & seen
        seen |= ids
    return frozenset(shared)


def _summed(
    found: dict[int, frozenset[int]], values: Sequence[float], extra: frozenset[int]
) -> dict[int, float]:
    """Each rowid's score: the values of the terms whose rowids (`found`) hold it, added
    in the terms' order (`extra`: rowids that start at 0.0). Set operations, not a
    dictionary lookup a rowid (~2,500 a turn at bench_path's 155k:100k): only the rowids
    two terms share are added up in Python, with the same sums as one by one."""
    scores: dict[int, float] = dict.fromkeys(extra, 0.0)
    for i, ids in found.items():
        value = values[i]
        added = dict.fromkeys(ids, value)
        for doc_id in added.keys() & scores.keys():
            added[doc_id] = scores[doc_id] + value
        scores.update(added)
    return scores


def _scored(scores: dict[int, float]) -> Iterator[tuple[float, int]]:
    """(score, rowid) of each rowid scored."""
    return zip(scores.values(), scores.keys(), strict=True)


def _terms_held(
    found: dict[int, frozenset[int]], doc_ids: Sequence[int]
) -> dict[int, frozenset[int]]:
    """The indexes of the terms whose rowids (`found`) hold each of `doc_ids`: a set
    intersection a term (~300 rowids each), not a test of every term for each message.
    Each message's terms as a bit mask first, and one set a mask (a turn's ~220 messages
    hold a dozen different sets of terms): no list and set made a message, ~0.3 ms of
    bench_path's 155k:100k turn with the collector's passes over them (issue 20)."""
    masks = dict.fromkeys(doc_ids, 0)
    wanted = masks.keys()
    for i, ids in found.items():
        bit = 1 << i
        for doc_id in ids & wanted:
            masks[doc_id] |= bit
    # The terms in `found`'s order, as the set of each was made when listed one by one.
    order = list(found)
    sets: dict[int, frozenset[int]] = {}
    holding: dict[int, frozenset[int]] = {}
    for doc_id, mask in masks.items():
        held = sets.get(mask)
        if held is None:
            held = sets[mask] = frozenset(i for i in order if mask >> i & 1)
        holding[doc_id] = held
    return holding


def _how_many(newest: frozenset[int], low: int, high: int) -> int:
    """How many of the rows between `low` and `high` hold a term, from its newest
    `RARE_AT_MOST + 1` rowids: all of them when fewer, else estimated by the span they
    take (its rarity is all that is wanted of a common term; counting costs a read of
    every row that holds it)."""
    if len(newest) <= RARE_AT_MOST:
        return len(newest)
    span = high - min(newest) + 1
    return max(len(newest), round(len(newest) * (high - low + 1) / max(span, 1)))


@functools.lru_cache(maxsize=EXPRESSIONS_KEPT)
def _expression(term: RecallTerm, *, every_form: bool = False) -> str:
    """An FTS expression for the term: its words as a phrase, or any of its forms (the
    commonest unless `every_form`) or alternatives, each an FTS string (never an
    operator, never a prefix query). Kept for the turns after (a conversation's names
    and subjects come back: ~10 µs a term, its forms' inflections made and folded)."""
    forms = term.forms
    if not every_form and len(forms) > 2:
        word = forms[0]
        near = _inflections(word)
        stem = word[:-4]  # a base of `word` is all of it but an ending (at most "ing" + e)
        forms = tuple(
            f
            for f in forms
            if f in near or (len(f) < len(word) and f.startswith(stem) and word in _inflections(f))
        )
    phrases = [" ".join(term.words), *forms, *(" ".join(a) for a in term.alternatives)]
    # The index folds case and accents: "Maya" and "maya" are one seek, not two.
    unique = {fold(phrase): phrase for phrase in reversed(phrases) if phrase}
    quoted = ('"' + phrase.replace('"', "") + '"' for phrase in reversed(unique.values()))
    return "(" + " OR ".join(quoted) + ")"


def _inflections(word: str) -> set[str]:
    """`word` and the forms English spelling gives it with the first endings ("watch":
    "watches", "watched", "watching"; "hope": "hopes", "hoped", "hoping"), not the ones
    it never writes ("watchs", "hopeed"): each form looked up costs a seek in each of
    the index's segments (about 25 µs at 150,000 messages), found or not."""
    forms = {word}
    if len(word) < 2:
        return forms
    sibilant = word.endswith(("s", "x", "z", "ch", "sh"))
    consonant_y = word[-1] == "y" and word[-2] not in "aeiou"
    if not sibilant and not consonant_y:
        forms.add(word + "s")
    if sibilant or word[-1] == "o":
        forms.add(word + "es")
    if word[-1] == "e":
        forms.add(word + "d")
        forms.add((word if word.endswith(("ee", "ye", "oe")) else word[:-1]) + "ing")
    else:
        forms.add(word + "ing")
        if not consonant_y:
            forms.add(word + "ed")
    return forms


_ROLES = {role.value: role for role in Role}


def _holding(match: ArchivedMatch, held: frozenset[int]) -> ArchivedMatch:
    """`match` with the terms it holds (a new value: a kept message serves many turns)."""
    return archived_match(
        match.message_id,
        match.seq,
        match.role,
        match.created_at,
        match.content,
        match.rank,
        held,
        match.body_tokens,
    )


def _match(row: Sequence[Any], held: frozenset[int] | None = None) -> ArchivedMatch:
    # A turn reads a few hundred rows (candidates and the turns around them): the columns
    # are what the schema stores (INTEGER, TEXT, REAL), taken as they come.
    message_id, seq, role, created_at, content, rank, body_tokens = row
    return archived_match(
        message_id,
        seq,
        _ROLES[role],
        datetime.fromisoformat(created_at),
        content,
        float(rank),
        held,
        body_tokens,
    )
