"""API keys, user secrets and the conversation cipher key, kept in the OS keyring (service "ohtui").

Nothing here writes a secret to a file, a log or an exception message. Every keyring call runs on
a daemon thread with a timeout, because a locked Secret Service can wait for a password prompt
forever; a call that does not answer is abandoned and reported as a SecretStoreError. When there is
no safe keyring (none at all, keyring's null/fail backends, or keyrings.alt's plain-text files),
`probe_keyring` says so in plain words and the app offers an environment variable or a
session-only `SecretStore.in_memory()`: there is never a silent plain-text fallback.

`keyring` and `cryptography` are imported on first use: keyring scans entry points on import and
this module is imported while the app starts.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import logging
import os
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from ohtui.sdk.utils.os_keyring import SERVICE
from ohtui.sdk.utils.os_keyring import KeyringTimeoutError as _KeyringTimeoutError
from ohtui.sdk.utils.os_keyring import call_with_timeout as _call
from ohtui.sdk.utils.os_keyring import readable as _readable
from ohtui.sdk.utils.os_keyring import usable_backend as _usable

if TYPE_CHECKING:
    from keyring.backend import KeyringBackend

logger = logging.getLogger(__name__)

SERVER_KEY_ENV = "OHTUI_SERVER_API_KEY"
"""The session API key of the agent server ([server] url), over the keyring's."""
PROBE_TIMEOUT = 3.0  # seconds
CALL_TIMEOUT = 5.0

_PROBE_USER = "probe"
_USER_SECRETS = "user-secrets"
_CIPHER_KEY = "conversation-cipher-key"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class KeyringStatus:
    """Whether a safe OS keyring works, which one, and if not, why (for the user)."""

    available: bool
    backend: str
    problem: str | None


class SecretStoreError(Exception):
    """A secret could not be read or saved; the message says what failed and what to do."""


def probe_keyring(timeout: float = PROBE_TIMEOUT) -> KeyringStatus:
    """Find out, without ever blocking longer than `timeout`, whether a safe OS keyring works."""
    from keyring.errors import KeyringLocked

    seen: list[str] = []  # the backend's name, once known, for a probe that then hangs

    def probe() -> KeyringStatus:
        import keyring

        configured = keyring.get_keyring()
        backend, problem = _usable(configured)
        if backend is None:
            return KeyringStatus(False, _readable(configured), problem)
        seen.append(_readable(backend))
        backend.get_password(SERVICE, _PROBE_USER)  # a real round trip: locks and hangs show here
        return KeyringStatus(True, seen[-1], None)

    try:
        return _call(probe, timeout, "probe")
    except _KeyringTimeoutError:
        problem = (
            f"The OS keyring did not answer within {timeout:g} s (a locked Secret Service "
            "waiting for a password prompt?)."
        )
    except KeyringLocked:
        problem = (
            "The OS keyring is locked and could not be unlocked (the unlock prompt was "
            "dismissed or could not be shown)."
        )
    except Exception as exc:  # noqa: BLE001 - any keyring failure means "not available"
        logger.warning("keyring probe failed: %s", type(exc).__name__)
        problem = f"The OS keyring does not work ({type(exc).__name__}: {exc})."
    return KeyringStatus(False, seen[-1] if seen else "unknown", problem)


