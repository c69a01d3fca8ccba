"""Summaries and the audit trail, kept in SQLite (DESIGN §2, §3, §6 steps 5–6).

`SummaryStore` implements `app.core.summary.SummaryRepository`. Like
`SessionStore`, it wraps one connection and belongs to the thread that made it.

Coverage goes through a chain: a message points (`summary_id`) at the
condensed summary made from it; when summaries are merged into a compressed
one, they become `superseded` with `parent_id` naming it, and their messages
keep pointing at them. A message is live when its `summary_id` is NULL, and
covered when its chain ends at an `active` summary. Originals are never deleted
here: committing and undoing only move pointers and states, in one transaction.

A summary is committed only if everything it covers is still as it was when it
was planned (live and unpinned messages, active summaries). That check, made
under the write lock, is the optimistic check on the conversation: a message
sent meanwhile lies outside the covered range and does not make it fail.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Iterable
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from itertools import pairwise
from typing import Any

from app.core.errors import SummaryConflictError
from app.core.models import Message
from app.core.summary import (
    EventKind,
    EventOutcome,
    Summary,
    SummaryContent,
    SummaryDraft,
    SummaryEvent,
    SummaryMode,
    SummaryState,
    SummaryTier,
    SummaryTrigger,
    UndoResult,
)
from app.store.errors import SummaryNotActiveError, SummaryNotFoundError
from app.store.originals import OriginalsDeletedError, chain_has_originals, without_originals
from app.store.owned import ConnectionStore
from app.store.sessions import _MESSAGE_COLUMNS, _message_from_row, _stamp, read_live_messages
from app.store.transactions import translated_errors, write_transaction

_SUMMARY_COLUMNS = (
    "id, session_id, tier, parent_id, depth, first_seq, last_seq, narrative, key_points, "
    "facets, source_tokens, summary_tokens, mode, model, trigger, instructions, state, "
    "created_at"
)
_EVENT_COLUMNS = (
    "session_id, kind, outcome, summary_id, reason, ratio_before, ratio_after, "
    "tokens_before, tokens_after, duration_ms, error_class, detail, created_at"
)
# SummaryContent fields kept together in the `facets` JSON column.
# The days it covers too (ISO dates); rows from before they were kept have none.
_FACETS = (
    "decisions",
    "action_items",
    "open_questions",
    "entities",
    "notes",
    "first_day",
    "last_day",
    # The fact ledger and how many of its entries were trimmed (issue 12); old rows: none.
    "facts",
    "archived_facts",
)


class SummaryStore(ConnectionStore):
    """Reads and writes summaries and audit events for one thread.

    Attributes:
        database: the file behind the connection, named in error messages.
    """

    # --- reading -----------------------------------------------------------------

    def live_messages(self, session_id: str) -> list[Message]:
        """The live tail (no summary covers them; pinned ones included), oldest first."""
        with self._read("load the conversation"):
            return read_live_messages(self._connection, session_id)

    def active_summaries(self, session_id: str) -> list[Summary]:
        """The summaries the memory block holds (both tiers), oldest first."""
        with self._read("load the conversation's summaries"):
            rows = self._connection.execute(
                f"SELECT {_SUMMARY_COLUMNS} FROM summary "
                "WHERE session_id = ? AND state = 'active' ORDER BY first_seq, created_at",
                (session_id,),
            ).fetchall()
        return [_summary_from_row(row) for row in rows]

    def summary(self, summary_id: str) -> Summary | None:
        """The summary with this id, in whatever state, or None."""
        with self._read("load the summary"):
            row = self._connection.execute(
                f"SELECT {_SUMMARY_COLUMNS} FROM summary WHERE id = ?", (summary_id,)
            ).fetchone()
        return _summary_from_row(row) if row is not None else None

    def summaries(self, session_id: str, *, include_inactive: bool = True) -> list[Summary]:
        """Every summary of the conversation (or only the active ones), by range then age."""
        states = "" if include_inactive else "AND state = 'active' "
        with self._read("load the conversation's summaries"):
            rows = self._connection.execute(
                f"SELECT {_SUMMARY_COLUMNS} FROM summary WHERE session_id = ? {states}"
                "ORDER BY first_seq, created_at, rowid",
                (session_id,),
            ).fetchall()
        return [_summary_from_row(row) for row in rows]

    def covered_messages(self, summary_id: str) -> list[Message]:
        """The originals a summary stands for, down its chain, oldest first.

        For "Show original messages"; an unknown or fully undone summary has none.
        """
        with self._read("load the original messages"):
            rows = self._connection.execute(
                "WITH RECURSIVE chain (id) AS ("
                " SELECT ? UNION SELECT summary.id FROM summary JOIN chain"
                " ON summary.parent_id = chain.id) "
                f"SELECT {_MESSAGE_COLUMNS} FROM message "
                "WHERE summary_id IN (SELECT id FROM chain) ORDER BY seq",
                (summary_id,),
            ).fetchall()
        return [_message_from_row(row) for row in rows]

    # --- committing and undoing --------------------------------------------------

    def commit_summary(self, draft: SummaryDraft) -> Summary:
        """Insert the summary and mark what it covers, in one transaction.

        Raises `SummaryConflictError`, with nothing written, when anything the
        draft covers changed since it was planned: a message no longer live,
        pinned, gone or outside the range; a summary no longer active; or the
        range now overlaps another active summary or leaves out a live message.
        A malformed draft (wrong kind of ids for its tier) is a `ValueError`.
        """
        _check_draft_shape(draft)
        now = self._now()
        summary_id = str(uuid.uuid4())
        with self._write("save the summary") as cursor:
            if (
                cursor.execute("SELECT 1 FROM session WHERE id = ?", (draft.session_id,)).fetchone()
                is None
            ):
                raise SummaryConflictError(f"the conversation {draft.session_id} is gone")
            if draft.tier is SummaryTier.CONDENSED:
                _check_messages_still_live(cursor, draft)
            else:
                _check_summaries_still_active(cursor, draft)
            _check_range_is_free(cursor, draft)
            _insert_active(cursor, summary_id, draft, now)
            if draft.tier is SummaryTier.CONDENSED:
                cursor.execute(
                    "UPDATE message SET summary_id = ? "
                    "WHERE id IN (SELECT value FROM json_each(?))",
                    (summary_id, json.dumps(draft.message_ids)),
                )
            else:
                # The covered summaries' messages keep pointing at them: the
                # chain carries the coverage up to the new summary.
                cursor.execute(
                    "UPDATE summary SET state = 'superseded', parent_id = ? "
                    "WHERE id IN (SELECT value FROM json_each(?))",
                    (summary_id, json.dumps(draft.summary_ids)),
                )
            _bump_version(cursor, draft.session_id)
        return draft.committed(summary_id, now, draft.content)

    def replace_summary(self, summary_id: str, draft: SummaryDraft) -> Summary:
        """Put `draft` in the place of an active condensed summary, in one transaction.

        For "Try again with Claude": the new summary covers exactly the messages the
        old one did, they point at it, and the old one is set aside (`undone`: it no
        longer covers anything). Raises `SummaryConflictError`, with nothing written,
        when the old summary is gone, no longer active, compressed, or the draft
        does not cover exactly its messages and range.
        """
        _check_draft_shape(draft)
        if draft.tier is not SummaryTier.CONDENSED:
            raise ValueError("only a condensed summary can be rewritten")
        now = self._now()
        new_id = str(uuid.uuid4())
        with self._write("save the rewritten summary") as cursor:
            row = cursor.execute(
                "SELECT session_id, tier, state, first_seq, last_seq FROM summary WHERE id = ?",
                (summary_id,),
            ).fetchone()
            if row is None:
                raise SummaryConflictError(f"the summary {summary_id} is gone")
            session_id, tier, state, first_seq, last_seq = row
            if state != SummaryState.ACTIVE.value:
                raise SummaryConflictError(f"summary {summary_id} is {state}, no longer active")
            if tier != SummaryTier.CONDENSED.value:
                raise SummaryConflictError(f"summary {summary_id} is not a condensed summary")
            covered = [
                message_id
                for (message_id,) in cursor.execute(
                    "SELECT id FROM message WHERE summary_id = ? ORDER BY seq", (summary_id,)
                )
            ]
            if (
                draft.session_id != session_id
                or sorted(draft.message_ids) != covered
                or (draft.first_seq, draft.last_seq) != (first_seq, last_seq)
            ):
                raise SummaryConflictError(
                    f"the new draft does not cover exactly what summary {summary_id} covers"
                )
            _insert_active(cursor, new_id, draft, now)
            cursor.execute(
                "UPDATE message SET summary_id = ? WHERE summary_id = ?", (new_id, summary_id)
            )
            cursor.execute("UPDATE summary SET state = 'undone' WHERE id = ?", (summary_id,))
            _bump_version(cursor, session_id)
        return draft.committed(new_id, now, draft.content)

    def undo_summary(self, summary_id: str, *, budget_tokens: int | None = None) -> UndoResult:
        """Give what an active summary covers back, newest first within `budget_tokens`.

        Condensed: its messages become live again (their `token_estimate`s
        count against the budget). Compressed: the summaries it covered become
        active again (their `summary_tokens` count). When not everything fits,
        only the newest that fit (contiguous from the end) come back, the
        summary keeps covering the rest with its range shortened, and the
        result says `complete=False`; when nothing fits, nothing changes.

        Raises `SummaryNotFoundError` for an unknown id and
        `SummaryNotActiveError` (plain words) for one already undone or merged.
        """
        if budget_tokens is not None and budget_tokens < 0:
            raise ValueError("budget_tokens must be zero or more")
        with self._write("undo the summary") as cursor:
            row = cursor.execute(
                "SELECT session_id, tier, state FROM summary WHERE id = ?", (summary_id,)
            ).fetchone()
            if row is None:
                raise SummaryNotFoundError(summary_id)
            session_id, tier, state = row
            _check_undoable(SummaryState(state))
            if not chain_has_originals(cursor, summary_id):
                raise OriginalsDeletedError
            if SummaryTier(tier) is SummaryTier.CONDENSED:
                parts = cursor.execute(
                    "SELECT id, seq, coalesce(token_estimate, 0) FROM message "
                    "WHERE summary_id = ? ORDER BY seq DESC",
                    (summary_id,),
                ).fetchall()
            else:
                parts = cursor.execute(
                    "SELECT id, last_seq, summary_tokens FROM summary "
                    "WHERE parent_id = ? ORDER BY last_seq DESC",
                    (summary_id,),
                ).fetchall()
            restored, kept = _newest_that_fit(parts, budget_tokens)
            complete = not kept
            if not restored and not complete:
                return UndoResult(summary_id=summary_id, restored_message_ids=[], complete=False)
            restored_ids = json.dumps([part[0] for part in restored])
            if SummaryTier(tier) is SummaryTier.CONDENSED:
                cursor.execute(
                    "UPDATE message SET summary_id = NULL "
                    "WHERE id IN (SELECT value FROM json_each(?))",
                    (restored_ids,),
                )
            else:
                cursor.execute(
                    "UPDATE summary SET state = 'active', parent_id = NULL "
                    "WHERE id IN (SELECT value FROM json_each(?))",
                    (restored_ids,),
                )
            if complete:
                cursor.execute("UPDATE summary SET state = 'undone' WHERE id = ?", (summary_id,))
            else:
                # What stays covered is older than what came back: only the end moves.
                cursor.execute(
                    "UPDATE summary SET last_seq = ? WHERE id = ?",
                    (max(part[1] for part in kept), summary_id),
                )
            _bump_version(cursor, session_id)
        restored_in_order = sorted(restored, key=lambda part: part[1])
        if SummaryTier(tier) is SummaryTier.CONDENSED:
            return UndoResult(
                summary_id=summary_id,
                restored_message_ids=[part[0] for part in restored_in_order],
                complete=complete,
            )
        return UndoResult(
            summary_id=summary_id,
            restored_message_ids=[],
            complete=complete,
            restored_summary_ids=[part[0] for part in restored_in_order],
        )

    # --- the audit trail ---------------------------------------------------------

    def record_event(self, event: SummaryEvent) -> None:
        """Append one line to the audit trail (its time is now unless it has one)."""
        created_at = event.created_at if event.created_at is not None else self._now()
        with self._write("record what happened") as cursor:
            cursor.execute(
                f"INSERT INTO event ({_EVENT_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    event.session_id,
                    event.kind.value,
                    event.outcome.value,
                    event.summary_id,
                    event.reason,
                    event.ratio_before,
                    event.ratio_after,
                    event.tokens_before,
                    event.tokens_after,
                    event.duration_ms,
                    event.error_class,
                    event.detail,
                    _stamp(created_at),
                ),
            )

    def events(self, session_id: str) -> list[SummaryEvent]:
        """The conversation's audit trail, oldest first (kept after it is deleted)."""
        with self._read("load the history of summaries"):
            rows = self._connection.execute(
                f"SELECT {_EVENT_COLUMNS} FROM event WHERE session_id = ? ORDER BY created_at, id",
                (session_id,),
            ).fetchall()
        return [_event_from_row(row) for row in rows]

    # --- the invariant -----------------------------------------------------------

    def check_coverage(self, session_id: str) -> list[str]:
        """What breaks DESIGN §3 invariant 1 in this conversation; empty when all is well.

        Every message is live or covered, through its chain, by exactly one
        active summary (and lies within its range); no message is covered by an
        undone summary; pinned messages are live; active ranges do not overlap;
        chains are well formed. A live message may sit inside an active range:
        it was pinned when that summary was made, and stays live.
        """
        with self._read("check the conversation's summaries"):
            summaries = {
                row[0]: row
                for row in self._connection.execute(
                    "SELECT id, session_id, tier, parent_id, state, first_seq, last_seq, depth "
                    "FROM summary WHERE session_id = ? OR id IN (SELECT summary_id FROM message "
                    "WHERE session_id = ?) OR parent_id IN (SELECT id FROM summary "
                    "WHERE session_id = ?)",
                    (session_id, session_id, session_id),
                )
            }
            messages = self._connection.execute(
                "SELECT id, seq, summary_id, pinned FROM message WHERE session_id = ? ORDER BY seq",
                (session_id,),
            ).fetchall()
            deleted = without_originals(self._connection, session_id, summaries.values())
        return _coverage_problems(session_id, summaries, messages, deleted)

    # --- plumbing ----------------------------------------------------------------

    def _now(self) -> datetime:
        return self._clock().astimezone(UTC)

    def _write(self, action: str) -> AbstractContextManager[sqlite3.Cursor]:
        return write_transaction(self._connection, action, self.database)

    def _read(self, action: str) -> AbstractContextManager[None]:
        return translated_errors(action, self.database)


