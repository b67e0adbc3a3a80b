"""What the user asks of the sandbox: `[sandbox]` in config.toml, as the engine takes it."""

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel, ConfigDict, Field


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
    "~/.1password",
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
        default=(),
        description="Paths writable besides the workspace ('~' expands; relative paths are in "
        "the workspace, so '.git' lets commands change the repository and its hooks).",
    )
    hidden: tuple[str, ...] = Field(
        default=DEFAULT_HIDDEN, description="Paths hidden from commands, even from reads."
    )
    sockets: tuple[str, ...] = Field(
        default=(),
        description="Sockets of other services commands may reach, by path or by the "
        "variable naming it (e.g. '$SSH_AUTH_SOCK'); every other one is out of reach.",
    )

    def describe(self) -> str:
        """The mode and network in a few words, e.g. "workspace-write, no network"."""
        if self.mode is SandboxMode.OFF:
            return "off"
        return f"{self.mode.value}, {'network' if self.network else 'no network'}"
