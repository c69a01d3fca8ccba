"""The JSON body of a Messages API request, each turn encoded once, sent in pieces.

Between two turns of a conversation the request differs only at its end: every
earlier turn goes again, unchanged (`app.core.conversation.TurnCache` hands back the
very same turn objects). `BodyEncoder` keeps the pieces of the body it sent with the
turns they carried and where each turn's JSON ends, so a turn is encoded in the
request it first goes in and, while the requests after it start with it, never again.

Nor is the history copied into a new body each turn: the body goes to the SDK as its
pieces (`client.post(content=…)` takes an iterable of bytes; with the body's
`Content-Length` given, httpx sends them one after the other, as one plain body, not
chunked), the earlier pieces the very objects sent before. A new body the size of the
history was a fresh allocation of ~0.6 MB each turn at 155k live tokens, which the
allocator maps anew (it grows past the size it last gave back): ~170 page faults, about
0.7 ms of the reply worker's CPU in bench_path (`ru_minflt`). The pieces are merged
when the last ones are no longer much smaller than those before them (so a body is a
few pieces, each byte copied a few times over a conversation's life, not once a turn).

The JSON is what the SDK itself writes for a body (`anthropic._utils._json`): compact
separators, UTF-8 without escaping, NaN refused. The turns are plain data that no one
changes once built (`ApiMessage`), so a turn met again by identity is the turn that was
encoded.
"""

from __future__ import annotations

import json
import threading
from bisect import bisect_left
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from app.core.sequences import shared_start

_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)

# The body's start: the messages go first (JSON objects are unordered, RFC 8259 §4).
_OPEN = b'{"messages":['
# More pieces than this before the tail are merged into one, whatever their sizes.
_MAX_PIECES = 24


@dataclass(frozen=True)
class Body:
    """A request's JSON body as the pieces it is sent in, one after the other.

    Attributes:
        chunks: the pieces (bytes, each sent as it is).
        size: their length together (the request's `Content-Length`).
    """

    chunks: tuple[bytes, ...]
    size: int

    def joined(self) -> bytes:
        """The whole body in one piece (a copy: for tests and logs, not for sending)."""
        return b"".join(self.chunks)

    def __contains__(self, needle: bytes) -> bool:
        """Whether `needle` is in the body: it never straddles two pieces when it lies
        inside one turn's JSON or inside what follows the turns (pieces end between turns)."""
        return any(needle in chunk for chunk in self.chunks)


class BodyEncoder:
    """Encodes request bodies, re-using the JSON of turns the previous requests sent.

    Thread-safe: the chat and the summarizer workers share one provider. It remembers
    the pieces of the last `_KEPT_REQUESTS` requests (one a conversation, as a rule: a
    request that starts with all of an earlier one's turns takes its place); a turn is
    held while remembered, so no other object can take its id meanwhile.

    A request starts with the turns of one before it (the same objects, in the same
    order) and ends with a few new ones: the longest such start is found by identity
    (compared in C, not a Python step a turn), its pieces taken as they are (the last
    one cut where the shared turns end, when they end inside it), and only the turns
    after it encoded, into one new piece.
    """

    _KEPT_REQUESTS = 4

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests: list[_Encoded] = []

    def encode(self, body: Mapping[str, Any]) -> Body:
        """`body` as JSON in pieces; its "messages" list's turns re-used when seen before.

        Bytes throughout: a piece is UTF-8, where joining text would widen a whole
        history of plain text for one emoji in it.
        """
        rest = _ENCODER.encode({key: value for key, value in body.items() if key != "messages"})
        if "messages" not in body:
            whole = rest.encode()
            return Body((whole,), len(whole))
        turns = tuple(body["messages"])
        with self._lock:
            known = [*self._requests]
        best, shared = None, 0
        for request in known:
            length = shared_start(request.turns, turns)
            if length > shared:
                best, shared = request, length
        fresh = [_ENCODER.encode(turn).encode() for turn in turns[shared:]]
        if best is None:
            chunks, starts, ends, at = [_OPEN], [0], [], len(_OPEN)
        else:
            at = best.ends[shared - 1]  # where the shared turns' JSON ends
            index = bisect_left(best.starts, at) - 1  # the piece it ends in
            piece = best.chunks[index]
            within = at - best.starts[index]
            chunks = [*best.chunks[:index], piece if within == len(piece) else piece[:within]]
            starts, ends = best.starts[: index + 1], best.ends[:shared]
        if fresh:
            # A comma before each new turn but a body's first.
            chunks.append(b",".join([b"", *fresh] if ends else fresh))
            starts.append(at)
            ends = [*ends, *_ends(at if ends else at - 1, fresh)]
        _merge_small(chunks, starts)
        done = _Encoded(turns, tuple(chunks), starts, ends)
        with self._lock:
            # `best` goes when this request starts with all its turns: any request that
            # would share turns with it shares them with this one.
            superseded = best if best is not None and shared == len(best.turns) else None
            self._requests = [
                done,
                *(request for request in self._requests if request is not superseded),
            ][: self._KEPT_REQUESTS]
        tail = b"]}" if rest == "{}" else b"]," + rest[1:].encode()
        return Body((*done.chunks, tail), starts[-1] + len(chunks[-1]) + len(tail))


@dataclass(frozen=True)
class _Encoded:
    """A request's turns and its body's pieces before the tail (`{"messages":[` and the
    turns' JSON, comma-separated): where each piece starts, where each turn ends."""

    turns: tuple[object, ...]
    chunks: tuple[bytes, ...]
    starts: list[int]
    ends: list[int]


def _ends(before: int, parts: list[bytes]) -> list[int]:
    """Where each of `parts` ends, joined by commas after offset `before` (a comma
    there, or the `[` of a body's first turn)."""
    ends, at = [], before
    for part in parts:
        at += 1 + len(part)
        ends.append(at)
    return ends


def _merge_small(chunks: list[bytes], starts: list[int]) -> None:
    """Merge the last pieces while the one before the last is not at least twice the
    last (sizes then double towards the start), and all after the first when there are
    more than `_MAX_PIECES`: few pieces, and an old piece is not copied again each turn."""
    if len(chunks) > _MAX_PIECES:
        chunks[1:] = [b"".join(chunks[1:])]
        del starts[2:]
    while len(chunks) > 1 and len(chunks[-2]) < 2 * len(chunks[-1]):
        last = chunks.pop()
        chunks[-1] += last
        starts.pop()