# --- commit checks -------------------------------------------------------------


def _insert_active(
    cursor: sqlite3.Cursor, summary_id: str, draft: SummaryDraft, now: datetime
) -> None:
    """Insert `draft` as the active summary `summary_id` (what it covers is marked apart)."""
    content = draft.content
    cursor.execute(
        f"INSERT INTO summary ({_SUMMARY_COLUMNS}) "
        "VALUES (?, ?, ?, NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'active', ?)",
        (
            summary_id,
            draft.session_id,
            draft.tier.value,
            draft.depth,
            draft.first_seq,
            draft.last_seq,
            content.narrative,
            _key_points_json(content),
            _facets_json(content),
            draft.source_tokens,
            draft.summary_tokens,
            draft.mode.value,
            draft.model,
            draft.trigger.value,
            draft.instructions,
            _stamp(now),
        ),
    )


def _check_draft_shape(draft: SummaryDraft) -> None:
    if draft.first_seq < 1 or draft.last_seq < draft.first_seq:
        raise ValueError(f"bad range {draft.first_seq}..{draft.last_seq}")
    if draft.depth < 1:
        raise ValueError("depth must be at least 1")
    if draft.tier is SummaryTier.CONDENSED:
        if not draft.message_ids or draft.summary_ids:
            raise ValueError("a condensed summary covers messages, and only messages")
        if len(set(draft.message_ids)) != len(draft.message_ids):
            raise ValueError("a message is listed twice")
    else:
        if not draft.summary_ids or draft.message_ids:
            raise ValueError("a compressed summary covers summaries, and only summaries")
        if len(set(draft.summary_ids)) != len(draft.summary_ids):
            raise ValueError("a summary is listed twice")


