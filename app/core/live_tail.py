"""The live tail of a conversation, kept small and counted incrementally (DESIGN §3, §4).

The live tail is every message no summary covers. The chat service holds one
`LiveTail` per open conversation, so the gauge and the trigger policy never
re-read the conversation: a stored message is one `append`, a finished reply
one `replace`, a summary one `remove`, an undo one `restore`.

Each `TailEntry` keeps only what the figures need — no text — so a
conversation of 100,000 live messages stays a few megabytes. The tally of the
turns Claude would see (`TailTally`) follows the same walk as
`app.core.conversation.iter_turns`: failed or blank messages are left out,
leading assistant turns are dropped, and consecutive turns of one role are
joined. The tally after every prefix is kept, so changing the newest entry
costs O(1); a change further back recounts from there.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass

from app.core.conversation import SENDABLE_STATUSES
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
    """

    id: int
    seq: int
    role: Role
    tokens: int
    sendable: bool
    pinned: bool = False

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
        )


def is_sendable(message: Message) -> bool:
    """Whether Claude sees `message` (the test `iter_turns` applies)."""
    return message.status in SENDABLE_STATUSES and bool(message.content.strip())


@dataclass(frozen=True, slots=True)
class TailTally:
    """Raw tokens of the turns a tail sends, and where the walk ended.

    Attributes:
        history: tokens of every turn sent, with each turn's overhead and each join.
        turns: how many turns (after joining).
        last_role: the role of the last turn sent, None when none is.
        last_turn: tokens of that last turn.
    """

    history: int = 0
    turns: int = 0
    last_role: Role | None = None
    last_turn: int = 0

    def then(self, entry: TailEntry) -> TailTally:
        """The tally once `entry` follows."""
        if not entry.sendable or (self.last_role is None and entry.role is not Role.USER):
            return self
        if entry.role is self.last_role:
            tokens = entry.tokens + SEPARATOR_TOKENS
            return TailTally(self.history + tokens, self.turns, entry.role, self.last_turn + tokens)
        tokens = entry.tokens + MESSAGE_OVERHEAD_TOKENS
        return TailTally(self.history + tokens, self.turns + 1, entry.role, tokens)


def tally_entries(entries: Iterable[TailEntry]) -> TailTally:
    """The tally of a whole tail, walked once."""
    tally = TailTally()
    for entry in entries:
        tally = tally.then(entry)
    return tally


def tally_messages(messages: Iterable[Message], count: Callable[[str], int]) -> TailTally:
    """The tally of stored messages; `count` only for those without an estimate."""
    return tally_entries(TailEntry.of(message, count) for message in messages)


