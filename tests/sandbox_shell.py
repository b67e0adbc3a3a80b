"""Run command lines in a real sandboxed shell, as the agent's terminal runs them."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ohtui.sdk.sandbox import Sandbox, SandboxConfig
from ohtui.sdk.sandbox.boundary import within
from ohtui.sdk.sandbox.bwrap import TEMP_ROOTS
from ohtui.sdk.tools.terminal.session import BashSession

CHECKOUT = Path(__file__).resolve().parents[1]


def scratch_root() -> Path:
    """Where tests keep what the sandbox must show as it is on disk: outside /tmp, /var/tmp
    and /dev/shm, which it replaces with private ones (and short enough for socket paths).
    The checkout's own folder, unless the checkout is in one of them (a clone under /tmp):
    then the user's cache folder."""
    if within(str(CHECKOUT), [os.path.realpath(root) for root in TEMP_ROOTS]) is None:
        return CHECKOUT / ".pytest-sandbox"
    return Path.home() / ".cache" / "ohtui-tests"


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
