"""Turning stored messages into the `messages` list the Messages API takes."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypedDict

from app.core.models import Message, MessageStatus, Role


class ApiMessage(TypedDict):
    role: str
    content: str


# A reply that failed is kept on screen, but is not part of what Claude sees:
# a retry asks for a fresh answer to the same question.
_SENDABLE = frozenset({MessageStatus.COMPLETE, MessageStatus.STOPPED})


def to_api_messages(history: Iterable[Message]) -> list[ApiMessage]:
    """Alternating turns starting with the user; never an empty content.

    Consecutive turns of one role (a failed reply between two questions, say)
    are joined, and leading assistant turns are dropped, because the API
    requires the conversation to start with the user and to alternate.
    """
    turns: list[ApiMessage] = []
    for message in history:
        if message.status not in _SENDABLE or not message.content.strip():
            continue
        if not turns and message.role is not Role.USER:
            continue
        if turns and turns[-1]["role"] == message.role.value:
            turns[-1] = {
                "role": message.role.value,
                "content": turns[-1]["content"] + "\n\n" + message.content,
            }
        else:
            turns.append({"role": message.role.value, "content": message.content})
    return turns