class LiveTail:
    """A conversation's live tail in seq order, with its tally after every prefix.

    Not thread-safe: it belongs to the thread that owns the conversation.
    """

    def __init__(self, entries: Iterable[TailEntry] = ()) -> None:
        self._entries: list[TailEntry] = []
        self._seqs: list[int] = []
        self._prefix: list[TailTally] = [TailTally()]
        self._pinned_tokens = 0
        # Tokens of the unpinned entries, in order (the policy's input every turn), kept
        # in step by append and by replacing the newest entry; recounted after the rest.
        self._unpinned_tokens: list[int] = []
        self._unpinned_stale = False
        self.restore(entries)

    # --- reading

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def entries(self) -> Sequence[TailEntry]:
        """Every live entry, oldest first (do not change it)."""
        return self._entries

    @property
    def tally(self) -> TailTally:
        """The tally of the whole tail: O(1)."""
        return self._prefix[-1]

    @property
    def last_seq(self) -> int:
        """The newest live message's seq, 0 when the tail is empty."""
        return self._seqs[-1] if self._seqs else 0

    def find(self, message_id: int) -> TailEntry | None:
        """The entry of `message_id`, looked for from the newest end."""
        for entry in reversed(self._entries):
            if entry.id == message_id:
                return entry
        return None

    def unpinned_tokens(self) -> tuple[int, ...]:
        """Tokens of each entry a summary could cover, oldest first (the policy's input)."""
        return tuple(self._unpinned())

    @property
    def unpinned(self) -> int:
        """How many entries a summary could cover."""
        return len(self._unpinned())

    def _unpinned(self) -> list[int]:
        if self._unpinned_stale:
            self._unpinned_tokens = [e.tokens for e in self._entries if not e.pinned]
            self._unpinned_stale = False
        return self._unpinned_tokens

    @property
    def pinned_tokens(self) -> int:
        """Tokens of the pinned entries, which stay whatever is condensed."""
        return self._pinned_tokens

    # --- changing

    def append(self, entry: TailEntry) -> None:
        """Add `entry`; O(1) when it is the newest (the usual case)."""
        if self._seqs and entry.seq <= self._seqs[-1]:
            self.restore([entry])
            return
        self._entries.append(entry)
        self._seqs.append(entry.seq)
        self._prefix.append(self._prefix[-1].then(entry))
        self._pinned_tokens += entry.tokens if entry.pinned else 0
        if not entry.pinned:
            self._unpinned_tokens.append(entry.tokens)

    def replace(self, entry: TailEntry) -> bool:
        """Put `entry` in the place of the entry with its id; False when there is none.

        O(1) for the newest entry (a reply finishing), else O(entries after it).
        """
        index = self._index_of_seq(entry.seq)
        if index is None or self._entries[index].id != entry.id:
            return False
        old = self._entries[index]
        self._entries[index] = entry
        self._pinned_tokens += (entry.tokens if entry.pinned else 0) - (
            old.tokens if old.pinned else 0
        )
        newest_unpinned = index == len(self._entries) - 1 and not (old.pinned or entry.pinned)
        if newest_unpinned and not self._unpinned_stale:
            self._unpinned_tokens[-1] = entry.tokens
        else:
            self._unpinned_stale = True
        self._recount_from(index)
        return True

    def remove(self, message_ids: Collection[int]) -> int:
        """Drop the entries of `message_ids` (a summary covers them); returns how many."""
        if not message_ids:
            return 0
        first = next((i for i, e in enumerate(self._entries) if e.id in message_ids), None)
        if first is None:
            return 0
        kept = [entry for entry in self._entries[first:] if entry.id not in message_ids]
        removed = len(self._entries) - first - len(kept)
        self._entries[first:] = kept
        self._seqs[first:] = [entry.seq for entry in kept]
        self._pinned_tokens = sum(entry.tokens for entry in self._entries if entry.pinned)
        self._unpinned_stale = True
        self._recount_from(first)
        return removed

    def restore(self, entries: Iterable[TailEntry]) -> None:
        """Put `entries` back in seq order (an undo), replacing any with the same seq."""
        added = sorted(entries, key=lambda entry: entry.seq)
        if not added:
            return
        by_seq = {entry.seq: entry for entry in self._entries}
        by_seq.update((entry.seq, entry) for entry in added)
        first = bisect.bisect_left(self._seqs, added[0].seq)
        self._entries = [by_seq[seq] for seq in sorted(by_seq)]
        self._seqs = [entry.seq for entry in self._entries]
        self._pinned_tokens = sum(entry.tokens for entry in self._entries if entry.pinned)
        self._unpinned_stale = True
        self._recount_from(first)

    def set_pinned(self, message_id: int, pinned: bool) -> bool:
        """Mark the entry pinned or not; False when it is not live."""
        entry = self.find(message_id)
        if entry is None:
            return False
        return self.replace(
            TailEntry(entry.id, entry.seq, entry.role, entry.tokens, entry.sendable, pinned)
        )

    # --- inside

    def _index_of_seq(self, seq: int) -> int | None:
        index = bisect.bisect_left(self._seqs, seq)
        if index < len(self._seqs) and self._seqs[index] == seq:
            return index
        return None

    def _recount_from(self, index: int) -> None:
        """Recompute the prefix tallies from entry `index` on."""
        index = max(0, min(index, len(self._entries)))
        del self._prefix[index + 1 :]
        tally = self._prefix[index]
        for entry in self._entries[index:]:
            tally = tally.then(entry)
            self._prefix.append(tally)
