"""CheckpointStore: checkpoints of one workspace, kept in a git object store of their own."""

from __future__ import annotations

import builtins
import fcntl
import os
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from ohtui.sdk.workspace.checkpoints import commits, restore
from ohtui.sdk.workspace.checkpoints.git import ATTRIBUTES, Git, failure
from ohtui.sdk.workspace.checkpoints.model import (
    Checkpoint,
    CheckpointUnavailable,
    FileChange,
    message,
    parse,
)
from ohtui.sdk.workspace.checkpoints.snapshot import Limits, snapshot


class CheckpointStore:
    """Checkpoints of the files in `workspace` that git would track (`.gitignore` honoured,
    nested repositories and files over `max_file_bytes` left out), kept in `store_dir`, a
    bare git repository of their own that the user's `.git` never sees nor is seen by.

    Safe to use from several threads and processes: taking and restoring hold a file lock
    in the store. Nothing outside `store_dir` and the workspace is written.
    """

    def __init__(
        self,
        store_dir: str | Path,
        workspace: str | Path,
        *,
        max_files: int = 100_000,
        max_bytes: int = 2 * 1024**3,
        max_file_bytes: int = 50 * 1024**2,
    ) -> None:
        self.store_dir = Path(store_dir).absolute()
        self.workspace = Path(workspace).absolute()
        self.limits = Limits(max_files, max_bytes, max_file_bytes)
        self._git: Git | None = None

    def take(self, label: str) -> Checkpoint:
        """Record the workspace as it is now; CheckpointUnavailable if it cannot be."""
        with self._locked() as git:
            return self._take(git, label)[0]

    def get(self, checkpoint_id: str) -> Checkpoint | None:
        """The checkpoint with this id, or None if this store has none such."""
        found = self._read(checkpoint_id)
        return found[0] if found else None

    def list(self) -> list[Checkpoint]:
        """Every checkpoint, newest first."""
        if not self._initialised() or commits.read_head(self.store_dir) is None:
            return []
        out = self._open().run("log", "-z", "--format=%H%n%B", commits.REF)
        found = (parse(record[:40].decode(), record[41:]) for record in out.split(b"\0") if record)
        return [checkpoint for checkpoint in found if checkpoint is not None]

    def changes(self, checkpoint_id: str) -> builtins.list[FileChange]:
        """What restoring the checkpoint would change in the workspace as it is now."""
        with self._locked() as git:
            target = self._tree(checkpoint_id)
            return restore.changes(git, snapshot(git, self.limits).tree, target)

    def diff(
        self, checkpoint_id: str, paths: Sequence[str] | None = None, max_bytes: int = 200_000
    ) -> str:
        """A unified diff from the workspace now to the checkpoint (what restoring does), of
        all files or the given ones; binary files are named, and a diff over `max_bytes`
        is cut at a line end with a note."""
        with self._locked() as git:
            target = self._tree(checkpoint_id)
            present = snapshot(git, self.limits)
            args = ["diff-tree", "-r", "-p", "--no-renames", "--no-ext-diff", "--no-textconv"]
            command = git.command(*args, present.tree, target, "--", *(paths or ()))
            with subprocess.Popen(
                command,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=self.workspace,
                env=git.env(),
            ) as process:
                assert process.stdout is not None and process.stderr is not None
                out = process.stdout.read(max_bytes + 1)
                if len(out) > max_bytes:
                    process.kill()  # the rest is not shown: do not wait for it
                error = process.stderr.read()
            if len(out) <= max_bytes and process.returncode != 0:
                raise CheckpointUnavailable(failure("diff-tree", self.workspace, error))
        if len(out) <= max_bytes:
            return out.decode(errors="replace")
        cut = out.rfind(b"\n", 0, max_bytes) + 1 or max_bytes
        return (
            out[:cut].decode(errors="replace")
            + f"[diff cut at {max_bytes:,} bytes: ask for fewer paths to see the rest]\n"
        )

    def restore(self, checkpoint_id: str) -> tuple[Checkpoint, builtins.list[FileChange]]:
        """Make the workspace like the checkpoint. A checkpoint of the present is taken first
        (restoring it undoes this); returns it and the changes applied. Files the present
        checkpoint does not track (ignored, too large, in nested repositories) are never
        deleted nor overwritten: a restore that would have to is refused before any change."""
        with self._locked() as git:
            target = self._tree(checkpoint_id)
            before, present = self._take(git, f"before: restore to {checkpoint_id[:12]}")
            return before, restore.restore(git, present, target)

    def _take(self, git: Git, label: str) -> tuple[Checkpoint, str]:
        """A new checkpoint of the workspace, and its tree."""
        present = snapshot(git, self.limits)
        created = time.time()
        text = message(created, present.files, label)
        parent = commits.read_head(self.store_dir)
        commit_id = commits.write_commit(self.store_dir, present.tree, parent, created, text)
        commits.write_head(self.store_dir, commit_id)
        checkpoint = parse(commit_id, text)
        assert checkpoint is not None
        return checkpoint, present.tree

    def _read(self, checkpoint_id: str) -> tuple[Checkpoint, str] | None:
        """One of this store's checkpoints and its tree, or None."""
        if not commits.SHA.fullmatch(checkpoint_id) or not self._initialised():
            return None
        if not commits.object_path(self.store_dir, checkpoint_id).exists():
            return None  # also keeps git from guessing at a short or odd name
        try:
            raw = self._open().run("cat-file", "commit", checkpoint_id)
        except CheckpointUnavailable:
            return None
        head, _, text = raw.partition(b"\n\n")
        checkpoint = parse(checkpoint_id, text)
        return (checkpoint, head[5:45].decode()) if checkpoint else None

    def _tree(self, checkpoint_id: str) -> str:
        """The tree of one of this store's checkpoints, or CheckpointUnavailable."""
        found = self._read(checkpoint_id)
        if found is None:
            raise CheckpointUnavailable(f"There is no checkpoint {checkpoint_id!r} in this store.")
        return found[1]

    @contextmanager
    def _locked(self) -> Iterator[Git]:
        if not self.workspace.is_dir():
            raise CheckpointUnavailable(
                f"The workspace {self.workspace} no longer exists, so it cannot be checkpointed."
            )
        try:
            self.store_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(self.store_dir / "lock", os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise CheckpointUnavailable(
                f"Cannot create the checkpoint store {self.store_dir}: {exc.strerror or exc}."
            ) from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            # A git process killed mid-write leaves its lock; none can be running now.
            (self.store_dir / "index.lock").unlink(missing_ok=True)
            yield self._open()
        finally:
            os.close(fd)

    def _initialised(self) -> bool:
        return (self.store_dir / "objects").is_dir() and (self.store_dir / "HEAD").is_file()

    def _open(self) -> Git:
        """The store's git, creating the store the first time."""
        if self._git is not None:
            return self._git
        git = Git(self.store_dir, self.workspace)
        if not self._initialised():
            git.init()
        try:
            _write_if_changed(self.store_dir / "info" / "attributes", ATTRIBUTES)
            _write_if_changed(self.store_dir / "info" / "exclude", self._exclude())
        except OSError as exc:
            raise CheckpointUnavailable(
                f"Cannot set up the checkpoint store {self.store_dir}: {exc.strerror or exc}."
            ) from exc
        self._git = git
        return git

    def _exclude(self) -> str:
        """The store itself, when it lies inside the workspace: never checkpointed."""
        try:
            inside = self.store_dir.resolve().relative_to(self.workspace.resolve())
        except ValueError:
            return ""
        return f"/{inside.as_posix()}/\n" if inside.parts else ""


def _write_if_changed(path: Path, text: str) -> None:
    try:
        if path.read_text() == text:
            return
    except OSError:
        path.parent.mkdir(exist_ok=True)
    temp = path.with_name(f".tmp-{os.getpid()}-{path.name}")
    temp.write_text(text)
    os.replace(temp, path)
