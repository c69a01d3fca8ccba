"""The fake server's prompt cache: what `usage` reports for `cache_control` breakpoints.

Follows https://platform.claude.com/docs/en/build-with-claude/prompt-caching:
- the cached prefix runs in order tools → system → messages, up to and including
  a block marked `cache_control`; a hit needs the exact same prefix (and model);
- at most 4 breakpoints a request (more is a 400 `invalid_request_error`);
- on each breakpoint the API looks back up to 20 blocks for an entry an earlier
  request wrote, and reads the longest it finds;
- a prefix shorter than the model's minimum cacheable length is not cached, silently;
- `input_tokens` is what follows the last breakpoint, `cache_read_input_tokens`
  what was read, `cache_creation_input_tokens` what was written; the three add
  up to the whole input.
Entries live 5 minutes from their last use (the default "ephemeral" lifetime),
measured on the fake's `clock`.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from app.core.caching import minimum_cacheable_tokens

MAX_BREAKPOINTS = 4
LOOKBACK_BLOCKS = 20
LIFETIME_SECONDS = 5 * 60


@dataclass(frozen=True)
class CacheUsage:
    input_tokens: int
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0


@dataclass(frozen=True)
class _Block:
    """One block of the prefix: where it sits, and whether a breakpoint follows it."""

    section: str  # "system" or "messages"
    message: int  # index of its message (messages only)
    block: int  # index of the block in its system list or message content
    breakpoint: bool


def _blocks_of(content: Any) -> list[Mapping[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [block for block in content if isinstance(block, Mapping)]
    return []


def _without_cache_control(blocks: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in block.items() if k != "cache_control"} for block in blocks]


class PromptCache:
    """Prefix entries keyed on a hash of the exact prefix; thread-safe.

    Attributes:
        minimum_tokens: the minimum cacheable length for a model id (the docs' table).
        clock: seconds, for the entries' lifetime.
    """

    def __init__(
        self,
        minimum_tokens: Callable[[str], int] = minimum_cacheable_tokens,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.minimum_tokens = minimum_tokens
        self.clock = clock
        self._lock = threading.Lock()
        self._entries: dict[str, float] = {}  # prefix hash -> last used

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    @staticmethod
    def breakpoints(body: Mapping[str, Any]) -> int:
        return sum(1 for block in _walk(body) if block.breakpoint)

    def usage(
        self, body: Mapping[str, Any], count: Callable[[Mapping[str, Any]], int]
    ) -> CacheUsage:
        """What a request costs, cached or not, and the entries it leaves.

        `count` is the server's token rule for a whole body; a prefix is counted as
        the body cut after its last block, so the three figures always add up.
        """
        total = count(body)
        blocks = _walk(body)
        marks = [index for index, block in enumerate(blocks) if block.breakpoint]
        if not marks:
            return CacheUsage(input_tokens=total)
        model = str(body.get("model", ""))
        minimum = self.minimum_tokens(model)
        now = self.clock()
        read_at = -1
        with self._lock:
            self._expire(now)
            for mark in marks:
                for index in range(mark, max(-1, mark - LOOKBACK_BLOCKS), -1):
                    if index > read_at and _key(body, blocks, index) in self._entries:
                        read_at = index
                        break
            read = count(_cut(body, blocks, read_at)) if read_at >= 0 else 0
            if read_at >= 0:
                self._entries[_key(body, blocks, read_at)] = now
            written_to = read_at
            for mark in marks:
                if mark <= read_at:
                    continue
                prefix = count(_cut(body, blocks, mark))
                if prefix >= minimum:
                    self._entries[_key(body, blocks, mark)] = now
                    written_to = mark
        cached = count(_cut(body, blocks, written_to)) if written_to >= 0 else 0
        return CacheUsage(
            input_tokens=total - cached,
            cache_creation_input_tokens=cached - read,
            cache_read_input_tokens=read,
        )

    def _expire(self, now: float) -> None:
        stale = [key for key, used in self._entries.items() if now - used > LIFETIME_SECONDS]
        for key in stale:
            del self._entries[key]


def _walk(body: Mapping[str, Any]) -> list[_Block]:
    blocks: list[_Block] = []
    system = body.get("system")
    if isinstance(system, list):
        for index, block in enumerate(_blocks_of(system)):
            blocks.append(_Block("system", -1, index, "cache_control" in block))
    elif isinstance(system, str) and system:
        blocks.append(_Block("system", -1, 0, False))
    for message_index, message in enumerate(body.get("messages", [])):
        if not isinstance(message, Mapping):
            continue
        for index, block in enumerate(_blocks_of(message.get("content"))):
            blocks.append(_Block("messages", message_index, index, "cache_control" in block))
    return blocks


def _cut(body: Mapping[str, Any], blocks: list[_Block], last: int) -> dict[str, Any]:
    """The body's prefix up to and including block `last`, without cache marks."""
    end = blocks[last]
    cut: dict[str, Any] = {"model": body.get("model"), "tools": body.get("tools") or []}
    system = body.get("system", "")
    system_blocks = _blocks_of(system) if system else []
    if end.section == "system":
        cut["system"] = _without_cache_control(system_blocks[: end.block + 1])
        cut["messages"] = []
        return cut
    cut["system"] = _without_cache_control(system_blocks)
    messages: list[dict[str, Any]] = []
    for index, message in enumerate(body.get("messages", [])[: end.message + 1]):
        content = _blocks_of(message.get("content"))
        if index == end.message:
            content = content[: end.block + 1]
        messages.append({"role": message.get("role"), "content": _without_cache_control(content)})
    cut["messages"] = messages
    return cut


def _key(body: Mapping[str, Any], blocks: list[_Block], last: int) -> str:
    text = json.dumps(_cut(body, blocks, last), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()
