"""Turning stored messages into the `messages` list the Messages API takes."""

from __future__ import annotations

import bisect
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from functools import lru_cache
from typing import Any, Protocol, TypedDict, TypeVar

from app.core.dates import weekday_date
from app.core.models import Message, MessageStatus, Role


class ApiMessage(TypedDict):
    role: str
    # A plain string, or text blocks as the API takes them (the newest user turn
    # carries a prompt-cache breakpoint: app/core/caching.py).
    content: str | list[dict[str, Any]]


# A reply that failed is kept on screen, but is not part of what Claude sees:
# a retry asks for a fresh answer to the same question. A declined exchange is left
# out too: after a refusal the turn that triggered it must not be sent again
# (https://platform.claude.com/docs/en/test-and-evaluate/strengthen-guardrails/handle-streaming-refusals).
SENDABLE_STATUSES = frozenset(
    {MessageStatus.COMPLETE, MessageStatus.STOPPED, MessageStatus.CUT_OFF, MessageStatus.PAUSED}
)

# What joins two consecutive turns of one role into one.
TURN_SEPARATOR = "\n\n"


# A line "[Tuesday 3 March 2026]" and a blank line go before the first message sent
# and before every message whose day differs from the one sent before it, in the
# request only, so Claude knows when things were said. The stored message never
# has it. Plain text at the start of the turn's text: the API takes any text, and
# the turns keep alternating (https://docs.anthropic.com/en/api/messages).
DATE_LINE_SEPARATOR = "\n\n"
# cl100k counts every such line, with its blank line, as 9 tokens (checked over
# 30 years of dates in tests/unit/core/test_conversation.py), so a tally adds a
# constant, as it does for a turn's overhead.
DATE_LINE_TOKENS = 9


def local_day(moment: datetime) -> int:
    """The calendar day of `moment` on this computer (proleptic ordinal, ≥ 1).

    An aware time is taken to the local zone, as the store's SQL does with
    julianday(…, 'localtime'); a naive one is taken as local already. Every request
    dates each message of the live tail, and taking a time to the local zone is the
    dear part: the answer is remembered, for the zone in force (`time.tzname`).
    """
    if moment.tzinfo is None:
        return moment.date().toordinal()
    return _local_day(moment, time.tzname, time.timezone)


@lru_cache(maxsize=1 << 16)
def _local_day(moment: datetime, _zone: tuple[str, str], _offset: int) -> int:
    return moment.astimezone().date().toordinal()


def has_text(text: str) -> bool:
    """Whether `text` holds anything but white space (without copying it, as strip does:
    every message of the live tail is asked on every request)."""
    return bool(text) and not text.isspace()


def date_line(day: int) -> str:
    """The date line for a day ordinal: "[Tuesday 3 March 2026]"."""
    return f"[{weekday_date(date.fromordinal(day))}]"


def dated(text: str, day: int | None) -> str:
    """`text` as sent: with its date line before it when `day` is given."""
    return text if day is None else date_line(day) + DATE_LINE_SEPARATOR + text


def iter_dated_turns(history: Iterable[Message]) -> Iterator[tuple[Message, bool, int | None]]:
    """`iter_turns` with the day whose date line goes before each message, or None."""
    last_day: int | None = None
    for message, joins in iter_turns(history):
        day = local_day(message.created_at)
        yield message, joins, (day if day != last_day else None)
        last_day = day


def common_prefix(earlier: Sequence[object], later: Sequence[object]) -> int:
    """How many items `later` starts with that `earlier` starts with too (the same object,
    or an equal one). Between two requests a live tail is the one before with its last
    message or two changed and new ones after: the first two tries compare in C."""
    size = min(len(earlier), len(later))
    for length in (size, size - 1):
        if length <= 0 or earlier[:length] == later[:length]:
            return max(length, 0)
    length = 0
    while length < size and earlier[length] == later[length]:
        length += 1
    return length


class _KeptTail(Protocol):
    @property
    def tail(self) -> tuple[Message, ...]: ...


