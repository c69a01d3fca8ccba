"""The live tail of a conversation, kept small and counted incrementally (DESIGN §3, §4).

The live tail is every message no summary covers. The chat service holds one
`LiveTail` per open conversation, so the gauge and the trigger policy never
re-read the conversation: a stored message is one `append`, a finished reply
one `replace`, a summary one `remove`, an undo one `restore`.

Each `TailEntry` keeps only what the figures need — no text — and `LiveTail`
keeps them in arrays, so a conversation of 100,000 live messages takes a few
megabytes. The tally of the turns Claude would see (`TailTally`) follows the
same walk as `app.core.conversation.iter_dated_turns`: failed or blank messages
are left out, leading assistant turns are dropped, consecutive turns of one
role are joined, and a date line is counted where the day changes. A tally is
kept every few dozen entries, so changing the newest entry costs a few dozen
steps; a change further back recounts from the checkpoint before it.
"""

from __future__ import annotations

import bisect
import threading
import time
from array import array
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass

from app.core.conversation import (
    DATE_LINE_TOKENS,
    SENDABLE_STATUSES,
    closest_kept,
    has_text,
    local_day,
)
from app.core.models import Message, Role
from app.core.tokens import MESSAGE_OVERHEAD_TOKENS

# cl100k counts the blank line that joins two turns of one role as one token.
SEPARATOR_TOKENS = 1


@dataclass(frozen=True, slots=True)
class TailEntry:
    """What the figures need of one live message.

    Attributes:
        id, seq: the message's row id and its place in the conversation.
        role: who wrote it.
        tokens: raw (uncalibrated) tokens of its text, as stored with it.
        sendable: Claude sees it: complete or stopped, and not blank.
        pinned: never condensed.
        day: its calendar day (`local_day`), for the request's date lines; 0 when
            unknown (no date line).
    """

    id: int
    seq: int
    role: Role
    tokens: int
    sendable: bool
    pinned: bool = False
    day: int = 0

    @classmethod
    def of(cls, message: Message, count: Callable[[str], int]) -> TailEntry:
        """The entry for `message`; `count` is asked only when it has no stored estimate."""
        tokens = message.token_estimate
        if tokens is None:
            tokens = count(message.content)
        return cls(
            id=message.id,
            seq=message.seq,
            role=message.role,
            tokens=tokens,
            sendable=is_sendable(message),
            pinned=message.pinned,
            day=local_day(message.created_at),
        )


def is_sendable(message: Message) -> bool:
    """Whether Claude sees `message` (the test `iter_turns` applies)."""
    return message.status in SENDABLE_STATUSES and has_text(message.content)


@dataclass(frozen=True, slots=True)
class TailTally:
    """Raw tokens of the turns a tail sends, and where the walk ended.

    Attributes:
        history: tokens of every turn sent, with each turn's overhead, each join and
            each date line.
        turns: how many turns (after joining).
        last_role: the role of the last turn sent, None when none is.
        last_turn: tokens of that last turn.
        last_day: the day of the last message sent with a known day, 0 before any.
    """

    history: int = 0
    turns: int = 0
    last_role: Role | None = None
    last_turn: int = 0
    last_day: int = 0

    def then(self, entry: TailEntry) -> TailTally:
        """The tally once `entry` follows."""
        if not entry.sendable or (self.last_role is None and entry.role is not Role.USER):
            return self
        tokens = entry.tokens
        day = self.last_day
        if entry.day and entry.day != day:
            tokens += DATE_LINE_TOKENS
            day = entry.day
        if entry.role is self.last_role:
            tokens += SEPARATOR_TOKENS
            return TailTally(
                self.history + tokens, self.turns, entry.role, self.last_turn + tokens, day
            )
        tokens += MESSAGE_OVERHEAD_TOKENS
        return TailTally(self.history + tokens, self.turns + 1, entry.role, tokens, day)


def tally_entries(entries: Iterable[TailEntry]) -> TailTally:
    """The tally of a whole tail, walked once."""
    tally = TailTally()
    for entry in entries:
        tally = tally.then(entry)
    return tally


