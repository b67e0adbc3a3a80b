"""Whether bubblewrap works on this machine, and if not, what to do about it."""

from __future__ import annotations

import contextlib
import functools
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

PROBE_TIMEOUT = 30.0
"""Seconds a probe may take: a loaded machine starts processes slowly, which is no failure."""


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
    """Whether `bwrap` exists and can make namespaces (run once per process, a few ms).

    A sandbox for a real workspace is checked with `Sandbox.check`, which starts the shell
    exactly as the agent's would be started.
    """
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
        return Availability(
            False,
            f"bwrap cannot create namespaces here ({last_line(result.stderr)})",
            "Allow unprivileged user namespaces (e.g. `sysctl kernel.unprivileged_userns_clone=1`"
            ", or an AppArmor profile for bwrap on Ubuntu 24.04), then restart ohtui.",
            elapsed,
        )
    return Availability(True, probe_ms=elapsed)


def last_line(text: str) -> str:
    """The last non-empty line of a program's error output ("failed" when there is none)."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else "failed"


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


def start_problem(
    argv: list[str], env: dict[str, str], before_exec: Callable[[], None] | None = None
) -> str | None:
    """Start `argv` (a shell, as the agent's will start) and tell it to exit: None when it
    ran, else what went wrong, in words. Waits as long as a loaded machine needs."""
    from ohtui.sdk.utils.spawn import popen

    try:
        proc = popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            preexec_fn=before_exec,
            start_new_session=True,
        )
        out, err = proc.communicate(b"exit 0\n", timeout=PROBE_TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return f"the sandboxed shell did not start within {PROBE_TIMEOUT:.0f} s"
    except (OSError, subprocess.SubprocessError) as exc:
        return f"the sandboxed shell could not be started ({exc})"
    if proc.returncode == 0:
        return None
    said = last_line(err.decode(errors="replace") or out.decode(errors="replace"))
    return f"the sandboxed shell exited at once with status {proc.returncode} ({said})"
