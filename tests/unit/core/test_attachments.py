"""What Claude can be given, what it costs and how it is sent (app/core/attachments.py)."""

from __future__ import annotations

import base64
import re

import pytest

from app.core.attachments import (
    MAX_IMAGE_BYTES,
    MAX_PDF_BYTES,
    PDF_TOKENS_PER_PAGE,
    AttachmentKind,
    AttachmentRefusedError,
    base64_size,
    content_block,
    describe,
    image_tokens,
    pdf_pages,
    split_attachment_line,
    with_attachment_line,
)
from tests.fakes.sample_files import (
    gif_header,
    jpeg_header,
    pdf,
    pdf_in_object_streams,
    png,
    webp_header,
)

SHA = "0" * 64


def count(text: str) -> int:
    return len(text.split())


@pytest.mark.parametrize(
    ("name", "data", "media_type"),
    [
        ("a.png", png(640, 480), "image/png"),
        ("a.gif", gif_header(640, 480), "image/gif"),
        ("a.jpg", jpeg_header(640, 480), "image/jpeg"),
        ("a.webp", webp_header(640, 480), "image/webp"),
    ],
)
def test_each_image_format_is_read_with_its_size(name: str, data: bytes, media_type: str) -> None:
    attachment = describe(name, data, SHA, count)
    assert attachment.kind is AttachmentKind.IMAGE
    assert attachment.media_type == media_type
    assert (attachment.width, attachment.height) == (640, 480)
    assert attachment.tokens == round(640 * 480 / 750)


def test_an_image_is_known_by_its_bytes_whatever_it_is_called() -> None:
    attachment = describe("screenshot", png(10, 10), SHA, count)
    assert attachment.media_type == "image/png"


def test_image_tokens_follow_the_documented_examples() -> None:
    # https://docs.anthropic.com/en/docs/build-with-claude/vision: 200x200 ≈ 54,
    # 1000x1000 ≈ 1334, 1092x1092 ≈ 1590.
    assert image_tokens(200, 200) == 54
    assert image_tokens(1000, 1000) == 1334
    assert abs(image_tokens(1092, 1092) - 1590) <= 1


def test_a_large_image_is_counted_after_the_apis_resize() -> None:
    # Scaled down (aspect kept) to at most ~1,600 tokens and a 1568 px long edge.
    assert 1500 <= image_tokens(4000, 3000) <= 1600
    assert image_tokens(8000, 100) <= 1568 * 20 / 750 + 1


def test_a_word_file_is_refused_with_what_to_do() -> None:
    with pytest.raises(AttachmentRefusedError) as refused:
        describe("Report.docx", b"PK\x03\x04 not really", SHA, count)
    assert refused.value.message == "Claude can't read .docx files — save it as PDF first."


def test_an_unknown_binary_is_refused_naming_what_can_be_attached() -> None:
    with pytest.raises(AttachmentRefusedError) as refused:
        describe("tool.exe", b"MZ\x00\x00\x90", SHA, count)
    assert "Claude can't read .exe files" in refused.value.message
    assert "PDFs" in refused.value.message


def test_an_image_over_five_megabytes_is_refused_with_its_size() -> None:
    data = png(20, 20) + b"\x00" * MAX_IMAGE_BYTES
    with pytest.raises(AttachmentRefusedError) as refused:
        describe("big.png", data, SHA, count)
    assert "“big.png” is 5.0 MB" in refused.value.message
    assert "5 MB once encoded to send" in refused.value.message


