"""Domain records: conversations (sessions) and their messages."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

# Kept here too (old import path); app.core.message_kinds holds them without pydantic,
# for the window's first paint (issue 20).
from app.core.message_kinds import MessageStatus as MessageStatus
from app.core.message_kinds import Role as Role


class Usage(BaseModel):
    """Token counts the API reported for one reply."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    # How many requests these counts add up (a reply's tool-loop rounds, continuations).
    requests: int = 1

    @property
    def total_input_tokens(self) -> int:
        """Everything the request cost on the input side, cached or not."""
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    def plus(self, other: Usage | None) -> Usage:
        """The counts of two requests of one reply added up (what the reply cost)."""
        if other is None:
            return self
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_creation_input_tokens=self.cache_creation_input_tokens
            + other.cache_creation_input_tokens,
            cache_read_input_tokens=self.cache_read_input_tokens + other.cache_read_input_tokens,
            requests=self.requests + other.requests,
        )


class Session(BaseModel):
    """One conversation. `version` is bumped on every write (optimistic checks)."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    id: str
    title: str
    created_at: datetime
    updated_at: datetime
    model: str
    system_prompt: str = ""
    version: int = 0


class Message(BaseModel):
    """One turn of a conversation. `seq` is monotonic within its session."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    id: int
    session_id: str
    seq: int
    role: Role
    content: str
    created_at: datetime
    token_estimate: int | None = None
    usage: Usage | None = None
    model: str | None = None
    status: MessageStatus = MessageStatus.COMPLETE
    summary_id: str | None = Field(default=None)
    # A pinned message is never summarized: it stays in the live context wherever it is.
    pinned: bool = False
    # Its versions (an edited question, a regenerated reply): the first version's id,
    # None while there is only one; and which one this is, of how many ("‹ 2 / 3 ›").
    version_of: int | None = None
    # Its text changed on the disk and no backup held it intact (app/store/checksums.py):
    # shown marked, never as if it were what was written.
    damaged: bool = False
    version_number: int = 1
    version_count: int = 1
    # Claude's thinking shown above a reply (summarized; never sent back nor summarized
    # as the reply's text), and how long it thought; "" and None when it did not show any.
    thinking: str = ""
    thinking_seconds: float | None = None
    # Why Claude declined this reply, as the API explained it (`stop_details`); None when
    # it gave no explanation, or the reply was not declined.
    refusal: str | None = None
