"""The JSON body of a Messages API request, each turn encoded once.

Between two turns of a conversation the request differs only at its end: every
earlier turn goes again, unchanged (`app.core.conversation.TurnCache` hands back the
very same turn objects). `BodyEncoder` keeps the body it sent with the turns it
carried and where each turn's JSON ends in it, so a turn is encoded in the request it
first goes in and, while the requests after it start with it, never again: the next
body is the earlier one's shared start and the new turns' JSON, one copy of bytes and
no step a turn in Python (about 1.1 → 0.3 ms a request at 1,172 turns); the body
goes to the SDK as bytes (`client.post(content=…)`), so it is not copied and encoded
a second time either.

The JSON is what the SDK itself writes for a body (`anthropic._utils._json`): compact
separators, UTF-8 without escaping, NaN refused. The turns are plain data that no one
changes once built (`ApiMessage`), so a turn met again by identity is the turn that was
encoded.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import compress, count
from operator import is_not
from typing import Any

_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


class BodyEncoder:
    """Encodes request bodies, re-using the JSON of turns the previous requests sent.

    Thread-safe: the chat and the summarizer workers share one provider. It remembers
    the bodies of the last `_KEPT_REQUESTS` requests (one a conversation, as a rule: a
    request that starts with all of an earlier one's turns takes its place); a turn is
    held while remembered, so no other object can take its id meanwhile.

    A request starts with the turns of one before it (the same objects, in the same
    order) and ends with a few new ones: the longest such start is found by identity
    (compared in C, not a Python step a turn), its JSON taken as a slice of the body
    that carried it, and only the turns after it encoded; the new body is made by one
    copy of those bytes, so nothing per request walks the turns they share in Python.
    """

    _KEPT_REQUESTS = 4

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests: list[_Encoded] = []

    def encode(self, body: Mapping[str, Any]) -> bytes:
        """`body` as JSON bytes; its "messages" list's turns re-used when seen before.

        Bytes throughout: joining the turns' UTF-8 is a copy, where joining their text
        would widen a whole history of plain text for one emoji in it.
        """
        rest = _ENCODER.encode({key: value for key, value in body.items() if key != "messages"})
        if "messages" not in body:
            return rest.encode()
        turns = tuple(body["messages"])
        with self._lock:
            known = [*self._requests]
        best, shared = None, 0
        for request in known:
            length = _same_start(request.turns, turns)
            if length > shared:
                best, shared = request, length
        fresh = [_ENCODER.encode(turn).encode() for turn in turns[shared:]]
        # The messages go first; JSON objects are unordered (RFC 8259 §4).
        tail = b"]}" if rest == "{}" else b"]," + rest[1:].encode()
        if best is None:
            ends = _ends(len(_OPEN), fresh)
            encoded = b"".join((_OPEN, b",".join(fresh), tail))
        else:
            kept = best.ends[shared - 1]  # the shared turns' JSON ends there in `best.body`
            ends = [*best.ends[:shared], *_ends(kept + 1, fresh)]
            encoded = b"".join(
                (memoryview(best.body)[:kept], b"," if fresh else b"", b",".join(fresh), tail)
            )
        done = _Encoded(turns, encoded, ends)
        with self._lock:
            # `best` goes when this request starts with all its turns: any request that
            # would share turns with it shares them with this one.
            superseded = best if best is not None and shared == len(best.turns) else None
            self._requests = [
                done,
                *(request for request in self._requests if request is not superseded),
            ][: self._KEPT_REQUESTS]
        return encoded


_OPEN = b'{"messages":['


@dataclass(frozen=True)
class _Encoded:
    """A request's turns, its body, and where each turn's JSON ends in that body."""

    turns: tuple[object, ...]
    body: bytes
    ends: list[int]


def _ends(start: int, parts: list[bytes]) -> list[int]:
    """Where each of `parts` ends when joined by commas from offset `start`."""
    ends, at = [], start - 1
    for part in parts:
        at += 1 + len(part)
        ends.append(at)
    return ends


def _same_start(earlier: tuple[object, ...], later: tuple[object, ...]) -> int:
    """How many turns `later` starts with that are `earlier`'s first turns (by identity:
    the same object, which no one changes once built), compared in C."""
    return next(compress(count(), map(is_not, earlier, later)), min(len(earlier), len(later)))
