"""`AnthropicProvider`: the `ChatProvider` that talks to Claude through the official SDK.

The SDK is imported on first use, never at module level: importing it takes
over a second, and the window must paint before that.

One SDK client per provider, with pooled keep-alive connections: a call after
another reuses its connection instead of paying for a new TCP (and TLS)
handshake. The SDK does the retrying (`max_retries`, its backoff, the server's
retry-after); Cairn only watches:
- Before the SDK waits to retry, the provider tells the call's `on_retry` how
  long, and waits in the SDK's place on the cancel token, so Stop ends a long
  wait at once. The SDK has no public hook for this; `_client_class` says which
  private one is used, and why.
- Stop shuts down the socket the call is reading, which wakes a read blocked on
  a stalled server at once (closing it from another thread would not, on Linux).
  Public httpx/httpcore hooks say which socket that is: httpcore's `trace`
  extension for a connection the call opens, the response's `network_stream`
  extension for a pooled one it reuses (`_Exchange`).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import hashlib
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from app.core.attachments import upload_name
from app.core.catalog import ModelInfo, clean_model_list, model_limits
from app.core.errors import (
    ApiError,
    ApiKeyMissingError,
    RequestStoppedError,
    StructuredOutputError,
)
from app.llm.anthropic_errors import (
    map_sdk_error,
    never_worth_retrying,
    stream_ended_early,
    with_partial_text,
)
from app.llm.provider import (
    CancelToken,
    ChatRequest,
    FilesSupport,
    ReplyResult,
    RetryCallback,
    StreamCallbacks,
)
from app.llm.reply_stream import GatheredReply, ThinkingClock, result_of, take_event
from app.llm.request_body import BodyEncoder

if TYPE_CHECKING:
    import anthropic
    import httpx2

logger = logging.getLogger(__name__)

# The SDK waits at most this long for a connection before counting an attempt failed.
_CONNECT_TIMEOUT = 5.0
# How long an idle connection stays in the pool. httpx's default (5 s) would expire
# it while the user reads a reply and types the next message; a minute keeps it
# for the next turn and stays well under the idle timeouts of NAT routers.
_KEEPALIVE_EXPIRY = 60.0
_MODELS_PAGE_SIZE = 100
# The SDK's own default address, for naming where an upload lives.
_DEFAULT_BASE_URL = "https://api.anthropic.com"
# The header the Files API needed while it was in beta ("anthropic-beta:
# files-api-2025-04-14": https://docs.claude.com/en/api/files-create); generally available
# since, without it (the SDK's `client.files`). Sent only to a server that wants it.
FILES_BETA = "files-api-2025-04-14"
# A server that answers a Files API call with one of these does not offer it (that way):
# no such route (404, 405, 501), not for this request's form (400), not for this key (403).
_NOT_OFFERED = frozenset({400, 403, 404, 405, 501})


class _CallCancelled(Exception):
    """Raised on the calling thread where it notices that the user stopped.

    From the wait before a retry it leaves the SDK's request loop as it is: not an
    SDK error, so never retried. From inside an HTTP attempt (the request hook, the
    trace) the SDK wraps it as a connection error; the wait before the retry that
    the SDK then schedules raises it again, and without retries left the caller
    finds the token cancelled.
    """


def _shut_down(sock: socket.socket) -> None:
    # The plain-socket method, also on TLS sockets: SSLSocket.shutdown would drop
    # the TLS state under the worker thread's feet; this only wakes its read.
    with contextlib.suppress(OSError):  # already closed
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


def _socket_of(stream: object) -> socket.socket | None:
    """The socket under an httpcore network stream (`get_extra_info` is its public API)."""
    get_extra_info = getattr(stream, "get_extra_info", None)
    sock = get_extra_info("socket") if get_extra_info is not None else None
    return sock if isinstance(sock, socket.socket) else None


class _Sockets:
    """The sockets of one provider's connections, and the HTTP exchange using each.

    A socket nobody is using is idle in the pool, or carries a request sent on a
    reused connection whose answer has not begun (httpcore does not say which
    pooled connection it picked until the response headers arrive).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users: dict[socket.socket, _Exchange | None] = {}

    def claim(self, sock: socket.socket, exchange: _Exchange) -> None:
        with self._lock:
            self._users[sock] = exchange

    def release(self, exchange: _Exchange) -> None:
        with self._lock:
            for sock, user in list(self._users.items()):
                if sock.fileno() < 0:  # closed: the pool dropped the connection
                    del self._users[sock]
                elif user is exchange:
                    self._users[sock] = None

    def unclaimed(self) -> list[socket.socket]:
        with self._lock:
            return [s for s, user in self._users.items() if user is None and s.fileno() >= 0]

    def clear(self) -> None:
        with self._lock:
            self._users.clear()


