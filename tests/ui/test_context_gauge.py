"""The gauge in the window: it follows the draft, the replies and the model, and its
figure matches what the server counts once calibrated."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.core.catalog import ModelInfo
from app.core.context import ContextState, format_token_count
from app.core.recall import RECALL_HEADING
from app.ui.app import CairnSession
from app.ui.gauge_text import format_percent
from tests.fakes.anthropic_server import FakeAnthropicServer, forces_a_tool
from tests.helpers.window import chat

MODELS = [
    ModelInfo(
        id="claude-big", display_name="Claude Big", max_input_tokens=200_000, max_tokens=8_192
    ),
    ModelInfo(
        id="claude-small", display_name="Claude Small", max_input_tokens=50_000, max_tokens=4_096
    ),
]


def gauge_state(cairn: CairnSession) -> ContextState:
    state = cairn.window.header.gauge.state
    assert state is not None
    return state


def ready(qtbot: QtBot, cairn: CairnSession) -> None:
    qtbot.waitUntil(lambda: cairn.window.header.gauge.state is not None, timeout=10_000)
    qtbot.waitUntil(
        lambda: cairn.controller.service.current.state.model_id == "claude-big", timeout=10_000
    )


def test_gauge_follows_draft_replies_and_model(
    qtbot: QtBot,
    open_window: Callable[[], CairnSession],
    with_key: str,
    fake_server: FakeAnthropicServer,
) -> None:
    fake_server.models = list(MODELS)
    cairn = open_window()
    ready(qtbot, cairn)
    empty = gauge_state(cairn)
    assert empty.breakdown.draft == 0 and empty.breakdown.history == 0
    gauge = cairn.window.header.gauge
    assert "of 192k</b>" in gauge.toolTip()  # the figures, under Details
    assert gauge.isHidden()  # nothing to say before the conversation starts

    qtbot.keyClicks(cairn.window.composer.editor, "How tall is Mount Everest? " * 20)
    qtbot.waitUntil(lambda: gauge_state(cairn).breakdown.draft > 100)

    fake_server.add_reply("About 8,849 metres. " * 30)
    qtbot.keyClick(cairn.window.composer.editor, Qt.Key.Key_Return)
    qtbot.waitUntil(
        lambda: not cairn.controller.service.current.state.activity.busy, timeout=15_000
    )
    after = gauge_state(cairn)
    assert after.breakdown.draft == 0
    assert after.breakdown.history > 100, "the question and the reply now count"

    combo = cairn.window.header.model_combo
    combo.setCurrentIndex(combo.findData("claude-small"))
    combo.activated.emit(combo.currentIndex())
    small = gauge_state(cairn)
    assert small.context_window == 50_000
    assert small.ratio > after.ratio
    assert "of 46k</b>" in cairn.window.header.gauge.toolTip()


def test_gauge_matches_the_server_after_a_few_replies(
    qtbot: QtBot,
    open_window: Callable[[], CairnSession],
    with_key: str,
    fake_server: FakeAnthropicServer,
) -> None:
    fake_server.models = list(MODELS)
    cairn = open_window()
    ready(qtbot, cairn)
    topics = ["rivers of Europe", "the history of tea", "how bridges stay up", "jazz in the 1950s"]
    for topic in topics[:3]:
        fake_server.add_reply(f"Here is a long answer about {topic}. " * 60)
        chat(qtbot, cairn, f"Tell me about {topic}, with details and examples. " * 10)
    draft = f"Tell me about {topics[3]}, with details and examples. " * 10
    predicted = cairn.controller.service.current.gauge.measure(draft=draft).used
    fake_server.add_reply("Fine.")
    chat(qtbot, cairn, draft)
    reported = fake_server.count_input_tokens(fake_server.turns()[-1].body)
    error = abs(predicted - reported) / reported
    assert error <= 0.05, f"gauge {predicted} vs server {reported}: {error:.1%} off"


def test_calibration_and_counts_survive_a_restart(
    qtbot: QtBot,
    open_window: Callable[[], CairnSession],
    with_key: str,
    fake_server: FakeAnthropicServer,
) -> None:
    fake_server.models = list(MODELS)
    first = open_window()
    ready(qtbot, first)
    for index in range(2):
        fake_server.add_reply(f"Answer number {index}. " * 80)
        chat(qtbot, first, f"Question number {index}, asked at some length. " * 20)
    assert first.controller.service.calibrations.for_model("claude-big").calibrated
    before = gauge_state(first)
    first.window.close()
    first.close()

    second = open_window()
    ready(qtbot, second)
    assert second.controller.service.calibrations.for_model("claude-big").calibrated
    after = gauge_state(second)
    assert after.breakdown.history == before.breakdown.history
    assert after.calibrated


def test_the_breakdown_counts_the_archive_tool_and_what_was_quoted(
    qtbot: QtBot,
    open_window: Callable[[], CairnSession],
    with_key: str,
    fake_server: FakeAnthropicServer,
) -> None:
    """Issue 12: once something is archived, the gauge counts the search tool as it is sent,
    and after a message that quoted from the archive, the tokens quoted."""
    fake_server.models = list(MODELS)
    cairn = open_window()
    ready(qtbot, cairn)
    chat(qtbot, cairn, "Let's fix it: the new gate code is AX-7731 from Monday.")
    for turn in range(7):
        chat(qtbot, cairn, f"Question {turn} about the garden beds and the lunch menu.")
    qtbot.keyClick(
        cairn.window.composer.editor,
        Qt.Key.Key_S,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    qtbot.waitUntil(lambda: gauge_state(cairn).breakdown.memory > 0, timeout=15_000)
    qtbot.waitUntil(lambda: not cairn.controller.service.current.condensing.running, timeout=15_000)

    archived = gauge_state(cairn)
    assert archived.breakdown.tools > 0 and archived.breakdown.recall == 0
    assert archived.recall_allowed > 0
    tip = cairn.window.header.gauge.toolTip()
    assert "Archive search for Claude" in tip and "Quoted from the archive" in tip
    assert "as much as your last message had: none" in tip

    # The tool counts as it is sent: the gauge's share for it is the server's, within 5 %.
    draft = "Thanks! Anything else?"
    predicted = cairn.controller.service.current.gauge.measure(draft=draft)
    assert predicted is not None
    chat(qtbot, cairn, draft)
    sent = last_chat_request(fake_server)
    assert sent["tools"] and RECALL_HEADING not in str(sent["messages"][-1]["content"])
    without = {key: value for key, value in sent.items() if key != "tools"}
    tools = fake_server.count_input_tokens(sent) - fake_server.count_input_tokens(without)
    assert abs(predicted.breakdown.tools - tools) <= 0.05 * tools, (predicted, tools)

    chat(qtbot, cairn, "What was the gate code again?")
    quoted = last_chat_request(fake_server)["messages"][-1]["content"][0]["text"]
    assert quoted.startswith(f"# {RECALL_HEADING}") and "AX-7731" in quoted
    state = gauge_state(cairn)
    service = cairn.controller.service
    calibration = service.calibrations.for_model("claude-big")
    expected = calibration.apply(service.counter.count(quoted))
    assert abs(state.breakdown.recall - expected) <= 0.05 * expected
    parts = state.breakdown
    assert state.used == sum(
        (parts.system, parts.tools, parts.memory, parts.recall, parts.history, parts.draft)
    )
    tip = cairn.window.header.gauge.toolTip()
    assert f"as much as your last message had: {format_token_count(parts.recall)} tokens." in tip
    assert f"({format_percent(state.ratio)})" in cairn.window.header.gauge.toolTip()


def last_chat_request(fake_server: FakeAnthropicServer) -> dict[str, Any]:
    replies = [r for r in fake_server.requests_to("/v1/messages") if not forces_a_tool(r)]
    return dict(replies[-1].body)
