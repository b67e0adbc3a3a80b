"""Walking a folder of the workspace for glob and grep: bounded, following no link, inside
the workspace and the sandbox."""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ohtui.sdk.tools.file_editor.confined import WorkspaceBoundary, inside
from ohtui.sdk.tools.file_editor.render import SKIPPED_DIRS

MAX_ENTRIES = 50_000
"""Entries looked at in one search; past them the search stops and says so."""
TIME_BUDGET = 20.0
"""Seconds one search may take before it stops and says so."""
MAX_RESULTS = 100


class SearchPathError(ValueError):
    """A folder that cannot be searched; the message says why and what to do."""


@dataclass
class Walk:
    """The regular files under a folder, with why the walk stopped early, if it did."""

    root: Path
    include_hidden: bool = False
    max_entries: int = MAX_ENTRIES
    time_budget: float = TIME_BUDGET
    boundary: WorkspaceBoundary | None = None
    asked_for: str = ""
    """The pattern searched for: a bulky folder it names is walked after all."""
    stopped: str | None = field(default=None, init=False)
    """Why not every file was looked at (too many entries, too long); None when all were."""

    def files(self) -> Iterator[tuple[str, os.DirEntry[str]]]:
        """(path relative to the root, entry) of each regular file, and of each link to a
        regular file inside the workspace; no link to a folder is followed.

        Hidden names and bulky folders (node_modules, .git, virtual environments) are left
        out unless `include_hidden`; so are folders the sandbox hides."""
        deadline = time.monotonic() + self.time_budget
        seen = 0
        stack: list[tuple[str, str]] = [(str(self.root), "")]
        while stack:
            folder, prefix = stack.pop()
            try:
                with os.scandir(folder) as entries:
                    listed = sorted(entries, key=lambda e: e.name)
            except OSError:
                continue  # unreadable or gone: nothing to report from it
            subfolders: list[tuple[str, str]] = []
            for entry in listed:
                seen += 1
                if seen > self.max_entries:
                    self.stopped = f"stopped after {self.max_entries} entries"
                    return
                if seen % 512 == 0 and time.monotonic() > deadline:
                    self.stopped = f"stopped after {self.time_budget:.0f} s"
                    return
                if entry.name.startswith(".") and not self.include_hidden:
                    continue
                try:
                    mode = entry.stat(follow_symlinks=False).st_mode
                except OSError:
                    continue
                relative = prefix + entry.name
                if stat.S_ISDIR(mode):
                    if entry.name in SKIPPED_DIRS and entry.name not in self.asked_for:
                        continue
                    if self.boundary is None or self.boundary.check_read(entry.path) is None:
                        subfolders.append((entry.path, relative + "/"))
                elif stat.S_ISREG(mode) or (stat.S_ISLNK(mode) and self._file_inside(entry.path)):
                    yield relative, entry
            stack.extend(reversed(subfolders))

    def _file_inside(self, link: str) -> bool:
        """Whether the link leads to a regular file inside the workspace (a link to a folder
        is never followed: no loop, no way out)."""
        root = self.boundary.root if self.boundary is not None else str(self.root)
        real = os.path.realpath(link)
        return inside(real, root) and os.path.isfile(real)


def search_root(raw: str | None, working_dir: str, boundary: WorkspaceBoundary) -> Path:
    """The folder to search: `raw` (absolute, or relative to the workspace) or the workspace,
    links resolved; SearchPathError unless it is a folder inside the workspace the sandbox
    lets the tools read."""
    given = os.path.expanduser(raw.strip()) if raw and raw.strip() else working_dir
    path = Path(working_dir) / given if not os.path.isabs(given) else Path(given)
    real = os.path.realpath(path)
    if not inside(real, boundary.root):
        raise SearchPathError(
            f"{path} is outside the workspace ({boundary.root}). Only folders of the "
            "workspace can be used: pass one inside it, or leave the path out for the "
            "workspace itself."
        )
    if not os.path.isdir(real):
        what = "it does not exist" if not os.path.lexists(path) else "it is not a folder"
        raise SearchPathError(
            f"The path '{path}' is not a valid directory ({what}). Pass a folder of the "
            "workspace, or leave the path out for the workspace itself."
        )
    problem = boundary.check_read(real)
    if problem:
        raise SearchPathError(f"The sandbox does not let the tools read {path}: {problem}.")
    return Path(real)


def newest_first(paths: list[tuple[str, float]]) -> list[str]:
    """The paths, most recently modified first (ties by name)."""
    return [path for path, _ in sorted(paths, key=lambda item: (-item[1], item[0]))]
