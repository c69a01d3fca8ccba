"""Appends messages until killed; used by test_crash.py as a separate process.

Usage: python -m tests.integration.crash_child DATABASE SESSION_ID ROUND

Prints "<seq> <n>" for message number n only after the call that stored it
returned, so every line printed is a promise that the message is durable.
"""

from __future__ import annotations

import sys

from app.core.models import MessageStatus, Role
from app.store import SessionStore


def expected_content(round_number: int, n: int) -> str:
    """The text of message n in a round; sizes vary from a few bytes to ~20 kB."""
    return f"round {round_number} message {n} ✓ " + "x" * ((n * 7919) % 20_000)


def main(database: str, session_id: str, round_number: int) -> None:
    store = SessionStore.open(database)
    n = 0
    while True:
        n += 1
        content = expected_content(round_number, n)
        if n % 3 == 0:
            # A streamed reply: saved in pieces, then finished.
            reply = store.append_message(
                session_id, Role.ASSISTANT, "", status=MessageStatus.STREAMING
            )
            store.update_message_content(reply.id, content[: len(content) // 2])
            message = store.finish_message(reply.id, content, MessageStatus.COMPLETE)
        else:
            message = store.append_message(session_id, Role.USER, content)
        print(f"{message.seq} {n}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
