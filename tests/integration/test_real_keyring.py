"""KeyStore against the real Secret Service (gnome-keyring) on the session bus.

./scripts/test starts a throw-away gnome-keyring inside dbus-run-session and sets
CAIRN_REQUIRE_REAL_KEYRING=1, so there a missing Secret Service fails these tests.
Run by hand without that variable, they skip when no Secret Service is reachable.
Either way they use their own service name, so a developer's real Cairn key is safe.
"""

from __future__ import annotations

import functools
import os
import uuid
from collections.abc import Iterator

import pytest
from keyring.backends import SecretService

from app.secrets.keystore import KeyStore

# keyring installs SecretStorage on Linux only; elsewhere the module is skipped whole.
secretstorage = pytest.importorskip(
    "secretstorage", reason="the Secret Service is Linux's (SecretStorage is installed there only)"
)

REQUIRED = os.environ.get("CAIRN_REQUIRE_REAL_KEYRING") == "1"
KEY = "sk-ant-api03-integration-test-key_0123456789"


@functools.cache
def _secret_service_problem() -> str | None:
    """Why the Secret Service can't be used here, or None when it can."""
    if not os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
        return "no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set)"
    try:
        with secretstorage.dbus_init() as connection:
            if not secretstorage.check_service_availability(connection):
                return "nothing on the session bus provides org.freedesktop.secrets"
            # Not get_default_collection(): that would ask to create one, with a prompt.
            collection = secretstorage.Collection(connection)
            if collection.is_locked():
                return "the default keyring collection is locked"
    except Exception as exc:  # any failure means: not usable here
        return f"the Secret Service is unusable: {type(exc).__name__}: {exc}"
    return None


pytestmark = [
    pytest.mark.real_keyring,
    pytest.mark.skipif(
        not REQUIRED and _secret_service_problem() is not None,
        reason="no usable Secret Service; ./scripts/test provides one",
    ),
]


@pytest.fixture
def secret_service() -> SecretService.Keyring:
    problem = _secret_service_problem()
    if problem is not None:
        pytest.fail(
            f"CAIRN_REQUIRE_REAL_KEYRING=1 but {problem.rstrip('.!')}. ./scripts/test runs "
            "the suite inside dbus-run-session with an unlocked gnome-keyring; run it that way."
        )
    return SecretService.Keyring()


@pytest.fixture
def service_name(secret_service: SecretService.Keyring) -> Iterator[str]:
    """A service name of this test's own; whatever it stored is removed afterwards."""
    name = f"Cairn-test-{uuid.uuid4().hex}"
    yield name
    with secretstorage.dbus_init() as connection:
        collection = secretstorage.get_default_collection(connection)
        for item in collection.search_items({"service": name}):
            item.delete()


def _items_in_gnome_keyring(service: str) -> list[tuple[dict[str, str], bytes]]:
    """What the daemon itself holds for `service`, read without the keyring library."""
    with secretstorage.dbus_init() as connection:
        collection = secretstorage.get_default_collection(connection)
        return [
            (item.get_attributes(), item.get_secret())
            for item in collection.search_items({"service": service})
        ]


def test_the_key_is_saved_read_back_and_removed(
    secret_service: SecretService.Keyring, service_name: str
) -> None:
    store = KeyStore(secret_service, service=service_name)

    store.set(KEY)

    assert store.persistent
    assert KeyStore(SecretService.Keyring(), service=service_name).get() == KEY
    ((attributes, secret),) = _items_in_gnome_keyring(service_name)
    assert attributes["username"] == "anthropic-api-key"
    assert secret == KEY.encode()

    store.delete()

    assert store.get() is None
    assert _items_in_gnome_keyring(service_name) == []


def test_saving_again_replaces_the_key(
    secret_service: SecretService.Keyring, service_name: str
) -> None:
    store = KeyStore(secret_service, service=service_name)

    store.set("sk-ant-first-key-000000")
    store.set(KEY)

    assert store.get() == KEY
    assert [secret for _, secret in _items_in_gnome_keyring(service_name)] == [KEY.encode()]


def test_removing_a_key_that_was_never_saved_is_quiet(
    secret_service: SecretService.Keyring, service_name: str
) -> None:
    store = KeyStore(secret_service, service=service_name)

    store.delete()

    assert store.get() is None
