"""The sandbox: bubblewrap confines the agent's shell to the workspace, without a daemon.

In `workspace-write` mode the whole filesystem is read-only but for the workspace, the
conversation's own directory, the extra writable paths and a private /tmp; credential
paths are hidden even from reads; without `network` the shell sees only its own loopback.
`read-only` makes the workspace read-only too. `off` runs the shell as it is.

The same boundary holds for the file editor and the task tracker: `Sandbox.check_write`
and `check_read` say why a path is out of bounds.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

PROBE_TIMEOUT = 5.0


class SandboxMode(str, Enum):
    """How far the agent's commands are confined."""

    WORKSPACE_WRITE = "workspace-write"
    READ_ONLY = "read-only"
    OFF = "off"

    @property
    def label(self) -> str:
        """What the mode lets commands do, in a few words."""
        return {
            SandboxMode.WORKSPACE_WRITE: "writes only the workspace",
            SandboxMode.READ_ONLY: "writes nothing",
            SandboxMode.OFF: "no sandbox",
        }[self]


DEFAULT_HIDDEN: tuple[str, ...] = (
    "~/.ssh",
    "~/.aws",
    "~/.azure",
    "~/.gnupg",
    "~/.kube",
    "~/.docker",
    "~/.config/gcloud",
    "~/.config/gh",
    "~/.config/hub",
    "~/.config/op",
    "~/.local/share/keyrings",
    "~/.password-store",
    "~/.netrc",
    "~/.git-credentials",
    "~/.pypirc",
    "~/.npmrc",
    "~/.vault-token",
    "~/.terraform.d/credentials.tfrc.json",
)
"""Credential paths hidden from the agent's commands, even from reads."""


