"""The store's history: checkpoint commits written by hand, one ref whose history is the list.

A commit is a few hundred bytes; writing its loose object here saves a git process per
checkpoint. Objects and the ref are written to a temporary name and renamed, so a crash
leaves either the old state or the new one, never a half-written file.
"""

from __future__ import annotations

import hashlib
import os
import re
import zlib
from pathlib import Path

REF = "refs/heads/checkpoints"
SHA = re.compile(r"[0-9a-f]{40}")


def write_commit(store: Path, tree: str, parent: str | None, when: float, text: bytes) -> str:
    """Write a commit object (author and committer "ohtui") and return its id."""
    ident = f"ohtui <ohtui@localhost> {int(when)} +0000"
    head = f"tree {tree}\n" + (f"parent {parent}\n" if parent else "")
    body = f"{head}author {ident}\ncommitter {ident}\n\n".encode() + text
    raw = b"commit %d\0" % len(body) + body
    commit_id = hashlib.sha1(raw, usedforsecurity=False).hexdigest()
    path = object_path(store, commit_id)
    if not path.exists():
        path.parent.mkdir(mode=0o700, exist_ok=True)
        _replace(path, zlib.compress(raw, 1))
    return commit_id


def object_path(store: Path, object_id: str) -> Path:
    """Where git keeps a loose object."""
    return store / "objects" / object_id[:2] / object_id[2:]


def read_head(store: Path) -> str | None:
    """The newest checkpoint's id, if the ref holds one whose object is there."""
    try:
        head = (store / REF).read_text().strip()
    except OSError:
        return None
    return head if SHA.fullmatch(head) and object_path(store, head).exists() else None


def write_head(store: Path, commit_id: str) -> None:
    """Point the ref at a new checkpoint."""
    (store / REF).parent.mkdir(parents=True, exist_ok=True)
    _replace(store / REF, f"{commit_id}\n".encode())


def _replace(path: Path, data: bytes) -> None:
    temp = path.with_name(f".tmp-{os.getpid()}-{path.name}")
    try:
        with open(temp, "wb") as file:
            file.write(data)
        os.replace(temp, path)
    finally:
        temp.unlink(missing_ok=True)
