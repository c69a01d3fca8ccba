"""Every SDK exception becomes an ApiError with plain words and a technical detail."""

from __future__ import annotations

import email.utils
from typing import Any

import anthropic
import httpx2
import pytest

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
from app.llm.anthropic_errors import (
    BILLING_URL,
    describe_wait,
    map_sdk_error,
    parse_retry_after,
    partial_text_of,
    with_partial_text,
)

_REQUEST = httpx2.Request("POST", "https://api.anthropic.com/v1/messages")

_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    408: "timeout_error",
    409: "invalid_request_error",
    413: "request_too_large",
    422: "invalid_request_error",
    429: "rate_limit_error",
    500: "api_error",
    503: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}


def _status_error(
    status: int,
    *,
    error_type: str | None = None,
    message: str = "Something happened",
    headers: dict[str, str] | None = None,
    exception_class: type[anthropic.APIStatusError] = anthropic.APIStatusError,
    error_code: str | None = None,
) -> anthropic.APIStatusError:
    """A real SDK status error, built the way the SDK builds it from a response."""
    error: dict[str, Any] = {
        "type": error_type or _TYPES.get(status, "api_error"),
        "message": message,
    }
    if error_code is not None:
        error["details"] = {"error_code": error_code}
    body: dict[str, Any] = {"type": "error", "error": error, "request_id": "req_0123"}
    response = httpx2.Response(
        status,
        headers={"request-id": "req_0123", **(headers or {})},
        json=body,
        request=_REQUEST,
    )
    return exception_class(f"Error code: {status} - {body}", response=response, body=body)


_STATUS_CASES = [
    (400, anthropic.BadRequestError, BadRequestError),
    (401, anthropic.AuthenticationError, ApiKeyRejectedError),
    (402, anthropic.PaymentRequiredError, PaymentDetailsError),
    (403, anthropic.PermissionDeniedError, PermissionDeniedError),
    (404, anthropic.NotFoundError, ModelNotFoundError),
    (408, anthropic.RequestTimeoutError, ServerError),
    (409, anthropic.ConflictError, BadRequestError),
    (413, anthropic.ContentTooLargeError, RequestTooLargeError),
    (422, anthropic.UnprocessableEntityError, BadRequestError),
    (429, anthropic.RateLimitError, RateLimitedError),
    (500, anthropic.InternalServerError, ServerError),
    (503, anthropic.ServiceUnavailableError, ServerError),
    (504, anthropic.GatewayTimeoutError, ServerError),
    (529, anthropic.OverloadedError, OverloadedError),
]


@pytest.mark.parametrize(("status", "exception_class", "expected"), _STATUS_CASES)
def test_each_status_maps_to_its_error(
    status: int, exception_class: type[anthropic.APIStatusError], expected: type[ApiError]
) -> None:
    error = map_sdk_error(_status_error(status, exception_class=exception_class))

    assert type(error) is expected
    assert error.message
    assert "HTTP" not in error.message  # plain words; the status is for the log
    assert error.detail is not None
    assert f"HTTP {status}" in error.detail
    assert "request-id=req_0123" in error.detail
    assert f"type={_TYPES[status]}" in error.detail


@pytest.mark.parametrize(("status", "exception_class", "_expected"), _STATUS_CASES)
def test_no_message_repeats_its_title(
    status: int, exception_class: type[anthropic.APIStatusError], _expected: type[ApiError]
) -> None:
    # The banner shows the title above the text: saying it twice reads as a stammer.
    error = map_sdk_error(_status_error(status, exception_class=exception_class))

    assert error is not None
    assert error.title.lower() not in error.message.lower()


# The body the API sends when the account has no credit (a plain 400, no error_code),
# as users have reported it verbatim: https://github.com/anthropics/claude-code/issues/867
_NO_CREDIT = (
    "Your credit balance is too low to access the Anthropic API. Please go to Plans & "
    "Billing to upgrade or purchase credits."
)


def test_a_400_for_credit_too_low_is_out_of_credit_with_the_billing_page() -> None:
    error = map_sdk_error(
        _status_error(400, message=_NO_CREDIT, exception_class=anthropic.BadRequestError)
    )

    assert isinstance(error, OutOfCreditError)
    assert error.title == "No credit left"
    assert error.message.startswith("Your Anthropic account is out of credit.")
    assert error.link == BILLING_URL
    assert not error.retryable


@pytest.mark.parametrize(
    "message",
    [
        # https://platform.claude.com/docs/en/api/errors: "The API also returns a 400 when
        # usage reaches an organization or workspace spend limit you set".
        "You have reached your specified API usage limits. You will regain access on "
        "2026-12-01 at 00:00 UTC.",
        "You have reached your specified workspace API usage limits. You will regain "
        "access on 2026-12-01 at 00:00 UTC.",
    ],
)
def test_a_400_for_a_spend_limit_you_set_is_a_spending_limit(message: str) -> None:
    error = map_sdk_error(
        _status_error(400, message=message, exception_class=anthropic.BadRequestError)
    )

    assert isinstance(error, SpendLimitError)
    assert error.link == BILLING_URL
    assert not error.retryable


