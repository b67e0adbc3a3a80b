"""Secrets in the OS keyring: a real Secret Service, no keyring at all, and keyrings that hang."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import keyring
import keyring.backend
import keyring.core
import pytest
from keyring.backend import KeyringBackend
from keyring.backends import chainer, fail, null
from keyring.errors import PasswordDeleteError
from secret_service import (
    REQUIRE_ENV,
    SecretService,
    SessionBus,
    forget_detection,
    private_keyring,
    redetect,
    require,
    start_secret_service,
    start_session_bus,
)

from ohtui.settings.secrets import (
    SERVICE,
    KeyringStatus,
    ResolvedKey,
    SecretStore,
    SecretStoreError,
    probe_keyring,
    provider_env_var,
    provider_of,
    resolve_api_key,
    valid_secret_name,
)

AVAILABLE = KeyringStatus(True, "test", None)


def _test_only(cls: type[KeyringBackend]) -> type[KeyringBackend]:
    # keyring registers every backend class for auto-detection; keep ours out of it.
    KeyringBackend._classes.discard(cls)
    return cls


@_test_only
class DictKeyring(KeyringBackend):
    """A safe-looking backend that keeps entries in a dict and records every call."""

    priority: float = 5

    def __init__(self) -> None:
        super().__init__()
        self.entries: dict[tuple[str, str], str] = {}
        self.calls: list[str] = []

    def get_password(self, service: str, username: str) -> str | None:
        self.calls.append(f"get {username}")
        return self.entries.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.calls.append(f"set {username}")
        self.entries[service, username] = password

    def delete_password(self, service: str, username: str) -> None:
        self.calls.append(f"delete {username}")
        if self.entries.pop((service, username), None) is None:
            raise PasswordDeleteError("no such password")


@_test_only
class PlaintextKeyring(DictKeyring):
    """Stands in for keyrings.alt.file.PlaintextKeyring (not installed), even at a high priority."""


PlaintextKeyring.__module__ = "keyrings.alt.file"


@_test_only
class LowPriorityKeyring(DictKeyring):
    """A backend keyring itself does not recommend (priority below 1)."""

    priority = 0.5


@_test_only
class SlowKeyring(DictKeyring):
    """A keyring whose every call waits (up to 10 s) until the test lets it go."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()

    def get_password(self, service: str, username: str) -> str | None:
        self.release.wait(10)
        return super().get_password(service, username)

    def set_password(self, service: str, username: str, password: str) -> None:
        self.release.wait(10)
        super().set_password(service, username, password)


@_test_only
class LeakyKeyring(DictKeyring):
    """A keyring whose errors quote the password they were given."""

    def set_password(self, service: str, username: str, password: str) -> None:
        raise RuntimeError(f"cannot store {password!r} for {username}")


def _chain(*members: KeyringBackend) -> KeyringBackend:
    cls = _test_only(type("ChainerForTest", (chainer.ChainerBackend,), {"backends": members}))
    return cls()


UseBackend = Callable[[KeyringBackend], None]


@pytest.fixture
def use_backend(monkeypatch: pytest.MonkeyPatch) -> UseBackend:
    """A function that makes a backend the current keyring for this test only."""
    monkeypatch.setattr(keyring.core, "_keyring_backend", None)
    monkeypatch.delenv("PYTHON_KEYRING_BACKEND", raising=False)
    return keyring.core.set_keyring


@pytest.fixture(scope="module")
def shared_service() -> Iterator[SecretService]:
    """One gnome-keyring for this module's round-trip tests (they use unique entry names)."""
    service = start_secret_service()
    try:
        yield service
    finally:
        service.bus.close()


@pytest.fixture
def secret_service(
    shared_service: SecretService, monkeypatch: pytest.MonkeyPatch
) -> Iterator[SecretService]:
    """keyring pointed at the private Secret Service, found by keyring's own detection."""
    redetect(monkeypatch, shared_service.env)
    yield shared_service
    forget_detection()


@pytest.fixture
def own_service(monkeypatch: pytest.MonkeyPatch) -> Iterator[SecretService]:
    """A fresh gnome-keyring for a test that locks or freezes it."""
    with private_keyring(monkeypatch) as service:
        yield service


