"""Summaries and the audit trail: the records the summarization engine makes (DESIGN §2, §6).

Shared by the engine (core), the summarizer (core + llm) and the store. A
`Summary` covers either a contiguous range of messages (tier `condensed`) or
older summaries (tier `compressed`, a summary of summaries); the originals are
never deleted by summarization.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from app.core.models import Message

MAX_KEY_POINTS = 30


class SummaryTier(StrEnum):
    CONDENSED = "condensed"  # covers messages
    COMPRESSED = "compressed"  # covers older summaries


class SummaryMode(StrEnum):
    LLM = "llm"
    HYBRID = "hybrid"
    RULE = "rule"  # offline, free, deterministic: shown as "basic" in the window


class SummaryTrigger(StrEnum):
    AUTO = "auto"
    MANUAL = "manual"
    EMERGENCY = "emergency"


class SummaryState(StrEnum):
    ACTIVE = "active"
    SUPERSEDED = "superseded"  # folded into a compressed summary
    UNDONE = "undone"


class SourcedPoint(BaseModel):
    """One line of a summary, with the message numbers (seq) it came from."""

    model_config = ConfigDict(frozen=True)

    text: str
    sources: list[int] = Field(default_factory=list)


class ActionItem(BaseModel):
    model_config = ConfigDict(frozen=True)

    task: str
    owner: str | None = None
    due: str | None = None
    sources: list[int] = Field(default_factory=list)


class SummaryContent(BaseModel):
    """What a summary says: a narrative plus structured facets."""

    model_config = ConfigDict(frozen=True)

    narrative: str
    key_points: list[SourcedPoint] = Field(default_factory=list, max_length=MAX_KEY_POINTS)
    decisions: list[SourcedPoint] = Field(default_factory=list)
    action_items: list[ActionItem] = Field(default_factory=list)
    open_questions: list[SourcedPoint] = Field(default_factory=list)
    # Identifiers, file names, numbers, dates, URLs: verbatim.
    entities: list[str] = Field(default_factory=list)
    # Said in the summary when the transcript had to be cut to fit the summarizer.
    notes: list[str] = Field(default_factory=list)


class SummaryDraft(BaseModel):
    """A summary made but not yet committed."""

    model_config = ConfigDict(frozen=True)

    session_id: str
    tier: SummaryTier
    first_seq: int
    last_seq: int
    # What it covers: message ids (condensed) or summary ids (compressed).
    message_ids: list[int] = Field(default_factory=list)
    summary_ids: list[str] = Field(default_factory=list)
    content: SummaryContent
    source_tokens: int
    summary_tokens: int
    mode: SummaryMode
    model: str | None = None
    trigger: SummaryTrigger
    instructions: str | None = None
    depth: int = 1  # 1 for condensed; a compressed summary is one deeper than what it covers

    def committed(
        self, summary_id: str, created_at: datetime, content: SummaryContent | None = None
    ) -> Summary:
        """The active `Summary` this draft becomes once stored under `summary_id`."""
        return Summary(
            id=summary_id,
            session_id=self.session_id,
            tier=self.tier,
            parent_id=None,
            first_seq=self.first_seq,
            last_seq=self.last_seq,
            content=self.content if content is None else content,
            source_tokens=self.source_tokens,
            summary_tokens=self.summary_tokens,
            mode=self.mode,
            model=self.model,
            trigger=self.trigger,
            instructions=self.instructions,
            state=SummaryState.ACTIVE,
            depth=self.depth,
            created_at=created_at,
        )


class Summary(BaseModel):
    """A committed summary (a row of the `summary` table)."""

    model_config = ConfigDict(frozen=True)

    id: str
    session_id: str
    tier: SummaryTier
    parent_id: str | None  # the compressed summary that folded this one in, if any
    first_seq: int
    last_seq: int
    content: SummaryContent
    source_tokens: int
    summary_tokens: int
    mode: SummaryMode
    model: str | None
    trigger: SummaryTrigger
    instructions: str | None
    state: SummaryState
    depth: int
    created_at: datetime

    def text(self) -> str:
        """The summary as plain text for the memory block."""
        return render_summary_text(self.content)


class EventKind(StrEnum):
    SUMMARIZE = "summarize"
    UNDO = "undo"
    DELETE_ORIGINALS = "delete_originals"


class EventOutcome(StrEnum):
    OK = "ok"
    FALLBACK = "fallback"  # the LLM failed; a rule-based "basic" summary was made
    FAILED = "failed"
    ABORTED = "aborted"  # abort_on_failure: nothing changed
    CONFLICT = "conflict"  # the conversation changed under the worker; nothing changed
    PARTIAL = "partial"  # an undo that restored only the newest originals


class SummaryEvent(BaseModel):
    """One line of the audit trail (the `event` table)."""

    model_config = ConfigDict(frozen=True)

    session_id: str
    kind: EventKind
    outcome: EventOutcome
    summary_id: str | None = None
    reason: str = ""
    ratio_before: float | None = None
    ratio_after: float | None = None
    tokens_before: int | None = None
    tokens_after: int | None = None
    duration_ms: float | None = None
    error_class: str | None = None
    detail: str | None = None
    created_at: datetime | None = None  # set by the store when None


class UndoResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    summary_id: str
    restored_message_ids: list[int]
    complete: bool  # False: only the newest originals fit back into the live context
    # Undoing a compressed summary gives back the summaries it covered, not messages.
    restored_summary_ids: list[str] = Field(default_factory=list)


class SummaryRepository(Protocol):
    """What the engine needs from storage (implemented by app.store.summaries)."""

    def live_messages(self, session_id: str) -> list[Message]: ...

    def active_summaries(self, session_id: str) -> list[Summary]: ...

    def commit_summary(self, draft: SummaryDraft) -> Summary:
        """Insert the summary and mark what it covers, in one transaction.

        Raises `SummaryConflictError` (nothing changed) when any covered message
        is no longer live (or pinned), or any covered summary no longer active.
        """
        ...

    def undo_summary(self, summary_id: str, *, budget_tokens: int | None = None) -> UndoResult:
        """Give the originals back to the live context (newest first within the budget)."""
        ...

    def record_event(self, event: SummaryEvent) -> None: ...


def render_summary_text(content: SummaryContent) -> str:
    """Plain text of a summary, as Claude reads it in the memory block."""
    lines = [content.narrative.strip()]

    def section(title: str, items: Sequence[str]) -> None:
        if items:
            lines.append(f"{title}:")
            lines.extend(f"- {item}" for item in items)

    section("Key points", [p.text for p in content.key_points])
    section("Decisions", [p.text for p in content.decisions])
    section(
        "Action items",
        [
            item.task
            + (f" (owner: {item.owner})" if item.owner else "")
            + (f" (due: {item.due})" if item.due else "")
            for item in content.action_items
        ],
    )
    section("Open questions", [p.text for p in content.open_questions])
    if content.entities:
        lines.append("Names, numbers and references: " + "; ".join(content.entities))
    lines.extend(content.notes)
    return "\n".join(line for line in lines if line)
