"""The JSON body of a Messages API request, each turn encoded once.

Between two turns of a conversation the request differs only at its end: every
earlier turn goes again, unchanged (`app.core.conversation.TurnCache` hands back the
very same turn objects). `BodyEncoder` keeps each turn's JSON text beside the turn it
encoded and joins the texts, so a turn is encoded in the request it first goes in
and, while the requests after it start with it, never again; the body goes to the SDK
as bytes (`client.post(content=…)`), so it is not copied and encoded a second time
either.

The JSON is what the SDK itself writes for a body (`anthropic._utils._json`): compact
separators, UTF-8 without escaping, NaN refused. The turns are plain data that no one
changes once built (`ApiMessage`), so a turn met again by identity is the turn that was
encoded.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from typing import Any

_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


class BodyEncoder:
    """Encodes request bodies, re-using the JSON of turns the previous requests sent.

    Thread-safe: the chat and the summarizer workers share one provider. It remembers
    the turns of the last `_KEPT_REQUESTS` requests (one a conversation, as a rule); a
    turn is held while remembered, so no other object can take its id meanwhile.

    A request starts with the turns of one before it (the same objects, in the same
    order) and ends with a few new ones: the longest such start is found by identity,
    its JSON taken as it was, and only the turns after it encoded; nothing per request
    walks the turns they share in Python but one identity check each.
    """

    _KEPT_REQUESTS = 4

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # The turns of a request, and their JSON in UTF-8, one to one.
        self._requests: list[tuple[tuple[object, ...], tuple[bytes, ...]]] = []

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
            length = _same_start(request[0], turns)
            if length > shared:
                best, shared = request, length
        parts = [*(best[1][:shared] if best is not None else ())]
        parts.extend(_ENCODER.encode(turn).encode() for turn in turns[shared:])
        with self._lock:
            self._requests = [
                (turns, tuple(parts)),
                *(request for request in self._requests if request is not best),
            ][: self._KEPT_REQUESTS]
        # The messages go first; JSON objects are unordered (RFC 8259 §4).
        tail = b"}" if rest == "{}" else b"," + rest[1:].encode()
        return b"".join((b'{"messages":[', b",".join(parts), b"]", tail))


def _same_start(earlier: tuple[object, ...], later: tuple[object, ...]) -> int:
    """How many turns `later` starts with that are `earlier`'s first turns (by identity:
    the same object, which no one changes once built)."""
    length = 0
    for before, now in zip(earlier, later, strict=False):
        if before is not now:
            break
        length += 1
    return length
