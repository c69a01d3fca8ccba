"""The summary history's rows and the banner after a summary, in plain words."""

from __future__ import annotations

from datetime import UTC, datetime

from app.chat.events import HistoryEntry, SummaryReport
from app.core.summary import EventKind, EventOutcome, SummaryEvent, SummaryTrigger
from app.ui.summary_history import banner_text, history_rows

WHEN = datetime(2026, 11, 28, 9, 30, tzinfo=UTC)


def event(outcome: EventOutcome = EventOutcome.OK) -> SummaryEvent:
    return SummaryEvent(
        session_id="s",
        kind=EventKind.SUMMARIZE,
        outcome=outcome,
        summary_id="x",
        reason="threshold",
        ratio_before=0.85,
        ratio_after=0.4,
        tokens_before=14_872,
        tokens_after=6_000,
        created_at=WHEN,
    )


def test_rows_name_the_model_and_say_how_full_not_tokens() -> None:
    ((_, why, fullness, writer, outcome),) = history_rows(
        [HistoryEntry(event(), model="claude-haiku-4-5-20251001")]
    )
    assert why == "Automatic (the conversation was getting full)"
    assert fullness == "85 % → 40 %"
    assert writer == "Claude Haiku 4.5"
    assert outcome == "Done"


def test_a_rule_made_summary_says_who_made_it() -> None:
    ((*_, writer, outcome),) = history_rows([HistoryEntry(event(EventOutcome.FALLBACK))])
    assert writer == "Cairn's offline rules"
    assert "could not be reached" not in outcome


def report(*, basic: bool) -> SummaryReport:
    return SummaryReport(
        summary_ids=("x",),
        condensed=42,
        messages_before=78,
        messages_after=36,
        tokens_before=30_000,
        tokens_after=15_000,
        trigger=SummaryTrigger.AUTO,
        basic=basic,
    )


def test_the_banner_says_what_happened_without_figures() -> None:
    assert banner_text(report(basic=False)) == (
        "Cairn summarized 42 older messages so Claude can keep up. Nothing was deleted."
    )


def test_a_simpler_summary_is_not_blamed_on_the_network() -> None:
    """The summarizer may have answered badly, or its model be missing: "could not be
    reached" would be wrong then; the banner says what the user can do instead."""
    text = banner_text(report(basic=True))
    assert "could not be reached" not in text
    assert "Try again with Claude" in text
