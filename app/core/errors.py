"""The error hierarchy.

Two families, as qutebrowser does it: `UserFacingError` is the user's or the
environment's doing (bad key, offline, read-only disk) and carries plain words
to show; `BugError` is ours, logged with a traceback and shown as
"Something went wrong".
"""

from __future__ import annotations


class CairnError(Exception):
    """Base of every error Cairn raises on purpose."""


class UserFacingError(CairnError):
    """Something the user or their machine caused; `message` is shown as is.

    Attributes:
        title: a short heading ("Can't reach Claude").
        message: one or two plain sentences saying what happened and what to do.
        retryable: whether a Retry button makes sense.
        retry_after: seconds the server asked us to wait, when it said so.
        link: a web page where the user can fix the cause (billing), or None.
    """

    title = "Something needs your attention"
    retryable = False
    link: str | None = None

    def __init__(
        self,
        message: str,
        *,
        title: str | None = None,
        retryable: bool | None = None,
        retry_after: float | None = None,
        detail: str | None = None,
        link: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        if title is not None:
            self.title = title
        if retryable is not None:
            self.retryable = retryable
        if link is not None:
            self.link = link
        self.retry_after = retry_after
        # Technical detail for the log only (never the API key: see app.secrets.redact).
        self.detail = detail


class InvalidInputError(UserFacingError):
    """The text typed cannot be sent or saved as it is."""

    title = "This message can't be sent"


class _TooLongError(UserFacingError):
    """A request or message that does not fit the model's window, with the figures.

    Attributes:
        tokens: estimated tokens of the request.
        limit: what the model can read with room kept for its reply (window − reserved output).
        context_window: the model's whole window.
        reserved_output: tokens kept free for the reply.
    """

    def __init__(
        self,
        message: str,
        *,
        tokens: int,
        limit: int,
        context_window: int,
        reserved_output: int,
        detail: str | None = None,
    ) -> None:
        super().__init__(message, detail=detail)
        self.tokens = tokens
        self.limit = limit
        self.context_window = context_window
        self.reserved_output = reserved_output


class ContextOverflowError(_TooLongError):
    """The conversation and the new message together would not fit in the model's window.

    Raised before anything is sent (DESIGN §3, invariant 3). Condensing earlier
    messages would make room, unlike `MessageTooLargeError` (a separate type: neither
    is caught as the other).
    """

    title = "Too long to send"


class MessageTooLargeError(_TooLongError, InvalidInputError):
    """The new message alone is larger than the model can read: only shortening it helps.

    `tokens` are the message's own.
    """

    title = "This message is too long"


# --- talking to Claude -------------------------------------------------------


class ApiError(UserFacingError):
    """Any failure talking to the Anthropic API.

    Attributes:
        partial_text: what a streamed reply had delivered before it failed ("" if nothing).
    """

    title = "Claude couldn't answer"
    retryable = True
    partial_text = ""


class ApiKeyMissingError(ApiError):
    title = "No API key yet"
    retryable = False


class ApiKeyRejectedError(ApiError):
    title = "API key not accepted"
    retryable = False


class PermissionDeniedError(ApiError):
    title = "Not allowed"
    retryable = False


class OutOfCreditError(PermissionDeniedError):
    """The account has no credit left: only adding credit helps, never a retry."""

    title = "No credit left"


class PaymentDetailsError(PermissionDeniedError):
    """A 402 `billing_error`: the account's payment details need attention (a card
    declined or expired), not a lack of credit; only fixing them helps."""

    title = "Payment details need attention"


class SpendLimitError(PermissionDeniedError):
    """A spending limit (the user's own, or the usage tier's monthly cap) was reached."""

    title = "Spending limit reached"


class RateLimitedError(ApiError):
    title = "Too many requests"


class OverloadedError(ApiError):
    title = "Claude is busy"


class ServerError(ApiError):
    title = "Claude had a problem"


class ConnectionFailedError(ApiError):
    title = "Can't reach Claude"


class RequestTooLargeError(ApiError):
    title = "Too much to send"
    retryable = False


class BadRequestError(ApiError):
    title = "Claude couldn't use this request"
    retryable = False


class ModelNotFoundError(ApiError):
    title = "Model not available"
    retryable = False


class StreamInterruptedError(ApiError):
    title = "The reply was cut off"


class RequestStoppedError(ApiError):
    """The user stopped a request before it was answered (not a failure to show)."""

    title = "Stopped"
    retryable = False


# --- the machine ---------------------------------------------------------------


class StorageError(UserFacingError):
    """The data folder or database cannot be used."""

    title = "Cairn can't save its data"


class DatabaseTooNewError(StorageError):
    title = "This data needs a newer Cairn"


class AlreadyRunningError(UserFacingError):
    title = "Cairn is already running"


class KeyringUnavailableError(UserFacingError):
    title = "No password store"


class BugError(CairnError):
    """Our mistake. Logged with a traceback; the user sees "Something went wrong"."""


class SummaryConflictError(CairnError):
    """The conversation changed while a summary was being made; nothing was committed.

    Not shown to the user: the engine simply plans again later.
    """


class StructuredOutputError(CairnError):
    """The summarizer model answered, but not with the structured output asked for:
    no tool call, a reply cut off by `max_tokens`, or an input that is not an object.

    Not shown to the user: the summarizer falls back to a rule-based summary. Not
    worth retrying either — the same request tends to give the same kind of answer.

    Attributes:
        detail: what was wrong, for the log.
    """

    def __init__(self, message: str, *, detail: str | None = None) -> None:
        super().__init__(message)
        self.detail = detail
