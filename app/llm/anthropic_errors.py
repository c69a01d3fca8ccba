"""Turning exceptions from the Anthropic SDK into `ApiError`s with plain words.

The words are for someone who has never seen an HTTP status; the technical
facts (status, error type and code, request-id) go to `.detail`, for the log only.
What went wrong is read from the SDK's exception class and the body's
`error.type` / `error.details.error_code`, never from the status number.
The SDK is imported inside the functions: this module is imported at start-up,
and the SDK takes over a second to import.
"""

from __future__ import annotations

import email.utils
import math
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeAlias

from app.core.errors import (
    ApiError,
    ApiKeyRejectedError,
    BadRequestError,
    ConnectionFailedError,
    ModelNotFoundError,
    OutOfCreditError,
    OverloadedError,
    PaymentDetailsError,
    PermissionDeniedError,
    RateLimitedError,
    RequestTooLargeError,
    ServerError,
    SpendLimitError,
    StreamInterruptedError,
)

if TYPE_CHECKING:
    import anthropic
    import httpx2

# A conversation longer than the model's window comes back as a plain 400
# `invalid_request_error`; Cairn must tell it apart to condense and retry. The API
# gives it no `error_code`, so (against the SDK's advice for `api_message`) the
# wording is matched, in both forms the API has used.
_CONTEXT_OVERFLOW = re.compile(r"prompt is too long|exceed(s|ed)? (the )?context limit", re.I)

# An account without credit is also a plain 400 `invalid_request_error`, with no
# `error_code`: "Your credit balance is too low to access the Anthropic API. Please go
# to Plans & Billing to upgrade or purchase credits." (as the API sends it, quoted in
# https://github.com/anthropics/claude-code/issues/867). Retrying cannot help.
_OUT_OF_CREDIT = re.compile(r"credit balance is too low", re.I)

# "The API also returns a 400 when usage reaches an organization or workspace spend
# limit you set" (https://platform.claude.com/docs/en/api/errors, "HTTP errors"; the
# limits: https://platform.claude.com/docs/en/api/rate-limits#setting-your-own-spend-limit).
# Its message begins "You have reached your specified API usage limits" (or "…your
# specified workspace API usage limits").
_SPEND_LIMIT_SET = re.compile(r"reached your specified (workspace )?API usage limit", re.I)

# Where the user adds credit or changes a spend limit.
BILLING_URL = "https://platform.claude.com/settings/billing"

_Kind: TypeAlias = Literal[
    "authentication",
    "billing",
    "out_of_credit",
    "spend_limit",
    "on_hold",
    "permission",
    "not_found",
    "wrong_address",
    "too_large",
    "rate_limit",
    "timeout",
    "overloaded",
    "server",
    "interrupted",
    "invalid_request",
]

# `error.details.error_code` values (the SDK's "stable code that names the cause") of
# a 429 that is a spending cap, not a rate: waiting a few seconds does not help. "A 429
# from the tier spend cap has no retry-after" (https://platform.claude.com/docs/en/api/errors);
# the SDK names them `EnforcedSpendLimitReachedError` / `ContractSpendLimitReachedError`.
_SPEND_LIMIT_CODES = frozenset({"enforced_spend_limit_reached", "contract_spend_limit_reached"})

# A 400 with this code: "Anthropic has disabled the organization for trust and safety
# reasons" (the SDK's `OrganizationOnHoldError`, `details.appeal_url` where to appeal).
_ON_HOLD_CODE = "organization_on_hold"


def never_worth_retrying(response: httpx2.Response) -> bool:
    """Whether an error response is a spending cap, which no retry can get past.

    The SDK retries every 429 (its `_should_retry`), a spending cap too: this lets
    the provider's client refuse those retries. Reads the small error body.
    """
    if response.status_code != 429:
        return False
    import httpx2

    try:
        response.read()
        body = response.json()
    except (ValueError, httpx2.HTTPError):
        return False
    return _error_code_of(body) in _SPEND_LIMIT_CODES


def _error_code_of(body: object) -> str | None:
    """`error.details.error_code` of an error body, as the SDK reads it."""
    error = body.get("error") if isinstance(body, dict) else None
    details = error.get("details") if isinstance(error, dict) else None
    code = details.get("error_code") if isinstance(details, dict) else None
    return code if isinstance(code, str) else None


