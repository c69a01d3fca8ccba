"""Attachments through the service: prepared in a job, counted by the gauge, stored with
the message and sent as the API's blocks (checked in the fake server's log)."""

from __future__ import annotations

import base64
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.chat import attachments as attachments_module
from app.chat.attachments import MAX_COUNTED_BYTES, AttachmentPreparer, carrying_files
from app.core.attachments import PDF_TOKENS_PER_PAGE, Attachment
from app.core.errors import UserFacingError
from app.core.models import Message, Role
from app.store.attachments import AttachmentFiles, AttachmentStore
from tests.fakes.anthropic_server import COUNT_TOKENS_PATH, FakeAnthropicServer
from tests.fakes.file_blocks import FAKE_PDF_PAGE_TOKENS
from tests.fakes.sample_files import pdf, png
from tests.unit.chat.conftest import Chat

StartChat = Callable[..., Chat]


def prepare(chat: Chat, name: str, data: bytes) -> Attachment | UserFacingError:
    preparer = chat.service.attachments.preparer
    results: list[Attachment | UserFacingError] = []
    preparer.prepare(name, lambda: data, results.append, results.append)
    chat.run_until(lambda: bool(results))
    return results[0]


def last_content(fake_server: FakeAnthropicServer) -> list[dict[str, object]]:
    content = fake_server.turns()[-1].body["messages"][-1]["content"]
    assert isinstance(content, list)
    return content