class SecretStore:
    """The user's API keys, secrets and conversation cipher key: in the OS keyring or in memory."""

    def __init__(self, status: KeyringStatus, *, timeout: float = CALL_TIMEOUT) -> None:
        self._status = status
        self._timeout = timeout
        self._backend: KeyringBackend | None = None
        self._memory: dict[str, str] = {}
        self._lock = threading.Lock()  # one cipher key, even when two threads ask at once

    @classmethod
    def in_memory(cls) -> SecretStore:
        """A store for this session only: nothing is persisted."""
        return cls(KeyringStatus(False, "memory", "Secrets are kept in memory for this session."))

    @property
    def persistent(self) -> bool:
        """True when backed by the OS keyring."""
        return self._status.available

    @property
    def status(self) -> KeyringStatus:
        """The keyring status this store was made with."""
        return self._status

    def _run(self, what: str, op: Callable[[KeyringBackend], T], secrets: tuple[str, ...]) -> T:
        def call() -> T:
            if self._backend is None:
                import keyring

                backend, problem = _usable(keyring.get_keyring())
                if backend is None:
                    raise SecretStoreError(f"Cannot {what}: {problem}")
                self._backend = backend
            return op(self._backend)

        from keyring.errors import KeyringLocked

        hint = "Unlock your OS keyring and try again, or use an environment variable for now."
        try:
            return _call(call, self._timeout, what)
        except SecretStoreError:
            raise
        except KeyringLocked:
            raise SecretStoreError(
                f"Cannot {what}: the OS keyring is locked and could not be unlocked (the unlock "
                f"prompt was dismissed or could not be shown). {hint}"
            ) from None
        except _KeyringTimeoutError:
            raise SecretStoreError(
                f"Cannot {what}: the OS keyring did not answer within {self._timeout:g} s "
                f"(locked, waiting for a password prompt?). {hint}"
            ) from None
        except Exception as exc:  # noqa: BLE001 - backends raise anything (D-Bus, OS, keyring)
            detail = f"{type(exc).__name__}: {exc}"
            for secret in secrets:
                if secret:
                    detail = detail.replace(secret, "<hidden>")
            logger.warning("keyring call failed: %s (%s)", what, type(exc).__name__)
            raise SecretStoreError(
                f"Cannot {what}: the OS keyring failed ({detail}). {hint}"
            ) from None

    def _get(self, user: str, what: str) -> str | None:
        if not self.persistent:
            return self._memory.get(user)
        return self._run(what, lambda kr: kr.get_password(SERVICE, user), ())

    def _set(self, user: str, value: str | None, what: str, hidden: tuple[str, ...] = ()) -> None:
        if not self.persistent:
            if value:
                self._memory[user] = value
            else:
                self._memory.pop(user, None)
            return

        def op(kr: KeyringBackend) -> None:
            from keyring.errors import PasswordDeleteError

            if value:
                kr.set_password(SERVICE, user, value)
                return
            with contextlib.suppress(PasswordDeleteError):  # nothing saved: already deleted
                kr.delete_password(SERVICE, user)

        self._run(what, op, (*hidden, value or ""))

    def api_key(self, provider: str) -> str | None:
        """The saved API key for `provider` ("openai", "anthropic", ...), or None."""
        return self._get(f"api-key:{provider}", f"read the API key for {provider}")

    def set_api_key(self, provider: str, value: str | None) -> None:
        """Save the API key for `provider`; None or "" deletes it."""
        if not provider:
            raise SecretStoreError("Cannot save an API key without a provider name.")
        self._set(f"api-key:{provider}", value, f"save the API key for {provider}")

    def server_key(self, url: str) -> str | None:
        """The saved session API key of the agent server at `url`, or None."""
        return self._get(f"server-key:{url}", f"read the session key of {url}")

    def set_server_key(self, url: str, value: str | None) -> None:
        """Save the session API key of the agent server at `url`; None or "" deletes it."""
        self._set(f"server-key:{url}", value, f"save the session key of {url}")

    def user_secrets(self) -> dict[str, str]:
        """The user's secrets, name -> value."""
        text = self._get(_USER_SECRETS, "read your secrets")
        if not text:
            return {}
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
            raise SecretStoreError(
                f'Your secrets saved in the OS keyring (service "{SERVICE}", entry '
                f'"{_USER_SECRETS}") are damaged; set them again.'
            )
        return {str(k): v for k, v in data.items()}

    def set_user_secrets(self, secrets: Mapping[str, str]) -> None:
        """Replace all user secrets; names must be valid environment variable names."""
        for name, value in secrets.items():
            if not isinstance(name, str) or not valid_secret_name(name):
                raise SecretStoreError(
                    f"{name!r} is not a valid secret name: use letters, digits and underscores, "
                    "not starting with a digit (the agent sees it as an environment variable)."
                )
            if not isinstance(value, str):
                raise SecretStoreError(f"The value of secret {name} must be text.")
        text = json.dumps(dict(secrets), sort_keys=True) if secrets else None
        self._set(_USER_SECRETS, text, "save your secrets", tuple(secrets.values()))

    def cipher_key(self) -> str | None:
        """The key that encrypts secrets in saved conversations, made once; None in memory."""
        if not self.persistent:
            return None  # nothing is saved, so there is nothing encrypted to keep readable
        with self._lock:
            key = self._get(_CIPHER_KEY, "read the conversation cipher key")
            if key is None:
                from cryptography.fernet import Fernet

                key = Fernet.generate_key().decode()
                self._run(
                    "save the conversation cipher key",
                    lambda kr: kr.set_password(SERVICE, _CIPHER_KEY, key),
                    (key,),
                )
                logger.info("created the conversation cipher key in the OS keyring")
            elif not _is_fernet_key(key):
                # Never replace it: conversations saved with it would become unreadable.
                raise SecretStoreError(
                    f'The conversation cipher key in the OS keyring (service "{SERVICE}", entry '
                    f'"{_CIPHER_KEY}") is damaged; secrets in saved conversations cannot be read.'
                )
            return key


