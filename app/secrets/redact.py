"""Keep API keys out of logs (DESIGN §9): a `redact` function and a logging filter.

Patterns catch Anthropic keys (`sk-ant-…`) and the values of `Authorization: Bearer …`
and `x-api-key: …` headers however they are printed (raw header, dict repr, `key=value`).
A key that doesn't look like either, such as one for an Anthropic-compatible server, is
redacted too once it has been registered with `register_secret` (the KeyStore does this
for every key it sees).
"""

from __future__ import annotations

import logging
import re
import threading
import traceback

REDACTED = "[redacted]"

# Secrets shorter than this are not registered: redacting a short word everywhere would
# mangle ordinary log text, and no real API key is that short.
MIN_SECRET_LENGTH = 8

_KEY_PATTERN = re.compile(r"sk-ant-[A-Za-z0-9_\-]+")
# "Bearer abc", "Authorization: Bearer abc"; token characters per RFC 6750 (b64token).
# Both header patterns skip a value that an earlier replacement already redacted; the
# atomic group (?>…) stops the x-api-key prefix from backtracking past that check.
_BEARER_PATTERN = re.compile(r"(\bBearer\s+)(?!\[redacted\])[A-Za-z0-9\-._~+/]+=*", re.IGNORECASE)
# "x-api-key: abc", "{'x-api-key': 'abc'}", "('x-api-key', 'abc')", "x-api-key=abc".
_HEADER_PATTERN = re.compile(
    r"""((?>\bx-api-key["']?\s*[:=,]\s*(?:b(?=["']))?["']?))(?!\[redacted\])[^\s"',;}\])]+""",
    re.IGNORECASE,
)

_secrets_lock = threading.Lock()
# Replaced whole (never mutated) so `redact` can read it without taking the lock.
_registered_secrets: tuple[str, ...] = ()


def register_secret(value: str) -> None:
    """Redact this exact text from now on, wherever it appears (e.g. the user's own key)."""
    global _registered_secrets
    value = value.strip()
    if len(value) < MIN_SECRET_LENGTH:
        return
    with _secrets_lock:
        if value in _registered_secrets:
            return
        # Longest first, so a secret that contains another is replaced whole.
        _registered_secrets = tuple(sorted((*_registered_secrets, value), key=len, reverse=True))


def redact(text: str) -> str:
    """Return `text` with every API key and auth header value replaced by `[redacted]`."""
    for secret in _registered_secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    text = _KEY_PATTERN.sub(REDACTED, text)
    text = _BEARER_PATTERN.sub(rf"\g<1>{REDACTED}", text)
    return _HEADER_PATTERN.sub(rf"\g<1>{REDACTED}", text)


class RedactingFilter(logging.Filter):
    """Redacts the message, its arguments and any traceback of every record it sees.

    Put it on handlers, not loggers: a handler's filter also sees records propagated
    from child loggers. The record itself is changed, so handlers that run after this
    one get the redacted text too.
    """

    add_secret = staticmethod(register_secret)

    def filter(self, record: logging.LogRecord) -> bool:
        self._redact_message(record)
        if record.exc_info and not record.exc_text:
            # Format the traceback now, as logging.Formatter would, so the text that
            # handlers print (they reuse exc_text) is the redacted one.
            record.exc_text = "".join(traceback.format_exception(*record.exc_info)).rstrip("\n")
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        message = getattr(record, "message", None)
        if isinstance(message, str):
            record.message = redact(message)
        return True

    @staticmethod
    def _redact_message(record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()
        except Exception:  # a bad format string: keep everything, but redacted
            text = f"{record.msg!s} {record.args!r}"
        # The arguments are merged into the message, so no unredacted copy of them
        # stays on the record for a later handler or formatter to print.
        record.msg = redact(text)
        record.args = None
