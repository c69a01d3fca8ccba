"""Where the API key lives (the system's password store) and how it stays out of logs."""

# `redact` the function is not re-exported: it would hide the `app.secrets.redact` module.
from app.secrets.keystore import KeyStore
from app.secrets.redact import RedactingFilter, register_secret

__all__ = ["KeyStore", "RedactingFilter", "register_secret"]