def _is_fernet_key(key: str) -> bool:
    try:
        return len(base64.urlsafe_b64decode(key.encode())) == 32
    except (binascii.Error, ValueError):
        return False


def valid_secret_name(name: str) -> bool:
    """Whether `name` can name a user secret (it becomes an environment variable)."""
    return _NAME.fullmatch(name) is not None


def provider_of(model: str) -> str:
    """The provider of a litellm model: "anthropic/claude-x" -> "anthropic"; no slash: "openai"."""
    provider, slash, _ = model.partition("/")
    return provider.strip().lower() if slash and provider.strip() else "openai"


NO_KEY = "no-key-needed"
"""The key sent to an OpenAI-compatible server when none is set (most local ones want none;
a server that does answers 401, which says so)."""

NO_KEY_PROVIDERS = frozenset(
    {"ollama", "ollama_chat", "lm_studio", "llamafile", "hosted_vllm", "vllm"}
    | {"bedrock", "sagemaker", "vertex_ai", "vertex_ai_beta"}
)
"""Local servers, and clouds whose credentials come from their own tools (AWS, gcloud)."""


def needs_api_key(provider: str) -> bool:
    """Whether `provider` is normally called with an API key."""
    return provider not in NO_KEY_PROVIDERS


def provider_env_var(provider: str) -> str:
    """The variable that usually holds `provider`'s API key: "openai" -> "OPENAI_API_KEY"."""
    return f"{provider.upper().replace('-', '_')}_API_KEY"


@dataclass(frozen=True, slots=True)
class ResolvedKey:
    """An API key and where it came from (a variable's name, "keyring", "memory" or "none")."""

    value: str | None
    source: str


def resolve_api_key(
    model: str, store: SecretStore | None, environ: Mapping[str, str] = os.environ
) -> ResolvedKey:
    """OHTUI_API_KEY first, then the provider's usual variable, then the store."""
    provider = provider_of(model)
    for var in ("OHTUI_API_KEY", provider_env_var(provider)):
        if environ.get(var):  # an empty variable counts as unset, as shells leave them
            return ResolvedKey(environ[var], var)
    if store is not None:
        value = store.api_key(provider)
        if value:
            return ResolvedKey(value, "keyring" if store.persistent else "memory")
    return ResolvedKey(None, "none")
