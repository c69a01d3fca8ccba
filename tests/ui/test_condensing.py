"""Condensing in the running app: automatic after a reply, and an emergency before a
send that would not fit. Every original stays on disk."""

from __future__ import annotations

import re
from collections.abc import Callable

from PySide6.QtCore import QPoint, Qt
from pytestqt.qtbot import QtBot

from app.core.caching import minimum_cacheable_tokens
from app.core.catalog import ModelInfo
from app.core.models import Role
from app.core.paths import AppPaths
from app.core.summary import SummaryMode
from app.store.summaries import SummaryStore
from app.ui.app import CairnSession
from app.ui.summary_block import SummaryBlock
from tests.fakes.anthropic_server import FakeAnthropicServer, forces_a_tool
from tests.helpers.window import chat

SMALL = ModelInfo(
    id="claude-small", display_name="Claude Small", max_input_tokens=4_000, max_tokens=400
)


def words(label: str, count: int) -> str:
    return " ".join(f"{label}{index}" for index in range(count))


def open_small(
    qtbot: QtBot, open_window: Callable[[], CairnSession], fake_server: FakeAnthropicServer
) -> CairnSession:
    fake_server.models = [SMALL]
    cairn = open_window()
    qtbot.waitUntil(
        lambda: cairn.controller.service.current.state.model_id == SMALL.id, timeout=10_000
    )
    qtbot.waitUntil(lambda: cairn.controller.service.counter.ready, timeout=10_000)
    return cairn


def summaries_of(cairn: CairnSession) -> SummaryStore:
    return SummaryStore.open(AppPaths.from_environment().database)


def test_a_long_chat_is_condensed_in_the_background_and_nothing_is_lost(
    qtbot: QtBot,
    open_window: Callable[[], CairnSession],
    with_key: str,
    fake_server: FakeAnthropicServer,
) -> None:
    cairn = open_small(qtbot, open_window, fake_server)
    sent: list[str] = []
    for turn in range(30):
        fake_server.add_reply(f"Reply {turn}: " + words("answer", 60))
        question = f"Question {turn} about report_{turn}.xlsx: " + words("detail", 60)
        sent.append(question)
        chat(qtbot, cairn, question)
        if cairn.window.banner.isVisible():
            break
    qtbot.waitUntil(lambda: not cairn.controller.service.current.condensing.running, timeout=15_000)
    banner = cairn.window.banner
    assert banner.title_label.text() == "Earlier messages summarized", banner.text_label.text()
    text = banner.text_label.text()
    assert re.fullmatch(
        r"Cairn summarized \d+ older messages so Claude can keep up\. "
        r"Nothing was deleted\.( .*)?",
        text,
    ), text
    assert banner.action_button.text() == "Undo"
    assert banner.second_action_button.text() == "What happened?"
    # A thing done, not a problem: the notice goes by itself after a while (its Undo
    # stays on the summary's card). The timer is fired here, not waited for.
    assert banner.fade_timer.isActive()
    banner.fade_timer.timeout.emit()
    assert not banner.isVisible()
    (card,) = cairn.window.transcript.summary_blocks()
    card.set_expanded(True)
    assert card.undo_button.text() == "Undo summary"

    repo = summaries_of(cairn)
    try:
        session_id = cairn.controller.service.current.state.session.id  # type: ignore[union-attr]
        assert repo.check_coverage(session_id) == []
        assert repo.active_summaries(session_id), "a summary was committed"
        events = repo.events(session_id)
        assert events and events[-1].outcome.value in ("ok", "fallback")
    finally:
        repo.close()
    # Every original is still stored, summarized or not.
    stored_questions = [m.content for m in cairn.store.messages(session_id) if m.role is Role.USER]
    assert stored_questions == sent
    # The summarizer was asked once, with a forced tool call.
    tool_calls = [r for r in fake_server.requests_to("/v1/messages") if forces_a_tool(r)]
    assert len(tool_calls) >= 1
    # The next request carries the memory block, cached, and fits.
    fake_server.add_reply("Still here.")
    chat(qtbot, cairn, "What did we say about report_0.xlsx?")
    last = fake_server.turns()[-1].body
    assert isinstance(last["system"], list)
    memory = last["system"][-1]
    assert "Conversation so far" in memory["text"]
    # Cached when the prefix reaches the model's minimum (caching.py), else not marked.
    prefix = cairn.controller.service.counter.count("".join(b["text"] for b in last["system"]))
    cached = prefix >= minimum_cacheable_tokens(last["model"])
    assert memory.get("cache_control") == ({"type": "ephemeral"} if cached else None)
    assert "report_0.xlsx" in memory["text"], "the file name from the first message survives"
    state = cairn.window.header.gauge.state
    assert state is not None and state.breakdown.memory > 0 and state.fits


