"""Make the workspace's tracked files like a checkpoint's, touching nothing else.

The present was just checkpointed (tree `present`), so "tracked" is exact: a file is deleted
only when that tree holds it, and a file is written only where that tree holds it or nothing
is there. Everything is checked before anything changes; a path the restore would have to
write through a symlinked or untracked folder, or over an untracked file or a folder with
untracked content, stops the restore with CheckpointUnavailable naming it. (git writes files
itself, with the modes and symlinks of the checkpoint; if a folder is swapped for a symlink
between the check and the write, git replaces the link rather than following it.)
"""

from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from ohtui.sdk.workspace.checkpoints.git import Git
from ohtui.sdk.workspace.checkpoints.model import CheckpointUnavailable, FileChange

STATUS = {"A": "added", "M": "modified", "T": "modified", "D": "deleted"}


@dataclass(frozen=True, slots=True)
class _Entry:
    path: bytes
    status: str  # A, M, T or D, from the present to the checkpoint
    mode: bytes  # in the checkpoint
    blob: bytes


def changes(git: Git, present: str, target: str) -> list[FileChange]:
    """What restoring `target` over `present` changes, by path."""
    return [
        FileChange(os.fsdecode(entry.path), STATUS[entry.status])  # type: ignore[arg-type]
        for entry in _entries(git, present, target)
    ]


def restore(git: Git, present: str, target: str) -> list[FileChange]:
    """Make the workspace's files like tree `target`; the changes applied."""
    entries = _entries(git, present, target)
    deleted = {entry.path for entry in entries if entry.status == "D"}
    written = [entry for entry in entries if entry.status != "D"]
    added = {entry.path for entry in entries if entry.status == "A"}
    root = os.fsencode(git.workspace)
    problems = [
        problem
        for entry in written
        if (problem := _why_not_write(root, entry.path, deleted, entry.path in added))
    ]
    problems += [problem for path in deleted if (problem := _why_not_delete(root, path))]
    if problems:
        shown = "; ".join(problems[:5]) + ("; …" if len(problems) > 5 else "")
        raise CheckpointUnavailable(
            f"The checkpoint was not restored, nothing was changed: {shown}. "
            "Move these out of the way and restore again."
        )
    for path in deleted:
        _unlink(root + b"/" + path)
    _remove_empty_parents(root, deleted)
    for entry in written:
        _clear_emptied_dir(root + b"/" + entry.path)
    if written:
        _checkout(git, written)
    return [FileChange(os.fsdecode(e.path), STATUS[e.status]) for e in entries]  # type: ignore[arg-type]


def _entries(git: Git, present: str, target: str) -> list[_Entry]:
    out = git.run("diff-tree", "-r", "-z", "--no-renames", "--no-ext-diff", present, target)
    fields = out.split(b"\0")
    entries = []
    for meta, path in zip(fields[0::2], fields[1::2], strict=False):
        if meta.startswith(b":"):
            _old_mode, mode, _old_blob, blob, status = meta[1:].split(b" ")
            entries.append(_Entry(path, status.decode()[:1], mode, blob))
    return entries


def _why_not_write(root: bytes, path: bytes, deleted: set[bytes], untracked: bool) -> str:
    """Why writing `path` would harm something the present checkpoint does not track."""
    shown = os.fsdecode(path)
    parts = path.split(b"/")
    for depth in range(1, len(parts)):
        parent = b"/".join(parts[:depth])
        try:
            mode = os.lstat(root + b"/" + parent).st_mode
        except FileNotFoundError:
            break
        if stat.S_ISDIR(mode):
            continue
        if parent in deleted:
            break  # a tracked link or file that the restore removes first
        kind = "a symlink" if stat.S_ISLNK(mode) else "a file"
        return f"{shown} would be written through {os.fsdecode(parent)}, {kind} not in checkpoints"
    try:
        mode = os.lstat(root + b"/" + path).st_mode
    except FileNotFoundError:
        return ""
    if stat.S_ISDIR(mode):
        if _only_deleted(root, path, deleted):
            return ""
        return f"{shown} is a folder holding files not in checkpoints"
    return f"{shown} exists but is not in checkpoints (ignored or too large)" if untracked else ""


def _why_not_delete(root: bytes, path: bytes) -> str:
    parts = path.split(b"/")
    for depth in range(1, len(parts)):
        if not os.path.isdir(root + b"/" + b"/".join(parts[:depth])) or os.path.islink(
            root + b"/" + b"/".join(parts[:depth])
        ):
            return f"{os.fsdecode(path)} is not where it was: a folder above it changed"
    return ""


def _only_deleted(root: bytes, folder: bytes, deleted: set[bytes]) -> bool:
    """Whether every file under the folder is one the restore deletes."""
    for top, _dirs, files in os.walk(root + b"/" + folder):
        rel = top[len(root) + 1 :]
        if any(rel + b"/" + name not in deleted for name in files):
            return False
    return True


def _unlink(path: bytes) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def _remove_empty_parents(root: bytes, deleted: set[bytes]) -> None:
    """Remove the folders that deleting files left empty (never the workspace itself)."""
    parents = {path.rsplit(b"/", 1)[0] for path in deleted if b"/" in path}
    for deepest in sorted(parents, key=lambda p: -p.count(b"/")):
        folder = deepest
        while folder:
            try:
                os.rmdir(root + b"/" + folder)
            except OSError:
                break
            folder = folder.rsplit(b"/", 1)[0] if b"/" in folder else b""


def _clear_emptied_dir(path: bytes) -> None:
    """Remove a folder that stands where a file goes (checked to hold only folders now)."""
    if os.path.isdir(path) and not os.path.islink(path):
        for top, _dirs, _files in os.walk(path, topdown=False):
            os.rmdir(top)


def _checkout(git: Git, entries: list[_Entry]) -> None:
    """Write the entries' files with git, from an index holding only them."""
    index = git.store / "restore-index"
    index.unlink(missing_ok=True)
    Path(f"{index}.lock").unlink(missing_ok=True)
    listing = b"".join(b"%s %s\t%s\0" % (e.mode, e.blob, e.path) for e in entries)
    try:
        git.run("update-index", "-z", "--index-info", index=index, stdin=listing)
        paths = _nul([entry.path for entry in entries])
        git.run("checkout-index", "-f", "-z", "--stdin", index=index, stdin=paths)
    finally:
        index.unlink(missing_ok=True)


def _nul(paths: list[bytes]) -> bytes:
    return b"".join(path + b"\0" for path in paths)
