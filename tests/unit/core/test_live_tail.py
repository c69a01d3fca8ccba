"""The live tail's incremental tally always equals a fresh walk over its messages."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from app.core.catalog import ModelInfo
from app.core.context import ContextBuilder, RequestInputs
from app.core.conversation import iter_turns
from app.core.live_tail import (
    CHECKPOINT_EVERY,
    LiveTail,
    TailEntry,
    TailTally,
    tally_entries,
    tally_messages,
)
from app.core.models import Message, MessageStatus, Role
from app.core.tokens import default_counter

COUNTER = default_counter()
MODEL = ModelInfo(id="m", display_name="M", max_input_tokens=200_000, max_tokens=8_192)
WHEN = datetime(2026, 3, 1, tzinfo=UTC)

STATUSES = st.sampled_from(list(MessageStatus))
TEXTS = st.sampled_from(["", "  ", "Hello there.", "A longer message about stones " * 5, "ok"])


def message(seq: int, role: Role, text: str, status: MessageStatus, pinned: bool) -> Message:
    return Message(
        id=seq * 10,
        session_id="s",
        seq=seq,
        role=role,
        content=text,
        # Several days: the tally counts a date line wherever the day changes.
        created_at=WHEN + timedelta(hours=7 * seq),
        token_estimate=COUNTER.count(text),
        status=status,
        pinned=pinned,
    )


def test_the_walk_matches_iter_turns() -> None:
    messages = [
        message(1, Role.ASSISTANT, "leading reply", MessageStatus.COMPLETE, False),
        message(2, Role.USER, "Hi", MessageStatus.COMPLETE, False),
        message(3, Role.ASSISTANT, "", MessageStatus.ERROR, False),
        message(4, Role.USER, "Again", MessageStatus.COMPLETE, False),
        message(5, Role.ASSISTANT, "Sure", MessageStatus.STOPPED, False),
    ]
    tally = tally_messages(messages, COUNTER.count)
    turns = list(iter_turns(messages))
    assert tally.turns == sum(1 for _, joins in turns if not joins) == 2
    assert tally.last_role is Role.ASSISTANT
    assert tally_messages([], COUNTER.count) == TailTally()


def test_the_newest_entry_changes_without_recounting_the_tail() -> None:
    tail = LiveTail()
    for seq in range(1, 2001):
        tail.append(TailEntry(seq, seq, Role.USER if seq % 2 else Role.ASSISTANT, 5, True))
    before = list(tail._checkpoints)
    assert len(before) == 2000 // CHECKPOINT_EVERY + 1, "a tally every few dozen, not each"
    tail.replace(TailEntry(2000, 2000, Role.ASSISTANT, 50, True))
    assert tail._checkpoints == before, "the checkpoints before it were kept"
    assert tail.tally == tally_entries(tail.entries)


def test_a_tail_is_built_from_rows_as_from_entries() -> None:
    entries = [
        TailEntry(
            seq * 3,
            seq,
            Role.USER if seq % 3 else Role.ASSISTANT,
            seq,
            seq % 7 != 0,
            seq % 11 == 0,
            739_000 + seq // 13,  # a new day every 13 messages: date lines counted alike
        )
        for seq in range(1, 500)
    ]
    rows = [
        (e.id, e.seq, e.role is Role.USER, e.tokens, e.sendable, e.pinned, e.day) for e in entries
    ]
    from_rows = LiveTail.from_rows(rows)
    assert from_rows.entries == entries
    assert from_rows.tally == LiveTail(entries).tally == tally_entries(entries)
    assert from_rows.unpinned == sum(1 for e in entries if not e.pinned)


class TailMachine(RuleBasedStateMachine):
    """Random appends, finishes, pins, summaries (removals) and undos (restores)."""

    def __init__(self) -> None:
        super().__init__()
        self.tail = LiveTail()
        self.messages: dict[int, Message] = {}  # seq -> every message ever stored
        self.live: set[int] = set()
        self.next_seq = 1

    def entry(self, seq: int) -> TailEntry:
        return TailEntry.of(self.messages[seq], COUNTER.count)

    @rule(role=st.sampled_from(list(Role)), text=TEXTS, status=STATUSES, pinned=st.booleans())
    def append(self, role: Role, text: str, status: MessageStatus, pinned: bool) -> None:
        seq = self.next_seq
        self.next_seq += 1
        self.messages[seq] = message(seq, role, text, status, pinned)
        self.live.add(seq)
        self.tail.append(self.entry(seq))

    @precondition(lambda self: self.live)
    @rule(data=st.data(), text=TEXTS, status=STATUSES)
    def finish(self, data: st.DataObject, text: str, status: MessageStatus) -> None:
        seq = data.draw(st.sampled_from(sorted(self.live)))
        self.messages[seq] = self.messages[seq].model_copy(
            update={"content": text, "status": status, "token_estimate": COUNTER.count(text)}
        )
        assert self.tail.replace(self.entry(seq))

    @precondition(lambda self: self.live)
    @rule(data=st.data())
    def pin(self, data: st.DataObject) -> None:
        seq = data.draw(st.sampled_from(sorted(self.live)))
        pinned = not self.messages[seq].pinned
        self.messages[seq] = self.messages[seq].model_copy(update={"pinned": pinned})
        assert self.tail.set_pinned(self.messages[seq].id, pinned)

    @precondition(lambda self: self.live)
    @rule(data=st.data())
    def summarize(self, data: st.DataObject) -> None:
        covered = data.draw(st.sets(st.sampled_from(sorted(self.live)), min_size=1))
        removed = self.tail.remove({self.messages[seq].id for seq in covered})
        assert removed == len(covered)
        self.live -= covered

    @precondition(lambda self: len(self.live) < len(self.messages))
    @rule(data=st.data())
    def undo(self, data: st.DataObject) -> None:
        archived = sorted(set(self.messages) - self.live)
        back = data.draw(st.sets(st.sampled_from(archived), min_size=1))
        self.tail.restore(self.entry(seq) for seq in back)
        self.live |= back

    @invariant()
    def the_tally_is_a_fresh_walk(self) -> None:
        live = [self.messages[seq] for seq in sorted(self.live)]
        assert [entry.seq for entry in self.tail.entries] == sorted(self.live)
        assert self.tail.tally == tally_messages(live, COUNTER.count)
        assert self.tail.unpinned == sum(1 for s in self.live if not self.messages[s].pinned)
        builder = ContextBuilder(COUNTER)
        assert builder.estimate_state(
            RequestInputs(model=MODEL, tail_tally=self.tail.tally, draft="next?")
        ) == builder.estimate_state(RequestInputs(model=MODEL, tail=live, draft="next?"))


TestTailMachine = TailMachine.TestCase
TestTailMachine.settings = settings(max_examples=60, stateful_step_count=40, deadline=None)


@given(st.lists(st.tuples(st.sampled_from(list(Role)), TEXTS, STATUSES), max_size=30))
def test_appending_one_by_one_equals_loading_at_once(
    rows: list[tuple[Role, str, MessageStatus]],
) -> None:
    messages = [
        message(n + 1, role, text, status, False) for n, (role, text, status) in enumerate(rows)
    ]
    one_by_one = LiveTail()
    for item in messages:
        one_by_one.append(TailEntry.of(item, COUNTER.count))
    at_once = LiveTail(TailEntry.of(item, COUNTER.count) for item in messages)
    assert one_by_one.tally == at_once.tally == tally_messages(messages, COUNTER.count)


ROWS_WITH_UNKNOWN_ESTIMATES = st.lists(
    st.tuples(st.sampled_from(list(Role)), TEXTS, STATUSES, st.booleans()), max_size=30
)


@given(ROWS_WITH_UNKNOWN_ESTIMATES)
def test_tallying_messages_equals_tallying_their_entries(
    rows: list[tuple[Role, str, MessageStatus, bool]],
) -> None:
    messages = [
        message(n + 1, role, text, status, False).model_copy(
            update={"token_estimate": None} if unknown else {}
        )
        for n, (role, text, status, unknown) in enumerate(rows)
    ]
    entries = [TailEntry.of(item, COUNTER.count) for item in messages]
    assert tally_messages(messages, COUNTER.count) == tally_entries(entries)
