"""A conversation's files kept inside the API's limits for a whole request, through the
service against the strict fake (tests/fakes/file_blocks.py): the oldest files go as a
one-line note, the gauge names them, and a message whose own files break a limit is
refused before it is sent."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from app.core.attachments import Attachment
from app.core.errors import RequestTooLargeError, UserFacingError
from app.core.file_limits import MANY_IMAGES, MAX_SIDE_WITH_MANY, file_bytes_budget
from app.core.settings import AppSettings
from tests.fakes.anthropic_server import MESSAGES_PATH, FakeAnthropicServer
from tests.fakes.file_blocks import MAX_PDF_PAGES, pdf_pages
from tests.fakes.sample_files import pdf_in_object_streams, png
from tests.fakes.server_fixtures import SONNET_5_5
from tests.unit.chat.conftest import Chat

StartChat = Callable[..., Chat]


@pytest.fixture
def fake_server() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer(models=(SONNET_5_5,)) as server:
        yield server


def start(start_chat: StartChat) -> Chat:
    return start_chat(settings=AppSettings().model_copy(update={"model": SONNET_5_5.id}))


def attach(chat: Chat, *files: tuple[str, bytes]) -> list[Attachment]:
    preparer = chat.service.attachments.preparer
    prepared: list[Attachment] = []
    for name, data in files:
        results: list[Attachment | UserFacingError] = []
        preparer.prepare(name, lambda data=data: data, results.append, results.append)
        chat.run_until(lambda results=results: bool(results))
        assert isinstance(results[0], Attachment), results[0]
        prepared.append(results[0])
    chat.service.current.outgoing.set(prepared)
    return prepared


def photo(width: int, height: int, size: int) -> bytes:
    """A PNG of `width` × `height` px made `size` bytes long (a photo's weight)."""
    head = png(width, height)
    return head + b"\0" * max(0, size - len(head))


def files_in(
    body: dict[str, Any], server: FakeAnthropicServer
) -> tuple[int, list[tuple[int, int]], int]:
    """PDF pages, image sizes and base64 bytes of a request's files, those it sends as
    base64 and those it refers to by `file_id` (read from the fake's uploads)."""
    import base64

    pages, images, encoded = 0, [], 0
    for message in body["messages"]:
        content = message["content"]
        for block in content if isinstance(content, list) else []:
            source = block.get("source", {})
            if source.get("type") == "file":
                found = server.files.lookup(source["file_id"])
                assert found is not None
                data = found[1]
            elif source.get("type") == "base64":
                encoded += len(source["data"])
                data = base64.b64decode(source["data"])
            else:
                continue
            if block["type"] == "document":
                pages += pdf_pages(data)
            else:
                images.append(
                    (int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big"))
                )
    return pages, images, encoded


def notes_in(body: dict[str, Any]) -> list[str]:
    return [
        block["text"]
        for message in body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "text" and block["text"].startswith("[earlier file")
    ]


def test_two_60_page_pdfs_and_25_large_pictures_stay_inside_the_limits(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start(start_chat)
    attach(chat, ("report.pdf", pdf_in_object_streams(60)))
    chat.send("Summarize the report.")
    attach(chat, ("annex.pdf", pdf_in_object_streams(60)))
    chat.send("And the annex?")
    for index in range(25):
        attach(chat, (f"site{index:02}.png", photo(3000, 2000, 200_000)))
        chat.send(f"What is in picture {index}?")

    assert chat.events.named("error_raised") == []
    requests = fake_server.turns()
    assert len(requests) == 27  # the strict fake accepted every one
    for request in requests:
        pages, images, encoded = files_in(request.body, fake_server)
        assert pages <= MAX_PDF_PAGES
        assert len(images) <= MANY_IMAGES or max(max(i) for i in images) <= MAX_SIDE_WITH_MANY
        assert encoded <= file_bytes_budget(SONNET_5_5)
    # From the second PDF on, the first is named in a note where it was.
    assert notes_in(requests[1].body) == ["[earlier file: report.pdf — not re-sent]"]
    last = requests[-1].body
    pages, images, _ = files_in(last, fake_server)
    assert pages == 0 or pages == 60
    assert len(images) <= MANY_IMAGES
    noted = " ".join(notes_in(last))
    assert "report.pdf" in noted and "site00.png" in noted and "site24.png" not in noted
    # The user is told: the gauge names what is not re-sent.
    state = chat.service.current.gauge.measure()
    assert state is not None
    left = [f.name for f in state.files_left_out]
    assert "report.pdf" in left and "site00.png" in left and "site24.png" not in left
    assert all(f"[earlier file: {name} — not re-sent]" in noted or name in noted for name in left)
    for reply in chat.stored()[1::2]:
        assert reply.status.value == "complete"


def test_pictures_heavy_in_bytes_keep_the_request_under_32_mb(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    fake_server.files.mode = "off"  # a server without the Files API: every file as base64
    chat = start(start_chat)
    for index in range(9):
        attach(chat, (f"scan{index}.png", photo(1200, 900, 3_500_000)))
        chat.send(f"Read scan {index}.")
    assert chat.events.named("error_raised") == []
    for request in fake_server.requests_to(MESSAGES_PATH):
        assert files_in(request.body, fake_server)[2] <= file_bytes_budget(SONNET_5_5)
    assert "scan0.png" in " ".join(notes_in(fake_server.turns()[-1].body))


def test_pictures_heavy_in_bytes_all_go_by_reference_where_files_are_uploaded(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start(start_chat)
    for index in range(9):
        attach(chat, (f"scan{index}.png", photo(1200, 900 + index, 3_500_000)))
        chat.send(f"Read scan {index}.")
    assert chat.events.named("error_raised") == []
    last = fake_server.turns()[-1]
    # 31.5 MB of pictures, none left out: their bytes are not in the body any more.
    assert notes_in(last.body) == []
    assert len(files_in(last.body, fake_server)[1]) == 9
    assert int(last.headers["content-length"]) < 100_000
    assert len(fake_server.files.uploads) == 9  # each uploaded once, not once a turn


def test_a_message_whose_own_files_break_a_limit_is_refused_before_sending(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start(start_chat)
    attach(chat, ("a.pdf", pdf_in_object_streams(60)), ("b.pdf", pdf_in_object_streams(60)))
    assert not chat.service.send("Compare them.")
    ((error,),) = chat.events.named("error_raised")
    assert "“b.pdf”" in error.message and "100 pages" in error.message
    assert fake_server.requests_to(MESSAGES_PATH) == []
    assert len(chat.service.current.outgoing.draft) == 2  # nothing lost: still attached


def test_a_413_for_a_request_with_files_names_the_largest_file(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    fake_server.files.mode = "off"  # the files are in the body: base64
    chat = start(start_chat)
    attach(chat, ("small.png", png(10, 10)), ("big.png", photo(500, 500, 1_000_000)))
    fake_server.add_error(413, "Request exceeds the maximum allowed number of bytes.")
    chat.send("Look at these.")
    ((error,),) = chat.events.named("error_raised")
    assert isinstance(error, RequestTooLargeError)
    assert "“big.png”" in error.message and "32 MB" in error.message
    assert "Summarize earlier" not in error.message
