"""The whole app like a user: chat, quit, start again on the same data, find everything."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.core.models import MessageStatus, Role
from app.ui.app import CairnSession
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.dates import undated
from tests.helpers.window import chat
from tests.ui.conftest import TEST_KEY, home_files


def test_everything_is_still_there_after_a_restart(
    qtbot: QtBot,
    open_window: Callable[[], CairnSession],
    with_key: str,
    fake_server: FakeAnthropicServer,
    cairn_home: Path,
) -> None:
    first = open_window()
    fake_server.add_reply("Paris is the capital of France.")
    chat(qtbot, first, "What is the capital of France?")
    fake_server.add_reply("About 2.1 million people live in Paris proper.")
    chat(qtbot, first, "How many people live there?")
    first.window.sidebar.start_rename()
    first.controller.service.rename_session(
        first.controller.service.current.state.session.id, "Geography"
    )  # type: ignore[union-attr]
    qtbot.mouseClick(first.window.sidebar.new_button, Qt.MouseButton.LeftButton)
    fake_server.add_reply("Hello!")
    chat(qtbot, first, "Second conversation")
    first.window.close()
    first.close()

    second = open_window()
    sidebar = second.window.sidebar
    assert sidebar.titles() == ["Second conversation", "Geography"]
    sidebar.select_session(sidebar.session_ids()[1])
    shown = [
        (w.message.role, w.text, w.message.status)
        for w in second.window.transcript.message_widgets()
    ]
    assert shown == [
        (Role.USER, "What is the capital of France?", MessageStatus.COMPLETE),
        (Role.ASSISTANT, "Paris is the capital of France.", MessageStatus.COMPLETE),
        (Role.USER, "How many people live there?", MessageStatus.COMPLETE),
        (Role.ASSISTANT, "About 2.1 million people live in Paris proper.", MessageStatus.COMPLETE),
    ]
    assert second.window.windowTitle() == "Geography — Cairn"

    # The conversation goes on with its whole history.
    fake_server.add_reply("The Seine.")
    chat(qtbot, second, "Which river runs through it?")
    sent = fake_server.turns()[-1].body["messages"]
    assert [undated(turn["content"]) for turn in sent] == [
        "What is the capital of France?",
        "Paris is the capital of France.",
        "How many people live there?",
        "About 2.1 million people live in Paris proper.",
        "Which river runs through it?",
    ]
    second.window.close()
    second.close()

    # The key was used all along, yet it is in no file Cairn wrote.
    assert fake_server.requests_to("/v1/messages")[0].api_key == TEST_KEY
    files = home_files(cairn_home)
    assert any(path.name == "cairn.db" for path in files)
    for path in files:
        assert TEST_KEY.encode() not in path.read_bytes(), f"the API key leaked into {path}"


def test_a_reply_interrupted_by_a_crash_is_recovered(
    qtbot: QtBot,
    open_window: Callable[[], CairnSession],
    with_key: str,
    cairn_home: Path,
) -> None:
    from app.core.paths import AppPaths
    from app.store.database import open_database
    from app.store.sessions import SessionStore

    # As if Cairn had died mid-reply: a streaming message with the text saved so far.
    store = SessionStore(open_database(AppPaths.from_environment().database).connection)
    session = store.create_session("Interrupted", "claude-sonnet-4-6")
    store.append_message(session.id, Role.USER, "Write a poem")
    store.append_message(
        session.id, Role.ASSISTANT, "Roses are red,", status=MessageStatus.STREAMING
    )
    store.close()

    cairn = open_window()
    # Mended once the check after the crash passed (issue 20: it runs after the window
    # opened, read-only meanwhile).
    qtbot.waitUntil(
        lambda: cairn.window.banner.isVisible() and "kept" in cairn.window.banner.text_label.text(),
        timeout=15_000,
    )
    qtbot.waitUntil(lambda: not cairn.window.transcript.building)
    last = cairn.window.transcript.message_widgets()[-1]
    assert (last.text, last.message.status) == ("Roses are red,", MessageStatus.STOPPED)
