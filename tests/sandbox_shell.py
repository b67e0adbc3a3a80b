"""Run command lines in a real sandboxed shell, as the agent's terminal runs them."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ohtui.sdk.sandbox import Sandbox, SandboxConfig
from ohtui.sdk.tools.terminal.session import BashSession


def sandboxed(project: Path, env: Mapping[str, str] | None = None, **config: Any) -> BashSession:
    """A shell in `project`, confined by a sandbox configured with `config`."""
    from ohtui.sdk.tools.terminal.session import DEFAULT_ENV

    return BashSession(
        shell="bash",
        working_dir=str(project),
        env={**DEFAULT_ENV, **(env or {})},
        sandbox=Sandbox(SandboxConfig(**config), str(project)),
    )


def run(shell: BashSession, command: str, timeout: float = 30) -> tuple[int | None, str]:
    """(exit code, output) of `command` in `shell`."""
    out: list[bytes] = []
    result = shell.run(command, timeout, out.append)
    return result.exit_code, b"".join(out).decode(errors="replace")
