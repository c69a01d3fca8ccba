"""KeyStore against the in-memory keyring, a broken one, and keyring's own "no keyring"."""

from __future__ import annotations

import logging

import keyring
import pytest
from keyring.backends import fail
from keyring.errors import InitError, KeyringLocked, NoKeyringError, PasswordSetError

import app.secrets.redact as redact_module
from app.core.errors import InvalidInputError, KeyringUnavailableError
from app.secrets.keystore import NO_KEYRING_MESSAGE, SERVICE_NAME, USERNAME, KeyStore
from app.secrets.redact import redact
from tests.fakes.keyring_backend import MemoryKeyring

KEY = "sk-ant-api03-Abc_def-123456789"
ENTRY = (SERVICE_NAME, USERNAME)


@pytest.fixture(autouse=True)
def fresh_secret_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Secrets registered by one test must not leak into the next."""
    monkeypatch.setattr(redact_module, "_registered_secrets", ())


class DBusLikeError(Exception):
    """Stands in for jeepney's / dbus-python's errors, which are not KeyringErrors."""


BROKEN_KEYRING_ERRORS = [
    pytest.param(NoKeyringError("No recommended backend was available."), id="no-keyring"),
    pytest.param(InitError("Failed to unlock the collection!"), id="init-error"),
    pytest.param(KeyringLocked("Failed to unlock the item!"), id="locked"),
    pytest.param(PasswordSetError("Can't store password"), id="set-error"),
    pytest.param(DBusLikeError("org.freedesktop.DBus.Error.ServiceUnknown"), id="dbus"),
    pytest.param(ConnectionRefusedError(111, "Connection refused"), id="bus-gone"),
]


def _records_at(caplog: pytest.LogCaptureFixture, level: int) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.levelno == level]


# --- a working keyring --------------------------------------------------------


def test_set_then_get_reads_the_key_back_from_the_keyring(memory_keyring: MemoryKeyring) -> None:
    store = KeyStore()
    store.set(KEY)

    assert memory_keyring.passwords == {ENTRY: KEY}
    assert KeyStore().get() == KEY  # a new instance: it really came from the keyring
    assert store.persistent


def test_get_without_a_key_returns_none(memory_keyring: MemoryKeyring) -> None:
    assert KeyStore().get() is None
    assert KeyStore().persistent


def test_set_strips_surrounding_whitespace(memory_keyring: MemoryKeyring) -> None:
    KeyStore().set(f"  {KEY}\n")

    assert memory_keyring.passwords[ENTRY] == KEY


def test_keys_for_compatible_servers_need_not_look_like_anthropic_keys(
    memory_keyring: MemoryKeyring,
) -> None:
    KeyStore().set("local-proxy-token-42")

    assert KeyStore().get() == "local-proxy-token-42"


@pytest.mark.parametrize(
    "bad_key",
    ["", "   ", "\n\t", f"{KEY}\n{KEY}", f"{KEY}\r\nmore", "sk-ant-abc def", "sk-ant-\x00abc"],
    ids=["empty", "spaces", "blank-lines", "two-lines", "crlf", "inner-space", "control-char"],
)
def test_set_refuses_what_cannot_be_a_key(memory_keyring: MemoryKeyring, bad_key: str) -> None:
    store = KeyStore()

    with pytest.raises(InvalidInputError) as caught:
        store.set(bad_key)
    with pytest.raises(InvalidInputError):
        store.set_session_only(bad_key)

    assert memory_keyring.passwords == {}
    assert store.get() is None
    message = caught.value.message
    assert message.endswith(".") and "API key" in message
    assert "Error" not in message  # plain words, not a technical name


def test_delete_removes_the_key(memory_keyring: MemoryKeyring) -> None:
    store = KeyStore()
    store.set(KEY)

    store.delete()

    assert memory_keyring.passwords == {}
    assert store.get() is None


def test_delete_without_a_key_does_nothing(memory_keyring: MemoryKeyring) -> None:
    KeyStore().delete()

    assert memory_keyring.passwords == {}


def test_an_injected_backend_is_used_instead_of_the_global_keyring(
    memory_keyring: MemoryKeyring,
) -> None:
    own_backend = MemoryKeyring()
    KeyStore(own_backend, service="Cairn-test", username="someone").set(KEY)

    assert own_backend.passwords == {("Cairn-test", "someone"): KEY}
    assert memory_keyring.passwords == {}


def test_keys_read_from_the_keyring_are_redacted_from_logs(memory_keyring: MemoryKeyring) -> None:
    # A key saved by an earlier run, in a shape the patterns don't know.
    memory_keyring.passwords[ENTRY] = "custom-server-key-0123456789"

    assert KeyStore().get() == "custom-server-key-0123456789"
    assert redact("sent custom-server-key-0123456789 to proxy") == "sent [redacted] to proxy"


# --- a keyring that fails -----------------------------------------------------


@pytest.mark.parametrize("error", BROKEN_KEYRING_ERRORS)
def test_get_on_a_broken_keyring_warns_and_returns_none(
    memory_keyring: MemoryKeyring, caplog: pytest.LogCaptureFixture, error: Exception
) -> None:
    memory_keyring.fail_with = error

    assert KeyStore().get() is None

    warnings = _records_at(caplog, logging.WARNING)
    assert len(warnings) == 1
    assert type(error).__name__ in warnings[0].getMessage()


@pytest.mark.parametrize("error", BROKEN_KEYRING_ERRORS)
def test_set_on_a_broken_keyring_raises_plain_words_and_saves_nothing(
    memory_keyring: MemoryKeyring, error: Exception
) -> None:
    memory_keyring.fail_with = error
    store = KeyStore()

    with pytest.raises(KeyringUnavailableError) as caught:
        store.set(KEY)

    assert caught.value.message == NO_KEYRING_MESSAGE
    assert caught.value.title == "No password store"
    assert KEY not in str(caught.value.detail)
    assert memory_keyring.passwords == {}
    assert store.get() is None  # nothing was kept by the failed set()


@pytest.mark.parametrize("error", BROKEN_KEYRING_ERRORS)
def test_session_only_key_is_used_but_never_written(
    memory_keyring: MemoryKeyring, error: Exception
) -> None:
    memory_keyring.fail_with = error
    store = KeyStore()
    with pytest.raises(KeyringUnavailableError):
        store.set(KEY)

    store.set_session_only(f" {KEY} ")

    assert store.get() == KEY
    assert not store.persistent
    assert memory_keyring.passwords == {}
    assert KeyStore().get() is None  # the next run starts without it


def test_a_repeatedly_failing_keyring_warns_once(
    memory_keyring: MemoryKeyring, caplog: pytest.LogCaptureFixture
) -> None:
    memory_keyring.fail_with = InitError("Failed to unlock the collection!")
    store = KeyStore()

    for _ in range(3):
        assert store.get() is None

    assert len(_records_at(caplog, logging.WARNING)) == 1


def test_the_key_never_reaches_the_log_even_inside_a_backend_error(
    memory_keyring: MemoryKeyring, caplog: pytest.LogCaptureFixture
) -> None:
    secret = "proxy-token-without-a-known-shape"
    memory_keyring.fail_with = PasswordSetError(f"refused to store {secret}")
    store = KeyStore()

    with pytest.raises(KeyringUnavailableError) as caught:
        store.set(secret)
    store.set_session_only(secret)
    store.get()

    assert caplog.records, "expected the failure to be logged"
    assert secret not in caplog.text
    assert secret not in str(caught.value.detail)
    assert "[redacted]" in caplog.text


def test_delete_on_a_broken_keyring_says_so_and_forgets_the_session_key(
    memory_keyring: MemoryKeyring,
) -> None:
    store = KeyStore()
    store.set_session_only(KEY)
    memory_keyring.fail_with = KeyringLocked("Failed to unlock the item!")

    with pytest.raises(KeyringUnavailableError) as caught:
        store.delete()

    assert "password store" in caught.value.message
    assert store.get() is None


# --- switching between the keyring and memory ---------------------------------


def test_a_session_only_key_wins_over_a_saved_one(memory_keyring: MemoryKeyring) -> None:
    memory_keyring.passwords[ENTRY] = "sk-ant-older-saved-key"
    store = KeyStore()

    store.set_session_only(KEY)

    assert store.get() == KEY
    assert memory_keyring.passwords[ENTRY] == "sk-ant-older-saved-key"


def test_saving_after_session_only_makes_the_key_persistent(
    memory_keyring: MemoryKeyring,
) -> None:
    store = KeyStore()
    store.set_session_only("sk-ant-session-key")

    store.set(KEY)

    assert store.persistent
    assert store.get() == KEY
    assert memory_keyring.passwords[ENTRY] == KEY


def test_delete_forgets_a_session_only_key(memory_keyring: MemoryKeyring) -> None:
    store = KeyStore()
    store.set_session_only(KEY)

    store.delete()

    assert store.get() is None
    assert store.persistent


# --- keyring's own fail backend: what a machine without any password store has --


def test_no_keyring_at_all_offers_session_only(caplog: pytest.LogCaptureFixture) -> None:
    # The autouse memory_keyring fixture restores the previous backend afterwards.
    keyring.set_keyring(fail.Keyring())
    store = KeyStore()

    assert store.get() is None
    with pytest.raises(KeyringUnavailableError) as caught:
        store.set(KEY)
    assert isinstance(caught.value.__cause__, NoKeyringError)
    store.set_session_only(KEY)

    assert store.get() == KEY
    assert not store.persistent
    assert KEY not in caplog.text
    assert any("NoKeyringError" in r.getMessage() for r in _records_at(caplog, logging.WARNING))


def test_delete_with_no_keyring_at_all_is_quiet() -> None:
    store = KeyStore(fail.Keyring())
    store.set_session_only(KEY)

    store.delete()

    assert store.get() is None


# --- read once --------------------------------------------------------------------


class CountingKeyring(MemoryKeyring):
    def __init__(self) -> None:
        super().__init__()
        self.reads = 0

    def get_password(self, service: str, username: str) -> str | None:
        self.reads += 1
        return super().get_password(service, username)


def test_the_store_is_read_once_and_kept_in_step() -> None:
    backend = CountingKeyring()
    backend.passwords[ENTRY] = KEY
    store = KeyStore(backend)
    assert [store.get() for _ in range(5)] == [KEY] * 5
    assert backend.reads == 1, "each send must not cost a trip to the password store"
    store.set("sk-ant-api03-Another_key-987654321")
    assert store.get() == "sk-ant-api03-Another_key-987654321"
    store.delete()
    assert store.get() is None
    assert backend.reads == 1


def test_a_failed_read_is_tried_again() -> None:
    backend = CountingKeyring()
    backend.passwords[ENTRY] = KEY
    backend.fail_with = KeyringLocked("Failed to unlock the item!")
    store = KeyStore(backend)
    assert store.get() is None
    backend.fail_with = None  # the user unlocked the store
    assert store.get() == KEY