def parse_retry_after(
    headers: Mapping[str, str], *, now: Callable[[], float] = time.time
) -> float | None:
    """Seconds the server asked us to wait, for the error message; None when it did not say.

    Read from the API's `retry-after` header (seconds, or an HTTP date) and its
    finer `retry-after-ms`, which wins, as the SDK reads them. The SDK keeps the
    wait it computed to itself, and has retried already by the time an error
    reaches Cairn; this only puts the server's last answer into words.
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
    return _positive(email.utils.mktime_tz(date) - now())


def _positive(seconds: float) -> float | None:
    return seconds if seconds > 0 else None


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
            "No answer came in time. Check your internet connection and try again.",
            title="Claude took too long",
            detail=_transport_detail(error),
        )
    if isinstance(error, anthropic.APIConnectionError):
        return ConnectionFailedError(
            "Check your internet connection and try again.",
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
    in_stream = error.response.is_success  # an `error` event after the stream began
    parts = [f"HTTP {error.status_code}"]
    if in_stream:
        parts.append("error event in the stream")
    parts.append(f"type={error.type}")
    if error.error_code is not None:
        parts.append(f"error_code={error.error_code}")
    parts += [f"request-id={error.request_id}", f"message={error.api_message}"]
    detail = "; ".join(parts)
    kind = _kind_of(error, in_stream)
    if kind == "invalid_request":
        kind = _kind_of_invalid_request(error.api_message or "")
    retry_after = parse_retry_after(error.response.headers)
    return _ERROR_OF_KIND[kind].error_for(retry_after, detail)


# What each error `type` of the API means, for Cairn (see "HTTP errors" in
# https://platform.claude.com/docs/en/api/errors). A stream that already began
# reports an error as an `error` event with one of these types: the SDK raises it as
# a plain `APIStatusError` carrying the stream's 200, so only the type says what it was.
_KIND_OF_TYPE: dict[str, _Kind] = {
    "invalid_request_error": "invalid_request",
    "authentication_error": "authentication",
    "billing_error": "billing",
    "permission_error": "permission",
    "not_found_error": "not_found",
    "request_too_large": "too_large",
    "rate_limit_error": "rate_limit",
    "timeout_error": "timeout",
    "api_error": "server",
    "overloaded_error": "overloaded",
}


def _kind_of_invalid_request(message: str) -> _Kind:
    """A plain 400 told apart by its wording, where the API gives it no code."""
    if _CONTEXT_OVERFLOW.search(message):
        return "too_large"  # the conversation outgrew the window: condensing helps
    if _OUT_OF_CREDIT.search(message):
        return "out_of_credit"
    if _SPEND_LIMIT_SET.search(message):
        return "spend_limit"
    return "invalid_request"


def _kind_of(error: anthropic.APIStatusError, in_stream: bool) -> _Kind:
    """What went wrong, from the SDK's exception class, then the body's code and type.

    The SDK picks the class from the response (status, and `error_code` where it
    knows one); only the broad classes (a plain 400, a 5xx without its own class,
    an `error` event mid-stream) are told apart by the body's `error.type`.
    """
    import anthropic

    if error.error_code in _SPEND_LIMIT_CODES:
        return "spend_limit"
    if error.error_code == _ON_HOLD_CODE:
        return "on_hold"
    specific: tuple[tuple[type[anthropic.APIStatusError], _Kind], ...] = (
        (anthropic.AuthenticationError, "authentication"),
        (anthropic.PaymentRequiredError, "billing"),
        (anthropic.PermissionDeniedError, "permission"),
        (anthropic.ContentTooLargeError, "too_large"),
        (anthropic.RateLimitError, "rate_limit"),
        (anthropic.RequestTimeoutError, "timeout"),
        (anthropic.GatewayTimeoutError, "timeout"),
        (anthropic.OverloadedError, "overloaded"),
    )
    if isinstance(error, anthropic.NotFoundError):
        # The API's 404 always has the `not_found_error` type; its message does not say
        # reliably what was missing ("model: x", "Not found", "X is not available"):
        # "the HTTP status (404) and error.type (not_found_error) are the stable" part
        # (https://github.com/anthropics/anthropic-sdk-typescript/issues/690). A 404
        # without that body is no Anthropic API at all: the address is wrong.
        return "not_found" if error.type == "not_found_error" else "wrong_address"
    for exception_class, kind in specific:
        if isinstance(error, exception_class):
            return kind
    by_type = _KIND_OF_TYPE.get(str(error.type)) if error.type is not None else None
    if isinstance(error, anthropic.InternalServerError):
        # 500, 503 and other 5xx: busy or slow when the body says so, else a fault.
        return by_type if by_type in ("overloaded", "timeout") else "server"
    if by_type is not None:
        return by_type
    return "interrupted" if in_stream else "invalid_request"


@dataclass(frozen=True)
class _Wording:
    """What the user reads for one kind of failure: the error's class, its words (a
    "{wait}" in them becomes how long to wait), and a title or link beyond the class's."""

    error: type[ApiError]
    message: str
    title: str | None = None
    link: str | None = None
    # Whether the server's retry-after travels with the error (a Retry waits for it).
    waits: bool = False

    def error_for(self, retry_after: float | None, detail: str) -> ApiError:
        return self.error(
            self.message.replace("{wait}", describe_wait(retry_after)),
            title=self.title,
            link=self.link,
            retry_after=retry_after if self.waits else None,
            detail=detail,
        )


