"""Summaries made by hand for tests and benches: a `Summary` whose text is given."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from app.core.summary import (
    Summary,
    SummaryContent,
    SummaryMode,
    SummaryState,
    SummaryTier,
    SummaryTrigger,
    render_summary_text,
)
from app.core.tokens import TokenCounter, default_counter

WHEN = datetime(2026, 3, 1, tzinfo=UTC)


def make_summary(
    tier: SummaryTier | str,
    first_seq: int,
    last_seq: int,
    text: str,
    *,
    tokens: int | None = None,
    created_at: datetime = WHEN,
    session_id: str = "s1",
    counter: TokenCounter | None = None,
) -> Summary:
    """An active summary of messages `first_seq`–`last_seq` that reads `text` (stripped).

    `tokens` is its stored count; None counts the text as the store would.
    """
    content = SummaryContent(narrative=text)
    if tokens is None:
        tokens = (counter or default_counter()).count(render_summary_text(content))
    tier = SummaryTier(tier)
    return Summary(
        id=str(uuid.uuid4()),
        session_id=session_id,
        tier=tier,
        parent_id=None,
        first_seq=first_seq,
        last_seq=last_seq,
        content=content,
        source_tokens=tokens * 10,
        summary_tokens=tokens,
        mode=SummaryMode.RULE,
        model=None,
        trigger=SummaryTrigger.AUTO,
        instructions=None,
        state=SummaryState.ACTIVE,
        depth=1 if tier is SummaryTier.CONDENSED else 2,
        created_at=created_at,
    )
