"""RemoteWorkspace: a working directory on a machine an agent server runs on."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

from pydantic import Field, PrivateAttr, field_validator

from ohtui.sdk.workspace.local import BaseWorkspace
from ohtui.sdk.workspace.models import CommandResult

if TYPE_CHECKING:
    import httpx

    from ohtui.sdk.llm.llm import LLM
    from ohtui.sdk.secret.secrets import LookupSecret

_PLAINTEXT = {"X-Expose-Secrets": "plaintext"}
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

    # --- the server's shell and settings (the OpenHands server's routes) -----------------

    def execute_command(
        self, command: str, cwd: str | Path | None = None, timeout: float = 30.0
    ) -> CommandResult:
        """Run `command` on the server (in `cwd`, default this workspace's folder) and wait
        for it, at most `timeout` seconds; httpx.HTTPStatusError when the server refuses."""
        payload = {
            "command": command,
            "cwd": str(cwd if cwd is not None else self.working_dir),
            "timeout": max(1, int(timeout)),
        }
        response = self.client.post(
            "/api/bash/execute_bash_command", json=payload, timeout=timeout + 10.0
        )
        response.raise_for_status()
        output = response.json()
        code = output.get("exit_code")
        return CommandResult(
            command=command,
            exit_code=code if isinstance(code, int) else -1,
            stdout=output.get("stdout") or "",
            stderr=output.get("stderr") or "",
            timeout_occurred=code in (None, -1),
        )

    def get_server_info(self) -> dict[str, Any]:
        """The server's `GET /server_info`."""
        response = self.client.get("/server_info")
        response.raise_for_status()
        info: dict[str, Any] = response.json()
        return info

    def get_llm(self, profile_name: str | None = None, **llm_kwargs: Any) -> LLM:
        """The LLM stored on the server: profile `profile_name`, else the active profile,
        else `agent_settings.llm` of its settings; `llm_kwargs` override its fields. The
        API key comes in the clear (X-Expose-Secrets: plaintext), over this workspace's
        authenticated client."""
        from ohtui.sdk.llm.llm import LLM

        if profile_name is None:
            profile_name = self._settings(expose=False).get("active_profile") or None
        if profile_name is None:
            data = dict((self._settings(expose=True).get("agent_settings") or {}).get("llm") or {})
            if not data.get("model"):
                raise ValueError(
                    f"the server at {self.display_host} has no LLM in its settings: store one "
                    "with PATCH /api/settings {'agent_settings_diff': {'llm': {...}}}"
                )
        else:
            response = self.client.get(
                f"/api/profiles/{quote(profile_name, safe='')}", headers=_PLAINTEXT
            )
            if response.status_code == 404:
                raise FileNotFoundError(
                    f"the server at {self.display_host} has no LLM profile '{profile_name}'"
                )
            response.raise_for_status()
            data = dict(response.json().get("config") or {})
            data["usage_id"] = f"profile:{profile_name}"
        data.update(llm_kwargs)
        known = {k: v for k, v in data.items() if k in LLM.model_fields and v is not None}
        return LLM(**known)

    def get_secrets(self, names: list[str] | None = None) -> dict[str, LookupSecret]:
        """The server's stored secrets as LookupSecrets (their values stay on the server:
        it fetches them itself when a command needs one), `names` only if given."""
        from ohtui.sdk.secret.secrets import LookupSecret

        response = self.client.get("/api/settings/secrets")
        response.raise_for_status()
        headers = {"X-Session-API-Key": self.api_key} if self.api_key else {}
        found: dict[str, LookupSecret] = {}
        for item in response.json().get("secrets") or []:
            name = item.get("name")
            if not isinstance(name, str) or (names is not None and name not in names):
                continue
            found[name] = LookupSecret(
                url=f"{self.host}/api/settings/secrets/{quote(name, safe='')}",
                headers=dict(headers),
                description=item.get("description"),
            )
        return found

    def get_mcp_config(self) -> dict[str, Any]:
        """The MCP servers stored in the server's settings (`Agent(mcp_config=...)`), {}
        when none."""
        agent = self._settings(expose=True).get("agent_settings") or {}
        config = agent.get("mcp_config") or {}
        return dict(config) if isinstance(config, dict) else {}

    def _settings(self, expose: bool) -> dict[str, Any]:
        response = self.client.get("/api/settings", headers=_PLAINTEXT if expose else None)
        response.raise_for_status()
        settings: dict[str, Any] = response.json()
        return settings

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
