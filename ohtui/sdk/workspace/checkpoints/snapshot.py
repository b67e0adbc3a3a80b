"""Bring the store's index up to the workspace, cheaply, within the size limits.

The index stays in the store between checkpoints, so git only lstat()s the files it knows
(and reads the folders whose mtime changed, through its untracked cache); only files that
changed are hashed again. The totals (files, bytes) of what the index holds are kept beside
it, keyed by its tree, and updated from the differences; they are removed while the index is
being changed, so a crash there makes the next snapshot count again from the tree.
"""

from __future__ import annotations

import os
import stat
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ohtui.sdk.workspace.checkpoints.git import Git
from ohtui.sdk.workspace.checkpoints.model import CheckpointUnavailable

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


@dataclass(frozen=True, slots=True)
class Limits:
    """How much a checkpoint may hold."""

    max_files: int
    max_bytes: int
    max_file_bytes: int


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The index's tree and what it holds."""

    tree: str
    files: int
    bytes: int


@dataclass(slots=True)
class _Status:
    """What differs between the index and the workspace."""

    changed: list[bytes] = field(default_factory=list)  # in the index, changed on disk
    deleted: list[bytes] = field(default_factory=list)
    old_blobs: list[bytes] = field(default_factory=list)  # of changed and deleted
    untracked: list[bytes] = field(default_factory=list)
    new_dirs: list[bytes] = field(default_factory=list)
    gitignore_changed: bool = False


def snapshot(git: Git, limits: Limits) -> Snapshot:
    """Update the index to the workspace and return its tree; CheckpointUnavailable when the
    workspace is over a limit (the index is then left as it was)."""
    base = _read_totals(git.store) or _recount(git)
    status = _status(git)
    untracked = status.untracked + _files_in(git, status.new_dirs)
    if not (status.changed or status.deleted or untracked):
        return base
    sizes = _sizes(git.workspace, status.changed + untracked)
    too_big = {path for path, size in sizes.items() if size > limits.max_file_bytes}
    forget = [path for path in status.changed if path in too_big]
    if status.gitignore_changed:
        forget += _ignored_but_tracked(git)
    update = [path for path in [*status.changed, *untracked] if path in sizes]
    update = [path for path in update if path not in too_big]
    old_bytes = _blob_sizes(git, status.old_blobs)
    new_files = [path for path in untracked if path in sizes and path not in too_big]
    files = base.files + len(new_files) - len(status.deleted) - len(set(forget))
    total = base.bytes - old_bytes + sum(sizes[path] for path in update)
    _check(limits, files, total, new_files, sizes)
    (git.store / "totals").unlink(missing_ok=True)
    # Deleted entries are dropped without looking at the disk: a folder above one may have
    # become a symlink, and git refuses to look beyond those.
    gone = [*status.deleted, *forget, *(path for path in status.changed if path not in sizes)]
    if gone:
        git.run("update-index", "--force-remove", "-z", "--stdin", stdin=_nul(gone))
    if update:
        git.run(
            "update-index", "--add", "--remove", "--replace", "-z", "--stdin", stdin=_nul(update)
        )
    tree = git.run("write-tree").decode().strip()
    if len(gone) != len(status.deleted):
        return _recount(git, tree)  # files left or vanished under us: count, not guess
    result = Snapshot(tree, files, total)
    _write_totals(git.store, result)
    return result


def _status(git: Git) -> _Status:
    out = git.run(
        "status", "--porcelain=v2", "-z", "--untracked-files=normal", "--no-renames",
        "--ignore-submodules=all",
    )  # fmt: skip
    status = _Status()
    records = iter(out.split(b"\0"))
    for record in records:
        kind = record[:1]
        if kind == b"?":
            path = record[2:]
            (status.new_dirs if path.endswith(b"/") else status.untracked).append(path)
        elif kind in (b"1", b"2"):
            fields = record.split(b" ", 8 if kind == b"1" else 9)
            worktree, blob, path = fields[1][1:2], fields[7], fields[-1]
            if kind == b"2":
                next(records, None)  # the original path of a rename
            if worktree == b".":
                continue  # index and workspace agree; only the last commit differs
            (status.deleted if worktree == b"D" else status.changed).append(path)
            status.old_blobs.append(blob)
        else:
            continue
        if path.rsplit(b"/", 1)[-1] == b".gitignore":
            status.gitignore_changed = True
    status.untracked = [path for path in status.untracked if not _under_dot_git(path)]
    return status


