"""The provider protocol: what the rest of Cairn needs from a model API.

Everything here is called from worker threads, never from the GUI thread.
Every failure is raised as an `app.core.errors.ApiError` subclass with plain
words; SDK exceptions never leak out of a provider.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias, runtime_checkable

from app.core.catalog import ModelInfo
from app.core.conversation import ApiMessage
from app.core.models import Usage


@dataclass(frozen=True)
class ChatRequest:
    """One request to the Messages API."""

    model: str
    messages: Sequence[ApiMessage]
    max_tokens: int
    # A plain string, or a list of text blocks (with cache_control) as the API takes.
    system: str | list[dict[str, Any]] = ""
    # Client tools offered, and how Claude may use them (`{"type": "none"}`: answer now).
    # https://platform.claude.com/docs/en/agents-and-tools/tool-use/implement-tool-use
    tools: Sequence[dict[str, Any]] = ()
    tool_choice: dict[str, Any] | None = None
    # This reply's tool turns, sent after `messages`: the assistant's content blocks
    # exactly as they came (thinking, redacted_thinking, text, tool_use, in order) and
    # the user's tool_result blocks, alternating.
    tool_turns: Sequence[dict[str, Any]] = ()
    # `thinking` and `output_config` as the API takes them (app.core.thinking); None
    # leaves the model's default.
    thinking: dict[str, Any] | None = None
    output_config: dict[str, Any] | None = None


@dataclass(frozen=True)
class Refusal:
    """Why Claude declined, from the message's `stop_details` (the SDK's
    `RefusalStopDetails`): its policy category and explanation, each None when the API
    gives none (https://platform.claude.com/docs/build-with-claude/handling-stop-reasons)."""

    category: str | None = None
    explanation: str | None = None


@dataclass(frozen=True)
class ReplyResult:
    """How a streamed reply ended."""

    text: str
    stop_reason: str | None
    usage: Usage | None
    model: str
    cancelled: bool = False
    # With `stop_reason` "tool_use": the calls to run, and the content blocks to send
    # back as the assistant's turn before their results, every one as it came.
    tool_calls: tuple[ToolCall, ...] = ()
    content: tuple[dict[str, Any], ...] = ()
    # The thinking shown to the user (summarized, or a progress note between tool
    # calls): the text of the reply's thinking blocks; "" when there is none to show.
    thinking: str = ""
    # How long Claude thought, from its first thinking block to its first other block.
    thinking_seconds: float = 0.0
    # With `stop_reason` "refusal": what `stop_details` said.
    refusal: Refusal | None = None
    # The input tokens of the reply's first request, when `usage` adds up several (a tool
    # loop's rounds): what calibration compares with the estimate; None: `usage`'s own.
    first_input_tokens: int | None = None


@dataclass(frozen=True)
class ToolCall:
    """A tool_use block of a reply: the id its tool_result must name, the tool, its input."""

    id: str
    name: str
    input: dict[str, Any]


RetryCallback: TypeAlias = Callable[[int, float | None], None]
"""Told before a provider waits to retry a failed request: the attempt that is
coming (2 for the first retry) and the seconds until it (None when not known)."""


class CancelToken:
    """A flag set from any thread; the provider checks it and aborts the stream.

    `on_cancel` callbacks run on the cancelling thread, so a provider can shut
    the connection down to unblock a read that is waiting on a slow server.
    """

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], None]] = []

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def cancel(self) -> None:
        with self._lock:
            if self._event.is_set():
                return
            self._event.set()
            callbacks = list(self._callbacks)
        for callback in callbacks:
            callback()

    def on_cancel(self, callback: Callable[[], None]) -> None:
        with self._lock:
            if not self._event.is_set():
                self._callbacks.append(callback)
                return
        callback()

    def wait(self, seconds: float) -> bool:
        """Sleep up to `seconds`, waking at once on cancel; True if cancelled."""
        return self._event.wait(seconds)


