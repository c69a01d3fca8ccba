"""The JSON body of a Messages API request, each turn encoded once.

Between two turns of a conversation the request differs only at its end: every
earlier turn goes again, unchanged (`app.core.conversation.TurnCache` hands back the
very same turn objects). `BodyEncoder` keeps each turn's JSON text beside the turn it
encoded and joins the texts, so a turn is encoded in the request it first goes in
and never again; the body goes to the SDK as bytes (`client.post(content=…)`), so it
is not copied and encoded a second time either.

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
    """

    _KEPT_REQUESTS = 4

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # id(turn) -> (the turn, its JSON in UTF-8), a dict a request.
        self._requests: list[dict[int, tuple[object, bytes]]] = []

    def encode(self, body: Mapping[str, Any]) -> bytes:
        """`body` as JSON bytes; its "messages" list's turns re-used when seen before.

        Bytes throughout: joining the turns' UTF-8 is a copy, where joining their text
        would widen a whole history of plain text for one emoji in it.
        """
        rest = _ENCODER.encode({key: value for key, value in body.items() if key != "messages"})
        if "messages" not in body:
            return rest.encode()
        with self._lock:
            known = [*self._requests]
        encoded: dict[int, tuple[object, bytes]] = {}
        parts: list[bytes] = []
        for turn in body["messages"]:
            key = id(turn)
            entry = encoded.get(key)
            if entry is None:
                entry = _known(known, key, turn)
                if entry is None:
                    entry = (turn, _ENCODER.encode(turn).encode())
                encoded[key] = entry
            parts.append(entry[1])
        with self._lock:
            self._requests = [encoded, *self._requests][: self._KEPT_REQUESTS]
        # The messages go first; JSON objects are unordered (RFC 8259 §4).
        tail = b"}" if rest == "{}" else b"," + rest[1:].encode()
        return b"".join((b'{"messages":[', b",".join(parts), b"]", tail))


def _known(
    requests: list[dict[int, tuple[object, bytes]]], key: int, turn: object
) -> tuple[object, bytes] | None:
    for request in requests:
        entry = request.get(key)
        if entry is not None and entry[0] is turn:
            return entry
    return None
