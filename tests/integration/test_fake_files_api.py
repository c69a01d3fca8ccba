"""The fake's Files API (tests/fakes/files_api.py) through the real SDK: what it answers as
the documentation says, and what it refuses — an unknown `file_id`, another workspace's
file, a file whose type does not fit its block, a bad filename, a full store, a call
without the beta header on a server that wants it — and that uploaded files count toward
a request's pages and pictures as any other."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import pytest

from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.files_api import FILES_BETA
from tests.fakes.sample_files import pdf, pdf_in_object_streams, png
from tests.fakes.server_fixtures import SONNET_5_5

KEY = "sk-ant-fake-test-key"


@pytest.fixture
def server() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer(models=(SONNET_5_5,)) as server:
        yield server


@pytest.fixture
def sdk(server: FakeAnthropicServer) -> Iterator[anthropic.Anthropic]:
    client = anthropic.Anthropic(api_key=KEY, base_url=server.base_url, max_retries=0)
    yield client
    client.close()


def refer(kind: str, file_id: str) -> dict[str, Any]:
    return {"type": kind, "source": {"type": "file", "file_id": file_id}}


def ask(
    sdk: anthropic.Anthropic, *blocks: dict[str, Any], **options: Any
) -> anthropic.types.Message:
    content = [*blocks, {"type": "text", "text": "Look."}]
    return sdk.messages.create(
        model=SONNET_5_5.id,
        max_tokens=100,
        messages=[{"role": "user", "content": content}],
        **options,
    )


def test_upload_list_metadata_and_delete_as_the_sdk_reads_them(sdk: anthropic.Anthropic) -> None:
    first = sdk.files.upload(file=("report.pdf", pdf(2), "application/pdf"))
    second = sdk.files.upload(file=("chart.png", png(20, 10), "image/png"))
    assert (first.type, first.filename, first.mime_type) == (
        "file",
        "report.pdf",
        "application/pdf",
    )
    assert first.size_bytes == len(pdf(2)) and first.downloadable is False
    assert [f.id for f in sdk.files.list()] == [second.id, first.id]  # newest first
    page = sdk.files.list(limit=1)
    assert [f.id for f in page.data] == [second.id] and page.next_page is not None
    assert [f.id for f in page.get_next_page().data] == [first.id]
    assert sdk.files.retrieve_metadata(first.id).filename == "report.pdf"
    deleted = sdk.files.delete(first.id)
    assert (deleted.id, deleted.type) == (first.id, "file_deleted")
    with pytest.raises(anthropic.NotFoundError):
        sdk.files.retrieve_metadata(first.id)


def test_a_request_refers_to_an_uploaded_file_and_pays_its_tokens(
    sdk: anthropic.Anthropic,
) -> None:
    uploaded = sdk.files.upload(file=("report.pdf", pdf(3), "application/pdf"))
    plain = ask(sdk)
    with_file = ask(sdk, refer("document", uploaded.id))
    assert with_file.usage.input_tokens > plain.usage.input_tokens
    counted = sdk.messages.count_tokens(
        model=SONNET_5_5.id,
        messages=[
            {
                "role": "user",
                "content": [refer("document", uploaded.id), {"type": "text", "text": "Look."}],
            }
        ],
    )
    assert counted.input_tokens == with_file.usage.input_tokens


def test_an_unknown_or_deleted_file_is_a_404(sdk: anthropic.Anthropic) -> None:
    uploaded = sdk.files.upload(file=("chart.png", png(20, 10), "image/png"))
    sdk.files.delete(uploaded.id)
    with pytest.raises(anthropic.NotFoundError) as raised:
        ask(sdk, refer("image", uploaded.id))
    assert raised.value.type == "not_found_error"


def test_another_workspaces_key_does_not_find_the_file(
    server: FakeAnthropicServer, sdk: anthropic.Anthropic
) -> None:
    server.files.workspaces = {"sk-ant-other": "elsewhere"}
    uploaded = sdk.files.upload(file=("chart.png", png(20, 10), "image/png"))
    other = anthropic.Anthropic(api_key="sk-ant-other", base_url=server.base_url, max_retries=0)
    with pytest.raises(anthropic.NotFoundError):
        other.files.retrieve_metadata(uploaded.id)
    with pytest.raises(anthropic.NotFoundError):
        ask(other, refer("image", uploaded.id))
    other.close()


def test_a_file_in_the_wrong_kind_of_block_is_refused(sdk: anthropic.Anthropic) -> None:
    picture = sdk.files.upload(file=("chart.png", png(20, 10), "image/png"))
    with pytest.raises(anthropic.BadRequestError, match="does not match"):
        ask(sdk, refer("document", picture.id))


def test_a_bad_filename_and_a_full_store_are_refused(
    server: FakeAnthropicServer, sdk: anthropic.Anthropic
) -> None:
    with pytest.raises(anthropic.BadRequestError, match="Invalid filename"):
        sdk.files.upload(file=("12:30 scan?.png", png(20, 10), "image/png"))
    server.files.storage_limit = 10
    with pytest.raises(anthropic.PermissionDeniedError):
        sdk.files.upload(file=("chart.png", png(20, 10), "image/png"))


def test_a_server_in_beta_refuses_a_call_without_the_header(
    server: FakeAnthropicServer, sdk: anthropic.Anthropic
) -> None:
    server.files.mode = "beta"
    with pytest.raises(anthropic.BadRequestError, match=FILES_BETA):
        sdk.files.list()
    beta = {"anthropic-beta": FILES_BETA}
    uploaded = sdk.files.upload(file=("chart.png", png(20, 10), "image/png"), extra_headers=beta)
    with pytest.raises(anthropic.BadRequestError, match=FILES_BETA):
        ask(sdk, refer("image", uploaded.id))
    assert ask(sdk, refer("image", uploaded.id), extra_headers=beta).content


def test_a_server_without_the_files_api_has_no_such_route_nor_source(
    server: FakeAnthropicServer, sdk: anthropic.Anthropic
) -> None:
    server.files.mode = "off"
    with pytest.raises(anthropic.NotFoundError):
        sdk.files.list()
    with pytest.raises(anthropic.BadRequestError, match=r"source\.type"):
        ask(sdk, refer("image", "file_011CNha8iCJcU1wXNR6q4V8w"))


def test_uploaded_pdfs_count_toward_the_requests_100_pages(sdk: anthropic.Anthropic) -> None:
    first = sdk.files.upload(file=("a.pdf", pdf_in_object_streams(60), "application/pdf"))
    second = sdk.files.upload(file=("b.pdf", pdf_in_object_streams(60), "application/pdf"))
    assert ask(sdk, refer("document", first.id)).content
    with pytest.raises(anthropic.BadRequestError, match="100 PDF pages"):
        ask(sdk, refer("document", first.id), refer("document", second.id))


def test_uploaded_pictures_count_toward_the_many_pictures_rule(sdk: anthropic.Anthropic) -> None:
    large = sdk.files.upload(file=("large.png", png(2400, 1000), "image/png"))
    small = [
        sdk.files.upload(file=(f"s{index}.png", png(20, 10 + index), "image/png"))
        for index in range(20)
    ]
    assert ask(sdk, refer("image", large.id), *(refer("image", f.id) for f in small[:19])).content
    with pytest.raises(anthropic.BadRequestError, match="2000 pixels"):
        ask(sdk, refer("image", large.id), *(refer("image", f.id) for f in small))
