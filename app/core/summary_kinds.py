"""A summary's kinds and the words it is shown with: what the window needs to paint.

Apart from the pydantic records (app.core.summary, which re-exports them) so that the
window's first paint does not import pydantic (issue 20).
"""

from __future__ import annotations

from datetime import date
from enum import StrEnum

from app.core.dates import short_date


class SummaryTier(StrEnum):
    CONDENSED = "condensed"  # covers messages
    COMPRESSED = "compressed"  # covers older summaries


class SummaryMode(StrEnum):
    LLM = "llm"
    HYBRID = "hybrid"
    RULE = "rule"  # offline, free, deterministic: shown as "basic" in the window


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


def dated_text(text: str, day: date | None) -> str:
    """A point's text with the day it was said: "… (3 Mar 2026)"."""
    return f"{text} ({short_date(day)})" if day is not None else text


def archived_facts_note(count: int) -> str:
    """What a summary says when `count` facts were trimmed from it (recall still finds them)."""
    if count == 1:
        return "1 older fact is in the archive (the original messages keep it)."
    return f"{count} older facts are in the archive (the original messages keep them)."