@pytest.fixture
def empty_bus(monkeypatch: pytest.MonkeyPatch) -> Iterator[SessionBus]:
    """A D-Bus session bus with no Secret Service on it."""
    bus = start_session_bus()
    redetect(monkeypatch, bus.env)
    try:
        yield bus
    finally:
        bus.close()
        forget_detection()


def _provider() -> str:
    return f"test-{uuid.uuid4().hex[:8]}"


# --- the real Secret Service ------------------------------------------------------------------


def test_probe_finds_the_real_secret_service(secret_service: SecretService) -> None:
    assert probe_keyring() == KeyringStatus(True, "Secret Service", None)


def test_api_keys_round_trip_through_the_secret_service(secret_service: SecretService) -> None:
    store = SecretStore(probe_keyring())
    provider = _provider()
    assert store.persistent
    assert store.api_key(provider) is None
    store.set_api_key(provider, "sk-first")
    store.set_api_key(provider, "sk-second")
    assert SecretStore(probe_keyring()).api_key(provider) == "sk-second"
    assert keyring.get_password(SERVICE, f"api-key:{provider}") == "sk-second"
    store.set_api_key(provider, None)
    assert store.api_key(provider) is None
    store.set_api_key(provider, "")  # deleting what is not there is not an error
    assert keyring.get_password(SERVICE, f"api-key:{provider}") is None


def test_user_secrets_are_one_json_entry(secret_service: SecretService) -> None:
    store = SecretStore(probe_keyring())
    secrets = {"GITHUB_TOKEN": "ghp_abc", "_db_password2": "p@ss word"}
    try:
        store.set_user_secrets(secrets)
        assert SecretStore(probe_keyring()).user_secrets() == secrets
        assert json.loads(keyring.get_password(SERVICE, "user-secrets") or "") == secrets
        store.set_user_secrets({"ONLY": "one"})
        assert store.user_secrets() == {"ONLY": "one"}
    finally:
        store.set_user_secrets({})
    assert store.user_secrets() == {}
    assert keyring.get_password(SERVICE, "user-secrets") is None


@pytest.mark.parametrize("bad", ["1ABC", "MY-TOKEN", "has space", "", "ÄPFEL"])
def test_an_invalid_secret_name_is_named_and_no_value_is_shown(
    secret_service: SecretService, bad: str
) -> None:
    assert not valid_secret_name(bad)
    store = SecretStore(probe_keyring())
    store.set_user_secrets({"KEPT": "kept-value"})
    try:
        with pytest.raises(SecretStoreError) as caught:
            store.set_user_secrets({"GOOD": "s3cret-good", bad: "s3cret-bad"})
        assert repr(bad) in str(caught.value)
        assert "s3cret" not in str(caught.value)
        assert store.user_secrets() == {"KEPT": "kept-value"}  # nothing was replaced
    finally:
        store.set_user_secrets({})


def test_the_cipher_key_is_made_once_and_kept(secret_service: SecretService) -> None:
    from cryptography.fernet import Fernet

    with contextlib.suppress(PasswordDeleteError):
        keyring.delete_password(SERVICE, "conversation-cipher-key")
    key = SecretStore(probe_keyring()).cipher_key()
    assert key is not None
    assert SecretStore(probe_keyring()).cipher_key() == key
    assert keyring.get_password(SERVICE, "conversation-cipher-key") == key
    assert Fernet(key).decrypt(Fernet(key).encrypt(b"token")) == b"token"


def test_resolve_api_key_falls_back_to_the_keyring(secret_service: SecretService) -> None:
    store = SecretStore(probe_keyring())
    store.set_api_key("anthropic", "sk-ant-keyring")
    try:
        assert resolve_api_key("anthropic/claude-x", store, {}) == ResolvedKey(
            "sk-ant-keyring", "keyring"
        )
    finally:
        store.set_api_key("anthropic", None)


@pytest.mark.timeout(20)  # a regression here hangs: fail fast, not after 180 s
def test_a_locked_secret_service_is_reported_quickly(own_service: SecretService) -> None:
    own_service.lock()  # and no prompter on the bus can ask for the password
    started = time.monotonic()
    status = probe_keyring()
    assert time.monotonic() - started < 2
    assert not status.available
    assert status.problem is not None and "locked" in status.problem
    with pytest.raises(SecretStoreError, match="the OS keyring is locked"):
        SecretStore(AVAILABLE).api_key("openai")