def _check_messages_still_live(cursor: sqlite3.Cursor, draft: SummaryDraft) -> None:
    rows = cursor.execute(
        "SELECT id, seq, summary_id, pinned FROM message WHERE session_id = ? "
        "AND id IN (SELECT value FROM json_each(?))",
        (draft.session_id, json.dumps(draft.message_ids)),
    ).fetchall()
    if len(rows) != len(draft.message_ids):
        raise SummaryConflictError("a message to summarize is no longer in the conversation")
    for message_id, seq, summary_id, pinned in rows:
        if summary_id is not None:
            raise SummaryConflictError(f"message {message_id} is already in a summary")
        if pinned:
            raise SummaryConflictError(f"message {message_id} was pinned")
        if not draft.first_seq <= seq <= draft.last_seq:
            raise SummaryConflictError(f"message {message_id} (seq {seq}) is outside the range")


def _check_summaries_still_active(cursor: sqlite3.Cursor, draft: SummaryDraft) -> None:
    rows = cursor.execute(
        "SELECT id, state, first_seq, last_seq FROM summary WHERE session_id = ? "
        "AND id IN (SELECT value FROM json_each(?))",
        (draft.session_id, json.dumps(draft.summary_ids)),
    ).fetchall()
    if len(rows) != len(draft.summary_ids):
        raise SummaryConflictError("a summary to merge is no longer in the conversation")
    for summary_id, state, first_seq, last_seq in rows:
        if state != SummaryState.ACTIVE.value:
            raise SummaryConflictError(f"summary {summary_id} is {state}, no longer active")
        if first_seq < draft.first_seq or last_seq > draft.last_seq:
            raise SummaryConflictError(f"summary {summary_id} is outside the range")


