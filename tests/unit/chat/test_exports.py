"""ChatService.exports: export and import as jobs, told back through ChatEvents."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from app.store.export import AlreadyImportedError, ExportFormat
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.unit.chat.conftest import SMALL, Chat

StartChat = Callable[..., Chat]


def _talk(chat: Chat, _server: FakeAnthropicServer, text: str) -> str:
    """A stored conversation (written directly: what is exported is the database)."""
    session = chat.store.create_session(text, SMALL.id)
    chat.store.append_message(session.id, "user", f"Tell me about {text}")
    chat.store.append_message(session.id, "assistant", f"About {text}.")
    return session.id


def test_export_all_runs_as_a_job_and_says_so(
    start_chat: StartChat, fake_server: FakeAnthropicServer, tmp_path: Path
) -> None:
    chat = start_chat()
    _talk(chat, fake_server, "Plums")
    _talk(chat, fake_server, "Pears")
    chat.events.clear()
    target = tmp_path / "all.json"
    chat.service.exports.export(target, ExportFormat.JSON)
    assert chat.service.exports.running == 1
    chat.run_until(lambda: chat.service.exports.running == 0)
    assert chat.events.named("notice_raised") == [
        ("Export done", f"Exported 2 conversations to {target}.")
    ]
    assert len(json.loads(target.read_text(encoding="utf-8"))["conversations"]) == 2


def test_import_lists_the_new_conversations(
    start_chat: StartChat, fake_server: FakeAnthropicServer, tmp_path: Path
) -> None:
    chat = start_chat()
    session_id = _talk(chat, fake_server, "Plums")
    target = tmp_path / "plums.md"
    chat.service.exports.export(target, ExportFormat.MARKDOWN, [session_id])
    chat.run_until(lambda: chat.service.exports.running == 0)
    assert "Plums" in target.read_text(encoding="utf-8")
    source = tmp_path / "plums.json"
    chat.service.exports.export(source, ExportFormat.JSON, [session_id])
    chat.run_until(lambda: chat.service.exports.running == 0)
    chat.events.clear()

    chat.service.exports.import_file(source)  # already there: refused, nothing written
    chat.run_until(lambda: chat.service.exports.running == 0)
    ((error,),) = chat.events.named("error_raised")
    assert isinstance(error, AlreadyImportedError)
    assert chat.events.named("sessions_listed") == []

    chat.events.clear()
    chat.service.exports.import_file(source, as_copy=True)
    chat.run_until(lambda: chat.service.exports.running == 0)
    ((sessions, current_id),) = chat.events.named("sessions_listed")
    assert sorted(s.title for s in sessions) == ["Plums", "Plums (copy)"]
    assert current_id == chat.service.current.state.session_id  # the sidebar keeps its selection
    assert chat.events.named("notice_raised") == [
        ("Import done", "Imported 1 conversation: “Plums (copy)”.")
    ]


def test_a_bad_file_is_said_plainly(start_chat: StartChat, tmp_path: Path) -> None:
    chat = start_chat()
    source = tmp_path / "photo.json"
    source.write_bytes(b"\x89PNG\r\n")
    chat.events.clear()
    chat.service.exports.import_file(source)
    chat.run_until(lambda: chat.service.exports.running == 0)
    ((error,),) = chat.events.named("error_raised")
    assert "not a Cairn export" in error.message
