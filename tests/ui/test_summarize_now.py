"""Summarize now in the running window: the header button, the shortcut, the menu, the
instructions dialog, the progress strip with Cancel, and sending while a summary runs."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.core.paths import AppPaths
from app.store.summaries import SummaryStore
from app.ui.app import CairnSession
from tests.fakes.anthropic_server import FakeAnthropicServer, forces_a_tool
from tests.helpers.window import chat


def fill(qtbot: QtBot, cairn: CairnSession, turns: int = 8) -> None:
    for turn in range(turns):
        chat(qtbot, cairn, f"Question {turn}: the price is {turn * 10} EUR")


def active_summaries(cairn: CairnSession) -> int:
    current = cairn.controller.service.current.state.session
    assert current is not None
    repo = SummaryStore.open(AppPaths.from_environment().database)
    try:
        return len(repo.active_summaries(current.id))
    finally:
        repo.close()


def tool_prompts(fake_server: FakeAnthropicServer) -> list[str]:
    calls = [r for r in fake_server.requests_to("/v1/messages") if forces_a_tool(r)]
    return [str(call.body["messages"][-1]["content"]) for call in calls]


def summary_done(cairn: CairnSession) -> bool:
    return (
        not cairn.window.summaries.running
        and not cairn.controller.service.current.condensing.running
    )


def test_summarize_now_is_off_until_there_is_a_conversation_then_the_shortcut_runs_it(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    window = cairn.window
    assert window.summaries.button.isVisible()
    assert not window.summaries.summarize_action.isEnabled(), (
        "nothing to summarize in a new conversation"
    )
    assert "Nothing is deleted" in window.summaries.button.toolTip()
    fill(qtbot, cairn)
    assert window.summaries.summarize_action.isEnabled()
    stages: list[object] = []
    cairn.controller.summary_progress.connect(stages.append)
    qtbot.keyClick(
        window.composer.editor,
        Qt.Key.Key_S,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    assert window.summaries.progress.isVisible()
    assert window.summaries.progress.label.text() == "Reading 16 messages…"
    assert not window.summaries.summarize_action.isEnabled(), "one summary at a time"
    qtbot.waitUntil(lambda: summary_done(cairn), timeout=15_000)
    assert "Asking Claude for a summary" in stages and stages[-1] is None
    assert not window.summaries.progress.isVisible()
    assert window.summaries.summarize_action.isEnabled()
    assert active_summaries(cairn) == 1
    assert tool_prompts(fake_server), "the summarizer was asked"


def test_summarize_with_instructions_reaches_the_server(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    window = cairn.window
    fill(qtbot, cairn)
    menu_titles = [a.text() for a in window.menuBar().actions()]
    conversation_menu = window.menuBar().actions()[menu_titles.index("&Conversation")].menu()
    names = [a.text() for a in conversation_menu.actions()]  # type: ignore[union-attr]
    assert names[:2] == ["Summarize now", "Summarize with instructions…"]
    window.summaries.summarize_with_action.trigger()
    dialog = window.summaries.summarize_dialog
    assert dialog is not None
    qtbot.waitExposed(dialog)
    assert dialog.focus_edit.placeholderText() == "For example: keep every price"
    dialog.focus_edit.setText("keep every price")
    dialog.keep_check.setChecked(True)
    dialog.keep_spin.setValue(10)
    qtbot.mouseClick(dialog.summarize_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: summary_done(cairn), timeout=15_000)
    prompts = tool_prompts(fake_server)
    assert prompts and "keep every price" in prompts[-1]
    assert len(cairn.controller.service.current.state.tail) >= 10, "the last 10 stay as they are"
    assert active_summaries(cairn) == 1


def test_nothing_to_condense_is_said_plainly(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    chat(qtbot, cairn, "Just one question")
    qtbot.mouseClick(cairn.window.summaries.button, Qt.MouseButton.LeftButton)
    banner = cairn.window.banner
    assert banner.isVisible()
    assert banner.text_label.text() == (
        "Nothing to summarize yet — summaries start after 6 messages."
    )
    assert not cairn.window.summaries.progress.isVisible()


def test_cancel_leaves_everything_unchanged(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    window = cairn.window
    fill(qtbot, cairn)
    shown = [w.message.id for w in window.transcript.message_widgets()]
    fake_server.add_tool_fault("timeout", delay=2.0)  # Claude takes its time
    window.summaries.summarize_action.trigger()
    qtbot.waitUntil(
        lambda: window.summaries.progress.label.text() == "Asking Claude for a summary…",
        timeout=10_000,
    )
    qtbot.mouseClick(window.summaries.progress.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: summary_done(cairn), timeout=15_000)
    assert not window.summaries.progress.isVisible()
    assert window.banner.title_label.text() == "Summary cancelled — nothing changed"
    assert active_summaries(cairn) == 0
    assert cairn.controller.service.current.state.summaries == []
    assert [w.message.id for w in window.transcript.message_widgets()] == shown
    assert window.summaries.summarize_action.isEnabled()


def test_a_message_sent_while_a_summary_runs_goes_at_once_when_it_fits(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    window = cairn.window
    fill(qtbot, cairn)
    fake_server.add_tool_fault("timeout", delay=3.0)
    window.summaries.summarize_action.trigger()
    qtbot.waitUntil(
        lambda: window.summaries.progress.label.text() == "Asking Claude for a summary…",
        timeout=10_000,
    )
    fake_server.add_reply("Answered while summarizing.")
    chat(qtbot, cairn, "A quick question meanwhile")
    assert window.summaries.running, "the reply came while the summary was still being made"
    assert window.transcript.message_widgets()[-1].text == "Answered while summarizing."
    qtbot.waitUntil(lambda: summary_done(cairn), timeout=15_000)
    assert active_summaries(cairn) == 1


def test_the_header_fits_at_800_pixels_with_the_button_as_a_symbol(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    window = cairn.window
    chat(qtbot, cairn, "A first question that gives the conversation a title")
    window.resize(800, 600)
    qtbot.waitUntil(lambda: window.summaries.button.text() == "⇊")
    qtbot.waitUntil(lambda: window.summaries.button.width() < 60)  # laid out again
    header = window.header
    for widget in (window.header.title_label, window.header.model_combo, window.header.gauge):
        assert widget.geometry().right() < window.summaries.button.geometry().left()
    assert window.header.settings_button.geometry().right() <= header.width()
    assert window.header.title_label.width() >= 90, "the title keeps a few words"
    assert window.header.gauge.width() >= window.header.gauge.minimumSizeHint().width()
    assert window.summaries.button.accessibleName() == "Summarize now"
    window.resize(1600, 900)
    qtbot.waitUntil(lambda: window.summaries.button.text() == "Summarize now")