class SandboxConfig(BaseModel):
    """What the sandbox allows: `[sandbox]` in config.toml."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    mode: SandboxMode = SandboxMode.WORKSPACE_WRITE
    network: bool = Field(default=False, description="Let commands reach the network.")
    writable: tuple[str, ...] = Field(
        default=(), description="Paths writable besides the workspace ('~' expands)."
    )
    hidden: tuple[str, ...] = Field(
        default=DEFAULT_HIDDEN, description="Paths hidden from commands, even from reads."
    )

    def describe(self) -> str:
        """The mode and network in a few words, e.g. "workspace-write, no network"."""
        if self.mode is SandboxMode.OFF:
            return "off"
        return f"{self.mode.value}, {'network' if self.network else 'no network'}"


@dataclass(frozen=True)
class Availability:
    """Whether bubblewrap works here, and if not, why and how to fix it."""

    available: bool
    problem: str = ""
    fix: str = ""
    probe_ms: float = 0.0

    @property
    def message(self) -> str:
        """The problem and its fix in one sentence, for the user."""
        if self.available:
            return ""
        return f"No sandbox: {self.problem}. {self.fix}".strip()


@functools.cache
def probe() -> Availability:
    """Whether `bwrap` exists and can make namespaces (run once per process, a few ms)."""
    binary = shutil.which("bwrap")
    if binary is None:
        return Availability(
            False,
            "bubblewrap (bwrap) is not installed, so commands run unconfined",
            f"Install it with `{_install_command()}`, then restart ohtui.",
        )
    started = time.perf_counter()
    try:
        result = subprocess.run(
            [binary, "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "true"],
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Availability(False, f"bwrap could not be run ({exc})", "")
    elapsed = (time.perf_counter() - started) * 1000
    if result.returncode != 0:
        detail = result.stderr.strip().splitlines()[-1] if result.stderr.strip() else "failed"
        return Availability(
            False,
            f"bwrap cannot create namespaces here ({detail})",
            "Allow unprivileged user namespaces (e.g. `sysctl kernel.unprivileged_userns_clone=1`"
            ", or an AppArmor profile for bwrap on Ubuntu 24.04), then restart ohtui.",
            elapsed,
        )
    return Availability(True, probe_ms=elapsed)


def _install_command() -> str:
    release = ""
    with contextlib.suppress(OSError):
        release = Path("/etc/os-release").read_text(encoding="utf-8").lower()
    if any(name in release for name in ("fedora", "rhel", "centos", "rocky", "alma")):
        return "sudo dnf install bubblewrap"
    if "arch" in release:
        return "sudo pacman -S bubblewrap"
    if "suse" in release:
        return "sudo zypper install bubblewrap"
    if "alpine" in release:
        return "sudo apk add bubblewrap"
    return "sudo apt-get install bubblewrap"


@dataclass(frozen=True)
class Sandbox:
    """The sandbox for one conversation: its configuration bound to real paths."""

    config: SandboxConfig
    workspace: str
    extra_writable: tuple[str, ...] = ()
    """The conversation's own directory (saved outputs), besides the configured paths."""
    extra_hidden: tuple[str, ...] = ()
    """Besides the configured paths: where every conversation is stored."""
    home: str = field(default_factory=lambda: os.path.expanduser("~"))

    @property
    def active(self) -> bool:
        """Whether commands are confined at all."""
        return self.config.mode is not SandboxMode.OFF

    @property
    def writable(self) -> tuple[str, ...]:
        """Every path commands may write (none in read-only mode, everything when off)."""
        if self.config.mode is not SandboxMode.WORKSPACE_WRITE:
            return ()
        paths = [self.workspace, *self.extra_writable, *self.config.writable]
        return tuple(dict.fromkeys(self._real(p) for p in paths))

    @property
    def hidden(self) -> tuple[str, ...]:
        """Every path hidden from commands: the configured ones, the conversations' store,
        and the session bus and keyring sockets (the keyring answers over D-Bus)."""
        paths = [*self.config.hidden, *self.extra_hidden]
        runtime = os.environ.get("XDG_RUNTIME_DIR") or f"/run/user/{os.getuid()}"
        paths += [f"{runtime}/bus", f"{runtime}/keyring"]
        return tuple(dict.fromkeys(self._real(p) for p in paths))

    def command(self, argv: Sequence[str]) -> list[str]:
        """`argv` run inside bubblewrap (or as it is when the sandbox is off)."""
        if not self.active:
            return list(argv)
        binary = shutil.which("bwrap") or "bwrap"
        args = [binary, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        args += ["--tmpfs", "/tmp", "--tmpfs", "/var/tmp", "--tmpfs", "/dev/shm"]
        writable = [p for p in self.writable if os.path.exists(p)]
        for path in writable:
            args += ["--bind", path, path]
        if self.config.mode is SandboxMode.READ_ONLY and os.path.isdir(self.workspace):
            args += ["--ro-bind", self.workspace, self.workspace]
        # Hidden after the binds, so a workspace that holds a credential path hides it too;
        # then writable paths inside hidden ones (the conversation's own directory) again,
        # and only then are the hiding directories made read-only.
        hidden_dirs = []
        for path in self.hidden:
            if os.path.isdir(path) and not os.path.islink(path):
                args += ["--tmpfs", path]
                hidden_dirs.append(path)
            elif os.path.lexists(path):
                args += ["--ro-bind", "/dev/null", path]
        for path in writable:
            if self._within(path, self.hidden):
                args += ["--bind", path, path]
        for path in hidden_dirs:
            args += ["--remount-ro", path]
        args += ["--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try"]
        # Not --die-with-parent: its signal follows the thread that started bwrap, and the
        # shell outlives the run that started it. Closing the session kills the sandbox.
        args += ["--new-session"]
        if not self.config.network:
            args += ["--unshare-net"]
        args += ["--chdir", self.workspace, "--"]
        return args + list(argv)

    def check_write(self, path: str) -> str | None:
        """Why `path` may not be written by the agent's tools; None when it may."""
        if not self.active:
            return None
        real = self._real(path)
        hidden = self._within(real, self.hidden)
        if hidden:
            return f"{path} is hidden by the sandbox ({hidden})"
        if self.config.mode is SandboxMode.READ_ONLY:
            return f"the sandbox is read-only: nothing may be written, {path} included"
        if not self._within(real, self.writable):
            return (
                f"{path} is outside the sandbox: only the workspace ({self.workspace})"
                + (" and " + ", ".join(self.writable[1:]) if len(self.writable) > 1 else "")
                + " may be written"
            )
        return None

    def check_read(self, path: str) -> str | None:
        """Why `path` may not be read by the agent's tools; None when it may."""
        if not self.active:
            return None
        hidden = self._within(self._real(path), self.hidden)
        return f"{path} is hidden by the sandbox ({hidden})" if hidden else None

    def _real(self, path: str) -> str:
        expanded = self.home + path[1:] if path == "~" or path.startswith("~/") else path
        return os.path.realpath(os.path.join(self.workspace, expanded))

    @staticmethod
    def _within(path: str, roots: Sequence[str]) -> str | None:
        for root in roots:
            if path == root or path.startswith(root.rstrip("/") + "/"):
                return root
        return None
