"""`AnthropicProvider`: the `ChatProvider` that talks to Claude through the official SDK.

The SDK is imported on first use, never at module level: importing it takes
over a second, and the window must paint before that.

Two hooks into the SDK make a call observable and stoppable, both public API:
- SDK middleware runs once per HTTP attempt inside the SDK's own retry loop. It
  announces each retry (`StreamCallbacks.on_retry`) before the SDK waits, and
  abandons a call whose cancel token fired instead of letting it retry.
- httpcore's `trace` extension hands over the socket of each connection a call
  opens. Cancelling shuts that socket down, which wakes a read blocked on a
  stalled server at once (closing it from another thread would not, on Linux).
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import os
import socket
import threading
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from app.core.catalog import DEFAULT_CONTEXT_WINDOW, DEFAULT_MAX_OUTPUT, ModelInfo
from app.core.errors import ApiError, ApiKeyMissingError, StructuredOutputError
from app.core.models import Usage
from app.llm.anthropic_errors import (
    map_sdk_error,
    parse_retry_after,
    sdk_will_retry_status,
    stream_ended_early,
    with_partial_text,
)
from app.llm.provider import CancelToken, ChatRequest, ReplyResult, StreamCallbacks

if TYPE_CHECKING:
    import anthropic
    import httpx2
    from anthropic.types import Usage as SdkUsage

logger = logging.getLogger(__name__)

# The SDK waits at most this long for a connection before counting an attempt failed.
_CONNECT_TIMEOUT = 5.0
_MODELS_PAGE_SIZE = 100


class _CallCancelled(Exception):
    """Raised from the middleware to leave the SDK's retry loop when the user stopped.

    Not an SDK error type, so the SDK neither retries nor wraps it.
    """


class _StreamCall:
    """One `stream_reply` in flight: its callbacks, its cancel token, the socket it reads.

    `abort` runs on the cancelling thread; everything else on the worker thread.
    """

    def __init__(self, callbacks: StreamCallbacks, cancel: CancelToken, max_retries: int) -> None:
        self.callbacks = callbacks
        self.cancel = cancel
        self.max_retries = max_retries
        self._lock = threading.Lock()
        self._socket: socket.socket | None = None
        self._finished = False

    def trace(self, event: str, info: Mapping[str, Any]) -> None:
        """httpcore's trace hook: remember the socket of each connection the call opens."""
        if event not in ("connection.connect_tcp.complete", "connection.start_tls.complete"):
            return
        stream = info.get("return_value")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if not isinstance(sock, socket.socket):
            return
        with self._lock:
            self._socket = sock
            shut_now = self.cancel.cancelled and not self._finished
        if shut_now:  # cancelled while connecting
            _shut_down(sock)

    def abort(self) -> None:
        """Cancel callback: unblock the worker thread wherever it waits on the network."""
        with self._lock:
            sock = None if self._finished else self._socket
        if sock is not None:
            _shut_down(sock)

    def announce_retry(self, retries_taken: int, wait: float | None) -> None:
        """Tell the caller the SDK is about to retry, unless it has no retries left."""
        if retries_taken >= self.max_retries:
            return
        attempt = retries_taken + 2  # the attempt that is coming: 2 for the first retry
        logger.info("Claude request failed; the SDK retries (attempt %d, wait %s s)", attempt, wait)
        self.callbacks.on_retry(attempt, wait)

    def finish(self) -> None:
        with self._lock:
            self._finished = True
            self._socket = None


def _shut_down(sock: socket.socket) -> None:
    # The plain-socket method, also on TLS sockets: SSLSocket.shutdown would drop
    # the TLS state under the worker thread's feet; this only wakes its read.
    with contextlib.suppress(OSError):  # already closed
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


# The call running on this thread, for the middleware and the request hook.
_current_call: contextvars.ContextVar[_StreamCall | None] = contextvars.ContextVar(
    "cairn_current_stream_call", default=None
)


def _attach_trace(request: httpx2.Request) -> None:
    """httpx request hook: let the running call see the connections this request opens."""
    call = _current_call.get()
    if call is not None:
        request.extensions["trace"] = call.trace


@contextlib.contextmanager
def _api_errors() -> Iterator[None]:
    """Re-raise SDK exceptions as `ApiError`s; let anything else (a bug) through."""
    try:
        yield
    except ApiError:
        raise
    except Exception as error:
        mapped = map_sdk_error(error)
        if mapped is None:
            raise
        raise mapped from error


