"""AnthropicProvider's Files API (app.llm.provider.FileStorage) against the fake server,
through the real SDK: whether the server offers it, uploads, deletions, and the beta
header for a server that wants it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from app.core.errors import PermissionDeniedError, RequestStoppedError
from app.llm.anthropic_provider import FILES_BETA, AnthropicProvider
from app.llm.provider import CancelToken, ChatRequest, FileStorage, StreamCallbacks
from tests.fakes.anthropic_server import COUNT_TOKENS_PATH, MESSAGES_PATH, FakeAnthropicServer
from tests.fakes.files_api import FILES_PATH
from tests.fakes.sample_files import pdf, png
from tests.fakes.server_fixtures import SONNET_5_5

KEY = "sk-ant-provider-files-key"


@pytest.fixture
def server() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer(models=(SONNET_5_5,)) as server:
        yield server


@pytest.fixture
def provider(server: FakeAnthropicServer) -> Iterator[AnthropicProvider]:
    made = AnthropicProvider(KEY, server.base_url, max_retries=0)
    yield made
    made.close()


def referring(file_id: str) -> ChatRequest:
    content = [
        {"type": "image", "source": {"type": "file", "file_id": file_id}},
        {"type": "text", "text": "What is it?"},
    ]
    return ChatRequest(SONNET_5_5.id, [{"role": "user", "content": content}], 256)


def test_the_provider_is_a_file_storage_scoped_to_address_and_key(
    server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    assert isinstance(provider, FileStorage)
    scope = provider.files_scope
    assert scope.startswith(server.base_url + " key:") and KEY not in scope
    other = AnthropicProvider("sk-ant-another-key", server.base_url)
    assert other.files_scope != scope
    assert AnthropicProvider(KEY, server.base_url + "/").files_scope == scope


@pytest.mark.parametrize(("mode", "found"), [("ga", "ga"), ("beta", "beta"), ("off", "none")])
def test_whether_the_server_offers_files_is_asked_once(
    server: FakeAnthropicServer, provider: AnthropicProvider, mode: str, found: str
) -> None:
    server.files.mode = mode  # type: ignore[assignment]
    assert provider.files_support() == found
    assert provider.files_support() == found
    asked = [r for r in server.requests if r.path == FILES_PATH]
    assert len(asked) == (1 if mode == "ga" else 2)


def test_an_unreachable_server_is_not_taken_for_one_without_files(
    server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    server.add_error(500, path=FILES_PATH)
    assert provider.files_support() is None
    assert provider.files_support() == "ga"  # asked again next time


def test_upload_refer_and_delete(server: FakeAnthropicServer, provider: AnthropicProvider) -> None:
    file_id = provider.upload_file("Screenshot 12:30?.png", png(40, 30), "image/png")
    (stored,) = server.files.stored()
    assert (stored.id, stored.filename, stored.mime_type) == (
        file_id,
        "Screenshot 12_30_.png",
        "image/png",
    )
    assert provider.count_tokens(referring(file_id)) > 0
    result = provider.stream_reply(referring(file_id), StreamCallbacks(), CancelToken())
    assert result.text
    assert provider.file_exists(file_id) is True
    provider.delete_file(file_id)
    assert provider.file_exists(file_id) is False
    provider.delete_file(file_id)  # gone already: deleted all the same


def test_a_server_in_beta_gets_the_header_where_files_are_used(
    server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    server.files.mode = "beta"
    assert provider.files_support() == "beta"
    file_id = provider.upload_file("report.pdf", pdf(2), "application/pdf")
    request = ChatRequest(
        SONNET_5_5.id,
        [
            {
                "role": "user",
                "content": [
                    {"type": "document", "source": {"type": "file", "file_id": file_id}},
                    {"type": "text", "text": "Summarize."},
                ],
            }
        ],
        256,
    )
    provider.count_tokens(request)
    provider.stream_reply(request, StreamCallbacks(), CancelToken())
    provider.stream_reply(
        ChatRequest(SONNET_5_5.id, [{"role": "user", "content": "No files."}], 256),
        StreamCallbacks(),
        CancelToken(),
    )
    counted = server.requests_to(COUNT_TOKENS_PATH)[-1]
    with_file, without = server.requests_to(MESSAGES_PATH)
    assert FILES_BETA in counted.headers["anthropic-beta"]
    assert FILES_BETA in with_file.headers["anthropic-beta"]
    assert FILES_BETA not in without.headers.get("anthropic-beta", "")


def test_a_refused_upload_is_an_api_error_in_words(
    server: FakeAnthropicServer, provider: AnthropicProvider
) -> None:
    server.files.storage_limit = 10
    with pytest.raises(PermissionDeniedError):
        provider.upload_file("chart.png", png(40, 30), "image/png")


def test_stop_ends_an_upload(server: FakeAnthropicServer, provider: AnthropicProvider) -> None:
    cancel = CancelToken()
    cancel.cancel()
    with pytest.raises(RequestStoppedError):
        provider.upload_file("chart.png", png(40, 30), "image/png", cancel=cancel)
    assert server.files.stored() == []
