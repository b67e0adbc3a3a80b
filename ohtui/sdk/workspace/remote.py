"""RemoteWorkspace: a working directory on a machine an agent server runs on."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pydantic import Field, PrivateAttr, field_validator

from ohtui.sdk.workspace.local import BaseWorkspace

if TYPE_CHECKING:
    import httpx

DEFAULT_REMOTE_WORKING_DIR = "workspace/project"
"""Relative to the server's own workspace folder, as the OpenHands server resolves it."""


class RemoteWorkspace(BaseWorkspace):
    """A workspace on an agent server at `host` (http[s]://name:port[/base]); `api_key` is its
    session API key, sent as `X-Session-API-Key`."""

    host: str = Field(description="The agent server's URL, e.g. http://127.0.0.1:8000.")
    api_key: str | None = Field(default=None, repr=False, description="Session API key.")
    working_dir: str = Field(
        default=DEFAULT_REMOTE_WORKING_DIR, description="The directory on the server."
    )

    _client: httpx.Client | None = PrivateAttr(default=None)
    _client_lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _connect_check: Callable[[], str | None] | None = PrivateAttr(default=None)

    def check_connections(self, check: Callable[[], str | None]) -> None:
        """Run `check` before each request and each event-socket connection to the server:
        a reason, in words, refuses it with the key unsent (a key meant only for a server
        `check` recognises, such as one on this machine's loopback run by this user)."""
        self._connect_check = check

    def connection_problem(self) -> str | None:
        """Why the server may not be contacted now (None: it may)."""
        return self._connect_check() if self._connect_check is not None else None

    @field_validator("host")
    @classmethod
    def _check_host(cls, host: str) -> str:
        host = host.strip().rstrip("/")
        if "://" not in host:
            host = f"http://{host}"
        parts = urlsplit(host)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(
                f"'{host}' is not an agent server URL: give http://host:port or https://host"
            )
        return host

    @property
    def display_host(self) -> str:
        """host:port, for a status bar."""
        parts = urlsplit(self.host)
        return parts.netloc + (parts.path if parts.path not in ("", "/") else "")

    @property
    def websocket_base(self) -> str:
        """The host as a ws:// or wss:// URL (with its base path)."""
        scheme = "wss" if self.host.startswith("https://") else "ws"
        return scheme + self.host[self.host.index("://") :]

    @property
    def client(self) -> httpx.Client:
        """The HTTP client shared by this workspace and its conversations (made on first use)."""
        with self._client_lock:
            if self._client is None:
                import httpx

                headers = {"X-Session-API-Key": self.api_key} if self.api_key else {}
                self._client = httpx.Client(
                    base_url=self.host,
                    headers=headers,
                    timeout=httpx.Timeout(connect=10.0, read=600.0, write=10.0, pool=10.0),
                    event_hooks={"request": [self._check_request]},
                )
            return self._client

    def _check_request(self, request: httpx.Request) -> None:
        problem = self.connection_problem()
        if problem is not None:
            import httpx

            raise httpx.ConnectError(problem, request=request)

    def close(self) -> None:
        """Close the HTTP client (conversations never do: they share it)."""
        with self._client_lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    def __enter__(self) -> RemoteWorkspace:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()