def test_files_go_as_image_and_document_blocks_before_the_text(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    fake_server.files.mode = "off"  # a server without the Files API: base64 and text sources
    chat = start_chat()
    image, document = png(120, 80), pdf(2)
    picture = prepare(chat, "/home/ann/Pictures/chart.png", image)
    report = prepare(chat, "report.pdf", document)
    notes = prepare(chat, "notes.txt", b"the code is 4417")
    assert isinstance(picture, Attachment)
    assert isinstance(report, Attachment)
    assert isinstance(notes, Attachment)
    chat.service.current.outgoing.set([picture, report, notes])
    fake_server.add_reply("A chart, a report and a note.")
    chat.send("What are these?")

    body = fake_server.turns()[-1].body
    content = body["messages"][-1]["content"]
    assert [block["type"] for block in content] == ["image", "document", "document", "text"]
    assert content[0]["source"]["media_type"] == "image/png"
    assert base64.b64decode(content[0]["source"]["data"]) == image
    assert content[1]["source"]["media_type"] == "application/pdf"
    assert base64.b64decode(content[1]["source"]["data"]) == document
    assert content[1]["title"] == "report.pdf"
    assert content[2]["source"] == {
        "type": "text",
        "media_type": "text/plain",
        "data": "the code is 4417",
    }
    assert content[3]["text"].endswith(
        "What are these?\n\n[attached: chart.png, report.pdf, notes.txt]"
    )

    stored = chat.stored()[0]
    assert stored.content == "What are these?\n\n[attached: chart.png, report.pdf, notes.txt]"
    assert stored.token_estimate is not None
    assert stored.token_estimate >= picture.tokens + report.tokens + notes.tokens
    rows = AttachmentStore.open(chat.paths.database)
    try:
        assert rows.for_messages([stored.id]) == {stored.id: (picture, report, notes)}
    finally:
        rows.close()
    assert chat.service.current.outgoing.draft == ()


def test_the_files_are_sent_again_with_the_next_turn_after_a_restart(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    picture = prepare(chat, "cat.png", png(50, 50))
    assert isinstance(picture, Attachment)
    chat.service.current.outgoing.set([picture])
    fake_server.add_reply("A cat.")
    chat.send("")  # files alone: the names are the text
    assert chat.stored()[0].content == "[attached: cat.png]"
    session_id = chat.service.current.state.session_id
    assert session_id is not None
    chat.service.shutdown()

    again = start_chat()
    again.service.open_session(session_id)
    again.idle()
    fake_server.add_reply("Still a cat.")
    again.send("And now?")
    first_turn = fake_server.turns()[-1].body["messages"][0]["content"]
    assert first_turn[0]["type"] == "image"


def test_a_file_moved_after_attaching_is_still_sent(
    start_chat: StartChat, fake_server: FakeAnthropicServer, tmp_path: Path
) -> None:
    chat = start_chat()
    original = tmp_path / "scan.pdf"
    original.write_bytes(pdf(1))
    preparer = AttachmentPreparer(chat.service.runner, chat.paths.database, chat.service.counter)
    results: list[object] = []
    preparer.prepare(str(original), original.read_bytes, results.append, results.append)
    chat.run_until(lambda: bool(results))
    assert isinstance(results[0], Attachment)
    original.unlink()
    chat.service.current.outgoing.set([results[0]])
    fake_server.add_reply("Read it.")
    chat.send("Summarize")
    content = fake_server.turns()[-1].body["messages"][-1]["content"]
    assert content[0]["type"] == "document"
    assert AttachmentFiles(chat.paths.database).read(results[0].sha256) == pdf(1)


def test_the_gauge_counts_the_files_with_the_draft(start_chat: StartChat) -> None:
    chat = start_chat()
    empty = chat.service.current.gauge.measure("Look")
    picture = prepare(chat, "photo.png", png(1000, 1000))
    assert isinstance(picture, Attachment)
    chat.service.current.outgoing.set([picture])
    counted = chat.service.current.gauge.measure("Look")
    assert empty is not None
    assert counted is not None
    assert counted.breakdown.draft - empty.breakdown.draft >= picture.tokens


def test_a_file_claude_cannot_read_is_refused_with_words(start_chat: StartChat) -> None:
    chat = start_chat()
    refused = prepare(chat, "Budget.xlsx", b"PK\x03\x04")
    assert isinstance(refused, UserFacingError)
    assert refused.message == "Claude can't read .xlsx files — save it as CSV or PDF first."
    assert not (chat.paths.database.parent / "attachments").exists()


def test_a_kept_file_gone_bad_is_named_to_claude_instead_of_sent(
    start_chat: StartChat, fake_server: FakeAnthropicServer, caplog: pytest.LogCaptureFixture
) -> None:
    chat = start_chat()
    picture = prepare(chat, "cat.png", png(10, 10))
    assert isinstance(picture, Attachment)
    # Someone changed the archive's copy by hand: its bytes no longer match its name.
    AttachmentFiles(chat.paths.database).path(picture.sha256).write_bytes(b"GIF89a")
    chat.service.current.outgoing.set([picture])
    fake_server.add_reply("I can't see it.")
    with caplog.at_level(logging.WARNING, logger="app.chat.attachments"):
        chat.send("Look")
    content = last_content(fake_server)
    assert content[0] == {
        "type": "text",
        "text": "(The attached file cat.png is no longer available to Claude.)",
    }
    assert not chat.events.named("error_raised"), "the conversation goes on"
    assert "Sending cat.png without its file" in caplog.text


def test_a_pdf_is_counted_by_the_server_and_estimated_when_it_cannot_be(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    counted = prepare(chat, "two.pdf", pdf(2))
    assert isinstance(counted, Attachment)
    assert (counted.tokens, counted.estimated) == (2 * FAKE_PDF_PAGE_TOKENS, False)
    assert len(fake_server.requests_to(COUNT_TOKENS_PATH)) == 2  # with it, and without

    fake_server.add_error(529, path=COUNT_TOKENS_PATH, should_retry=False, times=2)
    guessed = prepare(chat, "three.pdf", pdf(3))
    assert isinstance(guessed, Attachment)
    assert (guessed.tokens, guessed.estimated) == (3 * PDF_TOKENS_PER_PAGE, True)


def test_a_reply_to_a_guessed_pdf_does_not_teach_the_calibration(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    fake_server.add_error(529, path=COUNT_TOKENS_PATH, should_retry=False, times=2)
    guessed = prepare(chat, "three.pdf", pdf(3))
    assert isinstance(guessed, Attachment) and guessed.estimated
    model = chat.service.current.state.model_id
    before = chat.service.calibrations.for_model(model)
    chat.service.current.outgoing.set([guessed])
    fake_server.add_reply("Three pages.")
    chat.send("Read it")
    assert chat.service.calibrations.for_model(model) == before


def test_a_large_pdf_keeps_its_estimate_so_attaching_never_stalls_the_window(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    chat = start_chat()
    large = pdf(2, padding=MAX_COUNTED_BYTES + 1)
    guessed = prepare(chat, "scan.pdf", large)
    assert isinstance(guessed, Attachment)
    assert (guessed.tokens, guessed.estimated) == (2 * PDF_TOKENS_PER_PAGE, True)
    assert fake_server.requests_to(COUNT_TOKENS_PATH) == []


@given(st.text(alphabet=st.sampled_from("ab] \n\t\u3000\x1c"), max_size=12))
def test_a_message_carries_files_as_its_stripped_text_ending_in_a_bracket_says(
    text: str,
) -> None:
    """The tail's scan copies no text, and finds what `rstrip().endswith("]")` found."""
    assert attachments_module._ends_with_bracket(text) == text.rstrip().endswith("]")


_ENDINGS = st.sampled_from(["a question", "look [attached: a.pdf]", "[x] \n", "]", "ok ]x", ""])
_ROLES = st.sampled_from([Role.USER, Role.ASSISTANT])
_SENT = datetime(2026, 1, 1, tzinfo=UTC)


def _message(number: int, role: Role, text: str) -> Message:
    return Message(id=number, session_id="s", seq=number, role=role, content=text, created_at=_SENT)


@given(st.data())
def test_the_carrying_scan_of_a_tail_is_the_whole_scan_however_the_tail_changed(
    data: st.DataObject,
) -> None:
    """Tails that go on from one scanned before (a turn), drop messages from the start or
    the end (a summary, a deleted reply), have a message edited (a new object), or start
    anew: the ids found are always those a scan of every message finds."""
    tails: list[list[Message]] = [[]]
    number = 0
    for _ in range(data.draw(st.integers(1, 8))):
        tail = list(data.draw(st.sampled_from(tails)))
        change = data.draw(st.sampled_from(["append", "cut start", "cut end", "edit", "new"]))
        if change == "new":
            tail = []
        elif change == "cut start":
            tail = tail[data.draw(st.integers(0, len(tail))) :]
        elif change == "cut end":
            tail = tail[: data.draw(st.integers(0, len(tail)))]
        elif change == "edit" and tail:
            at = data.draw(st.integers(0, len(tail) - 1))
            edited = tail[at]
            text = data.draw(_ENDINGS)
            tail[at] = edited.model_copy(update={"content": text})
        for role, text in data.draw(st.lists(st.tuples(_ROLES, _ENDINGS), max_size=4)):
            number += 1
            tail.append(_message(number, role, text))
        tails.append(tail)
        expected = [m.id for m in tail if m.role is Role.USER and m.content.rstrip().endswith("]")]
        assert carrying_files(tail) == expected
