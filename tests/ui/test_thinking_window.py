"""The real window on a thinking-always-on model (Claude Opus 5.5), against the fake server
through the real SDK: a long conversation where Claude searches the archive. The follow-up
request carries the turn exactly as it came (thinking first, byte for byte), no error
banner shows, the reply is complete, and the thinking sits collapsed above it; a refusal
offers "Ask another model" with the API's explanation."""

from __future__ import annotations

import json
from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QAccessible
from PySide6.QtWidgets import QPushButton
from pytestqt.qtbot import QtBot

from app.core.lookup import TOOL_NAME
from app.core.models import MessageStatus, Role
from app.store.summaries import SummaryStore
from app.ui.app import CairnSession
from app.ui.thinking_block import ThinkingBlock
from tests.fakes.anthropic_server import MESSAGES_PATH, FakeAnthropicServer
from tests.helpers.data_folder import data_folder
from tests.helpers.window import chat
from tests.unit.chat.test_lookups import ARCHIVED
from tests.unit.store.test_summaries import condensed

ALWAYS_ON = "claude-opus-5-5"


def seed_long_conversation(turns: int = 60) -> None:
    """A conversation on Opus 5.5: the archived exchange about the gate code, condensed,
    then `turns` more exchanges still live."""
    with data_folder(clean=False) as (paths, sessions):
        session = sessions.create_session("Moving house", ALWAYS_ON)
        archived = [sessions.append_message(session.id, role, text) for role, text in ARCHIVED]
        for turn in range(turns):
            sessions.append_message(
                session.id, Role.USER, f"Box {turn}: books and plates, fragile."
            )
            sessions.append_message(session.id, Role.ASSISTANT, f"Noted box {turn} as fragile.")
        summaries = SummaryStore.open(paths.database)
        summaries.commit_summary(condensed(archived))
        summaries.close()


def test_a_lookup_on_an_always_thinking_model_goes_back_byte_identical(
    qtbot: QtBot,
    open_window: Callable[[], CairnSession],
    with_key: str,
    fake_server: FakeAnthropicServer,
) -> None:
    seed_long_conversation()
    cairn = open_window()
    qtbot.waitUntil(
        lambda: cairn.controller.service.current.state.session is not None, timeout=15_000
    )
    fake_server.add_tool_use(TOOL_NAME, {"query": "gate code"}, text_before="Let me look.")
    fake_server.add_reply("The gate code is AX-7731.")
    fake_server.clear_requests()
    chat(qtbot, cairn, "What was the gate code again?")

    first, second = fake_server.requests_to(MESSAGES_PATH)
    assert first.body["model"] == ALWAYS_ON
    assert first.body["thinking"] == {"type": "adaptive", "display": "summarized"}
    assistant = second.body["messages"][-2]
    # Byte for byte what the server sent: the thinking (its signature too), then the call.
    sent = fake_server.sent_content[0]
    assert json.dumps(assistant["content"]) == json.dumps(sent)
    assert [block["type"] for block in sent] == ["thinking", "tool_use"]

    assert not cairn.window.banner.isVisible(), "no error banner"
    reply = cairn.window.transcript.message_widgets()[-1]
    assert reply.message.role is Role.ASSISTANT
    assert reply.message.status is MessageStatus.COMPLETE
    assert reply.text == "The gate code is AX-7731."
    block = reply.findChild(ThinkingBlock)
    assert block is not None and block.isVisible()
    assert block.toggle.text().startswith("Thought for")
    assert not block.details.isVisible(), "collapsed until opened"
    block.toggle.setFocus()
    qtbot.keyClick(block.toggle, Qt.Key.Key_Space)
    assert block.details.isVisible() and "Let me look." in block.details.text()
    assert block.is_open