def test_the_five_megabytes_are_measured_on_what_is_sent_not_on_the_file() -> None:
    # vision: 5 MB an image as sent, base64 (4 bytes for every 3): a 4.6 MB PNG is
    # 6.1 MB once encoded, and the API refuses it.
    data = png(20, 20) + b"\x00" * (4_600_000 - len(png(20, 20)))
    with pytest.raises(AttachmentRefusedError, match="once encoded to send"):
        describe("photo.png", data, SHA, count)
    fits = png(20, 20) + b"\x00" * (MAX_IMAGE_BYTES * 3 // 4 - len(png(20, 20)))
    assert base64_size(len(fits)) <= MAX_IMAGE_BYTES
    assert describe("photo.png", fits, SHA, count).size == len(fits)


def test_an_image_over_8000_pixels_is_refused() -> None:
    with pytest.raises(AttachmentRefusedError, match="9000 × 100 pixels"):
        describe("wide.png", png(9000, 100), SHA, count)


def test_a_file_called_png_that_is_not_one_is_refused() -> None:
    with pytest.raises(AttachmentRefusedError, match="damaged"):
        describe("fake.png", b"hello", SHA, count)


def test_a_pdf_is_counted_per_page_as_an_estimate() -> None:
    attachment = describe("notes.pdf", pdf(3), SHA, count)
    assert attachment.kind is AttachmentKind.PDF
    assert attachment.pages == 3
    assert attachment.tokens == 3 * PDF_TOKENS_PER_PAGE
    assert attachment.estimated


def test_pdf_pages_in_compressed_object_streams_are_counted_by_a_pdf_reader() -> None:
    # PDF 1.5 object streams hide every page object from a scan of the raw bytes.
    data = pdf_in_object_streams(60)
    assert re.search(rb"/Type\s*/Page\b", data) is None
    assert pdf_pages(data) == 60
    attachment = describe("report.pdf", data, SHA, count)
    assert attachment.pages == 60
    assert attachment.tokens == 60 * PDF_TOKENS_PER_PAGE


def test_a_pdf_of_more_than_100_pages_in_object_streams_is_refused() -> None:
    with pytest.raises(AttachmentRefusedError, match="has 120 pages"):
        describe("book.pdf", pdf_in_object_streams(120), SHA, count)


def test_a_pdf_whose_pages_cannot_be_read_is_refused_as_damaged() -> None:
    with pytest.raises(AttachmentRefusedError, match="looks damaged"):
        describe("broken.pdf", b"%PDF-1.4\nnothing here\n", SHA, count)


def test_a_pdf_of_more_than_100_pages_is_refused() -> None:
    with pytest.raises(AttachmentRefusedError) as refused:
        describe("book.pdf", pdf(101), SHA, count)
    assert "has 101 pages" in refused.value.message
    assert "at most 100 pages" in refused.value.message


def test_a_pdf_too_large_for_a_request_is_refused() -> None:
    with pytest.raises(AttachmentRefusedError, match="Split it"):
        describe("scan.pdf", pdf(1, padding=MAX_PDF_BYTES + 1), SHA, count)


def test_a_password_protected_pdf_is_refused() -> None:
    data = pdf(1).replace(b"trailer\n<<", b"trailer\n<< /Encrypt 9 0 R")
    with pytest.raises(AttachmentRefusedError, match="password"):
        describe("secret.pdf", data, SHA, count)


def test_a_text_file_is_counted_by_the_tokenizer() -> None:
    attachment = describe("notes.md", b"one two three", SHA, count)
    assert attachment.kind is AttachmentKind.TEXT
    assert attachment.tokens > 3
    assert not attachment.estimated


def test_a_text_file_that_is_not_utf8_is_refused() -> None:
    with pytest.raises(AttachmentRefusedError, match="not UTF-8"):
        describe("latin.txt", "café".encode("latin-1"), SHA, count)


def test_blocks_are_the_apis_image_and_document_blocks() -> None:
    image = describe("a.png", png(4, 4), SHA, count)
    block = content_block(image, png(4, 4))
    assert block["type"] == "image"
    assert block["source"]["type"] == "base64"
    assert block["source"]["media_type"] == "image/png"
    assert base64.b64decode(block["source"]["data"]) == png(4, 4)

    document = content_block(describe("b.pdf", pdf(1), SHA, count), pdf(1))
    assert document["type"] == "document"
    assert document["source"]["media_type"] == "application/pdf"
    assert document["title"] == "b.pdf"

    text = content_block(describe("c.txt", b"\xef\xbb\xbfhello", SHA, count), b"\xef\xbb\xbfhello")
    assert text["source"] == {"type": "text", "media_type": "text/plain", "data": "hello"}


def test_the_attachment_line_names_the_files_and_splits_back() -> None:
    files = [describe("a.pdf", pdf(1), SHA, count), describe("b.png", png(2, 2), SHA, count)]
    stored = with_attachment_line("What is in these?", files)
    assert stored == "What is in these?\n\n[attached: a.pdf, b.png]"
    assert with_attachment_line(stored, files) == stored
    assert split_attachment_line(stored) == ("What is in these?", ["a.pdf", "b.png"])
    assert with_attachment_line("", files) == "[attached: a.pdf, b.png]"
    assert split_attachment_line("plain words") == ("plain words", [])


def test_the_summarizers_transcript_names_the_files_and_counts_only_the_text() -> None:
    from datetime import UTC, datetime

    from app.core.models import Message, Role
    from app.core.summarizer_transcript import TranscriptBuilder
    from app.core.tokens import default_counter

    counter = default_counter()
    counter.load()
    stored = Message(
        id=1,
        session_id="s",
        seq=1,
        role=Role.USER,
        content="Check the totals\n\n[attached: report.pdf]",
        created_at=datetime(2026, 3, 5, 14, 0, tzinfo=UTC),
        token_estimate=24_000,  # the PDF's tokens with the text's
    )
    block = TranscriptBuilder(counter, 10_000, UTC).message_block(stored)
    assert "[attached: report.pdf]" in block.content
    assert block.tokens < 50