class _Call:
    """One provider call in flight: who hears of its retries, its cancel token,
    and the HTTP exchange of its current attempt.

    `abort` runs on the cancelling thread; everything else on the calling thread.
    """

    def __init__(
        self,
        sockets: _Sockets,
        on_retry: RetryCallback,
        cancel: CancelToken | None,
        on_request_sent: Callable[[], None] = lambda: None,
    ) -> None:
        self.sockets = sockets
        self.on_retry = on_retry
        self.cancel = cancel
        self.on_request_sent = on_request_sent
        self._lock = threading.Lock()
        self._exchange: _Exchange | None = None
        self._finished = False

    @property
    def cancelled(self) -> bool:
        return self.cancel is not None and self.cancel.cancelled

    def attempt_started(self, exchange: _Exchange) -> None:
        """An HTTP request of this call is about to go out (httpx request hook)."""
        with self._lock:
            self._exchange = exchange
        if self.cancelled:  # cancelled before this attempt: do not send it
            raise _CallCancelled
        self.on_request_sent()

    def abort(self) -> None:
        """Cancel callback: wake the calling thread wherever it waits on the network."""
        with self._lock:
            exchange = None if self._finished else self._exchange
        if exchange is not None:
            for sock in exchange.sockets_to_shut():
                _shut_down(sock)

    def wait_before_retry(self, attempt: int, wait: float) -> None:
        """Tell `on_retry`, then wait `wait` seconds; a cancel ends the wait, and the call."""
        if self.cancelled:
            raise _CallCancelled
        logger.info("Claude request failed; the SDK retries (attempt %d, in %.1f s)", attempt, wait)
        self.on_retry(attempt, wait)
        if self.cancel is None:
            time.sleep(wait)
        elif self.cancel.wait(wait):
            raise _CallCancelled

    def finish(self) -> None:
        with self._lock:
            self._finished = True
            self._exchange = None


class _Exchange:
    """One HTTP request of the provider and its response: httpcore's `trace` hook for it.

    Tracks which socket the request travels on, so that cancelling its call can
    shut that socket down: the socket of a new connection from the connect trace,
    that of a reused pooled connection from the response's `network_stream`.
    """

    def __init__(self, sockets: _Sockets, call: _Call | None) -> None:
        self._sockets = sockets
        self._call = call
        self._lock = threading.Lock()
        self._socket: socket.socket | None = None
        self._sent = False

    def __call__(self, event: str, info: Mapping[str, Any]) -> None:
        """httpcore's trace extension: called on the calling thread at each step."""
        if event.endswith((".connect_tcp.complete", ".start_tls.complete")):
            self._use(_socket_of(info.get("return_value")))
        elif event.endswith(".send_request_headers.started"):
            with self._lock:
                self._sent = True
                cancelled = self._call is not None and self._call.cancelled
            if cancelled:  # nothing sent yet; httpcore closes the connection
                raise _CallCancelled
        elif ".response_closed." in event:
            # Back in the pool, or closed (then the next `release` forgets it).
            self._sockets.release(self)

    def response_arrived(self, response: httpx2.Response) -> None:
        """The response headers are in: its `network_stream` names the connection's socket."""
        self._use(_socket_of(response.extensions.get("network_stream")))

    def sockets_to_shut(self) -> list[socket.socket]:
        """What cancelling must shut down to wake this exchange's calling thread."""
        with self._lock:
            sock, sent = self._socket, self._sent
        if sock is not None:
            return [sock]
        if sent:
            # Sent on a reused connection, no answer yet: its socket is one of the
            # unclaimed ones. Shutting an idle one down costs only that connection
            # (httpcore drops a pooled connection whose socket reads as closed);
            # another call waiting likewise gets a connection error, which the SDK retries.
            return self._sockets.unclaimed()
        return []  # not on a connection yet: the trace above stops it before it sends

    def _use(self, sock: socket.socket | None) -> None:
        if sock is None:
            return
        with self._lock:
            self._socket = sock
            cancelled = self._call is not None and self._call.cancelled
        self._sockets.claim(sock, self)
        if cancelled:  # cancelled while connecting, or just as the answer began
            _shut_down(sock)


