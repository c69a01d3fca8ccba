"""Turning exceptions from the Anthropic SDK into `ApiError`s with plain words.

The words are for someone who has never seen an HTTP status; the technical
facts (status, error type, request-id) go to `.detail`, for the log only.
The SDK is imported inside the functions: this module is imported at start-up,
and the SDK takes over a second to import.
"""

from __future__ import annotations

import email.utils
import math
import re
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

from app.core.errors import (
    ApiError,
    ApiKeyRejectedError,
    BadRequestError,
    ConnectionFailedError,
    ModelNotFoundError,
    OverloadedError,
    PermissionDeniedError,
    RateLimitedError,
    RequestTooLargeError,
    ServerError,
    StreamInterruptedError,
)

if TYPE_CHECKING:
    import anthropic

# The status the real API pairs with each `error.type`, to read an `error` event
# that arrives in the middle of a stream (its HTTP status is 200 by then).
STATUS_OF_ERROR_TYPE: dict[str, int] = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}

# A conversation longer than the model's window comes back as a plain 400; Cairn
# must tell it apart to condense and retry. There is no stable code for it, so
# the wording is matched (both forms the API has used).
_CONTEXT_OVERFLOW = re.compile(r"prompt is too long|exceed(s|ed)? (the )?context limit", re.I)


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds the server asked us to wait, as the SDK reads it; None when it did not say.

    `retry-after-ms` wins over `retry-after` (seconds, or an HTTP date), exactly
    as the SDK decides how long to sleep before a retry.
    """
    milliseconds = headers.get("retry-after-ms")
    if milliseconds is not None:
        try:
            return _positive(float(milliseconds) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return _positive(float(value))
    except ValueError:
        pass
    date = email.utils.parsedate_tz(value)
    if date is None:
        return None
    return _positive(email.utils.mktime_tz(date) - time.time())


def _positive(seconds: float) -> float | None:
    return seconds if seconds > 0 else None


def sdk_will_retry_status(status: int, headers: Mapping[str, str]) -> bool:
    """Whether the SDK retries a response with this status (its documented policy).

    `x-should-retry` decides when present; otherwise 408, 409, 429 and 5xx are retried.
    """
    should_retry = headers.get("x-should-retry")
    if should_retry in ("true", "false"):
        return should_retry == "true"
    return status in (408, 409, 429) or status >= 500


def describe_wait(seconds: float | None) -> str:
    """A wait in words: "a moment", "about 20 seconds", "about 2 minutes"."""
    if seconds is None:
        return "a moment"
    if seconds < 1.5:
        return "a second"
    if seconds < 90:
        return f"about {round(seconds)} seconds"
    return f"about {math.ceil(seconds / 60)} minutes"


def with_partial_text(error: ApiError, text: str) -> ApiError:
    """Attach the text that arrived before a reply failed, as `error.partial_text`.

    Every `ApiError` raised by `AnthropicProvider.stream_reply` carries it (empty
    when nothing arrived), so the caller can keep what Claude already wrote.
    """
    error.partial_text = text
    return error


def partial_text_of(error: BaseException) -> str:
    """The text that arrived before `error` ended a reply ("" when none did)."""
    return str(getattr(error, "partial_text", ""))


def map_sdk_error(error: BaseException) -> ApiError | None:
    """The `ApiError` for an exception raised by the SDK or its HTTP layer.

    Returns None for anything else: that is a bug, and must not be dressed up
    as a network problem.
    """
    import anthropic
    import httpx2

    if isinstance(error, anthropic.APITimeoutError):
        return ConnectionFailedError(
            "Claude didn't answer in time. Check your internet connection and try again.",
            title="Claude took too long",
            detail=_transport_detail(error),
        )
    if isinstance(error, anthropic.APIConnectionError):
        return ConnectionFailedError(
            "Can't reach Claude — check your internet connection and try again.",
            detail=_transport_detail(error),
        )
    if isinstance(error, anthropic.APIStatusError):
        return _from_status_error(error)
    if isinstance(error, anthropic.APIResponseValidationError):
        return ServerError(
            "Claude's answer arrived in a form Cairn couldn't read. Try again.",
            detail=f"HTTP {error.status_code}; response did not match the expected schema",
        )
    # Errors while reading a stream that had started come from the HTTP layer as is.
    if isinstance(error, httpx2.TimeoutException):
        return StreamInterruptedError(
            "Claude stopped sending the reply partway. Try again to get the rest.",
            detail=_transport_detail(error),
        )
    if isinstance(error, httpx2.HTTPError):
        return StreamInterruptedError(
            "The connection dropped while Claude was answering. Try again to get the full reply.",
            detail=_transport_detail(error),
        )
    if isinstance(error, anthropic.AnthropicError):
        return ApiError(
            "Something went wrong while talking to Claude. Try again.",
            detail=_transport_detail(error),
        )
    return None


def stream_ended_early() -> StreamInterruptedError:
    """The stream closed cleanly but before `message_stop`: the reply is incomplete."""
    return StreamInterruptedError(
        "The connection dropped while Claude was answering. Try again to get the full reply.",
        detail="the event stream ended before message_stop",
    )


def _from_status_error(error: anthropic.APIStatusError) -> ApiError:
    error_type = str(error.type) if error.type is not None else None
    status = error.status_code
    parts = [f"HTTP {status}"]
    if status < 400:
        parts.append("error event in the stream")
    parts += [
        f"type={error_type}",
        f"request-id={error.request_id}",
        f"message={error.api_message}",
    ]
    detail = "; ".join(parts)
    if status < 400:
        # An `error` event after the stream began: the status says nothing, the type does.
        if error_type not in STATUS_OF_ERROR_TYPE:
            return StreamInterruptedError(
                "Claude stopped partway through the reply. Try again to get the rest.",
                detail=detail,
            )
        status = STATUS_OF_ERROR_TYPE[error_type]
    retry_after = parse_retry_after(error.response.headers)
    return _error_for_status(status, error_type, error.api_message or "", retry_after, detail)


def _error_for_status(
    status: int, error_type: str | None, api_message: str, retry_after: float | None, detail: str
) -> ApiError:
    if status == 401:
        return ApiKeyRejectedError(
            "Your API key was not accepted. Check that it was copied in full in Settings, "
            "or create a new key at console.anthropic.com.",
            detail=detail,
        )
    if status == 402 or error_type == "billing_error":
        return PermissionDeniedError(
            "Your Anthropic account has run out of credit. Add credit at "
            "console.anthropic.com, then try again.",
            title="Out of credit",
            detail=detail,
        )
    if status == 403:
        return PermissionDeniedError(
            "Your API key isn't allowed to do this. Check the key's permissions at "
            "console.anthropic.com.",
            detail=detail,
        )
    if status == 404:
        return ModelNotFoundError(
            "This model isn't available to your API key. Pick another model and try again.",
            detail=detail,
        )
    if status == 413 or (status == 400 and _CONTEXT_OVERFLOW.search(api_message)):
        return RequestTooLargeError(
            "This conversation is too long to send in one go. Condense earlier messages, "
            "then try again.",
            detail=detail,
        )
    if status == 429:
        return RateLimitedError(
            "You've sent more requests than your plan allows for now. "
            f"Wait {describe_wait(retry_after)} and try again.",
            retry_after=retry_after,
            detail=detail,
        )
    if status in (408, 504) or error_type == "timeout_error":
        return ServerError(
            "Claude took too long to answer. Try again in a moment.",
            title="Claude took too long",
            retry_after=retry_after,
            detail=detail,
        )
    if status == 529 or error_type == "overloaded_error":
        return OverloadedError(
            f"Claude is very busy right now. Wait {describe_wait(retry_after)} and try again.",
            retry_after=retry_after,
            detail=detail,
        )
    if status >= 500:
        return ServerError(
            "Claude had a temporary problem. Try again in a moment.",
            retry_after=retry_after,
            detail=detail,
        )
    return BadRequestError(
        "Claude couldn't accept this request. Try again; if it keeps happening, "
        "start a new conversation.",
        detail=detail,
    )


def _transport_detail(error: BaseException) -> str:
    cause = error.__cause__ or error.__context__
    text = f"{type(error).__name__}: {error}"
    if cause is not None:
        text += f"; caused by {type(cause).__name__}: {cause}"
    return text