class AnthropicProvider:
    """Claude through the official `anthropic` SDK, with its retries left on.

    Thread-safe: one provider serves the chat and the summarizer workers at once.
    """

    def __init__(
        self,
        api_key: str | None,
        base_url: str | None,
        *,
        max_retries: int = 2,
        timeout: float = 600,
    ) -> None:
        key = api_key or os.environ.get("ANTHROPIC_API_KEY")
        if not key or not key.strip():
            raise ApiKeyMissingError(
                "Cairn needs an Anthropic API key to talk to Claude. Add one in Settings."
            )
        self._api_key = key.strip()
        # Explicit argument, else the SDK's own variable, else the SDK's default.
        self.base_url: str | None = base_url or os.environ.get("ANTHROPIC_BASE_URL") or None
        self._max_retries = max_retries
        self._timeout = timeout
        self._lock = threading.Lock()
        self._sdk_client: anthropic.Anthropic | None = None

    # -- the ChatProvider protocol

    def stream_reply(
        self, request: ChatRequest, callbacks: StreamCallbacks, cancel: CancelToken
    ) -> ReplyResult:
        """Stream a reply; text arrives through `callbacks.on_text` as it comes.

        Returns with `cancelled=True` and the text so far when `cancel` fires.
        A failure raises an `ApiError` whose `partial_text` holds what arrived
        (see `app.llm.anthropic_errors.partial_text_of`).
        """
        client = self._client()
        call = _StreamCall(callbacks, cancel, self._max_retries)
        cancel.on_cancel(call.abort)
        context_token = _current_call.set(call)
        received: list[str] = []
        try:
            return self._stream(client, request, call, received)
        except _CallCancelled:
            return self._cancelled_result(request, received)
        except Exception as error:
            if cancel.cancelled:  # the read we woke up failed: that is the cancel, not an error
                return self._cancelled_result(request, received)
            mapped = error if isinstance(error, ApiError) else map_sdk_error(error)
            if mapped is None:
                raise
            raise with_partial_text(mapped, "".join(received)) from error
        finally:
            call.finish()
            _current_call.reset(context_token)

    def list_models(self) -> list[ModelInfo]:
        """Every model the server offers, newest first (all pages)."""
        client = self._client()
        with _api_errors():
            return [
                ModelInfo(
                    id=model.id,
                    display_name=model.display_name,
                    max_input_tokens=model.max_input_tokens or DEFAULT_CONTEXT_WINDOW,
                    max_tokens=model.max_tokens or DEFAULT_MAX_OUTPUT,
                )
                for model in client.models.list(limit=_MODELS_PAGE_SIZE)
            ]

    def check_key(self) -> None:
        """Raise `ApiKeyRejectedError` (or another ApiError) unless the key works.

        Listing one model is the cheapest authenticated call: no tokens are spent.
        """
        client = self._client()
        with _api_errors():
            client.models.list(limit=1)

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
    ) -> dict[str, Any]:
        """One non-streaming call that forces the tool `tool_name`; its `input` object.

        The SDK's retries are off for this call (`max_retries=0`): the summarizer
        retries a transport error once itself, with its own backoff, and must not
        multiply its one call into three. Raises an `ApiError` for transport and
        HTTP failures, `StructuredOutputError` when the reply has no usable input.
        """
        client = self._client().with_options(max_retries=0)
        arguments: dict[str, Any] = {
            "model": model,
            "max_tokens": max_tokens,
            "messages": [{"role": "user", "content": prompt}],
            "tools": [
                {"name": tool_name, "description": tool_description, "input_schema": input_schema}
            ],
            "tool_choice": {"type": "tool", "name": tool_name},
        }
        if system:
            arguments["system"] = system
        with _api_errors():
            message = client.messages.create(**arguments)
        if message.stop_reason == "max_tokens":
            raise StructuredOutputError(
                "The summary was cut off before it was complete.",
                detail=f"stop_reason=max_tokens with max_tokens={max_tokens}",
            )
        for block in message.content:
            if block.type == "tool_use" and block.name == tool_name:
                tool_input: object = block.input
                if not isinstance(tool_input, dict):
                    raise StructuredOutputError(
                        "The summary did not arrive as structured data.",
                        detail=f"tool input is {type(tool_input).__name__}, not an object",
                    )
                return tool_input
        kinds = ", ".join(block.type for block in message.content) or "nothing"
        raise StructuredOutputError(
            "The model did not call the summary tool.",
            detail=f"stop_reason={message.stop_reason}; content: {kinds}",
        )

    # -- beyond the protocol

    def count_tokens(self, request: ChatRequest) -> int:
        """Input tokens the server counts for `request` (free; nothing is generated)."""
        client = self._client()
        arguments = self._message_arguments(request)
        del arguments["max_tokens"]
        with _api_errors():
            return client.messages.count_tokens(**arguments).input_tokens

    def close(self) -> None:
        """Release the HTTP connections; the provider opens new ones if used again."""
        with self._lock:
            client, self._sdk_client = self._sdk_client, None
        if client is not None:
            client.close()

    # -- inside

    def _client(self) -> anthropic.Anthropic:
        with self._lock:
            if self._sdk_client is None:
                self._sdk_client = self._create_client()
            return self._sdk_client

    def _create_client(self) -> anthropic.Anthropic:
        import anthropic
        import httpx2

        timeout = httpx2.Timeout(self._timeout, connect=min(_CONNECT_TIMEOUT, self._timeout))
        http_client = anthropic.DefaultHttpxClient(
            timeout=timeout,
            # A connection per call, never a pooled one: a call's connect trace then
            # always hands over the socket that cancelling has to shut down.
            limits=httpx2.Limits(max_connections=100, max_keepalive_connections=0),
            event_hooks={"request": [_attach_trace]},
        )
        return anthropic.Anthropic(
            api_key=self._api_key,
            base_url=self.base_url,
            max_retries=self._max_retries,
            timeout=timeout,
            http_client=http_client,
            middleware=[self._observe_attempt],
        )

    def _observe_attempt(
        self, request: anthropic.APIRequest, call_next: anthropic.CallNext
    ) -> anthropic.APIResponse[Any]:
        """SDK middleware, once per HTTP attempt: stop a cancelled call, announce retries."""
        import anthropic

        call = _current_call.get()
        if call is None:  # not a streamed reply (models, count_tokens)
            return call_next(request)
        if call.cancel.cancelled:
            raise _CallCancelled
        try:
            response = call_next(request)
        except anthropic.APIConnectionError:
            if call.cancel.cancelled:
                # `from None`: the SDK retries any error whose cause is a connection error.
                raise _CallCancelled from None
            call.announce_retry(request.retries_taken, None)
            raise
        http_response = response.http_response
        if not http_response.is_success:
            if call.cancel.cancelled:
                http_response.close()
                raise _CallCancelled
            if sdk_will_retry_status(http_response.status_code, http_response.headers):
                call.announce_retry(request.retries_taken, parse_retry_after(http_response.headers))
        return response

    def _message_arguments(self, request: ChatRequest) -> dict[str, Any]:
        arguments: dict[str, Any] = {
            "model": request.model,
            "max_tokens": request.max_tokens,
            "messages": [dict(message) for message in request.messages],
        }
        if request.system:
            arguments["system"] = request.system
        return arguments

    def _stream(
        self,
        client: anthropic.Anthropic,
        request: ChatRequest,
        call: _StreamCall,
        received: list[str],
    ) -> ReplyResult:
        finished = False
        with client.messages.stream(**self._message_arguments(request)) as stream:
            for event in stream:
                if call.cancel.cancelled:
                    return self._cancelled_result(request, received)
                if event.type == "text":
                    received.append(event.text)
                    call.callbacks.on_text(event.text)
                elif event.type == "message_stop":
                    finished = True
            if call.cancel.cancelled:
                return self._cancelled_result(request, received)
            if not finished:
                raise stream_ended_early()
            message = stream.current_message_snapshot
        return ReplyResult(
            text="".join(received),
            stop_reason=message.stop_reason,
            usage=_usage(message.usage),
            model=message.model or request.model,
        )

    @staticmethod
    def _cancelled_result(request: ChatRequest, received: list[str]) -> ReplyResult:
        # No usage: the output count of an interrupted reply is not final.
        return ReplyResult(
            text="".join(received),
            stop_reason=None,
            usage=None,
            model=request.model,
            cancelled=True,
        )


def _usage(usage: SdkUsage) -> Usage:
    return Usage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_creation_input_tokens=usage.cache_creation_input_tokens or 0,
        cache_read_input_tokens=usage.cache_read_input_tokens or 0,
    )