def tally_messages(messages: Iterable[Message], count: Callable[[str], int]) -> TailTally:
    """The tally of stored messages; `count` only for those without an estimate.

    `tally_entries` of their `TailEntry`s, walked without making an entry and a tally
    per message: every request's job tallies its whole live tail.
    """
    return TailTally(*_tally_walk(messages, count, _START, None))


# The walk's state: history, turns, last_role, last_turn, last_day (a `TailTally`'s fields).
_State = tuple[int, int, Role | None, int, int]
_START: _State = (0, 0, None, 0, 0)


def _tally_walk(
    messages: Iterable[Message],
    count: Callable[[str], int],
    state: _State,
    after: list[_State] | None,
) -> _State:
    """The walk of `tally_messages` from `state` on; the state after each message is
    appended to `after` when given."""
    history, turns, last_role, last_turn, last_day = state
    for message in messages:
        role = message.role
        if (
            message.status not in SENDABLE_STATUSES
            or not has_text(message.content)
            or (last_role is None and role is not Role.USER)
        ):
            if after is not None:
                after.append((history, turns, last_role, last_turn, last_day))
            continue
        tokens = message.token_estimate
        if tokens is None:
            tokens = count(message.content)
        day = local_day(message.created_at)
        if day and day != last_day:
            tokens += DATE_LINE_TOKENS
            last_day = day
        if role is last_role:
            tokens += SEPARATOR_TOKENS
            last_turn += tokens
        else:
            tokens += MESSAGE_OVERHEAD_TOKENS
            turns += 1
            last_turn = tokens
            last_role = role
        history += tokens
        if after is not None:
            after.append((history, turns, last_role, last_turn, last_day))
    return history, turns, last_role, last_turn, last_day


@dataclass(frozen=True)
class _Tallied:
    zone: tuple[tuple[str, str], int]  # the time zone its days were taken in
    tail: tuple[Message, ...]
    after: tuple[_State, ...]  # the walk's state after each message of `tail`


class TailTallies:
    """`tally_messages` of the live tails of the last few requests, walked again only
    from where a tail differs from the one before (as `app.core.conversation.TailTurns`
    builds their turns): the walk's state after each message is kept, and a message that
    is the same `Message` (immutable) or an equal one, after the same messages, leaves
    the same state. Per request: O(changed) beside a comparison in C. Thread-safe.
    """

    _KEPT = 4

    def __init__(self, count: Callable[[str], int]) -> None:
        self._count = count
        self._lock = threading.Lock()
        self._kept: list[_Tallied] = []

    def tally(self, tail: Sequence[Message]) -> TailTally:
        """`tally_messages(tail, count)`."""
        zone = (time.tzname, time.timezone)
        with self._lock:
            kept = [tallied for tallied in self._kept if tallied.zone == zone]
        tail = tuple(tail)
        best, shared = closest_kept(kept, tail)
        after: list[_State] = [] if best is None else list(best.after[:shared])
        state = _tally_walk(tail[shared:], self._count, after[-1] if after else _START, after)
        tallied = _Tallied(zone, tail, tuple(after))
        with self._lock:
            self._kept = [tallied, *(t for t in self._kept if t is not best)][: self._KEPT]
        return TailTally(*state)


_USER, _SENDABLE, _PINNED = 1, 2, 4
# A tally is kept after every this many entries: changing an entry recounts at
# most this many before it, and a long tail keeps few tally objects.
CHECKPOINT_EVERY = 64


def _flags(entry: TailEntry) -> int:
    return (
        (_USER if entry.role is Role.USER else 0)
        | (_SENDABLE if entry.sendable else 0)
        | (_PINNED if entry.pinned else 0)
    )


