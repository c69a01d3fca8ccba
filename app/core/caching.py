"""Where the request's prompt-cache breakpoints go (DESIGN §3), so that the growing
conversation is read from Claude's cache turn after turn instead of paid in full.

The API caches the prefix of a request — tools, then system, then messages — up
to each block marked with `cache_control`; a later request whose prefix is the
same reads it back (`usage.cache_read_input_tokens`) at a tenth of the price.
On a breakpoint the API also looks back up to 20 blocks for an earlier entry, so
one breakpoint on the newest user turn finds the prefix the previous request
wrote (which ended on the previous user turn, two blocks back).
https://platform.claude.com/docs/en/build-with-claude/prompt-caching

Two breakpoints of the four the API allows:
1. after the memory block (or the system prompt when there are no summaries):
   the stable part of the system prompt, unchanged until a summary changes. A
   block that changes every turn (the recall block) goes after it, never before.
2. on the newest user turn: the whole conversation so far — or, when the newest
   turn carries the recall block (which changes every turn), on the turn before it.
A breakpoint goes only where the prefix up to it reaches the model's minimum
cacheable length; a shorter prefix is not cached (and no error is raised).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from app.core.conversation import ApiMessage
from app.core.models import Role, Usage
from app.core.pricing import bundled_prices

CACHE_CONTROL: Final[dict[str, str]] = {"type": "ephemeral"}

# The API refuses a request with more than four blocks marked `cache_control`.
MAX_BREAKPOINTS: Final = 4

# "Minimum cacheable prompt length", per model, from the prompt caching page
# (https://platform.claude.com/docs/en/build-with-claude/prompt-caching#cache-limitations):
# "512 tokens for Claude Fable 5.1, Claude Mythos 5.1, Claude Opus 5.5, Claude Opus 5,
# Claude Sonnet 5.5, Claude Fable 5, Claude Mythos 5, and Claude Haiku 5.5" (the list as
# the page gave it on 2026-10-08, read 2026-12-02 through a verbatim copy of it; the
# 4.x rows read 2026-11-28), with the model pages: Sonnet 5.5 ("Minimum cacheable prompt:
# 512 tokens (1,024 on Sonnet 5)": https://platform.claude.com/docs/en/models/sonnet-5-5/overview)
# and Fable 5.1 ("The minimum cacheable prompt length is 512 tokens":
# https://platform.claude.com/docs/en/models/fable-5-1/overview), read 2026-12-02.
# Matched on the model id's start, the longest first, so dated ids
# ("claude-haiku-4-5-20251001") match too.
MINIMUM_CACHEABLE_TOKENS: Final[tuple[tuple[str, int], ...]] = (
    ("claude-sonnet-5-5", 512),
    ("claude-fable-5-1", 512),
    ("claude-opus-5-5", 512),
    ("claude-haiku-5-5", 512),
    ("claude-opus-5", 512),
    ("claude-fable-5", 512),
    ("claude-sonnet-5", 1_024),
    ("claude-opus-4-8", 1_024),
    ("claude-opus-4-7", 2_048),
    ("claude-opus-4-6", 4_096),
    ("claude-opus-4-5", 4_096),
    ("claude-haiku-4-5", 4_096),
    ("claude-3-5-haiku", 2_048),
    ("claude-3-haiku", 2_048),
    ("claude-sonnet-4-6", 1_024),
    ("claude-sonnet-4-5", 1_024),
    ("claude-opus-4-1", 1_024),
    ("claude-opus-4", 1_024),
    ("claude-sonnet-4", 1_024),
    ("claude-3-7-sonnet", 1_024),
)
# A model the table does not know (a newer one, or a compatible server's): the
# smallest minimum of the current models. A breakpoint under the real minimum
# costs nothing; it is simply not cached.
DEFAULT_MINIMUM_CACHEABLE_TOKENS: Final = 1_024


def minimum_cacheable_tokens(model_id: str) -> int:
    """The fewest tokens a prefix needs before `model_id` caches it."""
    for prefix, tokens in MINIMUM_CACHEABLE_TOKENS:
        if model_id.startswith(prefix):
            return tokens
    return DEFAULT_MINIMUM_CACHEABLE_TOKENS


def cached_text_block(text: str) -> dict[str, Any]:
    """A text block with a cache breakpoint after it."""
    return {"type": "text", "text": text, "cache_control": dict(CACHE_CONTROL)}


def with_turn_breakpoint(messages: list[ApiMessage]) -> list[ApiMessage]:
    """`messages` with a breakpoint on the newest user turn (its text as one block).

    The turns before it are left as they are, so the prefix the previous request
    cached (ending on the previous user turn) is byte for byte the same.
    """
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message["role"] == Role.USER.value:
            content = message["content"]
            # A turn with attached files is blocks already: the breakpoint goes on its last.
            blocks = (
                [cached_text_block(content)]
                if isinstance(content, str)
                else [*content[:-1], {**content[-1], "cache_control": dict(CACHE_CONTROL)}]
            )
            marked: ApiMessage = {"role": message["role"], "content": blocks}
            return [*messages[:index], marked, *messages[index + 1 :]]
    return messages


def with_recall_turn(messages: list[ApiMessage], recall_text: str) -> list[ApiMessage]:
    """`messages` with the recall block as the first block of the newest user turn, and
    the turn breakpoint on the turn before it.

    The recall block changes with every message, so it cannot sit in the system
    prompt (it would change the prefix every later turn is cached under) nor before
    a breakpoint. The newest turn is the one place nothing later depends on: the
    next request sends this turn without it. The prefix up to the previous turn
    is the same in every later request, so each one reads it back (the look-back
    finds the entry the previous request wrote, two blocks earlier).
    """
    if not messages or messages[-1]["role"] != Role.USER.value:
        return messages
    newest = messages[-1]
    content = newest["content"]
    blocks: list[dict[str, Any]] = (
        [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
    )
    turn: ApiMessage = {
        "role": newest["role"],
        "content": [{"type": "text", "text": recall_text}, *blocks],
    }
    earlier = messages[:-1]
    if earlier:
        before = earlier[-1]
        before_content = before["content"]
        marked_blocks: list[dict[str, Any]] = (
            [{"type": "text", "text": before_content}]
            if isinstance(before_content, str)
            else [dict(block) for block in before_content]
        )
        marked_blocks[-1]["cache_control"] = dict(CACHE_CONTROL)
        earlier = [*earlier[:-1], {"role": before["role"], "content": marked_blocks}]
    return [*earlier, turn]


@dataclass(frozen=True)
class CacheUse:
    """What a conversation's replies used, in all: read from Claude's prompt cache,
    written by Claude, and what that cost (an estimate: app/core/pricing.py).

    Attributes:
        read: input tokens read back from the cache (`cache_read_input_tokens`).
        written: input tokens written to it (`cache_creation_input_tokens`).
        total: all input tokens, cached or not (`Usage.total_input_tokens`).
        output: tokens Claude wrote (`output_tokens`).
        cost: the estimated cost of the replies with a known price, in billionths of
            a dollar.
        unpriced: the models (ids, sorted) of replies whose price is not known.
    """

    read: int = 0
    written: int = 0
    total: int = 0
    output: int = 0
    cost: int = 0
    unpriced: tuple[str, ...] = ()

    @classmethod
    def of(cls, usage: Usage, model: str | None = None) -> CacheUse:
        """The figures of `usage` by `model` (priced when the price table knows it)."""
        cost = bundled_prices().cost(model, usage)
        return cls(
            usage.cache_read_input_tokens,
            usage.cache_creation_input_tokens,
            usage.total_input_tokens,
            usage.output_tokens,
            cost or 0,
            () if cost is not None else (model or "unknown",),
        )

    def combined(self, other: CacheUse) -> CacheUse:
        """These totals and `other`'s together."""
        return CacheUse(
            self.read + other.read,
            self.written + other.written,
            self.total + other.total,
            self.output + other.output,
            self.cost + other.cost,
            tuple(sorted(set(self.unpriced) | set(other.unpriced))),
        )

    @property
    def uncached(self) -> int:
        """Input tokens sent in full, neither read from nor written to the cache."""
        return self.total - self.read - self.written

    @property
    def read_share(self) -> float:
        """The share of all input tokens that came from the cache (0 when none were sent)."""
        return self.read / self.total if self.total > 0 else 0.0
