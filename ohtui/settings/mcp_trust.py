"""A workspace's `.mcp.json` and the user's trust in it.

A project file can start any program on the user's machine, so its servers are used only
after the user has seen the commands and trusted the file, once per workspace and per file
content: an edited `.mcp.json` (another hash) asks again. Trust is kept in a small JSON file
of the data dir (`{workspace: sha256}`); without one (tests) it lasts for the process.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

PROJECT_FILE = ".mcp.json"


@dataclass(frozen=True)
class ProjectServers:
    """A workspace's `.mcp.json`: its servers, what they would start, and its hash."""

    path: Path
    digest: str
    servers: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    """Why the file cannot be used (it is then never offered for trust)."""

    @property
    def launches(self) -> list[str]:
        """One line per server: `name: command args…` or `name: url` (what trusting runs)."""
        from ohtui.sdk.mcp.config import MCPConfigError, parse_server

        lines = []
        for name, spec in self.servers.items():
            try:
                lines.append(f"{name}: {parse_server(name, spec).target}")
            except MCPConfigError as exc:
                lines.append(f"{name}: (unusable: {exc})")
        return lines


def read_project_servers(workspace: Path) -> ProjectServers | None:
    """The workspace's `.mcp.json`, or None when it has none."""
    path = workspace / PROJECT_FILE
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        return ProjectServers(path, "", error=f"{path} cannot be read: {exc.strerror or exc}")
    digest = hashlib.sha256(raw).hexdigest()
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return ProjectServers(path, digest, error=f"{path} is not valid JSON: {exc}")
    from ohtui.sdk.mcp.config import MCPConfigError, server_table

    if not isinstance(data, dict):
        return ProjectServers(path, digest, error=f'{path} must hold {{"mcpServers": {{...}}}}')
    try:
        servers = dict(server_table(data))
    except MCPConfigError as exc:
        return ProjectServers(path, digest, error=f"{path}: {exc}")
    return ProjectServers(path, digest, servers)


class TrustStore:
    """Which `.mcp.json` contents the user trusted, per workspace."""

    def __init__(self, path: Path | None) -> None:
        """`path`: the JSON file kept in the data dir; None keeps trust in memory."""
        self.path = path
        self._lock = threading.Lock()
        self._memory: dict[str, str] = {}

    def is_trusted(self, workspace: Path, digest: str) -> bool:
        """Whether the user trusted exactly this content of the workspace's file."""
        return bool(digest) and self._read().get(_key(workspace)) == digest

    def trust(self, workspace: Path, digest: str) -> None:
        """Remember that the user trusts this content of the workspace's file."""
        with self._lock:
            data = self._read()
            data[_key(workspace)] = digest
            if self.path is None:
                self._memory = data
                return
            self.path.parent.mkdir(parents=True, exist_ok=True)
            temporary = self.path.with_suffix(".tmp")
            temporary.write_text(json.dumps(data, indent=2, sort_keys=True), encoding="utf-8")
            os.replace(temporary, self.path)

    def _read(self) -> dict[str, str]:
        if self.path is None:
            return dict(self._memory)
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            logger.warning("the MCP trust file %s cannot be read: %s", self.path, exc)
            return {}
        return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def _key(workspace: Path) -> str:
    return str(workspace.expanduser().resolve())


def trusted_servers(
    project: ProjectServers | None, workspace: Path, store: TrustStore
) -> tuple[dict[str, Any], str | None]:
    """The project's servers if the user trusted this content, and what to tell the user
    otherwise (None: nothing to say)."""
    if project is None:
        return {}, None
    if project.error is not None:
        return {}, f"{project.error}; its MCP servers are not used."
    if not project.servers or store.is_trusted(workspace, project.digest):
        return project.servers, None
    return {}, (
        f"{project.path} is not trusted, so its MCP servers are not started: run ohtui in "
        "this workspace to review the commands and trust it."
    )
