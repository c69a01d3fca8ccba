"""Turning stored messages into the `messages` list the Messages API takes."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import date, datetime
from typing import Any, TypedDict

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
    julianday(…, 'localtime'); a naive one is taken as local already.
    """
    local = moment.astimezone() if moment.tzinfo is not None else moment
    return local.date().toordinal()


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
        if message.status not in SENDABLE_STATUSES or not message.content.strip():
            continue
        if last_role is None and message.role is not Role.USER:
            continue
        yield message, message.role is last_role
        last_role = message.role


def to_api_messages(
    history: Iterable[Message], files: Mapping[int, Sequence[dict[str, Any]]] | None = None
) -> list[ApiMessage]:
    """Alternating turns starting with the user; never an empty content.

    Consecutive turns of one role (a failed reply between two questions, say)
    are joined with a blank line; a date line goes where the day changes. `files`
    are the content blocks of a message's attachments, by message id: they open
    its turn, before the text, as the docs advise for images and documents
    (https://docs.anthropic.com/en/docs/build-with-claude/vision).
    """
    parts: list[tuple[str, list[str], list[dict[str, Any]]]] = []
    for message, joins, day in iter_dated_turns(history):
        text = dated(message.content, day)
        blocks = list(files.get(message.id, ())) if files else []
        if joins:
            parts[-1][1].append(text)
            parts[-1][2].extend(blocks)
        else:
            parts.append((message.role.value, [text], blocks))
    return [_turn(role, TURN_SEPARATOR.join(texts), blocks) for role, texts, blocks in parts]


def _turn(role: str, text: str, blocks: list[dict[str, Any]]) -> ApiMessage:
    if not blocks:
        return {"role": role, "content": text}
    return {"role": role, "content": [*blocks, {"type": "text", "text": text}]}
