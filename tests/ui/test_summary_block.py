"""The summary card shows the fact ledger and when each point was said (issue 12)."""

from __future__ import annotations

from datetime import UTC, date, datetime

from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from app.core.summary import ActionItem, LedgerFact, SourcedPoint, SummaryContent
from app.ui.summary_block import SummaryBlock, summary_markdown
from tests.fakes.summaries import make_summary

NOW = datetime(2026, 3, 9, 12, 0, tzinfo=UTC)
MARCH_3, MARCH_5 = date(2026, 3, 3), date(2026, 3, 5)


def ledger_summary(*, one_day: bool = False) -> SummaryContent:
    return SummaryContent(
        narrative="They planned the venue for the spring meeting.",
        key_points=[SourcedPoint(text="The hall holds 40 people", sources=[2], day=MARCH_3)],
        decisions=[SourcedPoint(text="Book the north hall", sources=[7], day=MARCH_5)],
        action_items=[ActionItem(task="Send the deposit", owner="user", sources=[8], day=MARCH_5)],
        facts=[
            LedgerFact(kind="name", value="Maria Schneider", seq=1, day=MARCH_3),
            LedgerFact(kind="code", value="AX-7731", seq=3, day=MARCH_3),
            LedgerFact(kind="money", value="$1,250", seq=8, day=MARCH_5),
        ],
        archived_facts=4,
        first_day=MARCH_3,
        last_day=MARCH_3 if one_day else MARCH_5,
    )


def card(qtbot: QtBot, content: SummaryContent) -> SummaryBlock:
    summary = make_summary("condensed", 1, 12, "x").model_copy(update={"content": content})
    block = SummaryBlock(summary, NOW)
    qtbot.addWidget(block)
    block.set_expanded(True)
    return block


def texts(block: SummaryBlock) -> list[str]:
    return [label.text() for label in block.findChildren(QLabel)]


def test_the_card_lists_the_ledger_with_days_and_links(qtbot: QtBot) -> None:
    block = card(qtbot, ledger_summary())

    shown = texts(block)
    assert "Names, numbers and dates, exactly as written" in shown
    assert any("AX-7731 (code, 3 Mar 2026)" in text and "seq:3" in text for text in shown)
    assert any("$1,250 (amount, 5 Mar 2026)" in text for text in shown)
    assert any("The hall holds 40 people (3 Mar 2026)" in text for text in shown)
    assert any("Book the north hall (5 Mar 2026)" in text for text in shown)
    assert any("Send the deposit (owner: user) (5 Mar 2026)" in text for text in shown)
    assert "4 older facts are in the archive (the original messages keep them)." in shown


def test_a_card_of_one_day_does_not_repeat_the_day_after_every_point(qtbot: QtBot) -> None:
    block = card(qtbot, ledger_summary(one_day=True))

    shown = texts(block)
    assert any(text.startswith("• The hall holds 40 people &nbsp;") for text in shown)
    assert any("AX-7731 (code, 3 Mar 2026)" in text for text in shown)


def test_a_bare_small_number_is_not_listed_as_a_fact(qtbot: QtBot) -> None:
    content = ledger_summary().model_copy(
        update={"facts": [LedgerFact(kind="number", value="1", seq=2, day=MARCH_3)]}
    )
    shown = texts(card(qtbot, content))
    assert not any(text.startswith("• 1 (number") for text in shown)
    assert "Names, numbers and dates, exactly as written" not in shown


def test_the_opened_card_keeps_sizes_and_the_writer_in_its_details(qtbot: QtBot) -> None:
    block = card(qtbot, ledger_summary())
    assert "token" not in block.header_text()
    (details,) = [text for text in texts(block) if text.startswith("Details: ")]
    assert "tokens of messages →" in details
    assert "claude-" not in details


def test_copy_gives_the_ledger_and_the_days() -> None:
    summary = make_summary("condensed", 1, 12, "x").model_copy(update={"content": ledger_summary()})

    text = summary_markdown(summary)

    assert (
        "**Names, numbers and dates, exactly as written**\n- Maria Schneider (name, 3 Mar 2026)"
        in text
    )
    assert "- Book the north hall (5 Mar 2026)" in text
    assert text.rstrip().endswith(
        "4 older facts are in the archive (the original messages keep them)."
    )
