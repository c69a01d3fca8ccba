"""An in-memory `SummaryRepository`, with the semantics of `app.store.summaries.SummaryStore`.

Hand-written (no mocks) so the engine's unit tests and its hypothesis state
machine run fast without SQLite: the same conflict checks on commit, the same
chain (superseded summaries point at their compressed parent, messages keep
pointing at their condensed summary), the same partial undo (newest first
within the budget; the summary keeps the rest with its range shortened), and
the same `check_coverage`. Also the message side the tests need: `append`,
`set_pinned`, `messages`.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from app.core.errors import SummaryConflictError
from app.core.models import Message, MessageStatus, Role
from app.core.summary import (
    Summary,
    SummaryDraft,
    SummaryEvent,
    SummaryState,
    SummaryTier,
    UndoResult,
)
from app.core.tokens import TokenCounter, default_counter

_EPOCH = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


class MemorySummaryRepository:
    """Messages, summaries and events of any number of conversations, in dicts.

    Attributes:
        events: every event recorded, in order.
        commits: how many summaries were committed.
        on_commit: called with the draft just before a commit is checked (tests use it
            to change the conversation "while the summarizer was working").
    """

    def __init__(self, counter: TokenCounter | None = None) -> None:
        self._counter = counter if counter is not None else default_counter()
        self._messages: dict[int, Message] = {}
        self._summaries: dict[str, Summary] = {}
        self._order: list[str] = []  # summary ids in creation order
        self._ids = itertools.count(1)
        self._seqs: dict[str, int] = {}
        self._ticks = itertools.count()
        self.events: list[SummaryEvent] = []
        self.commits = 0
        self.on_commit: list[Callable[[SummaryDraft], None]] = []

    # --- messages (the SessionStore side)

    def append(
        self,
        session_id: str,
        role: Role | str,
        content: str,
        *,
        token_estimate: int | None = None,
        status: MessageStatus = MessageStatus.COMPLETE,
        created_at: datetime | None = None,
    ) -> Message:
        """Add a message at the end, counted once as the store does (`created_at`: when
        it was written, else a tick after the previous one)."""
        seq = self._seqs.get(session_id, 0) + 1
        self._seqs[session_id] = seq
        message = Message(
            id=next(self._ids),
            session_id=session_id,
            seq=seq,
            role=Role(role),
            content=content,
            created_at=created_at if created_at is not None else self._now(),
            token_estimate=(
                token_estimate if token_estimate is not None else self._counter.count(content)
            ),
            status=status,
        )
        self._messages[message.id] = message
        return message

    def set_pinned(self, message_id: int, pinned: bool) -> Message:
        message = self._messages[message_id]
        if pinned and message.summary_id is not None:
            raise ValueError("a message inside a summary cannot be pinned")
        message = message.model_copy(update={"pinned": pinned})
        self._messages[message_id] = message
        return message

    def messages(self, session_id: str) -> list[Message]:
        """Every message of the conversation, archived ones included, oldest first."""
        return sorted(
            (m for m in self._messages.values() if m.session_id == session_id),
            key=lambda m: m.seq,
        )

    # --- SummaryRepository

    def live_messages(self, session_id: str) -> list[Message]:
        return [m for m in self.messages(session_id) if m.summary_id is None]

    def active_summaries(self, session_id: str) -> list[Summary]:
        return self.summaries(session_id, include_inactive=False)

    def summaries(self, session_id: str, *, include_inactive: bool = True) -> list[Summary]:
        found = [
            self._summaries[i]
            for i in self._order
            if self._summaries[i].session_id == session_id
            and (include_inactive or self._summaries[i].state is SummaryState.ACTIVE)
        ]
        return sorted(found, key=lambda s: (s.first_seq, s.created_at))

    def summary(self, summary_id: str) -> Summary | None:
        return self._summaries.get(summary_id)

    def covered_messages(self, summary_id: str) -> list[Message]:
        """The originals a summary stands for, down its chain, oldest first."""
        chain = {summary_id}
        grew = True
        while grew:
            more = {s.id for s in self._summaries.values() if s.parent_id in chain}
            grew = not more <= chain
            chain |= more
        return sorted(
            (m for m in self._messages.values() if m.summary_id in chain), key=lambda m: m.seq
        )

    def commit_summary(self, draft: SummaryDraft) -> Summary:
        for hook in list(self.on_commit):
            hook(draft)
        self._check(draft)
        summary = draft.committed(str(uuid.uuid4()), self._now())
        self._summaries[summary.id] = summary
        self._order.append(summary.id)
        if draft.tier is SummaryTier.CONDENSED:
            for message_id in draft.message_ids:
                self._messages[message_id] = self._messages[message_id].model_copy(
                    update={"summary_id": summary.id}
                )
        else:
            for child in draft.summary_ids:
                self._summaries[child] = self._summaries[child].model_copy(
                    update={"state": SummaryState.SUPERSEDED, "parent_id": summary.id}
                )
        self.commits += 1
        return summary

    def replace_summary(self, summary_id: str, draft: SummaryDraft) -> Summary:
        for hook in list(self.on_commit):
            hook(draft)
        old = self._summaries.get(summary_id)
        if old is None or old.state is not SummaryState.ACTIVE:
            raise SummaryConflictError(f"summary {summary_id} is no longer active")
        if old.tier is not SummaryTier.CONDENSED:
            raise SummaryConflictError(f"summary {summary_id} is not a condensed summary")
        covered = sorted(m.id for m in self._messages.values() if m.summary_id == summary_id)
        if (
            draft.tier is not SummaryTier.CONDENSED
            or draft.session_id != old.session_id
            or sorted(draft.message_ids) != covered
            or (draft.first_seq, draft.last_seq) != (old.first_seq, old.last_seq)
        ):
            raise SummaryConflictError("the draft does not cover exactly the same messages")
        summary = draft.committed(str(uuid.uuid4()), self._now())
        self._summaries[summary.id] = summary
        self._order.append(summary.id)
        for message_id in covered:
            self._messages[message_id] = self._messages[message_id].model_copy(
                update={"summary_id": summary.id}
            )
        self._summaries[summary_id] = old.model_copy(update={"state": SummaryState.UNDONE})
        self.commits += 1
        return summary

    def undo_summary(self, summary_id: str, *, budget_tokens: int | None = None) -> UndoResult:
        if budget_tokens is not None and budget_tokens < 0:
            raise ValueError("budget_tokens must be zero or more")
        summary = self._summaries.get(summary_id)
        if summary is None:
            raise KeyError(summary_id)
        if summary.state is not SummaryState.ACTIVE:
            raise ValueError(f"summary {summary_id} is {summary.state}")
        condensed = summary.tier is SummaryTier.CONDENSED
        parts: list[tuple[object, int, int]]
        if condensed:
            parts = [
                (m.id, m.seq, m.token_estimate or 0)
                for m in sorted(self._messages.values(), key=lambda m: m.seq, reverse=True)
                if m.summary_id == summary_id
            ]
        else:
            parts = [
                (s.id, s.last_seq, s.summary_tokens)
                for s in sorted(self._summaries.values(), key=lambda s: s.last_seq, reverse=True)
                if s.parent_id == summary_id
            ]
        restored, kept = parts, []
        if budget_tokens is not None:
            used = 0
            for index, (_, _, tokens) in enumerate(parts):
                if used + tokens > budget_tokens:
                    restored, kept = parts[:index], parts[index:]
                    break
                used += tokens
        complete = not kept
        if not restored and not complete:
            return UndoResult(summary_id=summary_id, restored_message_ids=[], complete=False)
        for part_id, _, _ in restored:
            if condensed:
                assert isinstance(part_id, int)
                self._messages[part_id] = self._messages[part_id].model_copy(
                    update={"summary_id": None}
                )
            else:
                assert isinstance(part_id, str)
                self._summaries[part_id] = self._summaries[part_id].model_copy(
                    update={"state": SummaryState.ACTIVE, "parent_id": None}
                )
        if complete:
            update: dict[str, object] = {"state": SummaryState.UNDONE}
        else:
            update = {"last_seq": max(part[1] for part in kept)}
        self._summaries[summary_id] = summary.model_copy(update=update)
        in_order = sorted(restored, key=lambda part: part[1])
        ids = [part[0] for part in in_order]
        if condensed:
            return UndoResult(
                summary_id=summary_id,
                restored_message_ids=[int(str(i)) for i in ids],
                complete=complete,
            )
        return UndoResult(
            summary_id=summary_id,
            restored_message_ids=[],
            complete=complete,
            restored_summary_ids=[str(i) for i in ids],
        )

    def record_event(self, event: SummaryEvent) -> None:
        if event.created_at is None:
            event = event.model_copy(update={"created_at": self._now()})
        self.events.append(event)

    # --- the invariant

    def check_coverage(self, session_id: str) -> list[str]:
        """What breaks DESIGN §3 invariant 1; empty when all is well (as SummaryStore's)."""
        problems: list[str] = []
        summaries = {s.id: s for s in self._summaries.values() if s.session_id == session_id}
        children: dict[str, list[str]] = {}
        for summary in summaries.values():
            if (summary.state is SummaryState.SUPERSEDED) != (summary.parent_id is not None):
                problems.append(f"summary {summary.id} is {summary.state} with its parent")
            if summary.parent_id is None:
                continue
            children.setdefault(summary.parent_id, []).append(summary.id)
            parent = summaries.get(summary.parent_id)
            if parent is None:
                problems.append(f"summary {summary.id} points at a missing parent")
                continue
            if parent.tier is not SummaryTier.COMPRESSED:
                problems.append(f"summary {summary.id} has a parent that is not compressed")
            if not parent.first_seq <= summary.first_seq <= summary.last_seq <= parent.last_seq:
                problems.append(f"summary {summary.id} lies outside its parent's range")
            if parent.depth <= summary.depth:
                problems.append(f"summary {summary.id} is not shallower than its parent")
        covering: dict[str, int] = {}
        live_unpinned: list[Message] = []
        for message in self.messages(session_id):
            if message.summary_id is None:
                if not message.pinned:
                    live_unpinned.append(message)
                continue
            covering[message.summary_id] = covering.get(message.summary_id, 0) + 1
            if message.pinned:
                problems.append(f"message {message.id} is pinned but in a summary")
            owner = summaries.get(message.summary_id)
            if owner is None:
                problems.append(f"message {message.id} points at a missing summary")
                continue
            if owner.tier is not SummaryTier.CONDENSED:
                problems.append(f"message {message.id} points at a compressed summary")
            if not owner.first_seq <= message.seq <= owner.last_seq:
                problems.append(f"message {message.id} lies outside its summary's range")
            top = self._chain_top(owner.id, summaries)
            if top is not None:
                problems.append(f"message {message.id}: {top}")
        active = sorted(
            (s for s in summaries.values() if s.state is SummaryState.ACTIVE),
            key=lambda s: (s.first_seq, s.last_seq),
        )
        for summary in active:
            if summary.tier is SummaryTier.CONDENSED and not covering.get(summary.id):
                problems.append(f"active summary {summary.id} covers no message")
            if summary.tier is SummaryTier.COMPRESSED and not children.get(summary.id):
                problems.append(f"active summary {summary.id} covers no summary")
        for before, after in itertools.pairwise(active):
            if before.last_seq >= after.first_seq:
                problems.append(f"active summaries {before.id} and {after.id} overlap")
        for message in live_unpinned:
            for summary in active:
                if summary.first_seq <= message.seq <= summary.last_seq:
                    problems.append(f"live message {message.id} sits inside {summary.id}")
        return problems

    # --- inside

    def _check(self, draft: SummaryDraft) -> None:
        if draft.tier is SummaryTier.CONDENSED:
            if not draft.message_ids or draft.summary_ids:
                raise ValueError("a condensed summary covers messages, and only messages")
            for message_id in draft.message_ids:
                message = self._messages.get(message_id)
                if message is None or message.session_id != draft.session_id:
                    raise SummaryConflictError("a message to summarize is gone")
                if message.summary_id is not None:
                    raise SummaryConflictError(f"message {message_id} is already in a summary")
                if message.pinned:
                    raise SummaryConflictError(f"message {message_id} was pinned")
                if not draft.first_seq <= message.seq <= draft.last_seq:
                    raise SummaryConflictError(f"message {message_id} is outside the range")
        else:
            if not draft.summary_ids or draft.message_ids:
                raise ValueError("a compressed summary covers summaries, and only summaries")
            for child_id in draft.summary_ids:
                child = self._summaries.get(child_id)
                if child is None or child.session_id != draft.session_id:
                    raise SummaryConflictError("a summary to merge is gone")
                if child.state is not SummaryState.ACTIVE:
                    raise SummaryConflictError(f"summary {child_id} is no longer active")
                if child.first_seq < draft.first_seq or child.last_seq > draft.last_seq:
                    raise SummaryConflictError(f"summary {child_id} is outside the range")
        for other in self.active_summaries(draft.session_id):
            if other.id in draft.summary_ids:
                continue
            if other.first_seq <= draft.last_seq and other.last_seq >= draft.first_seq:
                raise SummaryConflictError(f"the range overlaps the active summary {other.id}")
        for message in self.live_messages(draft.session_id):
            if (
                draft.first_seq <= message.seq <= draft.last_seq
                and not message.pinned
                and message.id not in draft.message_ids
            ):
                raise SummaryConflictError(f"message {message.id} inside the range is left out")

    def _chain_top(self, summary_id: str, summaries: dict[str, Summary]) -> str | None:
        seen: set[str] = set()
        current: str | None = summary_id
        while current is not None:
            if current in seen:
                return "the chain loops"
            seen.add(current)
            summary = summaries.get(current)
            if summary is None:
                return "the chain reaches a missing summary"
            if summary.state is SummaryState.ACTIVE:
                return None
            if summary.state is SummaryState.UNDONE:
                return f"covered by the undone summary {current}"
            current = summary.parent_id
        return "the chain ends at a superseded summary without a parent"

    def _now(self) -> datetime:
        return _EPOCH + timedelta(seconds=next(self._ticks))
