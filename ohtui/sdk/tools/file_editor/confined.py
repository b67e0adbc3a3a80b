"""Files of the workspace for the tools that edit without the file editor (apply_patch, the
Gemini-style tools, the planning editor): read and written through the editor's own handles
(`handles.py`: no link, hard link or race takes an access elsewhere), kept inside the
workspace and inside the conversation's sandbox."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ohtui.sdk.tools.file_editor.fileio import FileEditorError, TextFile, parse_text
from ohtui.sdk.tools.file_editor.handles import Boundary, create, opened, remove

if TYPE_CHECKING:
    from ohtui.sdk.sandbox import Sandbox

SandboxOf = Callable[[], "Sandbox | None"]
"""The conversation's current sandbox (it may change between two actions)."""


def inside(location: str, root: str) -> bool:
    """Whether the absolute, link-free `location` is `root` or lies under it."""
    return location == root or location.startswith(root.rstrip("/") + "/")


@dataclass(frozen=True)
class WorkspaceBoundary:
    """A Boundary that keeps writes (and, unless `read_anywhere`, reads) inside the workspace,
    or to the `writable` files only when they are given, before the sandbox's own checks.

    It judges where a file really is (handles.py hands it the link-free location), so a link
    inside the workspace that points out of it is refused too."""

    working_dir: str
    sandbox: Boundary | None = None
    read_anywhere: bool = False
    writable: Sequence[str] | None = field(default=None)
    """When given, the only files that may be written: real locations (absolute, without
    links), fixed when the tool was made, so a link swapped in later does not move them."""

    @property
    def root(self) -> str:
        """The workspace, links resolved."""
        return os.path.realpath(self.working_dir)

    def check_read(self, path: str) -> str | None:
        """Why `path` may not be read; None when it may."""
        if not self.read_anywhere and not inside(path, self.root):
            return f"{path} is outside the workspace ({self.root}); only the workspace is read"
        return self.sandbox.check_read(path) if self.sandbox is not None else None

    def check_write(self, path: str) -> str | None:
        """Why `path` may not be written; None when it may."""
        if self.writable is not None:
            if path not in self.writable:
                return f"only {', '.join(self.writable)} may be written by this tool"
        elif not inside(path, self.root):
            return f"{path} is outside the workspace ({self.root}); only the workspace is written"
        return self.sandbox.check_write(path) if self.sandbox is not None else None


class WorkspaceFiles:
    """Text files of one workspace, read and written inside its boundary.

    Errors are the editor's: FileEditorError (with OutOfBoundsError for a refused path) and
    OSError; each message says what was wrong."""

    def __init__(self, working_dir: str, sandbox: SandboxOf | None = None) -> None:
        """`sandbox`: the conversation's current sandbox, asked at each access."""
        self.working_dir = Path(working_dir)
        self._sandbox_of = sandbox or (lambda: None)

    @property
    def boundary(self) -> WorkspaceBoundary:
        """The boundary now: the workspace, then the conversation's sandbox."""
        return WorkspaceBoundary(str(self.working_dir), self._sandbox_of())

    def resolve(self, raw: str) -> Path:
        """`raw` as an absolute path: `~` expanded, relative paths taken from the workspace."""
        path = Path(os.path.expanduser(raw.strip()))
        if not path.is_absolute():
            path = self.working_dir / path
        return Path(os.path.normpath(path))

    def label(self, path: Path) -> str:
        """`path` relative to the workspace where it is inside it, for diffs and messages."""
        try:
            return path.relative_to(self.working_dir).as_posix()
        except ValueError:
            return path.as_posix()

    def exists(self, path: Path) -> bool:
        """Whether anything (even a dangling link) is at `path`."""
        return os.path.lexists(path)

    def read(self, path: Path) -> TextFile:
        """The text of the file at `path` (UTF-8, at most the editor's 10 MB)."""
        with opened(path, self.boundary) as target:
            if target.is_folder:
                raise FileEditorError(f"{path} is a directory, not a file.")
            return parse_text(target.read(), path)

    def write(self, path: Path, text: str, *, like: TextFile | None = None) -> None:
        """Make `text` the content of `path`: in place when the file exists (keeping the line
        endings and BOM of `like`, its current content), else a new file with its folders."""
        if os.path.lexists(path):
            with opened(path, self.boundary, write=True) as target:
                target.write(like.encode(text) if like is not None else text.encode("utf-8"))
        else:
            create(path, text.encode("utf-8"), self.boundary, parents=True)

    def remove(self, path: Path) -> None:
        """Delete the file at `path` (never a folder)."""
        with opened(path, self.boundary, write=True):
            pass  # the path must name a regular file inside the boundary
        remove(path, self.boundary)