def test_the_thinking_block_is_a_named_button_and_its_text_the_next_tab_stop(
    qtbot: QtBot, open_window: Callable[[], CairnSession], with_key: str
) -> None:
    # What the AT-SPI walk found (a check box "not checked" beside "collapsed"; the
    # thinking text out of Tab's reach once open), held by Qt's accessibility interface.
    cairn = open_window()
    chat(qtbot, cairn, "Where do we meet?")
    block = cairn.window.transcript.message_widgets()[-1].findChild(ThinkingBlock)
    assert block is not None
    toggle = QAccessible.queryAccessibleInterface(block.toggle)
    assert toggle is not None
    assert toggle.role() == QAccessible.Role.Button
    assert toggle.text(QAccessible.Text.Name).endswith(", collapsed")
    assert toggle.text(QAccessible.Text.Description) == "Show Claude's thinking"
    block.toggle.setFocus()
    qtbot.keyClick(block.toggle, Qt.Key.Key_Space)
    assert toggle.text(QAccessible.Text.Name).endswith(", expanded")
    qtbot.keyClick(block.toggle, Qt.Key.Key_Tab)
    qtbot.waitUntil(lambda: block.details.hasFocus())
    details = QAccessible.queryAccessibleInterface(block.details)
    assert details is not None and details.text(QAccessible.Text.Name) == "Claude's thinking"
    assert details.text(QAccessible.Text.Description) == block.details.text() != ""
    qtbot.keyClick(block.details, Qt.Key.Key_Backtab)
    qtbot.keyClick(block.toggle, Qt.Key.Key_Space)
    assert not block.details.isVisible() and not block.is_open


def test_a_refusal_offers_another_model_with_its_explanation(
    qtbot: QtBot,
    cairn: CairnSession,
    fake_server: FakeAnthropicServer,
) -> None:
    fake_server.add_reply("I", stop_reason="refusal")
    chat(qtbot, cairn, "Write me something risky")
    reply = cairn.window.transcript.message_widgets()[-1]
    assert reply.message.status is MessageStatus.DECLINED
    qtbot.waitUntil(lambda: "Another model often answers" in reply.note.text())
    note = reply.note.text()
    assert "could enable cyber harm" in note, "the API's explanation"
    assert "Claude Opus 5.5" in note, "the next listed model, said in words"
    # Tab lands on the button, past the note: a screen reader hears the note with it.
    (button,) = [b for b in reply.findChildren(QPushButton) if b.text() == "Ask another model"]
    assert button.focusPolicy() & Qt.FocusPolicy.TabFocus
    assert "could enable cyber harm" in button.accessibleDescription()
    assert "Claude Opus 5.5" in button.accessibleDescription()
    fake_server.add_reply("Here is a safe answer.")
    reply.action_requested.emit()
    qtbot.waitUntil(
        lambda: not cairn.controller.service.current.state.activity.busy, timeout=15_000
    )
    last = fake_server.turns()[-1].body
    assert last["model"] == "claude-opus-5-5"
    assert last["messages"][-1]["role"] == "user"
    shown = cairn.window.transcript.message_widgets()[-1]
    assert shown.text == "Here is a safe answer."


def test_while_claude_only_thinks_its_text_is_not_told_again(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    """Thinking streams first (today's models think by default): the window is told the
    thinking as it grows, and the reply's text only when it changed; each telling of
    the same text laid the reply's row out again, up to 30 times a second (issue 20)."""
    pieces = [f"w{i} " for i in range(4)]
    fake_server.add_reply("".join(pieces), chunks=pieces, chunk_delay=0.05)
    texts: list[str] = []
    thoughts: list[str] = []
    cairn.controller.message_text_changed.connect(lambda _id, text: texts.append(text))
    cairn.controller.message_thinking_changed.connect(lambda _id, text: thoughts.append(text))

    chat(qtbot, cairn, "Think it over first")

    assert len(thoughts) > 1, "the thinking was shown as it grew"
    assert texts and texts[-1] == "".join(pieces)
    assert "" not in texts and len(texts) == len(set(texts)), texts
    reply = cairn.window.transcript.message_widgets()[-1]
    assert reply.text == "".join(pieces)
