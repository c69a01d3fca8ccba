"""An in-memory keyring backend, so unit tests never touch the real password store."""

from __future__ import annotations

from keyring.backend import KeyringBackend
from keyring.errors import PasswordDeleteError


class MemoryKeyring(KeyringBackend):
    """Keeps passwords in a dict. `fail_with` makes every call raise that error."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.passwords: dict[tuple[str, str], str] = {}
        self.fail_with: Exception | None = None

    def _check(self) -> None:
        if self.fail_with is not None:
            raise self.fail_with

    def get_password(self, service: str, username: str) -> str | None:
        self._check()
        return self.passwords.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self._check()
        self.passwords[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self._check()
        try:
            del self.passwords[(service, username)]
        except KeyError:
            raise PasswordDeleteError("no such password") from None