def test_an_organization_on_hold_is_said_and_not_retried() -> None:
    error = map_sdk_error(
        _status_error(
            400, error_code="organization_on_hold", exception_class=anthropic.BadRequestError
        )
    )

    assert isinstance(error, PermissionDeniedError)
    assert error.title == "Account on hold"
    assert "on hold" in error.message
    assert not error.retryable


def test_user_caused_errors_offer_no_retry_and_transient_ones_do() -> None:
    rejected = map_sdk_error(_status_error(401, exception_class=anthropic.AuthenticationError))
    overloaded = map_sdk_error(_status_error(529, exception_class=anthropic.OverloadedError))

    assert rejected is not None and not rejected.retryable
    assert overloaded is not None and overloaded.retryable


def test_rate_limit_carries_the_wait_in_numbers_and_in_words() -> None:
    error = map_sdk_error(
        _status_error(429, headers={"retry-after": "30"}, exception_class=anthropic.RateLimitError)
    )

    assert isinstance(error, RateLimitedError)
    assert error.retry_after == 30
    assert "about 30 seconds" in error.message


def test_rate_limit_without_a_wait_says_a_moment() -> None:
    error = map_sdk_error(_status_error(429, exception_class=anthropic.RateLimitError))

    assert isinstance(error, RateLimitedError)
    assert error.retry_after is None
    assert "a moment" in error.message


@pytest.mark.parametrize(
    "message",
    [
        "prompt is too long: 210000 tokens > 200000 maximum",
        "input length and `max_tokens` exceed context limit: 199000 + 8192 > 200000",
    ],
)
def test_a_too_long_conversation_is_request_too_large_even_as_a_400(message: str) -> None:
    error = map_sdk_error(
        _status_error(400, message=message, exception_class=anthropic.BadRequestError)
    )

    assert isinstance(error, RequestTooLargeError)
    assert not error.retryable
    assert message in (error.detail or "")


def test_other_invalid_requests_stay_bad_requests() -> None:
    error = map_sdk_error(
        _status_error(
            400, message="messages: roles must alternate", exception_class=anthropic.BadRequestError
        )
    )

    assert isinstance(error, BadRequestError)


@pytest.mark.parametrize(
    ("exception_class", "status", "error_type", "expected", "title"),
    [
        # A 5xx without its own class says by its type whether Claude is busy or slow.
        (anthropic.ServiceUnavailableError, 503, "overloaded_error", OverloadedError, None),
        (anthropic.InternalServerError, 500, "timeout_error", ServerError, "Claude took too long"),
        (anthropic.InternalServerError, 502, "api_error", ServerError, "Claude had a problem"),
        # A status the SDK has no class for is read from the body's type.
        (anthropic.APIStatusError, 418, "rate_limit_error", RateLimitedError, None),
        (
            anthropic.APIStatusError,
            418,
            "billing_error",
            PaymentDetailsError,
            "Payment details need attention",
        ),
        (anthropic.APIStatusError, 418, "something_new_error", BadRequestError, None),
    ],
)
def test_broad_classes_are_told_apart_by_the_error_type(
    exception_class: type[anthropic.APIStatusError],
    status: int,
    error_type: str,
    expected: type[ApiError],
    title: str | None,
) -> None:
    error = map_sdk_error(
        _status_error(status, error_type=error_type, exception_class=exception_class)
    )

    assert type(error) is expected
    if title is not None:
        assert error.title == title


def test_a_404_without_the_apis_error_body_is_a_wrong_address_not_a_missing_model() -> None:
    # What a web server that is not Anthropic's API answers (a wrong base URL): the SDK
    # keeps the body as text, so there is no error.type.
    response = httpx2.Response(404, text="<html><body>Not Found</body></html>", request=_REQUEST)
    sdk_error = anthropic.NotFoundError("Error code: 404", response=response, body=response.text)
    assert sdk_error.type is None

    error = map_sdk_error(sdk_error)

    assert isinstance(error, BadRequestError) and not isinstance(error, ModelNotFoundError)
    assert error.title == "Wrong API address?"
    assert "Settings → Advanced" in error.message
    assert not error.retryable


@pytest.mark.parametrize("message", ["model: claude-x", "Not found", "X is not available."])
def test_the_apis_404_is_a_missing_model_whatever_its_message(message: str) -> None:
    error = map_sdk_error(
        _status_error(404, message=message, exception_class=anthropic.NotFoundError)
    )
    assert isinstance(error, ModelNotFoundError)


def test_the_class_decides_even_when_the_status_says_otherwise() -> None:
    # What the SDK decided the response meant wins over the number it carries.
    error = map_sdk_error(
        _status_error(500, error_type="api_error", exception_class=anthropic.OverloadedError)
    )

    assert isinstance(error, OverloadedError)


@pytest.mark.parametrize("code", ["enforced_spend_limit_reached", "contract_spend_limit_reached"])
def test_a_spending_cap_is_not_a_rate_limit(code: str) -> None:
    error = map_sdk_error(
        _status_error(429, error_code=code, exception_class=anthropic.RateLimitError)
    )

    assert isinstance(error, PermissionDeniedError)
    assert error.title == "Spending limit reached"
    assert not error.retryable
    assert f"error_code={code}" in (error.detail or "")