@dataclass
class StreamCallbacks:
    """Hooks a provider calls while streaming (from the worker thread)."""

    on_text: Callable[[str], None] = lambda _text: None
    # Thinking text as it arrives (`thinking_delta`s), shown apart from the reply.
    on_thinking: Callable[[str], None] = lambda _text: None
    # attempt number (2 for the first retry) and seconds until it (see `RetryCallback`)
    on_retry: RetryCallback = lambda _attempt, _wait: None
    # Each HTTP request of the reply, as it is handed to httpx (its body encoded): the
    # window waits for it before it shows the turn (app.chat.turns, issue 20).
    on_request_sent: Callable[[], None] = lambda: None
    extra: dict[str, Any] = field(default_factory=dict)


class ChatProvider(Protocol):
    def stream_reply(
        self, request: ChatRequest, callbacks: StreamCallbacks, cancel: CancelToken
    ) -> ReplyResult:
        """Stream a reply; text arrives through `callbacks.on_text` as it comes.

        A failure before the reply begins that is worth retrying (no answer, a 429,
        a 5xx) is retried by the provider, and `callbacks.on_retry` hears of each
        retry before its wait. Returns with `cancelled=True` (and the text so far)
        when `cancel` fires, waiting or reading.
        """
        ...

    def list_models(self) -> list[ModelInfo]:
        """The models the server offers, newest first."""
        ...

    def count_tokens(
        self,
        request: ChatRequest,
        *,
        cancel: CancelToken | None = None,
        on_retry: RetryCallback | None = None,
    ) -> int:
        """Input tokens the server counts for `request`, without generating anything.

        Retried like `stream_reply`, with `on_retry` told before each wait; `cancel`
        ends a wait or a read at once and raises `RequestStoppedError`.
        """
        ...

    def check_key(self) -> None:
        """Raise `ApiKeyRejectedError` (or another ApiError) unless the key works."""
        ...

    def complete_structured(
        self,
        *,
        model: str,
        system: str,
        prompt: str,
        tool_name: str,
        tool_description: str,
        input_schema: dict[str, Any],
        max_tokens: int,
        max_retries: int = 1,
        on_retry: RetryCallback | None = None,
    ) -> dict[str, Any]:
        """One non-streaming call that forces the tool `tool_name`; its `input` object.

        The provider retries a failure worth retrying (no answer, a 429, a 5xx) up to
        `max_retries` times with backoff, honouring the server's retry-after, and
        tells `on_retry` before each wait. The caller must not retry on top: a
        failure raised here has had its retries. A 400, 401, 403, 404 or a reply
        without usable tool input is never retried.

        Raises an `ApiError` for transport and HTTP failures, `StructuredOutputError`
        when the reply holds no usable tool input (no tool call, cut off by
        `max_tokens`, not an object).
        """
        ...


FilesSupport: TypeAlias = Literal["ga", "beta", "none"]
"""Whether a server offers the Files API: as documented today ("ga"), only with the beta
header it once needed ("beta"), or not at all ("none": files go as base64)."""


@runtime_checkable
class FileStorage(Protocol):
    """A server's Files API: a file uploaded once and referred to by its `file_id` in
    every request (https://platform.claude.com/docs/en/build-with-claude/files). A
    provider that is not one sends every file as base64.

    Attributes:
        files_scope: where an upload lives: the server's address and the key's workspace
            (a fingerprint of the key, never the key).
    """

    @property
    def files_scope(self) -> str: ...

    def files_support(self, *, cancel: CancelToken | None = None) -> FilesSupport | None:
        """Whether the server offers the Files API (asked once; None: could not be told)."""
        ...

    def use_files_support(self, support: FilesSupport) -> None:
        """What was found about this server before (remembered), instead of asking."""
        ...

    def upload_file(
        self, name: str, data: bytes, media_type: str, *, cancel: CancelToken | None = None
    ) -> str:
        """Upload a file; its `file_id`. Raises an `ApiError` (`RequestStoppedError` on
        `cancel`)."""
        ...

    def file_exists(self, file_id: str, *, cancel: CancelToken | None = None) -> bool | None:
        """Whether the server still has the file (None: could not be told)."""
        ...

    def delete_file(self, file_id: str, *, cancel: CancelToken | None = None) -> None:
        """Delete a file on the server (one it no longer has counts as deleted).
        Raises an `ApiError`."""
        ...
