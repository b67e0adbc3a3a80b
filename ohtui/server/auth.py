"""The session API key: where it comes from, how it is checked, and which binds need one.

There is always one: given in OHTUI_SERVER_API_KEY (or the variable --api-key-env names),
else made on first start and kept in the data dir (`ohtui.settings.local_server`)."""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ohtui.settings.local_server import is_loopback

if TYPE_CHECKING:
    from ohtui.server.peer import LocalUsers

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
    """Compares presented keys with the session keys in constant time; with `local_users`,
    also lets in this user's own programs on this machine (`ohtui.server.peer`), but not
    a request a browser made (a web page needs the key)."""

    def __init__(self, key: str, local_users: bool = False) -> None:
        self._keys = [key.encode()]
        self._local: LocalUsers | None = None
        if local_users:
            from ohtui.server.peer import LocalUsers

            self._local = LocalUsers()

    @property
    def admits_local_users(self) -> bool:
        """Whether this user's own programs here need no key."""
        return self._local is not None

    def replace(self, keys: list[str]) -> None:
        """Make `keys` the session keys (from POST /api/init): keys given on purpose, so
        only they open the server from now on."""
        if not keys or not all(keys):
            raise ValueError("session_api_keys must hold at least one non-empty key")
        self._keys = [k.encode() for k in keys]
        self._local = None

    def accepts(self, presented: str | None) -> bool:
        """Whether `presented` is a session key (False for none, or one no UTF-8 can hold)."""
        if presented is None:
            return False
        try:
            given = presented.encode()
        except UnicodeEncodeError:  # a lone surrogate, from a JSON auth frame
            return False
        found = False
        for key in self._keys:  # every key compared: the time says nothing of which matched
            found |= hmac.compare_digest(given, key)
        return found

    async def admits(self, scope: Mapping[str, Any], presented: str | None) -> bool:
        """Whether the request or socket `scope` may go on: the key presented, or (when
        allowed) a connection from this user's own programs here."""
        if self.accepts(presented):
            return True
        local = self._local
        if local is None or _from_a_browser(scope) or not _names_this_machine(scope):
            return False
        from starlette.concurrency import run_in_threadpool

        return await run_in_threadpool(local.admits, scope.get("client"), scope.get("server"))


def _names_this_machine(scope: Mapping[str, Any]) -> bool:
    """Whether the request's Host names this machine (localhost, a loopback address): a page
    whose own name was made to resolve here (DNS rebinding) sends its name, and needs the key."""
    for name, value in scope.get("headers", []):
        if name.lower() == b"host":
            host = value.decode("latin-1")
            if host.startswith("["):
                host = host[: host.find("]") + 1]
            else:
                host = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
            return is_loopback(host)
    return False


def _from_a_browser(scope: Mapping[str, Any]) -> bool:
    """Whether the request carries what only browsers send (Origin, Sec-Fetch-*): a page
    is one of this user's programs too, but it must show the key like anyone else."""
    for name, _ in scope.get("headers", []):
        lowered = name.lower()
        if lowered == b"origin" or lowered.startswith(b"sec-fetch-"):
            return True
    return False