class LiveTail:
    """A conversation's live tail in seq order, with its tally, kept small.

    The entries are held in parallel arrays (a few bytes each, nothing for the
    garbage collector to walk), with the tally after every `CHECKPOINT_EVERY`
    entries: appending costs O(1), changing the newest entry O(CHECKPOINT_EVERY),
    and a change further back recounts from the checkpoint before it. A tail of
    100,000 messages takes about 3 MB.

    Not thread-safe: it belongs to the thread that owns the conversation (a job
    may build one and hand it over).
    """

    def __init__(self, entries: Iterable[TailEntry] = ()) -> None:
        self._ids = array("q")
        self._seqs = array("q")
        self._tokens = array("q")
        self._flags = array("B")
        self._days = array("l")
        self._checkpoints: list[TailTally] = [TailTally()]
        self._tally = TailTally()
        self._pinned = 0  # how many entries are pinned
        self.restore(entries)

    @classmethod
    def from_rows(cls, rows: Iterable[tuple[int, int, bool, int, bool, bool, int]]) -> LiveTail:
        """A tail from (id, seq, is_user, tokens, sendable, pinned, day) rows in seq order,
        without making an object per row (what a store read hands over)."""
        tail = cls()
        for message_id, seq, is_user, tokens, sendable, pinned, day in rows:
            tail._days.append(day)
            tail._ids.append(message_id)
            tail._seqs.append(seq)
            tail._tokens.append(tokens)
            tail._flags.append(
                (_USER if is_user else 0)
                | (_SENDABLE if sendable else 0)
                | (_PINNED if pinned else 0)
            )
        tail._after_bulk_change(0)
        return tail

    # --- reading

    def __len__(self) -> int:
        return len(self._ids)

    @property
    def entries(self) -> list[TailEntry]:
        """Every live entry, oldest first (made on demand: O(entries))."""
        return [self._entry(index) for index in range(len(self._ids))]

    @property
    def tally(self) -> TailTally:
        """The tally of the whole tail: O(1)."""
        return self._tally

    @property
    def last_seq(self) -> int:
        """The newest live message's seq, 0 when the tail is empty."""
        return self._seqs[-1] if self._seqs else 0

    def find(self, message_id: int) -> TailEntry | None:
        """The entry of `message_id`, if it is live."""
        index = self._index_of_id(message_id)
        return None if index is None else self._entry(index)

    def holds(self, message_id: int, seq: int) -> bool:
        """Whether the message with this id and seq is live: O(log entries)."""
        index = self._index_of_seq(seq)
        return index is not None and self._ids[index] == message_id

    @property
    def unpinned(self) -> int:
        """How many entries a summary could cover."""
        return len(self._ids) - self._pinned

    # --- changing

    def append(self, entry: TailEntry) -> None:
        """Add `entry`; O(1) when it is the newest (the usual case)."""
        if self._seqs and entry.seq <= self._seqs[-1]:
            self.restore([entry])
            return
        self._ids.append(entry.id)
        self._seqs.append(entry.seq)
        self._tokens.append(entry.tokens)
        self._flags.append(_flags(entry))
        self._days.append(entry.day)
        self._tally = self._tally.then(entry)
        if len(self._ids) % CHECKPOINT_EVERY == 0:
            self._checkpoints.append(self._tally)
        if entry.pinned:
            self._pinned += 1

    def replace(self, entry: TailEntry) -> bool:
        """Put `entry` in the place of the entry with its id; False when there is none.

        O(CHECKPOINT_EVERY) for the newest entry (a reply finishing), else
        O(entries after it).
        """
        index = self._index_of_seq(entry.seq)
        if index is None or self._ids[index] != entry.id:
            return False
        self._pinned += int(entry.pinned) - int(bool(self._flags[index] & _PINNED))
        self._tokens[index] = entry.tokens
        self._flags[index] = _flags(entry)
        self._days[index] = entry.day
        self._recount_from(index)
        return True

    def remove(self, message_ids: Collection[int]) -> int:
        """Drop the entries of `message_ids` (a summary covers them); returns how many."""
        if not message_ids:
            return 0
        first = next((i for i, mid in enumerate(self._ids) if mid in message_ids), None)
        if first is None:
            return 0
        keep = [i for i in range(first, len(self._ids)) if self._ids[i] not in message_ids]
        removed = len(self._ids) - first - len(keep)
        for column in (self._ids, self._seqs, self._tokens, self._flags, self._days):
            kept = [column[i] for i in keep]
            del column[first:]
            column.extend(kept)
        self._after_bulk_change(first)
        return removed

    def restore(self, entries: Iterable[TailEntry]) -> None:
        """Put `entries` back in seq order (an undo), replacing any with the same seq."""
        added = sorted(entries, key=lambda entry: entry.seq)
        if not added:
            return
        by_seq = {self._seqs[i]: self._entry(i) for i in range(len(self._seqs))}
        by_seq.update((entry.seq, entry) for entry in added)
        first = bisect.bisect_left(self._seqs, added[0].seq)
        ordered = [by_seq[seq] for seq in sorted(by_seq)]
        self._ids = array("q", (e.id for e in ordered))
        self._seqs = array("q", (e.seq for e in ordered))
        self._tokens = array("q", (e.tokens for e in ordered))
        self._flags = array("B", (_flags(e) for e in ordered))
        self._days = array("l", (e.day for e in ordered))
        self._after_bulk_change(first)

    def set_pinned(self, message_id: int, pinned: bool) -> bool:
        """Mark the entry pinned or not; False when it is not live."""
        entry = self.find(message_id)
        if entry is None:
            return False
        return self.replace(
            TailEntry(
                entry.id, entry.seq, entry.role, entry.tokens, entry.sendable, pinned, entry.day
            )
        )

    # --- inside

    def _entry(self, index: int) -> TailEntry:
        flags = self._flags[index]
        return TailEntry(
            self._ids[index],
            self._seqs[index],
            Role.USER if flags & _USER else Role.ASSISTANT,
            self._tokens[index],
            bool(flags & _SENDABLE),
            bool(flags & _PINNED),
            self._days[index],
        )

    def _index_of_seq(self, seq: int) -> int | None:
        index = bisect.bisect_left(self._seqs, seq)
        if index < len(self._seqs) and self._seqs[index] == seq:
            return index
        return None

    def _index_of_id(self, message_id: int) -> int | None:
        for index in range(len(self._ids) - 1, -1, -1):
            if self._ids[index] == message_id:
                return index
        return None

    def _after_bulk_change(self, first: int) -> None:
        self._pinned = sum(1 for flags in self._flags if flags & _PINNED)
        self._recount_from(first)

    def _recount_from(self, index: int) -> None:
        """Recount the tally from the checkpoint at or before entry `index`.

        A tight loop over the arrays, the same walk as `TailTally.then`, without
        making an object per entry.
        """
        start = max(0, min(index, len(self._ids))) // CHECKPOINT_EVERY
        del self._checkpoints[start + 1 :]
        base = self._checkpoints[start]
        history, turns, last_turn = base.history, base.turns, base.last_turn
        last_day = base.last_day
        last_user: bool | None = None if base.last_role is None else base.last_role is Role.USER
        tokens_column, flags_column, days_column = self._tokens, self._flags, self._days
        for position in range(start * CHECKPOINT_EVERY, len(self._ids)):
            flags = flags_column[position]
            if flags & _SENDABLE:
                is_user = bool(flags & _USER)
                if last_user is not None or is_user:
                    tokens = tokens_column[position]
                    day = days_column[position]
                    if day and day != last_day:
                        tokens += DATE_LINE_TOKENS
                        last_day = day
                    if is_user is last_user:
                        tokens += SEPARATOR_TOKENS
                        last_turn += tokens
                    else:
                        tokens += MESSAGE_OVERHEAD_TOKENS
                        last_turn = tokens
                        turns += 1
                    history += tokens
                    last_user = is_user
            if (position + 1) % CHECKPOINT_EVERY == 0:
                self._checkpoints.append(
                    TailTally(history, turns, _role(last_user), last_turn, last_day)
                )
        self._tally = TailTally(history, turns, _role(last_user), last_turn, last_day)


def _role(is_user: bool | None) -> Role | None:
    return None if is_user is None else (Role.USER if is_user else Role.ASSISTANT)