def test_a_message_that_would_not_fit_is_sent_after_condensing(
    qtbot: QtBot,
    open_window: Callable[[], CairnSession],
    with_key: str,
    fake_server: FakeAnthropicServer,
) -> None:
    cairn = open_small(qtbot, open_window, fake_server)
    # Few long messages: below min_messages (12), so no automatic summary comes first.
    for turn in range(5):
        fake_server.add_reply(f"Reply {turn}: " + words("answer", 250))
        chat(qtbot, cairn, f"Question {turn}: " + words("detail", 250))
    statuses: list[str] = []
    cairn.controller.status_changed.connect(statuses.append)
    big = "Now the big one: " + words("large", 900)
    assert not cairn.controller.service.current.gauge.measure(draft=big).fits
    fake_server.add_reply("Answered after condensing.")
    cairn.window.composer.editor.setPlainText(big)
    qtbot.keyClick(cairn.window.composer.editor, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: cairn.window.composer.text() == "", timeout=15_000)
    qtbot.waitUntil(
        lambda: not cairn.controller.service.current.state.activity.busy, timeout=15_000
    )
    assert "Summarizing earlier messages…" in statuses
    session_id = cairn.controller.service.current.state.session.id  # type: ignore[union-attr]
    stored = cairn.store.messages(session_id)
    assert stored[-2].content == big and stored[-1].content == "Answered after condensing."
    repo = summaries_of(cairn)
    try:
        assert repo.check_coverage(session_id) == []
        assert repo.events(session_id)[-1].reason
    finally:
        repo.close()


def test_a_summary_shows_as_a_card_with_its_originals_and_can_be_undone(
    qtbot: QtBot,
    open_window: Callable[[], CairnSession],
    with_key: str,
    fake_server: FakeAnthropicServer,
) -> None:
    cairn = open_small(qtbot, open_window, fake_server)
    for turn in range(30):
        fake_server.add_reply(f"Reply {turn}: " + words("answer", 60))
        chat(qtbot, cairn, f"Question {turn} about report_{turn}.xlsx: " + words("detail", 60))
        if cairn.window.banner.isVisible():
            break
    qtbot.waitUntil(lambda: not cairn.controller.service.current.condensing.running, timeout=15_000)
    transcript = cairn.window.transcript
    (summary,) = cairn.controller.service.current.state.summaries
    (block,) = transcript.summary_blocks()
    count = summary.last_seq - summary.first_seq + 1
    assert block.header_text().startswith(f"Summary of {count} earlier messages · ")
    assert "token" not in block.header_text()  # sizes wait in the opened card's Details
    # The card stands where the condensed messages were: before the first newer message.
    shown = [w.message.seq for w in transcript.message_widgets()]
    assert shown and min(shown) > summary.last_seq
    first_live = transcript.message_widgets()[0]
    assert block.y() < first_live.y()
    # Keyboard: the header takes focus and Enter opens it.
    block.header.setFocus()
    qtbot.keyClick(block.header, Qt.Key.Key_Return)
    assert block.expanded
    # Show original messages: unfolded in place, greyed, marked not sent.
    block.originals_button.click()
    originals = block.originals_view
    assert originals is not None
    covered = list(range(summary.first_seq, summary.last_seq + 1))
    assert originals.seqs == covered
    assert "not sent to Claude" in originals.accessibleName()
    assert block.originals_button.text() == "Hide original messages"
    # A source link scrolls to the message it came from.
    transcript.scroll_to_bottom()
    target = summary.first_seq + 1
    block.source_clicked(target)
    viewport = transcript.scroll_area.viewport()

    def target_top() -> int | None:
        start = originals.top_of(target)
        return None if start is None else originals.mapTo(viewport, QPoint(0, start)).y()

    qtbot.waitUntil(lambda: (top := target_top()) is not None and 0 <= top < viewport.height())
    # ... and the original it came from is the one there (its header names its time).
    message = originals.message(target)
    assert message is not None and message.content[:30] in originals.toPlainText()
    # It is marked for a moment, and the caret is on it for a screen reader to read.
    assert block.highlight is not None and block.highlight.parent() is originals
    area = originals.area_of(target)
    assert area is not None and block.highlight.geometry() == area
    assert originals.textCursor().position() == originals._positions[target]
    # Copy puts the summary's text on the clipboard.
    block.copy_button.click()
    from PySide6.QtWidgets import QApplication

    assert summary.content.narrative.strip()[:40] in QApplication.clipboard().text()
    # Undo from the card: the card goes, the originals are live messages again.
    # (On this small model only the newest fit back: the card then covers fewer.)
    block.undo_button.click()

    def remaining() -> int:
        left = transcript.summary_block(summary.id)
        return summary.first_seq - 1 if left is None else left.summary.last_seq

    qtbot.waitUntil(lambda: remaining() < summary.last_seq, timeout=10_000)
    shown = {w.message.seq for w in transcript.message_widgets()}
    assert set(range(remaining() + 1, summary.last_seq + 1)) <= shown
    assert not shown & set(range(summary.first_seq, remaining() + 1))
    # The history lists the summary and the undo.
    dialog = cairn.window.summaries.open_summary_history()
    rows = dialog.rows()
    assert rows[0][1] == "Undo" and rows[0][4].startswith(("Done", "Partly undone"))
    assert any(row[1].startswith("Automatic") for row in rows[1:])
    dialog.close()


