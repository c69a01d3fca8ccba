"""The fake refuses what the API refuses of a whole request's files (tests/fakes/file_blocks.py),
through the real SDK: 100 PDF pages in all, 100 or 600 images by the model's window, past 20
images none over 2000×2000 px, and 413 over 32 MB."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import anthropic
import pytest

from app.core.catalog import ModelInfo
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.sample_files import pdf_in_object_streams, png
from tests.fakes.server_fixtures import HAIKU_4_5 as SMALL
from tests.fakes.server_fixtures import SONNET_5_5 as WIDE

KEY = "sk-ant-fake-test-key"


@pytest.fixture
def sdk() -> Iterator[anthropic.Anthropic]:
    with FakeAnthropicServer(models=(WIDE, SMALL)) as server:
        client = anthropic.Anthropic(api_key=KEY, base_url=server.base_url, max_retries=0)
        yield client
        client.close()


def document(data: bytes) -> dict[str, Any]:
    encoded = base64.standard_b64encode(data).decode()
    return {
        "type": "document",
        "source": {"type": "base64", "media_type": "application/pdf", "data": encoded},
    }


def image(data: bytes) -> dict[str, Any]:
    encoded = base64.standard_b64encode(data).decode()
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": encoded},
    }


def turns(*files: list[dict[str, Any]]) -> list[Any]:
    """A conversation whose user turns carry `files`, with Claude's answers between them."""
    messages: list[Any] = []
    for blocks in files:
        if messages:
            messages.append({"role": "assistant", "content": "Seen."})
        messages.append({"role": "user", "content": [*blocks, {"type": "text", "text": "Look."}]})
    return messages


def send(sdk: anthropic.Anthropic, messages: list[Any], model: ModelInfo = WIDE) -> None:
    sdk.messages.create(model=model.id, max_tokens=100, messages=messages)


def test_two_pdfs_of_60_pages_in_one_request_are_refused_even_in_object_streams(
    sdk: anthropic.Anthropic,
) -> None:
    # pdf-support: 100 pages for the whole request; the pages sit in object streams.
    one = document(pdf_in_object_streams(60))
    send(sdk, turns([one]))
    with pytest.raises(anthropic.BadRequestError, match="100 PDF pages"):
        send(sdk, turns([one], [document(pdf_in_object_streams(60))]))


def test_more_than_20_images_may_not_be_over_2000_pixels(sdk: anthropic.Anthropic) -> None:
    # vision: more than 20 images in a request: each at most 2000×2000 px.
    large = image(png(2100, 50))
    send(sdk, turns(*([large] for _ in range(20))))
    with pytest.raises(anthropic.BadRequestError, match="2000 pixels"):
        send(sdk, turns(*([large] for _ in range(21))))
    small = image(png(2000, 50))
    send(sdk, turns(*([small] for _ in range(21))))


def test_image_count_follows_the_model_window(sdk: anthropic.Anthropic) -> None:
    # vision: 600 images a request, 100 on models with a 200k-token window.
    tiny = image(png(8, 8))
    send(sdk, turns([tiny] * 101), WIDE)
    with pytest.raises(anthropic.BadRequestError, match="101 > 100"):
        send(sdk, turns([tiny] * 101), SMALL)
    with pytest.raises(anthropic.BadRequestError, match="601 > 600"):
        send(sdk, turns([tiny] * 300, [tiny] * 301), WIDE)


def test_a_body_over_32_mb_is_413_request_too_large(sdk: anthropic.Anthropic) -> None:
    # errors: 413 request_too_large over 32 MB, before the API looks at the request.
    padding = "x" * 32_000_001
    with pytest.raises(anthropic.APIStatusError) as refused:
        send(sdk, [{"role": "user", "content": padding}])
    assert refused.value.status_code == 413
    assert isinstance(refused.value.body, dict)
    assert refused.value.body["error"]["type"] == "request_too_large"