def _check_range_is_free(cursor: sqlite3.Cursor, draft: SummaryDraft) -> None:
    """Nothing else inside the range: no other active summary, no left-out live message."""
    merged = json.dumps(draft.summary_ids)
    overlapping = cursor.execute(
        "SELECT id FROM summary WHERE session_id = ? AND state = 'active' "
        "AND first_seq <= ? AND last_seq >= ? "
        "AND id NOT IN (SELECT value FROM json_each(?)) LIMIT 1",
        (draft.session_id, draft.last_seq, draft.first_seq, merged),
    ).fetchone()
    if overlapping is not None:
        raise SummaryConflictError(f"the range overlaps the active summary {overlapping[0]}")
    # A live message inside a merged summary's own range (pinned when that
    # summary was made, unpinned since) stays live; one between them would be hidden.
    left_out = cursor.execute(
        "SELECT id FROM message WHERE session_id = ? AND seq BETWEEN ? AND ? "
        "AND summary_id IS NULL AND pinned = 0 AND shelved_by IS NULL "
        "AND id NOT IN (SELECT value FROM json_each(?)) "
        "AND NOT EXISTS (SELECT 1 FROM summary WHERE summary.id IN "
        "(SELECT value FROM json_each(?)) AND message.seq BETWEEN first_seq AND last_seq) "
        "LIMIT 1",
        (
            draft.session_id,
            draft.first_seq,
            draft.last_seq,
            json.dumps(draft.message_ids),
            merged,
        ),
    ).fetchone()
    if left_out is not None:
        raise SummaryConflictError(
            f"message {left_out[0]} inside the range is live but not covered (unpinned?)"
        )


