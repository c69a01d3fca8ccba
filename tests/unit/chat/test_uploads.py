"""Attached files uploaded once through the Files API (app/chat/uploads.py), through the
service against the fake's Files API (tests/fakes/files_api.py): referred to by
`file_id` turn after turn, base64 where the server has no Files API, uploaded again when
the server lost one, and deleted on the server with their conversation."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

import app.chat.uploads as uploads_module
from app.store.uploads import UploadStore
from tests.fakes.anthropic_server import MESSAGES_PATH, FakeAnthropicServer
from tests.fakes.files_api import FILES_BETA, FILES_PATH
from tests.fakes.sample_files import pdf, png
from tests.fakes.server_fixtures import HAIKU_4_5, SONNET_5_5
from tests.unit.chat.conftest import Chat
from tests.unit.chat.test_attachment_limits import attach, start

StartChat = Callable[..., Chat]


@pytest.fixture
def fake_server() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer(models=(SONNET_5_5, HAIKU_4_5)) as server:
        yield server


def sources(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The source of every image and document block of a request, in order."""
    return [
        block["source"]
        for message in body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") in ("image", "document")
    ]


def messages_requests(server: FakeAnthropicServer) -> list[dict[str, Any]]:
    return [request.body for request in server.turns()]


def test_each_file_is_uploaded_once_and_referred_to_by_its_id_every_turn(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start(start_chat)
    attach(chat, ("report.pdf", pdf(3)), ("chart.png", png(300, 200)))
    chat.send("What do these say?")
    attach(chat, ("chart.png", png(300, 200)))  # the same picture again: the same upload
    chat.send("And this one?")
    chat.send("Thanks.")

    assert chat.events.named("error_raised") == []
    uploaded = fake_server.files.uploads
    assert [(f.filename, f.mime_type) for f in uploaded] == [
        ("report.pdf", "application/pdf"),
        ("chart.png", "image/png"),
    ]
    ids = [f.id for f in uploaded]
    first, second, third = messages_requests(fake_server)
    assert sources(first) == [{"type": "file", "file_id": i} for i in ids]
    assert [s["file_id"] for s in sources(second)] == [*ids, ids[1]]
    assert sources(third) == sources(second)  # the same prefix, turn after turn: cached
    kinds = [
        (block["type"], block.get("title"))
        for block in first["messages"][0]["content"]
        if block["type"] != "text"
    ]
    assert kinds == [("document", "report.pdf"), ("image", None)]


def test_a_server_without_the_files_api_gets_base64_and_is_asked_once(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    fake_server.files.mode = "off"  # an Anthropic-compatible server at another address
    chat = start(start_chat)
    attach(chat, ("chart.png", png(30, 20)))
    chat.send("What is this?")
    chat.send("Sure?")
    assert chat.events.named("error_raised") == []  # nothing said about it
    assert all(
        s["type"] == "base64" for body in messages_requests(fake_server) for s in sources(body)
    )
    probes = [r for r in fake_server.requests if r.path == FILES_PATH]
    assert [r.method for r in probes] == ["GET", "GET"]  # as documented, then with the beta
    chat.service.shutdown()

    # Remembered: a restart does not ask again.
    again = start(start_chat)
    attach(again, ("chart.png", png(30, 20)))
    again.send("And now?")
    assert len([r for r in fake_server.requests if r.path == FILES_PATH]) == 2
    assert fake_server.files.uploads == []


def test_a_server_that_wants_the_beta_header_gets_it_with_every_files_call(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    fake_server.files.mode = "beta"  # refuses a Files API call or a file source without it
    chat = start(start_chat)
    attach(chat, ("report.pdf", pdf(2)))
    chat.send("Summarize it.")
    assert chat.events.named("error_raised") == []
    (uploaded,) = fake_server.files.uploads
    request = fake_server.turns()[-1]
    assert sources(request.body) == [{"type": "file", "file_id": uploaded.id}]
    assert FILES_BETA in request.headers["anthropic-beta"]
    upload = fake_server.requests_to(FILES_PATH, "POST")[-1]
    assert FILES_BETA in upload.headers["anthropic-beta"]


def test_a_file_the_server_lost_is_uploaded_again_and_the_request_sent_once_more(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start(start_chat)
    (picture,) = attach(chat, ("chart.png", png(30, 20)))
    chat.send("What is this?")
    (lost,) = fake_server.files.uploads
    fake_server.files.lose(lost.id)  # deleted elsewhere, say
    fake_server.add_reply("Still a chart.")
    chat.send("Look again.")

    assert chat.events.named("error_raised") == []
    assert chat.stored()[-1].content == "Still a chart."
    assert chat.service.current.state.model_id == SONNET_5_5.id  # not taken for the model's 404
    again = fake_server.files.uploads[-1]
    assert again.id != lost.id and again.data == lost.data
    assert sources(messages_requests(fake_server)[-1]) == [{"type": "file", "file_id": again.id}]
    store = UploadStore.open(chat.paths.database)
    try:
        assert store.file_ids(_scope(chat), [picture.sha256]) == {picture.sha256: again.id}
    finally:
        store.close()


def test_a_404_that_is_not_about_a_file_is_still_the_models(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start(start_chat)
    attach(chat, ("chart.png", png(30, 20)))
    chat.send("What is this?")
    fake_server.add_error(404, f"model: {SONNET_5_5.id}", path=MESSAGES_PATH)
    fake_server.add_reply("Haiku here.")
    chat.send("Again?")
    assert chat.stored()[-1].content == "Haiku here."
    assert chat.service.current.state.model_id == HAIKU_4_5.id
    assert len(fake_server.files.uploads) == 1  # nothing uploaded again


def test_an_upload_the_server_refuses_goes_as_base64_without_a_word(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    fake_server.files.storage_limit = 10  # "Storage limit exceeded (403)"
    chat = start(start_chat)
    attach(chat, ("chart.png", png(30, 20)))
    chat.send("What is this?")
    assert chat.events.named("error_raised") == []
    assert [s["type"] for s in sources(messages_requests(fake_server)[-1])] == ["base64"]


def test_deleting_a_conversation_deletes_its_uploads_on_the_server(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start(start_chat)
    attach(chat, ("report.pdf", pdf(2)), ("shared.png", png(30, 20)))
    chat.send("Keep these.")
    first = chat.service.current.state.session_id
    chat.service.new_conversation()
    attach(chat, ("shared.png", png(30, 20)))  # the same picture in another conversation
    chat.send("And this.")
    report, shared = fake_server.files.uploads
    assert first is not None

    chat.service.delete_session(first)
    chat.run_until(lambda: fake_server.files.deletions == [report.id])
    chat.idle()
    assert [f.id for f in fake_server.files.stored()] == [shared.id]  # still in use
    assert chat.events.named("error_raised") == []


def test_uploads_the_server_could_not_delete_are_deleted_later(
    start_chat: StartChat, fake_server: FakeAnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(uploads_module, "PURGE_RETRY_SECONDS", 0.0)
    chat = start(start_chat)
    attach(chat, ("report.pdf", pdf(2)))
    chat.send("Keep this.")
    (report,) = fake_server.files.uploads
    session_id = chat.service.current.state.session_id
    assert session_id is not None
    # The server fails the deletion (three times: the SDK's two retries too).
    fake_server.add_error(500, path=f"{FILES_PATH}/{report.id}", times=3)

    chat.service.delete_session(session_id)  # never waits for the server
    assert chat.store.get_session(session_id) is None
    chat.run_until(lambda: fake_server.files.deletions == [report.id])
    assert fake_server.files.stored() == []
    assert chat.events.named("error_raised") == []


def test_deleting_archived_originals_deletes_their_files_uploads(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start(start_chat)
    attach(chat, ("old.png", png(30, 20)))
    chat.send("An old picture.")
    for turn in range(7):
        chat.send(f"Question {turn}")
    assert chat.service.current.condensing.summarize()
    chat.idle()
    session_id = chat.service.current.state.session_id
    assert session_id is not None
    assert chat.service.backups.count_archived(session_id) > 0
    (old,) = fake_server.files.uploads
    chat.service.backups.delete_originals(session_id, None)
    chat.run_until(lambda: fake_server.files.deletions == [old.id])
    assert chat.events.named("error_raised") == []


def test_the_gauge_plans_with_references_once_the_server_is_known(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start(start_chat)
    heavy = png(1200, 900) + b"\0" * 3_500_000
    for index in range(9):
        attach(chat, (f"scan{index}.png", heavy + bytes([index])))
        chat.send(f"Read scan {index}.")
    state = chat.service.current.gauge.measure()
    assert state is not None
    assert state.files_left_out == ()  # 31 MB of pictures, none left out: by reference


def _scope(chat: Chat) -> str:
    provider = chat.service.current.outgoing.provider()
    scope = getattr(provider, "files_scope", None)
    assert isinstance(scope, str)
    return scope


def test_whether_a_provider_has_the_files_api_is_as_isinstance_says() -> None:
    """Asked once a class (a protocol's isinstance reads each member, at every Enter)."""
    from app.llm.anthropic_provider import AnthropicProvider
    from app.llm.provider import FileStorage

    class NoFiles:
        """A provider without the Files API."""

    with_files = AnthropicProvider("sk-ant-api03-test-key-0123456789abcdef", "http://x")
    for provider in (with_files, NoFiles(), with_files, NoFiles(), None):
        expected = provider if isinstance(provider, FileStorage) else None
        assert uploads_module.file_storage(provider) is expected  # type: ignore[arg-type]
