"""The API key's home: the system's password store, or this session's memory (DESIGN §8, §9).

The key is never written anywhere else. When no password store works, `set` raises
`KeyringUnavailableError` and the UI may offer "use for this session only", which calls
`set_session_only`: the key then lives in this object until the app quits.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from app.core.errors import InvalidInputError, KeyringUnavailableError
from app.secrets.redact import redact, register_secret

if TYPE_CHECKING:
    # keyring is imported on first use: it costs ~40 ms, before the window's first paint.
    from keyring.backend import KeyringBackend

log = logging.getLogger(__name__)

SERVICE_NAME = "Cairn"
USERNAME = "anthropic-api-key"

NO_KEYRING_MESSAGE = (
    "Your system has no password store Cairn can use, so the key can't be saved. "
    "You can use it for this session only."
)
DELETE_FAILED_MESSAGE = (
    "Cairn couldn't reach your system's password store to remove the key. "
    "Unlock it, or open it yourself and delete the entry named “Cairn”."
)


def normalize_key(key: str) -> str:
    """Strip surrounding whitespace and check that what's left can be an API key.

    Deliberately light: keys for Anthropic-compatible servers need not start with
    `sk-ant-`, so only what can't be a key (empty, several lines, spaces) is refused.
    """
    key = key.strip()
    if not key:
        raise InvalidInputError(
            "The API key is empty. Paste the key you copied from the Anthropic Console.",
            title="No API key entered",
        )
    if "\n" in key or "\r" in key:
        raise InvalidInputError(
            "An API key is a single line. Copy just the key and paste it again.",
            title="That doesn't look like an API key",
        )
    if any(character.isspace() or not character.isprintable() for character in key):
        raise InvalidInputError(
            "An API key has no spaces in it. Copy just the key and paste it again.",
            title="That doesn't look like an API key",
        )
    return key


class KeyStore:
    """Reads, saves and removes the Anthropic API key.

    Thread-safe: workers may call `get` while the UI thread calls `set`. The key is
    read from the password store once and then kept in memory: every message needs
    it, and one read through the Secret Service costs about 30 ms (new D-Bus
    connections and a key exchange) — on the GUI thread, each send. `set`,
    `set_session_only` and `delete` keep the memory in step; a failed read is not
    remembered, so a store unlocked later is read again.

    Attributes:
        persistent: False while the key is held in memory only (session-only).
    """

    def __init__(
        self,
        backend: KeyringBackend | None = None,
        *,
        service: str = SERVICE_NAME,
        username: str = USERNAME,
    ) -> None:
        """`backend` defaults to whatever `keyring` chose for this system, looked up on
        every call, so `keyring.set_keyring` (tests, user config) takes effect."""
        self._backend = backend
        self._service = service
        self._username = username
        self._lock = threading.Lock()
        self._session_key: str | None = None
        self._read = False  # the password store was read successfully, into _stored
        self._stored: str | None = None
        self._warned_unavailable = False

    @property
    def persistent(self) -> bool:
        with self._lock:
            return self._session_key is None

    def get(self) -> str | None:
        """The key, or None when there is none. Never raises because of the keyring."""
        with self._lock:
            if self._session_key is not None:
                return self._session_key
            if self._read:
                return self._stored
            try:
                key = self._keyring().get_password(self._service, self._username)
            except Exception as exc:  # any failure: see _describe
                self._warn_unavailable("read the API key", exc)
                return None
            self._stored = key.strip() if key else None
            self._read = True
            if self._stored:
                register_secret(self._stored)
            return self._stored

    def set(self, key: str) -> None:
        """Save the key in the password store.

        Raises:
            InvalidInputError: the text can't be an API key.
            KeyringUnavailableError: no password store works; nothing was saved.
        """
        key = normalize_key(key)
        register_secret(key)
        with self._lock:
            try:
                self._keyring().set_password(self._service, self._username, key)
            except Exception as exc:  # any failure: see _describe
                self._warn_unavailable("save the API key", exc)
                raise KeyringUnavailableError(NO_KEYRING_MESSAGE, detail=_describe(exc)) from exc
            # The saved key replaces any session-only one.
            self._session_key = None
            self._stored, self._read = key, True
        log.info("API key saved in the password store")

    def set_session_only(self, key: str) -> None:
        """Keep the key in memory until the app quits; never written anywhere.

        Raises:
            InvalidInputError: the text can't be an API key.
        """
        key = normalize_key(key)
        register_secret(key)
        with self._lock:
            self._session_key = key
        log.info("API key kept in memory for this session only")

    def delete(self) -> None:
        """Forget the key, in memory and in the password store. Does nothing if there is none.

        Raises:
            KeyringUnavailableError: a password store exists but refused; the key may
                still be saved there.
        """
        from keyring.errors import NoKeyringError, PasswordDeleteError

        with self._lock:
            self._session_key = None
            self._read = False  # read again next time, whatever happens below
            try:
                self._keyring().delete_password(self._service, self._username)
            except PasswordDeleteError:
                pass  # nothing was saved
            except NoKeyringError:
                pass  # no password store, so nothing can have been saved
            except Exception as exc:  # any failure: see _describe
                self._warn_unavailable("remove the API key", exc)
                raise KeyringUnavailableError(DELETE_FAILED_MESSAGE, detail=_describe(exc)) from exc
            self._stored, self._read = None, True
        log.info("API key removed")

    def _keyring(self) -> KeyringBackend:
        if self._backend is not None:
            return self._backend
        import keyring

        backend: KeyringBackend = keyring.get_keyring()
        return backend

    def _warn_unavailable(self, action: str, exc: BaseException) -> None:
        # Once per KeyStore: with no password store at all every get() would fail alike.
        level = logging.DEBUG if self._warned_unavailable else logging.WARNING
        self._warned_unavailable = True
        log.log(level, "Couldn't %s: the password store failed (%s)", action, _describe(exc))


def _describe(exc: BaseException) -> str:
    """One line naming what went wrong, for the log.

    Backends fail in many ways besides `keyring.errors.KeyringError`: D-Bus errors from
    jeepney or dbus-python, `secretstorage` exceptions, OSError from a vanished bus
    socket, RuntimeError from KWallet. So the callers catch Exception: any failure of
    the store means "no password store", never a crash.
    """
    return redact(f"{type(exc).__module__}.{type(exc).__qualname__}: {exc}")
