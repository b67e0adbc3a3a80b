"""Run untrusted command lines for real, inside bubblewrap, and report what they did.

The whole filesystem is read-only except a scratch workspace; there is no network; `/tmp`
is private; `rm` is a recorder that logs its arguments and deletes nothing. This gives the
ground truth the shell analyzer is checked against: what bash really runs.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

BWRAP = shutil.which("bwrap")
RECORDED = ("rm",)


@dataclass(frozen=True)
class Outcome:
    """What a command line did in the sandbox."""

    changed: tuple[str, ...]
    """Workspace files it created or changed (outside `.git/`)."""
    recorded: tuple[str, ...]
    """Recorded programs it ran, with their arguments (`rm X`)."""


@functools.cache
def _sandbox_problem() -> str | None:
    """Why the agent's real shell cannot start in ohtui's sandbox here (None: it can)."""
    if BWRAP is None:
        return "bubblewrap is not installed"
    from ohtui.sdk.sandbox import Sandbox, SandboxConfig
    from ohtui.sdk.tools.terminal.supervisor import shell_command

    with tempfile.TemporaryDirectory() as workspace:
        return Sandbox(SandboxConfig(), workspace).check(shell_command("bash", sandboxed=True))


def require_bwrap() -> str:
    """The bwrap binary, once the agent's real shell starts in ohtui's sandbox here; or skip
    (fail where OHTUI_REQUIRE_BWRAP is set, as on CI), saying why."""
    problem = _sandbox_problem()
    if problem is None and BWRAP is not None:
        return BWRAP
    if os.environ.get("OHTUI_REQUIRE_BWRAP"):
        pytest.fail(f"bubblewrap is required here (OHTUI_REQUIRE_BWRAP is set): {problem}")
    pytest.skip(f"no sandbox: {problem}")


class Sandbox:
    """A workspace with a few files and a git repository, and a way to run lines in it."""

    def __init__(self, root: Path) -> None:
        self.bwrap = require_bwrap()
        self._outcomes: dict[str, Outcome] = {}
        self.workspace = root / "workspace"
        self.template = root / "template"
        self.records = root / "records"
        self.recorders = root / "recorders"
        for path in (self.template, self.records, self.recorders):
            path.mkdir(parents=True)
        for name in RECORDED:
            recorder = self.recorders / name
            recorder.write_text(f'#!/bin/sh\necho "{name} $*" >> /tmp/records/log\n')
            recorder.chmod(0o755)
        payload = "#!/bin/sh\n: > PWNED\n"
        for script in ("ls", "bin/ls", "rm"):
            path = self.template / script
            path.parent.mkdir(exist_ok=True)
            path.write_text(payload)
            path.chmod(0o755)
        for name in ("-fprint", "z", "notes.txt", "README.md", "data.csv", "X"):
            (self.template / name).write_text("foo\n")
        (self.template / "src").mkdir()
        (self.template / "src" / "x.py").write_text("print(1)\n")
        git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
        subprocess.run([*git, "init", "-q"], cwd=self.template, check=True)
        subprocess.run([*git, "add", "-A"], cwd=self.template, check=True)
        subprocess.run([*git, "commit", "-qm", "init"], cwd=self.template, check=True)

    def run(self, command: str, timeout: float = 3.0) -> Outcome:
        """Run `command` with bash in a fresh copy of the workspace; what it did there (within
        `timeout`: lines that walk the whole disk, such as `chown -R nobody /`, do what they
        aim at at once and would otherwise run for seconds)."""
        if command not in self._outcomes:
            self._outcomes[command] = self._run(command, timeout)
        return self._outcomes[command]

    def _run(self, command: str, timeout: float) -> Outcome:
        shutil.rmtree(self.workspace, ignore_errors=True)
        shutil.copytree(self.template, self.workspace, symlinks=True)
        before = self._snapshot()
        log = self.records / "log"
        log.unlink(missing_ok=True)
        ws = str(self.workspace)
        args = [
            self.bwrap,
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--tmpfs",
            "/tmp",
            "--bind",
            ws,
            ws,
            "--bind",
            str(self.records),
            "/tmp/records",
            "--unshare-all",
            "--die-with-parent",
            "--new-session",
            "--chdir",
            ws,
            "--clearenv",
            "--setenv",
            "PATH",
            "/usr/bin:/bin",
            "--setenv",
            "HOME",
            ws,
        ]
        for name in RECORDED:
            args += ["--ro-bind", str(self.recorders / name), f"/usr/bin/{name}"]
        args += ["bash", "--norc", "--noprofile", "-c", command]
        with contextlib.suppress(subprocess.TimeoutExpired):
            subprocess.run(
                args, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout, check=False
            )
        after = self._snapshot()
        changed = tuple(sorted(p for p in after if before.get(p) != after[p]))
        recorded = tuple(log.read_text().splitlines()) if log.exists() else ()
        return Outcome(changed, recorded)

    def _snapshot(self) -> dict[str, tuple[int, int]]:
        found: dict[str, tuple[int, int]] = {}
        for path in self.workspace.rglob("*"):
            relative = path.relative_to(self.workspace).as_posix()
            if relative == ".git" or relative.startswith(".git/"):
                continue
            stat = path.lstat()
            found[relative] = (stat.st_mtime_ns, stat.st_size)
        return found
