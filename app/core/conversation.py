"""Turning stored messages into the `messages` list the Messages API takes."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TypedDict

from app.core.models import Message, MessageStatus, Role


class ApiMessage(TypedDict):
    role: str
    content: str


# A reply that failed is kept on screen, but is not part of what Claude sees:
# a retry asks for a fresh answer to the same question.
SENDABLE_STATUSES = frozenset({MessageStatus.COMPLETE, MessageStatus.STOPPED})

# What joins two consecutive turns of one role into one.
TURN_SEPARATOR = "\n\n"


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


def to_api_messages(history: Iterable[Message]) -> list[ApiMessage]:
    """Alternating turns starting with the user; never an empty content.

    Consecutive turns of one role (a failed reply between two questions, say)
    are joined with a blank line.
    """
    parts: list[tuple[str, list[str]]] = []
    for message, joins in iter_turns(history):
        if joins:
            parts[-1][1].append(message.content)
        else:
            parts.append((message.role.value, [message.content]))
    return [{"role": role, "content": TURN_SEPARATOR.join(texts)} for role, texts in parts]