def _bump_version(cursor: sqlite3.Cursor, session_id: str) -> None:
    cursor.execute("UPDATE session SET version = version + 1 WHERE id = ?", (session_id,))


# --- undo ------------------------------------------------------------------------


def _check_undoable(state: SummaryState) -> None:
    if state is SummaryState.UNDONE:
        raise SummaryNotActiveError("This summary was already undone.")
    if state is SummaryState.SUPERSEDED:
        raise SummaryNotActiveError(
            "This summary was merged into a newer one. Undo the newer summary first."
        )


Part = tuple[Any, int, int]  # (id, seq or last_seq, tokens), newest first


def _newest_that_fit(parts: list[Part], budget: int | None) -> tuple[list[Part], list[Part]]:
    """Split newest-first `parts` into (what comes back, what stays covered)."""
    if budget is None:
        return parts, []
    used = 0
    for index, (_, _, tokens) in enumerate(parts):
        if used + tokens > budget:
            return parts[:index], parts[index:]
        used += tokens
    return parts, []


# --- coverage ----------------------------------------------------------------------


def _coverage_problems(
    session_id: str,
    summaries: dict[str, Any],
    messages: Iterable[Any],
    originals_deleted: set[str] | frozenset[str] = frozenset(),
) -> list[str]:
    problems: list[str] = []
    children: dict[str, list[str]] = {}
    for (
        summary_id,
        owner,
        _tier,
        parent_id,
        state,
        first_seq,
        last_seq,
        depth,
    ) in summaries.values():
        if owner != session_id:
            continue  # reported where a message or child points at it
        if (state == "superseded") != (parent_id is not None):
            problems.append(f"summary {summary_id} is {state} with parent {parent_id}")
        if parent_id is None:
            continue
        children.setdefault(parent_id, []).append(summary_id)
        parent = summaries.get(parent_id)
        if parent is None:
            problems.append(f"summary {summary_id} points at a missing parent {parent_id}")
            continue
        _, parent_owner, parent_tier, _, _, parent_first, parent_last, parent_depth = parent
        if parent_owner != session_id:
            problems.append(f"summary {summary_id} has a parent in another conversation")
        if parent_tier != "compressed":
            problems.append(f"summary {summary_id} has a parent that is not compressed")
        if not parent_first <= first_seq <= last_seq <= parent_last:
            problems.append(f"summary {summary_id} lies outside its parent's range")
        if parent_depth <= depth:
            problems.append(f"summary {summary_id} is not shallower than its parent")

    covering: dict[str, int] = {}
    for message_id, seq, summary_id, pinned in messages:
        if summary_id is None:
            # Live, wherever it is: a message pinned when a summary was made
            # stays live inside its range, even after it is unpinned.
            continue
        covering[summary_id] = covering.get(summary_id, 0) + 1
        if pinned:
            problems.append(f"message {message_id} is pinned but in summary {summary_id}")
        row = summaries.get(summary_id)
        if row is None:
            problems.append(f"message {message_id} points at a missing summary {summary_id}")
            continue
        _, owner, tier, _, _, first_seq, last_seq, _ = row
        if owner != session_id:
            problems.append(f"message {message_id} is in another conversation's summary")
        if tier != "condensed":
            problems.append(f"message {message_id} points at a compressed summary")
        if not first_seq <= seq <= last_seq:
            problems.append(f"message {message_id} (seq {seq}) lies outside its summary's range")
        top = _chain_top(summary_id, summaries)
        if isinstance(top, str):
            problems.append(f"message {message_id}: {top}")

    active = sorted(
        (row for row in summaries.values() if row[1] == session_id and row[4] == "active"),
        key=lambda row: (row[5], row[6]),
    )
    for row in active:
        summary_id, tier = row[0], row[2]
        if tier == "condensed" and not covering.get(summary_id):
            if summary_id in originals_deleted:
                continue  # deleted on purpose (app.store.originals), not a gap
            problems.append(f"active summary {summary_id} covers no message")
        if tier == "compressed" and not children.get(summary_id):
            problems.append(f"active summary {summary_id} covers no summary")
    for before, after in pairwise(active):
        if before[6] >= after[5]:
            problems.append(
                f"active summaries {before[0]} ({before[5]}–{before[6]}) and "
                f"{after[0]} ({after[5]}–{after[6]}) overlap"
            )
    for summary_id, row in summaries.items():
        if row[1] == session_id and row[4] == "superseded":
            top = _chain_top(summary_id, summaries)
            if isinstance(top, str):
                problems.append(f"summary {summary_id}: {top}")
    return problems