@pytest.mark.timeout(20)  # a regression here hangs: fail fast, not after 180 s
def test_a_secret_service_that_hangs_is_abandoned_in_time(own_service: SecretService) -> None:
    with own_service.frozen():
        started = time.monotonic()
        status = probe_keyring(timeout=0.5)
        assert time.monotonic() - started < 1.5
        assert status == KeyringStatus(
            False,
            "Secret Service",
            "The OS keyring did not answer within 0.5 s (a locked Secret Service waiting for a "
            "password prompt?).",
        )
        store = SecretStore(AVAILABLE, timeout=0.5)
        started = time.monotonic()
        with pytest.raises(SecretStoreError, match=r"did not answer within 0\.5 s"):
            store.set_api_key("openai", "sk-during-hang")
        assert time.monotonic() - started < 1.5


def test_a_session_bus_without_a_secret_service(empty_bus: SessionBus) -> None:
    status = probe_keyring()
    assert status == KeyringStatus(
        False, "none", "No OS keyring is available (no Secret Service on the session bus)."
    )


# --- no keyring -------------------------------------------------------------------------------


def test_no_session_bus_means_no_keyring(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    redetect(monkeypatch, {"XDG_CONFIG_HOME": str(tmp_path)})  # no keyringrc.cfg of the user's
    status = probe_keyring()
    assert not status.available
    assert status.backend == "none"
    assert status.problem is not None
    assert status.problem.startswith("No OS keyring is available")
    if sys.platform.startswith("linux"):
        assert "DBUS_SESSION_BUS_ADDRESS is not set" in status.problem


@pytest.mark.parametrize(
    ("backend", "words"),
    [
        (fail.Keyring(), "No OS keyring is available"),
        (null.Keyring(), "null backend"),
        (PlaintextKeyring(), "plain file"),
        (LowPriorityKeyring(), "not one the keyring library recommends"),
        (_chain(), "No OS keyring is available"),
        (_chain(PlaintextKeyring(), LowPriorityKeyring()), "No OS keyring is available"),
    ],
    ids=["fail", "null", "plaintext", "low-priority", "empty-chainer", "unsafe-chainer"],
)
def test_unsafe_keyrings_are_refused(
    use_backend: UseBackend, backend: KeyringBackend, words: str
) -> None:
    use_backend(backend)
    status = probe_keyring()
    assert not status.available
    assert status.problem is not None and words in status.problem
    # Even a store told (wrongly) that the keyring is fine never writes to it.
    with pytest.raises(SecretStoreError, match="Cannot save the API key for openai"):
        SecretStore(AVAILABLE).set_api_key("openai", "sk-never-on-disk")
    assert not getattr(backend, "entries", None)


def test_a_chainer_uses_its_safe_member(use_backend: UseBackend) -> None:
    safe, plain = DictKeyring(), PlaintextKeyring()
    use_backend(_chain(safe, plain))
    assert probe_keyring().available
    SecretStore(AVAILABLE).set_api_key("openai", "sk-chained")
    assert safe.entries == {(SERVICE, "api-key:openai"): "sk-chained"}
    assert plain.calls == []


@pytest.mark.timeout(20)  # a regression here hangs: fail fast, not after 180 s
def test_a_slow_keyring_is_abandoned_in_time(use_backend: UseBackend) -> None:
    slow = SlowKeyring()
    use_backend(slow)
    try:
        started = time.monotonic()
        status = probe_keyring(timeout=0.5)
        assert time.monotonic() - started < 1.5
        assert not status.available
        assert status.problem is not None and "did not answer within 0.5 s" in status.problem
        started = time.monotonic()
        with pytest.raises(SecretStoreError, match=r"did not answer within 0\.5 s") as caught:
            SecretStore(AVAILABLE, timeout=0.5).set_api_key("openai", "sk-slow-secret")
        assert time.monotonic() - started < 1.5
        assert "sk-slow-secret" not in str(caught.value)
    finally:
        slow.release.set()


def test_keyring_errors_never_quote_the_secret(use_backend: UseBackend) -> None:
    use_backend(LeakyKeyring())
    store = SecretStore(AVAILABLE)
    with pytest.raises(SecretStoreError) as caught:
        store.set_api_key("openai", "sk-leaky-value")
    with pytest.raises(SecretStoreError) as caught_secrets:
        store.set_user_secrets({"TOKEN": "tok-leaky-value"})
    for error in (caught.value, caught_secrets.value):
        assert "leaky-value" not in str(error)
        assert "RuntimeError" in str(error) and "<hidden>" in str(error)
        assert error.__cause__ is None and error.__suppress_context__


def test_the_in_memory_store_keeps_nothing(use_backend: UseBackend) -> None:
    spy = DictKeyring()
    use_backend(spy)
    store = SecretStore.in_memory()
    assert not store.persistent and not store.status.available
    store.set_api_key("openai", "sk-memory")
    store.set_user_secrets({"TOKEN": "t"})
    assert store.api_key("openai") == "sk-memory"
    assert store.user_secrets() == {"TOKEN": "t"}
    assert store.cipher_key() is None
    store.set_api_key("openai", None)
    assert store.api_key("openai") is None
    assert SecretStore.in_memory().user_secrets() == {}  # another session starts empty
    assert spy.calls == []


def test_a_store_without_a_keyring_is_in_memory() -> None:
    store = SecretStore(KeyringStatus(False, "none", "No OS keyring is available."))
    store.set_api_key("openai", "sk-x")
    assert (store.persistent, store.api_key("openai"), store.cipher_key()) == (False, "sk-x", None)


# --- resolving a model's key ------------------------------------------------------------------


def test_resolve_api_key_precedence() -> None:
    store = SecretStore.in_memory()
    store.set_api_key("openai", "sk-stored")
    both = {"OHTUI_API_KEY": "sk-ohtui", "OPENAI_API_KEY": "sk-openai"}
    assert resolve_api_key("gpt-4o", store, both) == ResolvedKey("sk-ohtui", "OHTUI_API_KEY")
    assert resolve_api_key("openai/gpt-4o", store, {"OPENAI_API_KEY": "sk-openai"}) == (
        ResolvedKey("sk-openai", "OPENAI_API_KEY")
    )
    empty = {"OHTUI_API_KEY": "", "OPENAI_API_KEY": ""}
    assert resolve_api_key("gpt-4o", store, empty) == ResolvedKey("sk-stored", "memory")
    assert resolve_api_key("anthropic/claude-x", store, {"OPENAI_API_KEY": "sk-o"}) == (
        ResolvedKey(None, "none")
    )
    assert resolve_api_key("gpt-4o", None, {}) == ResolvedKey(None, "none")


@pytest.mark.parametrize(
    ("model", "provider", "variable"),
    [
        ("anthropic/claude-x", "anthropic", "ANTHROPIC_API_KEY"),
        ("gpt-4o", "openai", "OPENAI_API_KEY"),
        ("gemini/gemini-2.5-pro", "gemini", "GEMINI_API_KEY"),
        ("openrouter/anthropic/claude-x", "openrouter", "OPENROUTER_API_KEY"),
        ("azure/my-deployment", "azure", "AZURE_API_KEY"),
        ("fireworks-ai/llama", "fireworks-ai", "FIREWORKS_AI_API_KEY"),
    ],
)
def test_provider_and_its_variable(model: str, provider: str, variable: str) -> None:
    assert provider_of(model) == provider
    assert provider_env_var(provider) == variable


def test_importing_the_module_loads_neither_keyring_nor_cryptography() -> None:
    code = (
        "import sys, ohtui.settings.secrets; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'keyring', 'cryptography'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_missing_daemons_skip_locally_but_fail_on_ci(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no dbus-daemon, no gnome-keyring-daemon
    monkeypatch.delenv(REQUIRE_ENV, raising=False)
    with pytest.raises(pytest.skip.Exception, match="gnome-keyring-daemon not installed"):
        require("gnome-keyring-daemon")
    monkeypatch.setenv(REQUIRE_ENV, "1")
    with pytest.raises(pytest.fail.Exception, match="OHTUI_REQUIRE_SECRET_SERVICE=1 but"):
        start_secret_service()
