"""RemoteWorkspace: a working directory on a machine an agent server runs on."""

from __future__ import annotations

import threading
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
                )
            return self._client

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
