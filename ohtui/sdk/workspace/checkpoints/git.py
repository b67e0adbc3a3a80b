"""The git program, run on the checkpoint store only, hardened against what it may meet.

Every call names the store (`--git-dir`) and the workspace (`--work-tree`) explicitly, so git
never looks for a repository: the user's `.git` folders are never opened as one. The user's
and the system's configuration are not read, no `GIT_*` variable of ours leaks in, and the
options below switch off everything configurable that could run a program (hooks, fsmonitor,
filters, external diff, pagers) or change bytes on their way in or out (line endings).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from functools import cache
from pathlib import Path

from ohtui.sdk.workspace.checkpoints.model import CheckpointUnavailable

MIN_VERSION = (2, 32)  # GIT_CONFIG_GLOBAL, which keeps the user's ~/.gitconfig out

# Overrides `.gitattributes` files in the workspace: no conversion of bytes, no filter, no
# diff driver named by the workspace (a driver without our config entries is inert anyway).
ATTRIBUTES = "* -text -filter -ident !eol !diff !merge !working-tree-encoding\n"

OPTIONS = (
    "--no-pager",
    "--literal-pathspecs",
    *(
        arg
        for setting in (
            "core.hooksPath=/dev/null",
            "core.fsmonitor=false",
            "core.untrackedCache=true",
            "core.autocrlf=false",
            "core.safecrlf=false",
            "core.symlinks=true",
            "core.filemode=true",
            "core.ignoreCase=false",
            "core.quotePath=false",
            "core.excludesFile=/dev/null",
            "core.attributesFile=/dev/null",
            "core.sparseCheckout=false",
            "core.splitIndex=true",  # a change rewrites a small file, not all 10,000 entries
            "core.preloadIndex=true",
            "index.version=2",
            "gc.auto=0",
            "diff.noprefix=false",
            "diff.renames=false",
            "color.ui=false",
            "status.relativePaths=false",
            "status.showUntrackedFiles=normal",
            "protocol.allow=never",
        )
        for arg in ("-c", setting)
    ),
)


@cache
def find_git() -> str:
    """The git executable on PATH, checked to be recent enough; CheckpointUnavailable if not."""
    git = shutil.which("git")
    if git is None:
        raise CheckpointUnavailable(
            "Checkpoints need the git program, which is not installed or not on PATH: "
            "install git to turn them on."
        )
    out = subprocess.run([git, "version"], capture_output=True, check=False, env=clean_env())
    found = re.search(rb"(\d+)\.(\d+)", out.stdout)
    version = (int(found[1]), int(found[2])) if found else (0, 0)
    if version < MIN_VERSION:
        raise CheckpointUnavailable(
            f"Checkpoints need git {MIN_VERSION[0]}.{MIN_VERSION[1]} or newer; "
            f"this one says {out.stdout.decode(errors='replace').strip() or 'nothing'}: "
            "upgrade git to turn them on."
        )
    return git


def clean_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment without any GIT_* variable, plus ours."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL="/dev/null",
        GIT_ATTR_NOSYSTEM="1",
        GIT_TERMINAL_PROMPT="0",
        GIT_NO_REPLACE_OBJECTS="1",
        LC_ALL="C",
    )
    env.update(extra or {})
    return env


class Git:
    """Runs git commands on one store and one workspace."""

    def __init__(self, store: Path, workspace: Path) -> None:
        self.store = store
        self.workspace = workspace
        self._env = clean_env({"GIT_INDEX_FILE": str(store / "index")})
        self._prefix = [
            find_git(),
            f"--git-dir={store}",
            f"--work-tree={workspace}",
            "-c",
            f"safe.directory={store}",
            *OPTIONS,
        ]

    def init(self) -> None:
        """Create the store: a bare repository whose one branch is the list of checkpoints."""
        command = [self._prefix[0], "init", "-q", "--bare", "--object-format=sha1"]
        done = subprocess.run(
            [*command, "-b", "checkpoints", str(self.store)],
            capture_output=True,
            env=clean_env(),
            check=False,
        )
        if done.returncode != 0:
            raise CheckpointUnavailable(failure("init", self.workspace, done.stderr))

    def command(self, *args: str) -> list[str]:
        """The full argument list for one git command."""
        return [*self._prefix, *args]

    def env(self, index: Path | None = None) -> dict[str, str]:
        """The environment for a git command, with another index file if given."""
        return self._env if index is None else {**self._env, "GIT_INDEX_FILE": str(index)}

    def run(self, *args: str, stdin: bytes | None = None, index: Path | None = None) -> bytes:
        """Run one git command in the workspace; its output, or CheckpointUnavailable.
        With another index, that index is a plain one (its own, not sharing the store's)."""
        options = ("-c", "core.splitIndex=false") if index else ()
        try:
            done = subprocess.run(
                self.command(*options, *args),
                input=stdin,
                capture_output=True,
                cwd=self.workspace,
                env=self.env(index),
                check=False,
            )
        except OSError as exc:
            raise CheckpointUnavailable(
                f"Could not run git for a checkpoint of {self.workspace}: {exc.strerror or exc}."
            ) from exc
        if done.returncode != 0:
            raise CheckpointUnavailable(failure(args[0], self.workspace, done.stderr))
        return done.stdout


def failure(command: str, workspace: Path, stderr: bytes) -> str:
    """The sentence for a git command that failed."""
    lines = [line for line in stderr.decode(errors="replace").splitlines() if line.strip()]
    reason = lines[-1].strip() if lines else "no reason given"
    if not workspace.is_dir():
        return f"The workspace {workspace} no longer exists, so it cannot be checkpointed."
    return f"The checkpoint store could not run `git {command}` ({reason}); checkpoints are off."
