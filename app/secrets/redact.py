"""Keep API keys out of logs (DESIGN §9): a `redact` function and a logging filter.

The patterns are the ones summaries are cleaned with (app.core.redaction): Anthropic and
other vendors' keys, the values of `Authorization: Bearer …` and `x-api-key: …` headers
however they are printed (raw header, dict repr, `key=value`), passwords, tokens in URLs,
private keys. A key that looks like none of them, such as one for an
Anthropic-compatible server, is redacted too once it has been registered with
`register_secret` (the KeyStore does this for every key it sees).
"""

from __future__ import annotations

import logging
import threading
import traceback

from app.core.redaction import REDACTED, redact_secrets

# Secrets shorter than this are not registered: redacting a short word everywhere would
# mangle ordinary log text, and no real API key is that short.
MIN_SECRET_LENGTH = 8

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
    """Return `text` with every registered key, and every secret the patterns know,
    replaced by `[redacted]`."""
    for secret in _registered_secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    return redact_secrets(text)


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
