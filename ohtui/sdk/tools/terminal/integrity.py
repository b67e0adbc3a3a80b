"""What the terminal knows about its shell's integrity: whether a command line will run, in
the live bash, exactly the programs the analyzer read.

The shell persists, so an earlier command can prepare it for a later one (define `ls` as a
function, alias `cat`, set a DEBUG trap, export GIT_CONFIG_COUNT, start a job that waits).
Asking that shell what `ls` is proves nothing once a function may be named `builtin` or
`declare`. So trust comes from tracking: `ShellIntegrity` remembers the first command that
may have changed a bash process (`CommandLine.changes_shell`, or a command stopped midway);
until that process is replaced, nothing is vouched for. `line_problem` checks the rest
against the shell as it started: where each program resolves, and what git would read.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

from ohtui.sdk.security.git_repository import DIRECTORY_COMMANDS, git_problem
from ohtui.sdk.security.shell import CommandLine, parse_command
from ohtui.sdk.tools.terminal.resolution import path_folders, program_problem, writable_folder

SHOWN_CHARS = 60
LOADER_PATHS = ("LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT")
"""Variables whose folders or files every dynamically linked program loads from."""


@dataclass(frozen=True)
class Preparation:
    """The first command that may have changed a shell, and how."""

    command: str
    reason: str

    def describe(self) -> str:
        """Why nothing is vouched for in that shell, in words."""
        return (
            f"an earlier command changed the shell (`{self.command}`: {self.reason}); "
            "a fresh shell (the terminal's reset) is trusted again"
        )


class ShellIntegrity:
    """Whether a command run in the current bash process may have changed it."""

    def __init__(self) -> None:
        self._shell: Hashable | None = None
        self._preparation: Preparation | None = None

    def record(self, shell: Hashable, command: str, *, stopped: bool) -> None:
        """Note a command that ran in `shell` (a key naming one bash process); `stopped`:
        it was interrupted or timed out, anywhere in its line."""
        if shell != self._shell:
            self._shell, self._preparation = shell, None  # a new bash is pristine
        if self._preparation is not None:
            return
        line = parse_command(command)
        # What cannot be read in full (a run-time program could be `alias`) counts too.
        reasons = [*line.changes_shell, *line.unresolved]
        reason = reasons[0] if reasons else ("it was stopped midway" if stopped else None)
        if reason:
            self._preparation = Preparation(_shortened(command), reason)

    def preparation(self, shell: Hashable) -> Preparation | None:
        """The first command that changed `shell`, if one did."""
        return self._preparation if shell == self._shell else None


@dataclass(frozen=True)
class ShellView:
    """A pristine shell as commands find it: its environment, its current directory, and
    the real paths commands may write."""

    environment: Mapping[str, str]
    working_dir: str
    unsafe: Sequence[str]


def line_problem(line: CommandLine, shell: ShellView) -> str | None:
    """Why `line` may run, in a pristine `shell`, other than what the analyzer read; None
    when every program resolves safely and git reads only harmless settings."""
    env = shell.environment
    exported = next((name for name in env if name.startswith("BASH_FUNC_")), None)
    if exported:
        return f"the shell started with an exported function ({exported})"
    for name in LOADER_PATHS:
        value = env.get(name)
        for entry in value.replace(" ", ":").split(":") if value else ():
            problem = writable_folder(entry, shell.unsafe)
            if problem:
                return f"{name} loads from a place commands may write: {problem}"
    path = env.get("PATH", "")
    changes_directory = any(c.name in DIRECTORY_COMMANDS for c in line.commands)
    for command in line.commands:
        problem = program_problem(command, path, shell.unsafe)
        if problem is None and command.name == "git":
            problem = _git_path(path, shell.unsafe) or git_problem(
                command, shell.working_dir, env, changes_directory=changes_directory
            )
        if problem:
            return problem
    return None


def _git_path(path: str, unsafe: Sequence[str]) -> str | None:
    """git runs helpers (`git-lfs`, remote helpers) found anywhere on PATH."""
    for folder in path_folders(path):
        problem = writable_folder(folder, unsafe)
        if problem:
            return f"git runs helper programs found on PATH, and {problem}"
    return None


def _shortened(command: str) -> str:
    text = " ".join(command.split())
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"
