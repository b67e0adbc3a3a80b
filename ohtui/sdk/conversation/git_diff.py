"""The workspace against its repository's last commit, read with git without changing
anything: where a conversation kept no checkpoints, the nearest answer to "what changed".

Git is only run once the repository's own configuration, submodules and hooks have been
checked (`security.git_repository`, the same check an allow rule gets): a repository's
config can make git run programs. It runs with no user or system configuration, no
optional locks (the index is never rewritten), no pager, external diff or text conversion.
Files git does not track yet are read here, not by git.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ohtui.sdk.security.git_repository import (
    RepositoryError,
    find_repositories,
    repository_problem,
)
from ohtui.sdk.tools.file_editor.render import unified_diff

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
MAX_BYTES = 200_000
"""Bytes of diff read; the rest is left out with a note (as the checkpoint store does)."""
MAX_NEW_FILES = 500
"""Untracked files shown at most."""
MAX_NEW_FILE_BYTES = 1_000_000
"""An untracked file larger than this is named, not shown."""
TIMEOUT = 30.0
OPTIONS = (
    "--no-pager",
    "--no-optional-locks",
    "--literal-pathspecs",
    *(
        arg
        for setting in (
            "core.fsmonitor=false",
            "core.hooksPath=/dev/null",
            "core.untrackedCache=false",
            "core.quotePath=false",
            "color.ui=false",
            "diff.noprefix=false",
            "diff.mnemonicPrefix=false",
        )
        for arg in ("-c", setting)
    ),
)


class GitDiffUnavailable(Exception):  # noqa: N818 (a reason, like CheckpointUnavailable)
    """The workspace's repository cannot be read safely; str(exc) says why."""


@dataclass(frozen=True, slots=True)
class GitDiff:
    """The workspace against its last commit."""

    diff: str
    """Unified diff, git style, new files included; cut with the store's note if long."""
    commit: str
    """The commit compared with, short ("" for a repository with none yet)."""


def is_repository(workspace: str | Path) -> bool:
    """Whether git would find a repository from the workspace."""
    try:
        return bool(find_repositories(str(workspace)))
    except RepositoryError:
        return True  # one is there, if unreadable: `git_diff` says why


def git_diff(workspace: str | Path, max_bytes: int = MAX_BYTES) -> GitDiff:
    """The workspace's changes against HEAD (GitDiffUnavailable when git cannot be run
    safely there, or fails)."""
    root = str(workspace)
    try:
        repositories = find_repositories(root)
    except RepositoryError as exc:
        raise GitDiffUnavailable(f"its git repository cannot be read ({exc})") from exc
    if not repositories:
        raise GitDiffUnavailable("the workspace is not in a git repository")
    for repository in repositories:
        problem = repository_problem(repository, "diff-index")
        if problem:
            raise GitDiffUnavailable(f"git was not run: {problem}")
    git = shutil.which("git")
    if git is None:
        raise GitDiffUnavailable("git is not installed or not on PATH")
    head = _run(git, root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False)
    commit = head.decode(errors="replace").strip()
    tracked = _run(
        git, root, "diff-index", "-p", "--relative", "--no-renames", "--no-ext-diff",
        "--no-textconv", "--no-color", commit or EMPTY_TREE, "--",
        limit=max_bytes + 1,
    )  # fmt: skip
    text = tracked.decode(errors="replace")
    if len(tracked) <= max_bytes:
        others = _run(git, root, "ls-files", "--others", "--exclude-standard", "-z")
        text += _new_files(root, [p for p in others.split(b"\0") if p], max_bytes - len(tracked))
    if len(text.encode(errors="replace")) > max_bytes:
        cut = text.rfind("\n", 0, max_bytes) + 1 or max_bytes
        text = text[:cut] + f"[diff cut at {max_bytes:,} bytes]\n"
    return GitDiff(text, commit[:12])


def _env() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL="/dev/null",
        GIT_ATTR_NOSYSTEM="1",
        GIT_TERMINAL_PROMPT="0",
        GIT_OPTIONAL_LOCKS="0",
        LC_ALL="C",
    )
    return env


def _run(git: str, root: str, *args: str, check: bool = True, limit: int | None = None) -> bytes:
    """One git command's output (up to `limit` bytes: the rest is not waited for)."""
    try:
        with subprocess.Popen(
            [git, *OPTIONS, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            cwd=root,
            env=_env(),
        ) as process:
            assert process.stdout is not None and process.stderr is not None
            out = process.stdout.read(limit if limit is not None else -1)
            if limit is not None and len(out) >= limit:
                process.kill()
                return out
            error = process.stderr.read()
            code = process.wait(TIMEOUT)
    except (OSError, subprocess.SubprocessError) as exc:
        raise GitDiffUnavailable(f"git could not be run ({exc})") from exc
    if check and code != 0:
        lines = [line for line in error.decode(errors="replace").splitlines() if line.strip()]
        reason = lines[-1].strip() if lines else f"exit status {code}"
        raise GitDiffUnavailable(f"`git {args[0]}` failed: {reason}")
    return out if code == 0 else b""


def _new_files(root: str, paths: list[bytes], budget: int) -> str:
    """Untracked files as git would show them added (read here: git runs no filter)."""
    parts: list[str] = []
    used = 0
    for raw in paths[:MAX_NEW_FILES]:
        if used > budget:
            break
        path = os.fsdecode(raw)
        part = _new_file(root, path)
        used += len(part)
        parts.append(part)
    left = len(paths) - MAX_NEW_FILES
    if left > 0:
        parts.append(f"[{left:,} more new files not shown]\n")
    return "".join(parts)


def _new_file(root: str, path: str) -> str:
    head = f"diff --git a/{path} b/{path}\n"
    try:
        info = os.lstat(os.path.join(root, path))
        if stat.S_ISLNK(info.st_mode):
            target = os.readlink(os.path.join(root, path))
            return head + "new file mode 120000\n" + unified_diff(None, target, path)
        if not stat.S_ISREG(info.st_mode):
            return ""
        mode = "100755" if info.st_mode & stat.S_IXUSR else "100644"
        if info.st_size > MAX_NEW_FILE_BYTES:
            size = f"{info.st_size / 1024**2:,.1f} MB"
            return f"{head}new file mode {mode}\n(a new file of {size}, too large to show)\n"
        with open(os.path.join(root, path), "rb") as file:
            data = file.read(MAX_NEW_FILE_BYTES)
    except OSError:
        return ""
    head += f"new file mode {mode}\n"
    if b"\0" in data[:8000]:
        return f"{head}Binary files /dev/null and b/{path} differ\n"
    return head + unified_diff(None, data.decode(errors="replace"), path)