_Kept = TypeVar("_Kept", bound=_KeptTail)


def closest_kept(kept: Iterable[_Kept], tail: Sequence[Message]) -> tuple[_Kept | None, int]:
    """Of the walks kept from earlier tails, the one whose tail starts `tail` the longest,
    and how many messages they share (None, 0: none shares any)."""
    best, shared = None, 0
    for walked in kept:
        length = common_prefix(walked.tail, tail)
        if length > shared:
            best, shared = walked, length
    return best, shared


def iter_turns(history: Iterable[Message]) -> Iterator[tuple[Message, bool]]:
    """The messages Claude sees, each with True when it joins the turn before.

    The one walk behind `to_api_messages` and the token estimate
    (`app.core.context`), so the two never disagree on what is sent: failed
    replies and empty messages are left out, and leading assistant turns are
    dropped, because the API requires the conversation to start with the user
    and to alternate (DESIGN §3, invariant 2).
    """
    last_role: Role | None = None
    for message in history:
        if message.status not in SENDABLE_STATUSES or not has_text(message.content):
            continue
        if last_role is None and message.role is not Role.USER:
            continue
        yield message, message.role is last_role
        last_role = message.role


class TurnCache:
    """The turns of earlier requests, by message: a message sent again unchanged, alone in
    its turn, goes as the very same turn object (which no one changes once built).

    Between two requests of a conversation only the newest turns differ, so a request is
    built from turns that are already there; and the provider, which keeps each turn's
    JSON beside it (`app.llm.request_body`), encodes only the new ones. Thread-safe as a
    dict is: a lost entry is built again, never wrong (its text and day are checked).
    """

    # A few conversations' live tails; past it, it starts again (each turn is rebuilt once).
    _LIMIT = 50_000

    def __init__(self) -> None:
        # message id -> (the text, its date line's day, the turn)
        self._turns: dict[int, tuple[str, int | None, ApiMessage]] = {}

    def turn(self, message: Message, day: int | None) -> ApiMessage:
        """The turn of `message` alone, dated with `day` (None: no date line)."""
        entry = self._turns.get(message.id)
        if entry is not None:
            text, known_day, turn = entry
            if known_day == day and turn["role"] == message.role.value and text == message.content:
                return turn
        turn = {"role": message.role.value, "content": dated(message.content, day)}
        if len(self._turns) >= self._LIMIT:
            self._turns = {}
        self._turns[message.id] = (message.content, day, turn)
        return turn


@dataclass(frozen=True)
class _Walked:
    """One `to_api_messages` of a tail: its turns, and where each began."""

    zone: tuple[tuple[str, str], int]  # the time zone its days were taken in
    tail: tuple[Message, ...]
    turns: tuple[ApiMessage, ...]  # no one changes a turn once built
    # Per turn: the index in `tail` of its first message, and the walk's state before it
    # (the role of the turn before, the day of the last message sent).
    starts: tuple[int, ...]
    states: tuple[tuple[Role | None, int | None], ...]