# The call running on this thread, for the request hook and the retry wait.
_current_call: contextvars.ContextVar[_Call | None] = contextvars.ContextVar(
    "cairn_current_call", default=None
)


def load_sdk() -> None:
    """Import the SDK now (~1 s of CPU, ~45 MiB), where that costs nothing: the summary
    process warming up before it is needed (app.chat.summary_process)."""
    _client_class()


@functools.cache
def _client_class() -> type[anthropic.Anthropic]:
    """The SDK client, with its wait before a retry told and cancellable (see below)."""
    import anthropic

    class _CairnClient(anthropic.Anthropic):
        # The SDK has no public way to say that it will retry, or after how long: its
        # middleware runs once per attempt, not between them, and its INFO log line
        # ("Retrying request to … in … seconds") is a message, not an API, and fires
        # just before a `time.sleep` that nothing can cut short. So this overrides the
        # one private method the SDK calls only when it has decided to retry, and asks
        # the SDK's own `_calculate_retry_timeout` for the wait (retry-after honoured,
        # else its backoff with jitter) instead of copying its rules. A test per
        # behaviour (tests/integration/test_anthropic_provider.py) fails if the SDK
        # renames either.
        def _sleep_for_retry(
            self,
            *,
            retries_taken: int,
            max_retries: int,
            options: Any,
            response: httpx2.Response | None,
        ) -> None:
            call = _current_call.get()
            if call is None:  # models, count_tokens: the SDK's own wait
                super()._sleep_for_retry(
                    retries_taken=retries_taken,
                    max_retries=max_retries,
                    options=options,
                    response=response,
                )
                return
            wait = self._calculate_retry_timeout(
                max_retries - retries_taken,
                options,
                response.headers if response is not None else None,
            )
            call.wait_before_retry(retries_taken + 2, wait)

        def _should_retry(self, response: httpx2.Response) -> bool:
            # The SDK retries every 429; a spending cap is one too, and no wait gets
            # past it (app.llm.anthropic_errors.never_worth_retrying).
            if never_worth_retrying(response):
                return False
            return super()._should_retry(response)

    return _CairnClient


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

    Thread-safe: one provider serves the chat and the summarizer workers at once,
    over one pool of connections.
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
        self._sockets = _Sockets()
        # The models the server listed last (what a model accepts: `complete_structured`).
        self._listed: list[ModelInfo] = []
        # The client, and copies of it with other `max_retries` (same connection pool).
        self._sdk_clients: dict[int, anthropic.Anthropic] = {}
        # Whether the server offers the Files API (None: not asked yet).
        self._files_support: FilesSupport | None = None
        # Each turn of a conversation is encoded once, in the first request it goes in.
        self._bodies = BodyEncoder()

    # -- the ChatProvider protocol

    def stream_reply(
        self, request: ChatRequest, callbacks: StreamCallbacks, cancel: CancelToken
    ) -> ReplyResult:
        """Stream a reply; text arrives through `callbacks.on_text` as it comes.

        The SDK retries a failure before the reply begins (no answer, a 429, a 5xx),
        and `callbacks.on_retry` hears of each retry before its wait.
        Returns with `cancelled=True` and the text so far when `cancel` fires.
        A failure raises an `ApiError` whose `partial_text` holds what arrived
        (see `app.llm.anthropic_errors.partial_text_of`).
        """
        received: list[str] = []
        if cancel.cancelled:
            return self._cancelled_result(request, received)
        client = self._client(self._max_retries)
        call = _Call(self._sockets, callbacks.on_retry, cancel, callbacks.on_request_sent)
        cancel.on_cancel(call.abort)
        context_token = _current_call.set(call)
        try:
            return self._stream(client, request, call, callbacks, received)
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
        """Every usable model the server offers, newest first (all pages).

        A limit the server leaves out stays out until `clean_model_list` fills it
        from the bundled table or the unknown-model default, never a guess here.
        """
        client = self._client(self._max_retries)
        with _api_errors():
            listed = clean_model_list(
                {
                    "id": model.id,
                    "display_name": model.display_name,
                    "max_input_tokens": model.max_input_tokens,
                    "max_tokens": model.max_tokens,
                    # Optional for an Anthropic-compatible server that predates them.
                    "line": getattr(model, "line", None),
                    "lifecycle": getattr(model, "lifecycle", None),
                    # What the model accepts (thinking types, effort): the SDK's
                    # `ModelCapabilities`, None from a server that predates it.
                    "capabilities": _capabilities(model),
                }
                for model in client.models.list(limit=_MODELS_PAGE_SIZE)
            )
        self._listed = listed
        return listed

    def check_key(self) -> None:
        """Raise `ApiKeyRejectedError` (or another ApiError) unless the key works.

        Listing one model is the cheapest authenticated call: no tokens are spent.
        """
        client = self._client(self._max_retries)
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
        max_retries: int = 1,
        on_retry: RetryCallback | None = None,
    ) -> dict[str, Any]:
        """One non-streaming call that forces the tool `tool_name`; its `input` object.

        The SDK retries a failure worth retrying (no answer, a 429, a 5xx) up to
        `max_retries` times, with its backoff and the server's retry-after, and
        `on_retry` hears of each retry before its wait; a 400, 401, 403 or 404 is
        never retried. Raises an `ApiError` for transport and HTTP failures,
        `StructuredOutputError` when the reply has no usable input.
        """
        client = self._client(max_retries)
        arguments: dict[str, Any] = {
            "model": model,
            "max_tokens": max_tokens,
            "messages": [{"role": "user", "content": prompt}],
            "tools": [
                {"name": tool_name, "description": tool_description, "input_schema": input_schema}
            ],
        }
        info = model_limits(model, self._listed)[0]
        if info.thinking_off and info.thinking != "always":
            # A forced tool call cannot meet thinking ("Thinking may not be enabled when
            # tool_choice forces tool use": https://platform.claude.com/docs/en/build-with-claude/extended-thinking#feature-compatibility),
            # so it is turned off outright.
            arguments["tool_choice"] = {"type": "tool", "name": tool_name}
            arguments["thinking"] = {"type": "disabled"}
        else:
            # Opus 5.5, Sonnet 5.5, Fable 5.1: "forced tool use returns an error" and
            # thinking cannot be turned off
            # (https://platform.claude.com/docs/en/models/opus-5-5/whats-new-opus-5-5).
            # The tool is offered with `tool_choice` auto and the prompt asks for it; the
            # reply is checked below (no call: StructuredOutputError, the next model).
            # The least effort keeps the thinking before it short.
            arguments["tool_choice"] = {"type": "auto"}
            if info.effort:
                arguments["output_config"] = {"effort": "low"}
            system = (system + "\n\n" if system else "") + (
                f"Answer only by calling the {tool_name} tool, once."
            )
        if system:
            arguments["system"] = system
        call = _Call(self._sockets, on_retry or _ignore_retry, cancel=None)
        context_token = _current_call.set(call)
        try:
            with _api_errors():
                message = client.messages.create(**arguments)
        finally:
            call.finish()
            _current_call.reset(context_token)
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

    def count_tokens(
        self,
        request: ChatRequest,
        *,
        cancel: CancelToken | None = None,
        on_retry: RetryCallback | None = None,
    ) -> int:
        """Input tokens the server counts for `request` (free; nothing is generated).

        Like a reply, the wait before a retry is told to `on_retry` and, as the read,
        ends at once when `cancel` fires: then `RequestStoppedError` is raised.
        """
        client = self._client(self._max_retries)
        arguments = self._message_arguments(request)
        del arguments["max_tokens"]
        with self._stoppable_call(cancel, on_retry), _api_errors():
            return client.messages.count_tokens(**arguments).input_tokens

    # -- the Files API (app.llm.provider.FileStorage)

    @property
    def files_scope(self) -> str:
        """Where an upload lives: the server's address and the key's workspace. Files are
        "scoped to the workspace of the API key"
        (https://platform.claude.com/docs/en/build-with-claude/files); the key stands for
        its workspace by a fingerprint (16 hex digits of a hash), never itself."""
        address = (self.base_url or _DEFAULT_BASE_URL).rstrip("/")
        digest = hashlib.sha256(b"cairn-files\0" + self._api_key.encode()).hexdigest()[:16]
        return f"{address} key:{digest}"

    def files_support(self, *, cancel: CancelToken | None = None) -> FilesSupport | None:
        """Whether the server offers the Files API: a list of one file (free, nothing is
        uploaded), as documented today, then with the beta header it once needed. None
        when it could not be told (offline, the server failing, the key refused, Stop)."""
        import anthropic

        with self._lock:
            if self._files_support is not None:
                return self._files_support
        client = self._client(self._max_retries)
        found: FilesSupport = "none"
        for support, headers in (("ga", {}), ("beta", {"anthropic-beta": FILES_BETA})):
            try:
                with self._stoppable_call(cancel):
                    client.files.list(limit=1, extra_headers=headers)
            except anthropic.APIStatusError as error:
                if error.status_code in _NOT_OFFERED:
                    continue
                logger.info("Could not tell whether the server keeps files: %s", error)
                return None
            except (anthropic.APIError, RequestStoppedError) as error:
                logger.info("Could not tell whether the server keeps files: %s", error)
                return None
            found = "ga" if support == "ga" else "beta"
            break
        self.use_files_support(found)
        return found

    def use_files_support(self, support: FilesSupport) -> None:
        with self._lock:
            self._files_support = support

    def upload_file(
        self, name: str, data: bytes, media_type: str, *, cancel: CancelToken | None = None
    ) -> str:
        """Upload a file through the Files API; its `file_id`
        (https://platform.claude.com/docs/en/api/files/upload). Stop (`cancel`) ends it at
        once, raising `RequestStoppedError`."""
        client = self._client(self._max_retries)
        with _api_errors(), self._stoppable_call(cancel):
            uploaded = client.files.upload(
                file=(upload_name(name), data, media_type), extra_headers=self._files_headers()
            )
        return uploaded.id

    def file_exists(self, file_id: str, *, cancel: CancelToken | None = None) -> bool | None:
        """Whether the server still has the file: its metadata, or 404."""
        import anthropic

        client = self._client(self._max_retries)
        try:
            with self._stoppable_call(cancel):
                client.files.retrieve_metadata(file_id, extra_headers=self._files_headers())
        except anthropic.NotFoundError:
            return False
        except (anthropic.APIError, RequestStoppedError) as error:
            logger.info("Could not tell whether the server has a file: %s", error)
            return None
        return True

    def delete_file(self, file_id: str, *, cancel: CancelToken | None = None) -> None:
        """Delete a file on the server; one it no longer has counts as deleted
        (https://platform.claude.com/docs/en/api/files/delete)."""
        import anthropic

        client = self._client(self._max_retries)
        with _api_errors(), self._stoppable_call(cancel):
            try:
                client.files.delete(file_id, extra_headers=self._files_headers())
            except anthropic.NotFoundError:
                logger.info("The server had let the file go already")

    @contextlib.contextmanager
    def _stoppable_call(
        self, cancel: CancelToken | None, on_retry: RetryCallback | None = None
    ) -> Iterator[None]:
        """A call that Stop (`cancel`) ends at once, as a reply's: its socket is shut, its
        wait before a retry (told to `on_retry`) cut short; `RequestStoppedError` then."""
        call = _Call(self._sockets, on_retry or _ignore_retry, cancel)
        if cancel is not None:
            cancel.on_cancel(call.abort)
        context_token = _current_call.set(call)
        try:
            yield
        except Exception as error:
            if cancel is not None and cancel.cancelled:
                raise RequestStoppedError("Stopped.") from error
            raise
        finally:
            call.finish()
            _current_call.reset(context_token)

    def _files_headers(self) -> dict[str, str]:
        with self._lock:
            beta = self._files_support == "beta"
        return {"anthropic-beta": FILES_BETA} if beta else {}

    def close(self) -> None:
        """Release the HTTP connections; the provider opens new ones if used again."""
        with self._lock:
            client = self._sdk_clients.get(self._max_retries)
            self._sdk_clients = {}
        self._sockets.clear()
        if client is not None:
            client.close()  # its copies share its connection pool

    # -- inside

    def _client(self, max_retries: int) -> anthropic.Anthropic:
        with self._lock:
            base = self._sdk_clients.get(self._max_retries)
            if base is None:
                base = self._sdk_clients[self._max_retries] = self._create_client()
            client = self._sdk_clients.get(max_retries)
            if client is None:
                client = self._sdk_clients[max_retries] = base.with_options(max_retries=max_retries)
            return client

    def _create_client(self) -> anthropic.Anthropic:
        import anthropic
        import httpx2

        timeout = httpx2.Timeout(self._timeout, connect=min(_CONNECT_TIMEOUT, self._timeout))
        limits = anthropic.DEFAULT_CONNECTION_LIMITS
        http_client = anthropic.DefaultHttpxClient(
            timeout=timeout,
            limits=httpx2.Limits(
                max_connections=limits.max_connections,
                max_keepalive_connections=limits.max_keepalive_connections,
                keepalive_expiry=_KEEPALIVE_EXPIRY,
            ),
            event_hooks={"request": [self._request_sent], "response": [_response_arrived]},
        )
        return _client_class()(
            api_key=self._api_key,
            base_url=self.base_url,
            max_retries=self._max_retries,
            timeout=timeout,
            http_client=http_client,
        )

    def _request_sent(self, request: httpx2.Request) -> None:
        """httpx request hook: follow the request onto its connection (`_Exchange`)."""
        call = _current_call.get()
        exchange = _Exchange(self._sockets, call)
        request.extensions["trace"] = exchange
        if call is not None:
            call.attempt_started(exchange)

    def _message_arguments(
        self, request: ChatRequest, *, files_header: bool = True
    ) -> dict[str, Any]:
        """The request's arguments as the SDK's `messages` methods take them; with the
        files beta header when a message refers to an uploaded file (unless
        `files_header` is False: the caller checks the encoded body, `_message_stream`)."""
        arguments: dict[str, Any] = {
            "model": request.model,
            "max_tokens": request.max_tokens,
            "messages": list(request.messages),
        }
        if request.system:
            arguments["system"] = request.system
        if request.tools:
            arguments["tools"] = [dict(tool) for tool in request.tools]
            if request.tool_choice is not None:
                arguments["tool_choice"] = request.tool_choice
        if request.tool_turns:
            arguments["messages"].extend(dict(turn) for turn in request.tool_turns)
        if request.thinking is not None:
            arguments["thinking"] = dict(request.thinking)
        if request.output_config is not None:
            arguments["output_config"] = dict(request.output_config)
        if files_header and _refers_to_files(arguments["messages"]) and self._files_headers():
            # A server that needs the beta header for files needs it where they are used.
            arguments["extra_headers"] = self._files_headers()
        return arguments

    def _message_stream(
        self, client: anthropic.Anthropic, request: ChatRequest
    ) -> anthropic.Stream[object]:
        """The reply's raw event stream (what `client.messages.create(stream=True)`
        returns), with the body encoded here; the request is sent when this is called.

        The SDK's `messages.create` copies the whole body (`prepare_request_data`) and
        encodes it again on every request, each earlier turn included. The SDK takes a
        body already encoded through `client.post(content=…)` (its documented way to make
        any request), with its retries, errors and event types as for its own method.
        The raw stream, not the `messages.stream` helper: the helper builds an event
        object and updates a snapshot of the whole message for each delta (`GatheredReply`
        gathers the deltas once, at the end). Its events come as the JSON the server
        sent (`Stream[object]`: the SDK's documented way to ask for untyped data), so a
        text or thinking delta, nearly every event of a reply, costs a dict look-up
        instead of building SDK objects; the few others are made SDK objects
        (`typed_event`). An `error` event still raises the SDK's error.
        """
        import anthropic
        from anthropic.types import Message

        arguments = self._message_arguments(request, files_header=False)
        body = self._bodies.encode({**arguments, "stream": True})
        # Its pieces one after the other, as one plain body of this length (not chunked).
        headers = {"Content-Length": str(body.size)}
        # A file source as the compact JSON has it: a text that says so has its quotes
        # escaped, so only a block refers to a file this way (one scan in C, not a walk
        # of every turn of the history). Only for a server that wants the beta header
        # (rare): the scan reads the whole body, ~0.15 ms at 155k live tokens.
        files_headers = self._files_headers()
        if files_headers and _FILE_SOURCE in body:
            headers.update(files_headers)
        return client.post(
            "/v1/messages",
            content=body.chunks,
            options={"headers": headers},
            cast_to=Message,
            stream=True,
            stream_cls=anthropic.Stream[object],
        )

    def _stream(
        self,
        client: anthropic.Anthropic,
        request: ChatRequest,
        call: _Call,
        callbacks: StreamCallbacks,
        received: list[str],
    ) -> ReplyResult:
        thought = ThinkingClock()
        reply = GatheredReply()
        with self._message_stream(client, request) as stream:
            for data in stream:
                if call.cancelled:
                    return self._cancelled_result(request, received)
                if isinstance(data, dict):  # else not an event the API documents
                    take_event(reply, data, thought, callbacks, received)
            if call.cancelled:
                return self._cancelled_result(request, received)
            if not reply.finished or not reply.has_started:
                raise stream_ended_early()
            # Without SDK objects when the reply is plain text (and thinking), as nearly
            # every one is; else the SDK's message, as `final` gathers it.
            plain = reply.plain_result("".join(received), request.model, thought.seconds())
            if plain is not None:
                return plain
            message = reply.final()
        return result_of(message, "".join(received), request.model, thought.seconds())

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


def _response_arrived(response: httpx2.Response) -> None:
    """httpx response hook: tell the request's exchange which socket answered."""
    exchange = response.request.extensions.get("trace")
    if isinstance(exchange, _Exchange):
        exchange.response_arrived(response)


def _ignore_retry(_attempt: int, _wait: float | None) -> None:
    pass


_FILE_SOURCE = b'"type":"file"'


def _refers_to_files(messages: list[dict[str, Any]]) -> bool:
    """Whether a request's messages refer to an uploaded file (a `file` source)."""
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            for block in content:
                source = block.get("source") if isinstance(block, dict) else None
                if isinstance(source, dict) and source.get("type") == "file":
                    return True
    return False


def _capabilities(model: object) -> dict[str, Any] | None:
    capabilities = getattr(model, "capabilities", None)
    dump = getattr(capabilities, "model_dump", None)
    return dump() if callable(dump) else None
