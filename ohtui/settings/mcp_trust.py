"""A workspace's `.mcp.json` and the user's trust in it.

A project file can start programs on the user's machine, so its servers are used only after
the user has seen what they run and trusted it, once per workspace and per *what runs*: each
server's command line, folder, environment (and the secrets it receives), URL and headers,
and the content of every workspace file it executes (see `run_review`). Any change there, a
script the agent edited included, asks again and says what changed. What no digest can
follow (a module the script imports, what `npx` finds in node_modules) is confined instead:
the servers of a project file run in the conversation's sandbox (`sandboxed` in their
settings), never with more rights than the agent's own commands.

Trust is kept in a small JSON file of the data dir; without one (tests) it lasts for the
process.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ohtui.settings.run_review import Launch, changes, review
from ohtui.settings.shared_file import locked, replace_text
from ohtui.small_file import UnusableFileError, read_small

if TYPE_CHECKING:
    from ohtui.sdk.sandbox import SandboxConfig

logger = logging.getLogger(__name__)

PROJECT_FILE = ".mcp.json"
SANDBOXED = "sandboxed"
"""The server setting that runs a stdio server in the conversation's sandbox."""
RECHECK = "ohtui now also checks more of what the servers run: review them once more"
"""What changed when only what ohtui checks did (a fingerprint kept by an older ohtui)."""
MAX_PROJECT_FILE = 1 << 20
"""The largest `.mcp.json` read (a committed one is a few KiB)."""


@dataclass(frozen=True)
class ProjectServers:
    """A workspace's `.mcp.json`: its servers and what each would run."""

    path: Path
    servers: dict[str, Any] = field(default_factory=dict)
    launches: tuple[Launch, ...] = ()
    error: str | None = None
    """Why the file cannot be used (it is then never offered for trust)."""

    @property
    def fingerprint(self) -> dict[str, Any]:
        """What trusting the file agrees to, by server."""
        return {launch.name: launch.fingerprint() for launch in self.launches}

    @property
    def digest(self) -> str:
        """sha256 of the fingerprint ("" for a file that cannot be used)."""
        if self.error is not None:
            return ""
        text = json.dumps(self.fingerprint, sort_keys=True, ensure_ascii=True)
        return hashlib.sha256(text.encode()).hexdigest()

    def review(self, known_secrets: Collection[str] | None = None, confined: str = "") -> str:
        """Everything the servers would run, for the user to read before trusting them."""
        blocks = ["\n".join(launch.lines(known_secrets, confined)) for launch in self.launches]
        return "\n\n".join(blocks)

    def confined_servers(self) -> dict[str, Any]:
        """The servers' settings as the agent takes them: stdio ones in the sandbox."""
        return {name: {**spec, SANDBOXED: True} for name, spec in self.servers.items()}


def confinement(config: SandboxConfig) -> str:
    """Where a sandboxed server would run, in words, for the review (a workspace's server
    runs in the sandbox or not at all)."""
    from ohtui.sdk.sandbox import SandboxMode, probe

    if config.mode is SandboxMode.OFF:
        return "only in the sandbox, which is off: not started until it is on (/sandbox)"
    if not probe().available:
        return "only in the sandbox, which cannot run here (bubblewrap): not started"
    return f"in the sandbox ({config.describe()})"


def read_project_servers(workspace: Path) -> ProjectServers | None:
    """The workspace's `.mcp.json` and what its servers run, or None when it has none.

    Never raises for what the workspace holds: a file that cannot be read, is no regular file
    (a FIFO, a link to /dev/zero), is larger than MAX_PROJECT_FILE, is not JSON, or names
    files that cannot be looked at, is a ProjectServers whose `error` says so in a sentence.
    """
    path = workspace / PROJECT_FILE
    try:
        raw = read_small(path, MAX_PROJECT_FILE)
    except FileNotFoundError:
        return None
    except UnusableFileError as exc:
        return ProjectServers(path, error=f"{path} {exc}")
    except OSError as exc:
        return ProjectServers(path, error=f"{path} cannot be read: {exc.strerror or exc}")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return ProjectServers(path, error=f"{path} is not valid JSON: {exc}")
    from ohtui.sdk.mcp.config import MCPConfigError, server_table

    if not isinstance(data, dict):
        return ProjectServers(path, error=f'{path} must hold {{"mcpServers": {{...}}}}')
    try:
        servers = dict(server_table(data))
    except MCPConfigError as exc:
        return ProjectServers(path, error=f"{path}: {exc}")
    try:
        launches = tuple(review(name, spec, workspace) for name, spec in servers.items())
    except OSError as exc:  # what a server names could not be looked at
        why = exc.strerror or exc
        return ProjectServers(path, error=f"{path} cannot be reviewed: {why}")
    return ProjectServers(path, servers, launches)