def test_a_basic_summary_can_be_written_again_by_claude(
    qtbot: QtBot,
    cairn: CairnSession,
    fake_server: FakeAnthropicServer,
) -> None:
    for turn in range(8):
        chat(qtbot, cairn, f"Question {turn}: the price is {turn * 10} EUR")
    # Claude is overloaded while Summarize now runs: a basic summary stands in.
    fake_server.add_error(529, retry_after_ms=5, times=2, path="/v1/messages")
    assert cairn.controller.service.current.condensing.summarize()
    qtbot.waitUntil(lambda: bool(cairn.window.transcript.summary_blocks()), timeout=15_000)
    qtbot.waitUntil(lambda: not cairn.controller.service.current.condensing.running, timeout=15_000)
    (basic,) = cairn.window.transcript.summary_blocks()
    assert basic.summary.mode is SummaryMode.RULE
    assert basic.header.badge.isVisibleTo(basic)
    basic.header.setFocus()
    qtbot.keyClick(basic.header, Qt.Key.Key_Return)
    assert basic.retry_button.isVisibleTo(basic)
    assert basic.retry_button.text() == "Try again with Claude"
    assert basic.retry_button.toolTip() == (
        "Ask Claude to write this summary again; the messages it covers stay the same"
    )

    # Claude is back: the card is rewritten over the same messages, without the badge.
    basic.retry_button.click()

    def rewritten() -> SummaryBlock | None:
        blocks = cairn.window.transcript.summary_blocks()
        return blocks[0] if len(blocks) == 1 and blocks[0].summary.id != basic.summary.id else None

    qtbot.waitUntil(lambda: rewritten() is not None, timeout=15_000)
    block = rewritten()
    assert block is not None
    assert block.summary.mode is SummaryMode.LLM
    assert (block.summary.first_seq, block.summary.last_seq) == (
        basic.summary.first_seq,
        basic.summary.last_seq,
    )
    assert not block.header.badge.isVisibleTo(block)
    block.toggle()
    assert not block.retry_button.isVisibleTo(block)
    qtbot.waitUntil(lambda: cairn.window.banner.isVisible(), timeout=5_000)
    assert cairn.window.banner.title_label.text() == "Summary rewritten by Claude"
