"""The API key and the provider made from it, without Qt.

`Credentials` is the one owner of the key (the password store, else the SDK's
ANTHROPIC_API_KEY) and of the long-lived providers made from a key and an
address; the `ChatService` asks it for both and says what changed.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from app.chat.runner import Job, JobRunner
from app.core.errors import UserFacingError
from app.llm.provider import ChatProvider
from app.secrets.keystore import KeyStore

ProviderFactory = Callable[[str, str | None], ChatProvider]
"""(api_key, base_url) -> provider."""


class Credentials:
    """The key Cairn uses, and one provider per key and address."""

    def __init__(
        self,
        keystore: KeyStore,
        provider_factory: ProviderFactory,
        base_url: Callable[[], str | None],
        runner: JobRunner,
        saved: Callable[[], None] = lambda: None,
    ) -> None:
        """`saved` is called once a key was kept (the models it offers are listed)."""
        self._keystore = keystore
        self._saved = saved
        self._provider_factory = provider_factory
        self._base_url = base_url
        self._runner = runner
        self._providers: dict[tuple[str, str | None], ChatProvider] = {}

    def api_key(self) -> str | None:
        """The key to use: the one the user gave Cairn, else the SDK's ANTHROPIC_API_KEY."""
        return self._keystore.get() or os.environ.get("ANTHROPIC_API_KEY") or None

    def has_key(self) -> bool:
        return self.api_key() is not None

    def stored_key(self) -> str | None:
        """The key Cairn keeps (not the environment's), for showing it masked."""
        return self._keystore.get()

    @property
    def persistent(self) -> bool:
        """False while the key is kept in memory for this session only."""
        return self._keystore.persistent

    @property
    def env_key_present(self) -> bool:
        """ANTHROPIC_API_KEY is set."""
        return bool(os.environ.get("ANTHROPIC_API_KEY"))

    def save(self, key: str, *, session_only: bool = False) -> None:
        """Keep `key` in the password store (or, asked so, in memory only). Raises
        `InvalidInputError` (not a key), `KeyringUnavailableError` (nothing saved)."""
        if session_only:
            self._keystore.set_session_only(key)
        else:
            self._keystore.set(key)
        self._saved()

    def remove(self) -> None:
        """Forget the key. Raises `KeyringUnavailableError` when the store refused."""
        self._keystore.delete()

    def check(self, key: str, done: Callable[[UserFacingError | None], None]) -> None:
        """Ask the server whether `key` works; `done(None)` or `done(error)`, later."""
        provider_factory, base_url = self._provider_factory, self._base_url()

        def check(_job: object) -> None:
            provider_factory(key, base_url).check_key()

        self._runner.start(
            Job("check-key", check, done=lambda _none: done(None), failed=lambda e: done(e))
        )

    def provider(self) -> ChatProvider | None:
        """One long-lived provider per key and address (its connections are reused)."""
        key = self.api_key()
        if key is None:
            return None
        identity = (key, self._base_url())
        provider = self._providers.get(identity)
        if provider is None:
            provider = self._providers[identity] = self._provider_factory(*identity)
        return provider

    def close(self) -> None:
        """Close every provider made (on shutdown)."""
        for provider in self._providers.values():
            close = getattr(provider, "close", None)
            if callable(close):
                close()
        self._providers.clear()
