"""What confines every served conversation: the sandbox the user's settings ask for (as the
TUI's: `--sandbox`, OHTUI_SANDBOX, `[sandbox]` in config.toml) and the roots its folder must
be under. Loaded with the engine (the settings import it); installed on every conversation
the server opens, new, resumed or restored after a restart."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ohtui.sdk.conversation.base import BaseConversation
from ohtui.sdk.sandbox import SandboxConfig, SandboxMode, probe
from ohtui.server.roots import SCRATCH_WORDS, RootError, Roots

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class SandboxStatus:
    """The sandbox in force for one conversation, and why it is off when it fell back."""

    mode: str
    network: bool
    problem: str | None = None

    def to_wire(self) -> dict[str, Any]:
        """`{"mode", "network", "problem"}`, as in force."""
        return {"mode": self.mode, "network": self.network, "problem": self.problem}


@dataclass(frozen=True)
class Confinement:
    """The sandbox settings and the roots, with what the sandbox can do on this machine."""

    sandbox: SandboxConfig
    roots: Roots
    problem: str | None
    """Why no conversation can have the sandbox asked for (bubblewrap missing or broken)."""
    notices: tuple[str, ...] = ()
    """What to log at start about the settings (a broken config.toml, a root skipped)."""
    config_file: Path | None = None
    """The config.toml in use: out of the agents' reach, like every file of ohtui's."""

    @classmethod
    def load(
        cls, config_file: Path, sandbox: str | None, roots: Roots | None, start_dir: Path
    ) -> Confinement:
        """From config.toml and the environment, `sandbox` (--sandbox) and `roots` (--root)
        winning; without roots anywhere, `start_dir`."""
        import os

        from ohtui.settings.overrides import Override
        from ohtui.settings.profile import Profile

        overrides: dict[tuple[str, str], Override] = {}
        if sandbox is not None:
            overrides[("sandbox", "mode")] = Override(sandbox, "--sandbox")
        elif os.environ.get("OHTUI_SANDBOX"):
            overrides[("sandbox", "mode")] = Override(os.environ["OHTUI_SANDBOX"], "OHTUI_SANDBOX")
        profile = Profile(config_file, overrides, use_keyring=False).load_settings()
        notices = [f"config.toml: {profile.problem}"] if profile.problem else []
        settings = profile.settings
        if roots is None and settings.server.roots:
            roots, skipped = _config_roots(settings.server.roots)
            notices += skipped
        if roots is None:
            roots = Roots((start_dir.resolve(),), private_temp=True)
        config = settings.sandbox.config()
        availability = probe() if config.mode is not SandboxMode.OFF else None
        problem = availability.message if availability and not availability.available else None
        return cls(config, roots, problem or None, tuple(notices), config_file)

    def install(self, conversation: BaseConversation) -> SandboxStatus:
        """Confine `conversation` as the settings say; where the sandbox cannot start, it
        runs with `off` and the status says why."""
        from ohtui.opening.sandbox import install_sandbox

        problem = install_sandbox(conversation, self.sandbox, self.config_file)
        current = getattr(conversation, "sandbox", None)
        if not isinstance(current, SandboxConfig) or current.mode is SandboxMode.OFF:
            current = SandboxConfig(mode=SandboxMode.OFF, network=True)
        if problem:
            logger.warning("conversation %s: %s", conversation.id.hex, problem)
        return SandboxStatus(current.mode.value, current.network, problem)

    def to_wire(self) -> dict[str, Any]:
        """`/server_info`'s SANDBOX_FIELD: the mode in force (and the one asked for), its
        network, and why it cannot be in force (None: it is)."""
        off = self.problem is not None or self.sandbox.mode is SandboxMode.OFF
        return {
            "mode": SandboxMode.OFF.value if self.problem else self.sandbox.mode.value,
            "asked": self.sandbox.mode.value,
            "network": True if off else self.sandbox.network,
            "problem": self.problem,
        }

    def start_lines(self) -> list[str]:
        """The lines the server logs once it knows: the sandbox in force, the roots."""
        mode = self.sandbox.mode
        if self.problem:
            sandbox = f"sandbox: OFF for every conversation ({self.problem})"
        elif mode is SandboxMode.OFF:
            sandbox = "sandbox: off (commands run unconfined, as asked)"
        else:
            network = "network on" if self.sandbox.network else "no network"
            sandbox = f"sandbox: {mode.value} for every conversation ({network})"
        return [
            sandbox,
            f"roots: {self.roots} (conversations work in these folders only)",
            *([f"scratch: {SCRATCH_WORDS} the temp dir"] if self.roots.private_temp else []),
        ]


def _config_roots(entries: list[str]) -> tuple[Roots, list[str]]:
    """Roots from config.toml: a missing folder is skipped and said (an unmounted disk);
    with none left, no conversation may open."""
    found: list[Path] = []
    skipped: list[str] = []
    for entry in entries:
        try:
            found += Roots.resolve([entry], Path("/"), "roots in [server]").paths
        except RootError as exc:
            skipped.append(f"{exc} (skipped)")
    if not found:
        skipped.append("no root in [server] roots exists: every conversation is refused")
    return Roots(tuple(dict.fromkeys(found))), skipped
