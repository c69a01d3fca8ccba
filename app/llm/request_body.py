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
from collections.abc import Mapping, Sequence
from typing import Any

_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


class BodyEncoder:
    """Encodes request bodies, re-using the JSON of turns the previous requests sent.

    Thread-safe: the chat and the summarizer workers share one provider. It remembers
    the turns of the last `_KEPT_REQUESTS` requests (each conversation's request keeps
    its own turns alive; a turn of a request that is gone is never met again).
    """

    _KEPT_REQUESTS = 4

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # id(turn) -> (the turn, its JSON): the turn is held, so its id is not reused.
        self._requests: list[dict[int, tuple[object, str]]] = []

    def encode(self, body: Mapping[str, Any]) -> bytes:
        """`body` as JSON bytes; its "messages" list's turns re-used when seen before."""
        messages: Sequence[object] = body.get("messages", ())
        with self._lock:
            known = [*self._requests]
        encoded: dict[int, tuple[object, str]] = {}
        parts: list[str] = []
        for turn in messages:
            key = id(turn)
            entry = encoded.get(key)
            if entry is None:
                entry = _known(known, key, turn)
                if entry is None:
                    entry = (turn, _ENCODER.encode(turn))
                encoded[key] = entry
            parts.append(entry[1])
        with self._lock:
            self._requests = [encoded, *self._requests][: self._KEPT_REQUESTS]
        rest = {key: value for key, value in body.items() if key != "messages"}
        head = _ENCODER.encode(rest)
        if "messages" not in body:
            return head.encode()
        joined = "[" + ",".join(parts) + "]"
        if head == "{}":
            return ('{"messages":' + joined + "}").encode()
        # The messages go first; JSON objects are unordered (RFC 8259 §4).
        return ('{"messages":' + joined + "," + head[1:]).encode()


def _known(
    requests: list[dict[int, tuple[object, str]]], key: int, turn: object
) -> tuple[object, str] | None:
    for request in requests:
        entry = request.get(key)
        if entry is not None and entry[0] is turn:
            return entry
    return None
