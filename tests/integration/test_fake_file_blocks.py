"""The fake server takes image and document blocks as the API documents them, through
the real SDK, and refuses what the API refuses (tests/fakes/file_blocks.py)."""

from __future__ import annotations

import base64
from typing import Any

import anthropic
import pytest

from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.sample_files import pdf, png

MODEL = "claude-test-model"


def b64(data: bytes) -> str:
    return base64.standard_b64encode(data).decode("ascii")


def ask(server: FakeAnthropicServer, blocks: list[dict[str, Any]]) -> anthropic.types.Message:
    client = anthropic.Anthropic(api_key="sk-ant-fake", base_url=server.base_url, max_retries=0)
    messages: list[Any] = [{"role": "user", "content": [*blocks, {"type": "text", "text": "?"}]}]
    return client.messages.create(model=MODEL, max_tokens=50, messages=messages)


def test_images_pdfs_and_text_documents_are_taken_and_counted(
    fake_server: FakeAnthropicServer,
) -> None:
    fake_server.add_reply("Seen.")
    plain = ask(fake_server, [{"type": "text", "text": "x"}])
    fake_server.add_reply("Seen.")
    image = png(750, 100)
    message = ask(
        fake_server,
        [
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": b64(image)},
            },
            {
                "type": "document",
                "source": {"type": "base64", "media_type": "application/pdf", "data": b64(pdf(2))},
                "title": "a.pdf",
            },
            {
                "type": "document",
                "source": {"type": "text", "media_type": "text/plain", "data": "hi"},
            },
        ],
    )
    assert message.content[0].type == "text"
    # 750×100 px ≈ 100 tokens; two pages; the text document.
    assert message.usage.input_tokens - plain.usage.input_tokens >= 100 + 2 * 1_500


@pytest.mark.parametrize(
    ("block", "words"),
    [
        (
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/bmp", "data": "AAAA"},
            },
            "media_type",
        ),
        (
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/jpeg", "data": b64(png(2, 2))},
            },
            "does not match the provided media type",
        ),
        (
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": "not base64!"},
            },
            "base64",
        ),
        (
            {
                "type": "document",
                "source": {
                    "type": "base64",
                    "media_type": "application/pdf",
                    "data": b64(pdf(101)),
                },
            },
            "100 PDF pages",
        ),
        (
            {
                "type": "document",
                "source": {"type": "base64", "media_type": "text/plain", "data": b64(b"x")},
            },
            "application/pdf",
        ),
    ],
)
def test_a_block_the_api_refuses_is_a_400(
    fake_server: FakeAnthropicServer, block: dict[str, Any], words: str
) -> None:
    with pytest.raises(anthropic.BadRequestError) as refused:
        ask(fake_server, [block])
    assert words in str(refused.value)