def test_a_ramp_limit_is_a_rate_limit_with_its_wait() -> None:
    error = map_sdk_error(
        _status_error(
            429,
            error_code="ramp_limit_exceeded",
            headers={"retry-after": "12"},
            exception_class=anthropic.RateLimitError,
        )
    )

    assert isinstance(error, RateLimitedError)
    assert error.retry_after == 12


@pytest.mark.parametrize(
    ("error_type", "expected"),
    [
        ("overloaded_error", OverloadedError),
        ("rate_limit_error", RateLimitedError),
        ("api_error", ServerError),
        ("timeout_error", ServerError),
        ("authentication_error", ApiKeyRejectedError),
        ("request_too_large", RequestTooLargeError),
        ("something_new_error", StreamInterruptedError),
    ],
)
def test_an_error_event_mid_stream_maps_by_its_type(
    error_type: str, expected: type[ApiError]
) -> None:
    # The SDK raises a stream's `error` event as a status error with the stream's 200.
    error = map_sdk_error(_status_error(200, error_type=error_type))

    assert type(error) is expected
    assert error.detail is not None
    assert "error event in the stream" in error.detail


def test_connection_errors_and_timeouts_say_cant_reach_claude() -> None:
    refused = anthropic.APIConnectionError(request=_REQUEST)
    refused.__cause__ = httpx2.ConnectError("[Errno 111] Connection refused")

    connection = map_sdk_error(refused)
    timeout = map_sdk_error(anthropic.APITimeoutError(request=_REQUEST))

    assert isinstance(connection, ConnectionFailedError)
    assert "check your internet connection" in connection.message.lower()
    assert "Connection refused" in (connection.detail or "")
    assert isinstance(timeout, ConnectionFailedError)
    assert timeout.title == "Claude took too long"


@pytest.mark.parametrize(
    "error",
    [
        httpx2.RemoteProtocolError("peer closed connection without sending complete message body"),
        httpx2.ReadError("connection reset"),
        httpx2.ReadTimeout("timed out"),
    ],
)
def test_transport_errors_while_streaming_are_interruptions(error: Exception) -> None:
    mapped = map_sdk_error(error)

    assert isinstance(mapped, StreamInterruptedError)
    assert type(error).__name__ in (mapped.detail or "")


def test_unreadable_answers_and_other_sdk_errors_still_become_api_errors() -> None:
    response = httpx2.Response(200, json={"nonsense": True}, request=_REQUEST)

    invalid = map_sdk_error(anthropic.APIResponseValidationError(response, {"nonsense": True}))
    other = map_sdk_error(anthropic.AnthropicError("something odd"))

    assert isinstance(invalid, ServerError)
    assert type(other) is ApiError


def test_our_own_bugs_are_not_dressed_up_as_api_errors() -> None:
    assert map_sdk_error(ValueError("a bug")) is None
    assert map_sdk_error(KeyError("content")) is None


def test_partial_text_rides_on_the_error() -> None:
    error = with_partial_text(OverloadedError("busy"), "What arrived ")

    assert partial_text_of(error) == "What arrived "
    assert partial_text_of(OverloadedError("busy")) == ""


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({}, None),
        ({"retry-after": "20"}, 20.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after-ms": "250", "retry-after": "20"}, 0.25),  # ms wins, as in the SDK
        ({"retry-after-ms": "soon", "retry-after": "20"}, 20.0),
        ({"retry-after": "0"}, None),
        ({"retry-after": "whenever"}, None),
    ],
)
def test_retry_after_is_read_as_the_sdk_reads_it(
    headers: dict[str, str], expected: float | None
) -> None:
    assert parse_retry_after(headers) == expected


def test_retry_after_as_an_http_date() -> None:
    now = 1_800_000_000.0  # a fixed clock: the answer must not depend on the machine's
    in_a_minute = email.utils.formatdate(now + 60, usegmt=True)

    assert parse_retry_after({"retry-after": in_a_minute}, now=lambda: now) == 60
    assert parse_retry_after({"retry-after": in_a_minute}, now=lambda: now + 61) is None


@pytest.mark.parametrize(
    ("seconds", "words"),
    [
        (None, "a moment"),
        (0.2, "a second"),
        (20, "about 20 seconds"),
        (89, "about 89 seconds"),
        (120, "about 2 minutes"),
        (3000, "about 50 minutes"),
    ],
)
def test_waits_are_described_in_words(seconds: float | None, words: str) -> None:
    assert describe_wait(seconds) == words


def test_a_402_billing_error_asks_for_payment_details_not_credit() -> None:
    """402 `billing_error` is "an issue with your billing or payment information"
    (https://platform.claude.com/docs/en/api/errors), not an empty balance."""
    error = map_sdk_error(_status_error(402, exception_class=anthropic.PaymentRequiredError))
    assert isinstance(error, PaymentDetailsError)
    assert "payment details" in error.message and "credit" not in error.message
    assert error.link == BILLING_URL