def _chain_top(summary_id: str, summaries: dict[str, Any]) -> tuple[str] | str:
    """The active summary at the end of the chain, as a 1-tuple; or what is wrong."""
    seen: set[str] = set()
    current: str | None = summary_id
    while current is not None:
        if current in seen:
            return f"the chain from {summary_id} loops"
        seen.add(current)
        row = summaries.get(current)
        if row is None:
            return f"the chain from {summary_id} reaches a missing summary {current}"
        state, parent_id = row[4], row[3]
        if state == "active":
            return (current,)
        if state == "undone":
            return f"covered by the undone summary {current}"
        current = parent_id
    return f"the chain from {summary_id} ends at a superseded summary without a parent"


# --- rows ------------------------------------------------------------------------


def _key_points_json(content: SummaryContent) -> str:
    return json.dumps(
        [point.model_dump(mode="json") for point in content.key_points], ensure_ascii=False
    )


def _facets_json(content: SummaryContent) -> str:
    return json.dumps(content.model_dump(mode="json", include=set(_FACETS)), ensure_ascii=False)


def _summary_from_row(row: Any) -> Summary:
    (
        summary_id,
        session_id,
        tier,
        parent_id,
        depth,
        first_seq,
        last_seq,
        narrative,
        key_points,
        facets,
        source_tokens,
        summary_tokens,
        mode,
        model,
        trigger,
        instructions,
        state,
        created_at,
    ) = row
    content = SummaryContent.model_validate(
        {"narrative": narrative, "key_points": json.loads(key_points), **json.loads(facets)}
    )
    return Summary(
        id=summary_id,
        session_id=session_id,
        tier=SummaryTier(tier),
        parent_id=parent_id,
        first_seq=first_seq,
        last_seq=last_seq,
        content=content,
        source_tokens=source_tokens,
        summary_tokens=summary_tokens,
        mode=SummaryMode(mode),
        model=model,
        trigger=SummaryTrigger(trigger),
        instructions=instructions,
        state=SummaryState(state),
        depth=depth,
        created_at=datetime.fromisoformat(created_at),
    )


def _event_from_row(row: Any) -> SummaryEvent:
    (
        session_id,
        kind,
        outcome,
        summary_id,
        reason,
        ratio_before,
        ratio_after,
        tokens_before,
        tokens_after,
        duration_ms,
        error_class,
        detail,
        created_at,
    ) = row
    return SummaryEvent(
        session_id=session_id,
        kind=EventKind(kind),
        outcome=EventOutcome(outcome),
        summary_id=summary_id,
        reason=reason,
        ratio_before=ratio_before,
        ratio_after=ratio_after,
        tokens_before=tokens_before,
        tokens_after=tokens_after,
        duration_ms=duration_ms,
        error_class=error_class,
        detail=detail,
        created_at=datetime.fromisoformat(created_at),
    )
