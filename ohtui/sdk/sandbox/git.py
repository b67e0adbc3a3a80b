"""The parts of a repository that run code when the user next uses git.

Git runs what its configuration and hooks name, outside any sandbox, whenever the user runs
it: a hook, `core.fsmonitor`, a pager, a filter. So the repository's git directory (config,
hooks, `commondir`, everything git reads as its own), the hooks folder `core.hooksPath`
names, the files configuration includes, and each submodule's own git directory stay
read-only for the agent's commands. Only paths that exist can be protected, so a hooks folder
or included file the configuration names in the workspace is made (empty) when missing: the
agent could otherwise make it, with hooks in it. A repository the agent creates is its own
(the shell is started again once one appears: see `Sandbox.layout`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from pathlib import Path

GIT_TIMEOUT = 5.0


def protected_paths(workspace: str) -> list[str]:
    """Existing paths under `workspace` that git reads as configuration or runs, resolved."""
    root = Path(workspace)
    found: list[Path] = []
    git_dir = _git_dir(root)
    if git_dir is not None:
        dot_git = root / ".git"
        if dot_git.is_file() and not dot_git.is_symlink():
            found.append(dot_git)  # "gitdir: ..." names where git reads its config from
        found.append(git_dir)
        common = git_dir / "commondir"
        if common.is_file():
            found.append(git_dir / _read_text(common).strip())
    for key_path, is_folder in _config_paths(root):
        _make_missing(root, key_path, is_folder)
        found.append(key_path)
    for sub in _submodule_paths(root):
        if (sub / ".git").is_dir():
            found.append(sub / ".git")
    for dot_git in nested_repositories(root):
        found.append(dot_git)
        inner = _git_dir(dot_git.parent)
        if inner is not None:
            found.append(inner)
    real = (os.path.realpath(path) for path in found)
    return list(dict.fromkeys(path for path in real if os.path.lexists(path)))


WALK_DEPTH = 3
WALK_LIMIT = 5_000
"""Nested repositories are looked for this many folders deep (vendor/lib, packages/x/y),
in at most this many folder entries, shallowest first: about 5 ms a thousand."""


def nested_repositories(root: Path) -> list[Path]:
    """The `.git` entries (folders or gitdir files) of repositories inside `root`, below its
    top: vendored clones, worktrees, submodules checked out by hand."""
    found: list[Path] = []
    seen = 0
    level = [root]
    for _ in range(WALK_DEPTH + 1):
        deeper: list[Path] = []
        for folder in level:
            if seen >= WALK_LIMIT:
                return found
            try:
                with os.scandir(folder) as entries:
                    listed = list(entries)
            except OSError:
                continue
            seen += len(listed)
            for entry in listed:
                if entry.name == ".git":
                    if folder != root:
                        found.append(Path(entry.path))
                elif entry.is_dir(follow_symlinks=False):
                    deeper.append(Path(entry.path))
        level = deeper
    return found


def protected_for_write(workspace: str, real: str) -> str | None:
    """What protects the resolved path `real` from the agent's tools, if anything: a `.git`
    anywhere on its way, the workspace's git folder (`gitdir: ./.bare`), or the hooks folder
    and includes the configuration names."""
    relative = os.path.relpath(real, workspace)
    parts = relative.split(os.sep)
    if ".git" in parts:
        return os.path.join(workspace, *parts[: parts.index(".git") + 1])
    git_dir = _git_dir(Path(workspace))
    named = [git_dir] if git_dir is not None else []  # also a git folder not named .git
    for path in [*named, *(path for path, _ in _config_paths(Path(workspace)))]:
        resolved = os.path.realpath(path)
        if real == resolved or real.startswith(resolved.rstrip("/") + "/"):
            return resolved
    return None


def _git_dir(root: Path) -> Path | None:
    dot_git = root / ".git"
    if dot_git.is_dir() and not dot_git.is_symlink():
        return dot_git
    if dot_git.is_file() or dot_git.is_symlink():
        if dot_git.is_symlink():
            return Path(os.path.realpath(dot_git))
        text = _read_text(dot_git)
        if text.startswith("gitdir:"):
            return root / text.removeprefix("gitdir:").strip()
    return None


def _make_missing(root: Path, path: Path, is_folder: bool) -> None:
    """Make `path` (empty) when it is missing and would be in the workspace."""
    if os.path.lexists(path):
        return
    parent = path.parent
    while not os.path.lexists(parent) and parent != parent.parent:
        parent = parent.parent
    real_root = os.path.realpath(root)
    real = os.path.realpath(parent)
    if not (real == real_root or real.startswith(real_root.rstrip("/") + "/")):
        return
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        if is_folder:
            path.mkdir()
        else:
            path.touch(exist_ok=False)


def _config_paths(root: Path) -> list[tuple[Path, bool]]:
    """The hooks folder and included files the repository's configuration names (with
    whether each is a folder)."""
    if shutil.which("git") is None or _git_dir(root) is None:
        return []
    out = _git(
        root,
        "config",
        "--null",
        "--show-origin",
        "--get-regexp",
        r"^(core\.hookspath|include\.path|includeif\..+\.path)$",
    )
    paths = []
    # --null --show-origin: origin NUL key NEWLINE value NUL, per entry.
    fields = out.split("\0")
    for origin, entry in zip(fields[0::2], fields[1::2], strict=False):
        key, _, value = entry.partition("\n")
        if not value:
            continue
        value = os.path.expanduser(value)
        if key.lower() == "core.hookspath":
            paths.append((root / value, True))
        else:
            # An origin is "file:PATH", relative to the workspace when git found it there.
            origin_file = origin.removeprefix("file:") if origin.startswith("file:") else ""
            base = (root / origin_file).parent if origin_file else root
            paths.append((base / value, False))
    return paths


def _submodule_paths(root: Path) -> list[Path]:
    modules = root / ".gitmodules"
    if not modules.is_file() or shutil.which("git") is None:
        return []
    out = _git(root, "config", "--null", "--file", str(modules), "--get-regexp", r"\.path$")
    return [root / entry.partition("\n")[2] for entry in out.split("\0") if "\n" in entry]


def _git(root: Path, *args: str) -> str:
    """git's output, run so that it reads configuration only: no hooks, pager or fsmonitor
    run for `git config`; '' on any failure."""
    try:
        result = subprocess.run(
            ["git", "-C", str(root), *args],
            capture_output=True,
            text=True,
            errors="surrogateescape",
            timeout=GIT_TIMEOUT,
            check=False,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"},
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return result.stdout if result.returncode == 0 else ""


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="surrogateescape")
    except OSError:
        return ""