class TrustStore:
    """What the user trusted, by key (a workspace, a plugin): a digest, and the fingerprint
    it was taken of (to say what changed)."""

    def __init__(self, path: Path | None) -> None:
        """`path`: the JSON file kept in the data dir; None keeps trust in memory."""
        self.path = path
        self._lock = threading.Lock()
        self._memory: dict[str, Any] = {}

    def is_trusted(self, key: str, digest: str) -> bool:
        """Whether the user trusted exactly this digest for `key`."""
        entry = self._read().get(key)
        return bool(digest) and isinstance(entry, dict) and entry.get("digest") == digest

    def trusted_fingerprint(self, key: str) -> dict[str, Any] | None:
        """What was trusted for `key` last (None: never, or before ohtui kept it)."""
        entry = self._read().get(key)
        what = entry.get("what") if isinstance(entry, dict) else None
        return what if isinstance(what, dict) else None

    def known(self, key: str) -> bool:
        """Whether the user trusted anything for `key` before."""
        return key in self._read()

    def trust(self, key: str, digest: str, what: dict[str, Any]) -> None:
        """Remember that the user trusts `what` (whose digest is `digest`) for `key`.

        Another ohtui may trust something at the same moment: the file is read, changed and
        replaced under an exclusive lock of a `.lock` file beside it, through a temporary
        file of its own, so neither entry is lost."""
        with self._lock:
            if self.path is None:
                self._memory = {**self._memory, key: {"digest": digest, "what": what}}
                return
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with locked(self.path.with_suffix(".lock")):
                data = self._read()
                data[key] = {"digest": digest, "what": what}
                replace_text(self.path, json.dumps(data, indent=2, sort_keys=True))

    def _read(self) -> dict[str, Any]:
        if self.path is None:
            return dict(self._memory)
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            logger.warning("the trust file %s cannot be read: %s", self.path, exc)
            return {}
        return {str(k): v for k, v in data.items()} if isinstance(data, dict) else {}


def workspace_key(workspace: Path) -> str:
    """The key a workspace's trust is kept under."""
    return str(workspace.expanduser().resolve())


def trust_project(project: ProjectServers, workspace: Path, store: TrustStore) -> None:
    """Remember that the user trusts what the project's servers run, as they are now."""
    store.trust(workspace_key(workspace), project.digest, project.fingerprint)


def what_changed(project: ProjectServers, workspace: Path, store: TrustStore) -> list[str]:
    """What differs from what the user trusted before ([] when never trusted)."""
    key = workspace_key(workspace)
    before = store.trusted_fingerprint(key)
    if before is None:
        return [RECHECK] if store.known(key) else []
    if store.is_trusted(key, project.digest):
        return []
    return changes(before, project.fingerprint) or [RECHECK]


def trusted_servers(
    project: ProjectServers | None, workspace: Path, store: TrustStore
) -> tuple[dict[str, Any], str | None]:
    """The project's servers (stdio ones set to run in the sandbox) if the user trusted
    what they run, and what to tell the user otherwise (None: nothing to say)."""
    if project is None:
        return {}, None
    if project.error is not None:
        return {}, f"{project.error}; its MCP servers are not used."
    if not project.servers:
        return {}, None
    if store.is_trusted(workspace_key(workspace), project.digest):
        return project.confined_servers(), None
    changed = what_changed(project, workspace, store)
    why = "changed since you trusted it (" + "; ".join(changed) + ")" if changed else "not trusted"
    return {}, (
        f"{project.path} is {why}, so its MCP servers are not started: run `ohtui trust` (or "
        "ohtui) in this workspace to review what they run and trust them."
    )
