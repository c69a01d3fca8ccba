"""What is sent of stored messages: alternating turns, and a date line where the day changes."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.catalog import ModelInfo
from app.core.context import ContextBuilder, RequestInputs
from app.core.conversation import (
    DATE_LINE_SEPARATOR,
    DATE_LINE_TOKENS,
    TailTurns,
    TurnCache,
    common_prefix,
    date_line,
    local_day,
    to_api_messages,
)
from app.core.live_tail import LiveTail, TailEntry, TailTallies, tally_messages
from app.core.models import Message, MessageStatus, Role
from app.core.tokens import default_counter

COUNTER = default_counter()
MODEL = ModelInfo(id="m", display_name="M", max_input_tokens=200_000, max_tokens=8_192)
START = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
DATE_LINE = re.compile(r"\[([A-Z][a-z]+) (\d{1,2}) ([A-Z][a-z]+) (\d{4})\]\n\n")


def test_a_date_line_says_the_day_in_words() -> None:
    assert date_line(date(2026, 3, 3).toordinal()) == "[Tuesday 3 March 2026]"


def test_every_date_line_costs_the_same_tokens() -> None:
    """The tally adds DATE_LINE_TOKENS per line: true of every day over 30 years."""
    first = date(2010, 1, 1).toordinal()
    counts = {
        COUNTER.count(date_line(day) + DATE_LINE_SEPARATOR)
        for day in range(first, first + 30 * 366)
    }
    assert counts == {DATE_LINE_TOKENS}


def conversation(gaps: list[int]) -> list[Message]:
    """Alternating messages, each `gap` hours after the one before."""
    messages = []
    when = START
    for seq, gap in enumerate(gaps, start=1):
        when += timedelta(hours=gap)
        text = f"Message {seq} about the walk."
        messages.append(
            Message(
                id=seq,
                session_id="s",
                seq=seq,
                role=Role.USER if seq % 2 else Role.ASSISTANT,
                content=text,
                created_at=when,
                token_estimate=COUNTER.count(text),
            )
        )
    return messages


@settings(max_examples=100, deadline=None)
@given(gaps=st.lists(st.sampled_from([0, 1, 3, 9, 20, 30, 75]), min_size=1, max_size=40))
def test_date_lines_go_exactly_where_the_day_changes_and_only_in_the_request(
    gaps: list[int],
) -> None:
    messages = conversation(gaps)
    stored = [m.content for m in messages]

    sent = to_api_messages(messages)
    builder = ContextBuilder(COUNTER)
    built = builder.build_request(RequestInputs(model=MODEL, tail=messages, draft="And tomorrow?"))

    # Where each message's text is preceded by a date line in the request.
    text = "\n\n".join(turn["content"] for turn in sent)
    dated = {int(m) for m in re.findall(r"\]\n\nMessage (\d+) ", text)}
    days = [local_day(m.created_at) for m in messages]
    expected = {1} | {seq for seq in range(2, len(days) + 1) if days[seq - 1] != days[seq - 2]}
    assert dated == expected
    for seq in dated:
        line = re.search(rf"\[([^\]]+)\]\n\nMessage {seq} ", text)
        assert line is not None
        assert f"[{line.group(1)}]" == date_line(days[seq - 1])
    assert [m.content for m in messages] == stored, "the stored messages never change"
    assert all(not DATE_LINE.search(m.content) for m in messages)
    # The gauge counts the lines: estimate, incremental tally and the real request agree.
    tail = LiveTail(TailEntry.of(m, COUNTER.count) for m in messages)
    state = builder.estimate_state(RequestInputs(model=MODEL, tail=messages))
    assert tail.tally.history == state.breakdown.history
    recount = sum(COUNTER.count_message(turn["content"]) for turn in sent)
    assert recount == state.breakdown.history  # the roles alternate: no joins
    assert built.state.breakdown.history == state.breakdown.history


def test_the_new_message_carries_today_when_the_day_changed_and_the_gauge_counts_it() -> None:
    messages = conversation([1, 1])  # both on Monday 2 March 2026
    monday = local_day(messages[-1].created_at)
    for today, lines in ((monday, 1), (monday + 1, 2)):
        builder = ContextBuilder(COUNTER, today=lambda today=today: today)
        built = builder.build_request(
            RequestInputs(model=MODEL, tail=messages, draft="And tomorrow?")
        )
        last = built.messages[-1]["content"]
        assert len(DATE_LINE.findall("\n\n".join(m["content"] for m in built.messages))) == lines
        assert last.endswith("And tomorrow?")
        assert (date_line(today) in last) is (today != monday)
        state = builder.estimate_state(
            RequestInputs(model=MODEL, tail=messages, draft="And tomorrow?")
        )
        tally = LiveTail(TailEntry.of(m, COUNTER.count) for m in messages).tally
        checked = builder.check_fits(
            RequestInputs(model=MODEL, tail_tally=tally, draft="And tomorrow?")
        )
        assert built.state == state == checked
        recount = sum(COUNTER.count_message(turn["content"]) for turn in built.messages)
        assert recount == state.breakdown.history + state.breakdown.draft


# --- the turns of earlier requests (TurnCache)

_STATUSES = st.sampled_from([MessageStatus.COMPLETE, MessageStatus.ERROR, MessageStatus.STOPPED])


@st.composite
def _histories(draw: st.DrawFn) -> list[Message]:
    """Messages with ids that repeat across draws, texts and days that change."""
    count = draw(st.integers(min_value=0, max_value=12))
    messages = []
    for index in range(count):
        messages.append(
            Message(
                id=index + 1,
                session_id="s",
                seq=index + 1,
                role=draw(st.sampled_from([Role.USER, Role.ASSISTANT])),
                content=draw(st.sampled_from(["a", "b", "  ", "ça ✓", "a\n\nb"])),
                created_at=START + timedelta(days=draw(st.integers(0, 2))),
                status=draw(_STATUSES),
            )
        )
    return messages


@settings(max_examples=200)
@given(st.lists(_histories(), min_size=1, max_size=5))
def test_turns_handed_back_are_the_turns_built_afresh(histories: list[list[Message]]) -> None:
    """Whatever was sent before under the same ids, the turns are what is sent now."""
    turns = TurnCache()
    for history in histories:
        assert to_api_messages(history, turns=turns) == to_api_messages(history)


def test_a_message_sent_again_unchanged_goes_as_the_same_turn() -> None:
    turns = TurnCache()
    question = _message(1, Role.USER, "hello", START)
    answer = _message(2, Role.ASSISTANT, "hi", START)
    first = to_api_messages([question, answer], turns=turns)
    again = to_api_messages(
        [question.model_copy(), answer.model_copy(update={"content": "hi"})], turns=turns
    )
    assert again[0] is first[0] and again[1] is first[1]
    edited = to_api_messages([question, answer.model_copy(update={"content": "hey"})], turns=turns)
    assert edited[0] is first[0]
    assert edited[1] == {"role": "assistant", "content": "hey"}


def test_a_turn_with_files_is_built_afresh() -> None:
    turns = TurnCache()
    question = _message(1, Role.USER, "see this", START)
    block = {"type": "document", "source": {"type": "file", "file_id": "f"}}
    plain = to_api_messages([question], turns=turns)
    with_file = to_api_messages([question], {1: [block]}, turns=turns)
    assert with_file[0]["content"] == [block, {"type": "text", "text": plain[0]["content"]}]


# --- the tails of earlier requests, walked again from where they changed (TailTurns)


@st.composite
def _growing_tails(draw: st.DrawFn) -> list[list[Message]]:
    """Tails as a conversation's requests see them: each the one before cut somewhere
    (its last messages finished, edited, deleted, summarized away) with messages after,
    some equal to the ones they replace, some not; now and then one from scratch."""
    tails: list[list[Message]] = []
    tail: list[Message] = []
    next_id = 1
    for _ in range(draw(st.integers(min_value=1, max_value=6))):
        if draw(st.booleans()) and tail:
            tail = tail[draw(st.integers(0, len(tail))) :]  # the oldest summarized away
        tail = tail[: draw(st.integers(0, len(tail)))]
        for _ in range(draw(st.integers(0, 5))):
            previous = tail[-1].created_at if tail else START
            if draw(st.booleans()):
                next_id += 1
            tail.append(
                Message(
                    id=next_id,
                    session_id="s",
                    seq=next_id,
                    role=draw(st.sampled_from([Role.USER, Role.ASSISTANT])),
                    content=draw(st.sampled_from(["a", "b", "  ", "", "ça ✓", "a\n\nb"])),
                    created_at=previous + timedelta(hours=draw(st.sampled_from([0, 1, 30]))),
                    status=draw(_STATUSES),
                    token_estimate=draw(st.sampled_from([None, 3])),
                )
            )
        tails.append(list(tail))
    return tails


@settings(max_examples=300)
@given(_growing_tails())
def test_turns_walked_from_the_change_are_the_turns_built_afresh(
    tails: list[list[Message]],
) -> None:
    """However a tail changed since the last request, its turns and its tally are what
    a walk of the whole tail gives."""
    turns, tallies = TailTurns(), TailTallies(COUNTER.count)
    for tail in tails:
        assert turns.messages(tail) == to_api_messages(tail)
        assert tallies.tally(tail) == tally_messages(tail, COUNTER.count)


def test_a_new_turn_leaves_the_turns_before_it_as_they_were() -> None:
    """The turns the last request sent go again as the same objects (their JSON kept)."""
    turns = TailTurns()
    question = _message(1, Role.USER, "hello", START)
    answer = _message(2, Role.ASSISTANT, "", START).model_copy(
        update={"status": MessageStatus.STREAMING}
    )
    first = turns.messages([question, answer])
    done = answer.model_copy(update={"content": "hi", "status": MessageStatus.COMPLETE})
    second = turns.messages([question, done, _message(3, Role.USER, "more", START)])
    assert second[0] is first[0]
    assert second[1:] == [
        {"role": "assistant", "content": "hi"},
        {"role": "user", "content": "more"},
    ]
    second.clear()  # the list handed back is the caller's
    assert turns.messages([question, done])[1]["content"] == "hi"


def test_common_prefix_counts_the_shared_start() -> None:
    assert common_prefix([], [1]) == 0
    assert common_prefix([1, 2, 3], [1, 2, 3, 4]) == 3
    assert common_prefix([1, 2, 3], [1, 2, 4, 5]) == 2
    assert common_prefix([1, 2, 3], [1, 5, 3]) == 1
    assert common_prefix([1, 2], [1]) == 1
    assert common_prefix([2], [1]) == 0


def _message(message_id: int, role: Role, text: str, when: datetime) -> Message:
    return Message(
        id=message_id, session_id="s", seq=message_id, role=role, content=text, created_at=when
    )