_ERROR_OF_KIND: dict[_Kind, _Wording] = {
    "authentication": _Wording(
        ApiKeyRejectedError,
        "Your API key was not accepted. Check that it was copied in full in Settings, "
        "or create a new key at console.anthropic.com.",
    ),
    # 402 `billing_error`: "There's an issue with your billing or payment information"
    # (https://platform.claude.com/docs/en/api/errors, "HTTP errors"), which is not the
    # out-of-credit 400 below.
    "billing": _Wording(
        PaymentDetailsError,
        "Anthropic couldn't take payment for your account. Check your payment details "
        "on the billing page, then send your message again.",
        link=BILLING_URL,
    ),
    "out_of_credit": _Wording(
        OutOfCreditError,
        "Your Anthropic account is out of credit. Add credit on the billing page, "
        "then send your message again.",
        link=BILLING_URL,
    ),
    "spend_limit": _Wording(
        SpendLimitError,
        "Your Anthropic account has used all it may spend for now. Raise the limit on "
        "the billing page, or wait until it resets.",
        link=BILLING_URL,
    ),
    "on_hold": _Wording(
        PermissionDeniedError,
        "Anthropic has put your organization on hold, so Claude can't answer. "
        "Contact Anthropic's support to find out why.",
        title="Account on hold",
    ),
    "permission": _Wording(
        PermissionDeniedError,
        "Your API key isn't allowed to do this. Check the key's permissions at "
        "console.anthropic.com.",
    ),
    "wrong_address": _Wording(
        BadRequestError,
        "The server at Cairn's API address answered “not found”, which Anthropic's API "
        "never does this way. Check the API address in Settings → Advanced, or clear it "
        "to use Anthropic's.",
        title="Wrong API address?",
    ),
    "not_found": _Wording(
        ModelNotFoundError,
        "This model isn't available to your API key. Pick another model and try again.",
    ),
    "too_large": _Wording(
        RequestTooLargeError,
        "This conversation is too long to send in one go. Summarize earlier messages, "
        "then try again.",
    ),
    "rate_limit": _Wording(
        RateLimitedError,
        "You've sent more requests than your plan allows for now. Wait {wait} and try again.",
        waits=True,
    ),
    "timeout": _Wording(
        ServerError,
        "No answer came in time. Try again in a moment.",
        title="Claude took too long",
        waits=True,
    ),
    "overloaded": _Wording(
        OverloadedError,
        "Claude is very busy right now. Wait {wait} and try again.",
        waits=True,
    ),
    "server": _Wording(
        ServerError,
        "Claude had a temporary problem. Try again in a moment.",
        waits=True,
    ),
    "interrupted": _Wording(
        StreamInterruptedError,
        "Claude stopped partway through the reply. Try again to get the rest.",
    ),
    "invalid_request": _Wording(
        BadRequestError,
        "Claude couldn't accept this request. Try again; if it keeps happening, "
        "start a new conversation.",
    ),
}


def _transport_detail(error: BaseException) -> str:
    cause = error.__cause__ or error.__context__
    text = f"{type(error).__name__}: {error}"
    if cause is not None:
        text += f"; caused by {type(cause).__name__}: {cause}"
    return text
