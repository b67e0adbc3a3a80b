"""The session API key: where it comes from, how it is checked, and which binds need one.

There is always one: given in OHTUI_SERVER_API_KEY (or the variable --api-key-env names),
else made on first start and kept in the data dir (`ohtui.settings.local_server`)."""

from __future__ import annotations

import hmac
from collections.abc import Mapping

from ohtui.settings.local_server import is_loopback

DEFAULT_KEY_ENV = "OHTUI_SERVER_API_KEY"
HEADER = "X-Session-API-Key"


class AuthConfigError(Exception):
    """The server must not start with these settings; the message says what to do."""


def session_key(environ: Mapping[str, str], env_name: str | None) -> str | None:
    """The key from `env_name` (or OHTUI_SERVER_API_KEY); None when unset or empty."""
    name = env_name or DEFAULT_KEY_ENV
    value = environ.get(name, "").strip()
    if env_name and not value:
        raise AuthConfigError(
            f"--api-key-env names {name}, but {name} is not set (or empty): export the key "
            "in it, or leave --api-key-env out"
        )
    return value or None


def check_bind(host: str, key: str | None, key_env: str) -> None:
    """AuthConfigError for a non-loopback bind without a session key given (one made on
    this machine would have to be copied to reach it: give one on purpose)."""
    if key is None and not is_loopback(host):
        raise AuthConfigError(
            f"refusing to listen on {host} without a session API key: anyone who can reach "
            f"it could run commands as you. Set {key_env} (clients send it as {HEADER}), or "
            "bind 127.0.0.1."
        )


class KeyChecker:
    """Compares presented keys with the session key in constant time."""

    def __init__(self, key: str) -> None:
        self._key = key.encode()

    def accepts(self, presented: str | None) -> bool:
        """Whether `presented` is the key (False for none, or one no UTF-8 can hold)."""
        if presented is None:
            return False
        try:
            given = presented.encode()
        except UnicodeEncodeError:  # a lone surrogate, from a JSON auth frame
            return False
        return hmac.compare_digest(given, self._key)