class TailTurns:
    """`to_api_messages` of the live tails of the last few requests, walked again only
    from where a tail differs from the one before.

    Between two turns of a conversation its live tail is the one before with the last
    reply finished and the new question (and reply) after it: the turns of the messages
    they share stay what they were (the same objects, so the provider's encoder re-uses
    their JSON too), and only the turns from the first that changed on are built. A
    message is the same when it is the same `Message` (immutable) or an equal one; every
    turn depends only on its messages and the walk's state before them (the role of the
    turn before, the day last dated), which is kept with it. Per request: O(changed)
    Python work beside a comparison of the two tails in C. Thread-safe.
    """

    _KEPT = 4

    def __init__(self, turns: TurnCache | None = None) -> None:
        self._turns = turns if turns is not None else TurnCache()
        self._lock = threading.Lock()
        self._kept: list[_Walked] = []

    def messages(self, tail: Sequence[Message]) -> list[ApiMessage]:
        """`to_api_messages(tail, turns=…)`: the same list, a new one to change at will."""
        zone = (time.tzname, time.timezone)
        with self._lock:
            kept = [walked for walked in self._kept if walked.zone == zone]
        tail = tuple(tail)
        best, shared = closest_kept(kept, tail)
        turns: list[ApiMessage] = []
        starts: list[int] = []
        states: list[tuple[Role | None, int | None]] = []
        begin, last_role, last_day = 0, None, None
        if best is not None:
            # The turns wholly before the first turn that may change: kept as they were.
            keep = bisect.bisect_left(best.starts, shared) - 1
            if keep >= 0:
                turns.extend(best.turns[:keep])
                starts.extend(best.starts[:keep])
                states.extend(best.states[:keep])
                begin = best.starts[keep]
                last_role, last_day = best.states[keep]
        part: list[tuple[Message, int | None]] = []
        for index, message, joins, day, state in _walk(tail, begin, last_role, last_day):
            if joins:
                part.append((message, day))
                continue
            if part:
                turns.append(_part_turn(part, None, self._turns))
            part = [(message, day)]
            starts.append(index)
            states.append(state)
        if part:
            turns.append(_part_turn(part, None, self._turns))
        walked = _Walked(zone, tail, tuple(turns), tuple(starts), tuple(states))
        with self._lock:
            self._kept = [walked, *(w for w in self._kept if w is not best)][: self._KEPT]
        return turns


def _walk(
    tail: Sequence[Message], begin: int, last_role: Role | None, last_day: int | None
) -> Iterator[tuple[int, Message, bool, int | None, tuple[Role | None, int | None]]]:
    """`iter_dated_turns` from `tail[begin]` on, the walk's state before it given: each
    sent message's index, it, whether it joins the turn before, its date line's day, and
    the state before it (the role of the turn before, the day last dated)."""
    for index in range(begin, len(tail)):
        message = tail[index]
        if message.status not in SENDABLE_STATUSES or not has_text(message.content):
            continue
        if last_role is None and message.role is not Role.USER:
            continue
        day = local_day(message.created_at)
        yield (
            index,
            message,
            message.role is last_role,
            (day if day != last_day else None),
            (last_role, last_day),
        )
        last_role, last_day = message.role, day


def to_api_messages(
    history: Iterable[Message],
    files: Mapping[int, Sequence[dict[str, Any]]] | None = None,
    turns: TurnCache | None = None,
) -> list[ApiMessage]:
    """Alternating turns starting with the user; never an empty content.

    Consecutive turns of one role (a failed reply between two questions, say)
    are joined with a blank line; a date line goes where the day changes. `files`
    are the content blocks of a message's attachments, by message id: they open
    its turn, before the text, as the docs advise for images and documents
    (https://docs.anthropic.com/en/docs/build-with-claude/vision). `turns`, when given,
    hands back the turn objects of earlier requests for the messages sent again.
    """
    parts: list[list[tuple[Message, int | None]]] = []
    for message, joins, day in iter_dated_turns(history):
        if joins:
            parts[-1].append((message, day))
        else:
            parts.append([(message, day)])
    return [_part_turn(part, files, turns) for part in parts]


def _part_turn(
    part: list[tuple[Message, int | None]],
    files: Mapping[int, Sequence[dict[str, Any]]] | None,
    turns: TurnCache | None,
) -> ApiMessage:
    """The turn of one or more consecutive messages of one role."""
    blocks = [block for message, _ in part for block in files.get(message.id, ())] if files else []
    if turns is not None and len(part) == 1 and not blocks:
        return turns.turn(*part[0])
    text = TURN_SEPARATOR.join(dated(message.content, day) for message, day in part)
    return _turn(part[0][0].role.value, text, blocks)


def _turn(role: str, text: str, blocks: list[dict[str, Any]]) -> ApiMessage:
    if not blocks:
        return {"role": role, "content": text}
    return {"role": role, "content": [*blocks, {"type": "text", "text": text}]}
