"""GrepExecutor: searches the workspace's files in Python (no ripgrep needed), bounded and
confined."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from ohtui.sdk.tool.tool import ToolExecutor
from ohtui.sdk.tools.file_editor.confined import SandboxOf, WorkspaceBoundary
from ohtui.sdk.tools.file_editor.fileio import BINARY_SNIFF_BYTES, MAX_FILE_BYTES
from ohtui.sdk.tools.glob.pattern import GlobPatternError, compile_glob, names_hidden
from ohtui.sdk.tools.glob.walk import (
    MAX_RESULTS,
    SearchPathError,
    Walk,
    newest_first,
    search_root,
)
from ohtui.sdk.tools.grep.definition import GrepAction, GrepObservation

_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


class GrepExecutor(ToolExecutor[GrepAction, GrepObservation]):
    """Lists the workspace's files containing a pattern, newest first, at most 100."""

    def __init__(self, working_dir: str, sandbox: SandboxOf | None = None) -> None:
        """`sandbox`: the conversation's current sandbox; what it hides is not searched."""
        self.working_dir = str(Path(working_dir).resolve())
        self._sandbox_of = sandbox or (lambda: None)

    def __call__(self, action: GrepAction, conversation: object = None) -> GrepObservation:
        """Run the search; a bad pattern or folder comes back as an error observation."""
        boundary = WorkspaceBoundary(self.working_dir, self._sandbox_of())
        shown_root = action.path or self.working_dir
        try:
            root = search_root(action.path, self.working_dir, boundary)
            shown_root = str(root)
            regex = _compile(action.pattern)
            include = compile_glob(action.include) if action.include else None
        except (SearchPathError, GlobPatternError, re.error) as exc:
            message = f"Invalid regex pattern: {exc}" if isinstance(exc, re.error) else str(exc)
            return GrepObservation.from_text(
                message,
                is_error=True,
                pattern=action.pattern,
                search_path=shown_root,
                include_pattern=action.include,
            )
        walk = Walk(
            root,
            include_hidden=bool(action.include and names_hidden(action.include)),
            boundary=boundary,
            asked_for=action.include or "",
        )
        found: list[tuple[str, float]] = []
        for relative, entry in walk.files():
            if include is not None and not include.fullmatch(relative):
                continue
            modified = _search(entry.path, regex)
            if modified is not None:
                found.append((entry.path, modified))
        matches = newest_first(found)
        truncated = len(matches) > MAX_RESULTS
        matches = matches[:MAX_RESULTS]
        return GrepObservation.from_text(
            _report(action, shown_root, matches, truncated, walk.stopped),
            matches=matches,
            pattern=action.pattern,
            search_path=shown_root,
            include_pattern=action.include,
            truncated=truncated,
        )


def _compile(pattern: str) -> re.Pattern[str]:
    if not pattern:
        raise re.error("the pattern is empty; pass the text or expression to look for")
    return re.compile(pattern, re.IGNORECASE | re.MULTILINE)


def _search(path: str, regex: re.Pattern[str]) -> float | None:
    """The file's modification time when its text matches, else None. A file that is not
    regular (swapped for a pipe since it was listed), binary or too large is not searched."""
    try:
        # A link was listed only when it leads to a file inside the workspace: open where it
        # leads, following no further link.
        fd = os.open(os.path.realpath(path), _OPEN_FLAGS)
    except OSError:
        return None
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode) or status.st_size > MAX_FILE_BYTES:
            return None
        with os.fdopen(os.dup(fd), "rb") as file:
            data = file.read(MAX_FILE_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(data) > MAX_FILE_BYTES or b"\0" in data[:BINARY_SNIFF_BYTES]:
        return None
    return status.st_mtime if regex.search(data.decode("utf-8", errors="ignore")) else None


def _report(
    action: GrepAction, root: str, matches: list[str], truncated: bool, stopped: str | None
) -> str:
    include = f" (filtered by '{action.include}')" if action.include else ""
    if matches:
        text = (
            f"Found {len(matches)} file(s) containing pattern '{action.pattern}' in "
            f"'{root}'{include}:\n" + "\n".join(matches)
        )
    else:
        text = f"No files found containing pattern '{action.pattern}' in directory '{root}'"
        text += include
    if truncated:
        text += (
            f"\n\n[Results truncated to the first {MAX_RESULTS} files. "
            "Consider using a more specific pattern.]"
        )
    if stopped:
        text += (
            f"\n\n[The search {stopped}, before looking at every file: narrow it with "
            "`path` or `include`.]"
        )
    return text