def _under_dot_git(path: bytes) -> bool:
    """A path git refuses to track (a `.git` in any case), left out so it is not counted."""
    return any(part.lower().rstrip(b". ") == b".git" for part in path.split(b"/"))


def _files_in(git: Git, dirs: list[bytes]) -> list[bytes]:
    """The untracked files under new folders; nested repositories (listed as `dir/`) are
    left out whole: their content is never tracked."""
    if not dirs:
        return []
    limit = [os.fsdecode(path) for path in dirs] if len(dirs) <= 200 else []
    out = git.run("ls-files", "--others", "--exclude-standard", "-z", "--", *limit)
    wanted = tuple(dirs)
    return [
        path
        for path in out.split(b"\0")
        if path and not path.endswith(b"/") and path.startswith(wanted)
        if not _under_dot_git(path)
    ]


def _sizes(workspace: Path, paths: list[bytes]) -> dict[bytes, int]:
    """lstat() sizes of the paths that are files or symlinks now (others are left out)."""
    sizes = {}
    root = os.fsencode(workspace)
    for path in paths:
        try:
            info = os.lstat(root + b"/" + path)
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode):
            sizes[path] = info.st_size
    return sizes


def _blob_sizes(git: Git, blobs: list[bytes]) -> int:
    if not blobs:
        return 0
    out = git.run("cat-file", "--batch-check=%(objectsize)", stdin=b"\n".join(blobs) + b"\n")
    return sum(int(line) for line in out.split())


def _ignored_but_tracked(git: Git) -> list[bytes]:
    """Tracked files a changed `.gitignore` now ignores: they stop being tracked."""
    out = git.run("ls-files", "--cached", "--ignored", "--exclude-standard", "-z")
    return [path for path in out.split(b"\0") if path]


def _check(
    limits: Limits, files: int, total: int, new: list[bytes], sizes: dict[bytes, int]
) -> None:
    if files <= limits.max_files and total <= limits.max_bytes:
        return
    biggest = Counter[str]()
    for path in new:
        top = os.fsdecode(path.split(b"/", 1)[0])
        biggest[top] += 1 if files > limits.max_files else sizes[path]
    where = ", ".join(
        f"{name} ({count:,} files)" if files > limits.max_files else f"{name} ({_human(count)})"
        for name, count in biggest.most_common(3)
    )
    amount = (
        f"more than {limits.max_files:,} files ({files:,})"
        if files > limits.max_files
        else f"more than {_human(limits.max_bytes)} in files ({_human(total)})"
    )
    hint = f"; the most new content is in {where}" if where else ""
    raise CheckpointUnavailable(
        f"The workspace has {amount} outside .gitignore, too much to checkpoint{hint}. "
        "Checkpoints are off for it: add build outputs and dependencies to .gitignore "
        "to turn them on."
    )


def _human(size: int) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:,} {unit}" if unit == "bytes" else f"{size:,.1f} {unit}"
        size //= 1024
    return f"{size} TB"


def _nul(paths: list[bytes]) -> bytes:
    return b"".join(path + b"\0" for path in paths)


def _read_totals(store: Path) -> Snapshot | None:
    try:
        tree, files, total = (store / "totals").read_text().split()
        return Snapshot(tree, int(files), int(total))
    except (OSError, ValueError):
        return None


def _write_totals(store: Path, snap: Snapshot) -> None:
    temp = store / "totals.tmp"
    temp.write_text(f"{snap.tree} {snap.files} {snap.bytes}\n")
    os.replace(temp, store / "totals")


def _recount(git: Git, tree: str | None = None) -> Snapshot:
    """Count what the index holds from its tree (after a crash, or the first time)."""
    if tree is None:
        if not (git.store / "index").exists():
            return Snapshot(EMPTY_TREE, 0, 0)
        tree = git.run("write-tree").decode().strip()
    out = git.run("ls-tree", "-r", "-l", "-z", "--full-tree", tree)
    sizes = [line.split(None, 4)[3] for line in out.split(b"\0") if line]
    result = Snapshot(tree, len(sizes), sum(int(size) for size in sizes if size != b"-"))
    _write_totals(git.store, result)
    return result
