"""GlobExecutor: walks the workspace in Python (no ripgrep needed), bounded and confined."""

from __future__ import annotations

import glob as globbing
import os
from pathlib import Path

from ohtui.sdk.tool.tool import ToolExecutor
from ohtui.sdk.tools.file_editor.confined import SandboxOf, WorkspaceBoundary
from ohtui.sdk.tools.glob.definition import GlobAction, GlobObservation
from ohtui.sdk.tools.glob.pattern import GlobPatternError, compile_glob, names_hidden
from ohtui.sdk.tools.glob.walk import (
    MAX_RESULTS,
    SearchPathError,
    Walk,
    newest_first,
    search_root,
)


class GlobExecutor(ToolExecutor[GlobAction, GlobObservation]):
    """Lists the workspace's files matching a glob pattern, newest first, at most 100."""

    def __init__(self, working_dir: str, sandbox: SandboxOf | None = None) -> None:
        """`sandbox`: the conversation's current sandbox; what it hides is not searched."""
        self.working_dir = str(Path(working_dir).resolve())
        self._sandbox_of = sandbox or (lambda: None)

    def __call__(self, action: GlobAction, conversation: object = None) -> GlobObservation:
        """Run the search; a bad pattern or folder comes back as an error observation."""
        raw_path, pattern = action.path, action.pattern
        if not raw_path:
            raw_path, pattern = split_absolute(action.pattern)
        boundary = WorkspaceBoundary(self.working_dir, self._sandbox_of())
        shown_root = raw_path or self.working_dir
        try:
            root = search_root(raw_path, self.working_dir, boundary)
            shown_root = str(root)
            matcher = compile_glob(pattern)
        except (SearchPathError, GlobPatternError) as exc:
            return GlobObservation.from_text(
                str(exc), is_error=True, pattern=action.pattern, search_path=shown_root
            )
        walk = Walk(
            root, include_hidden=names_hidden(pattern), boundary=boundary, asked_for=pattern
        )
        found: list[tuple[str, float]] = []
        for relative, entry in walk.files():
            if matcher.fullmatch(relative):
                try:
                    found.append((entry.path, entry.stat(follow_symlinks=False).st_mtime))
                except OSError:
                    continue
        files = newest_first(found)
        truncated = len(files) > MAX_RESULTS
        files = files[:MAX_RESULTS]
        return GlobObservation.from_text(
            _report(action.pattern, shown_root, files, truncated, walk.stopped),
            files=files,
            pattern=action.pattern,
            search_path=shown_root,
            truncated=truncated,
        )


def split_absolute(pattern: str) -> tuple[str | None, str]:
    """An absolute pattern split into its folder and the pattern below it
    ("/w/src/**/*.py" -> ("/w/src", "**/*.py")); a relative one is left whole (None, pattern)."""
    expanded = os.path.expanduser(pattern.strip())
    if not expanded.startswith("/"):
        return None, pattern
    parts = expanded.split("/")
    fixed: list[str] = []
    for part in parts:
        if globbing.has_magic(part) or "{" in part:
            break
        fixed.append(part)
    rest = parts[len(fixed) :]
    return "/".join(fixed) or "/", "/".join(rest) or "**/*"


def _report(pattern: str, root: str, files: list[str], truncated: bool, stopped: str | None) -> str:
    if files:
        text = f"Found {len(files)} file(s) matching pattern '{pattern}' in '{root}':\n"
        text += "\n".join(files)
    else:
        text = f"No files found matching pattern '{pattern}' in directory '{root}'"
    if truncated:
        text += (
            f"\n\n[Results truncated to the first {MAX_RESULTS} files. "
            "Consider using a more specific pattern.]"
        )
    if stopped:
        text += (
            f"\n\n[The search {stopped}, before looking at every file: narrow it with a "
            "more specific pattern or `path`.]"
        )
    return text
