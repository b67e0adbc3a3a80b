"""ListDirectoryExecutor: lists a folder of the workspace, bounded, following no link."""

from __future__ import annotations

import os
import stat
from datetime import datetime
from pathlib import Path

from ohtui.sdk.tools.file_editor.confined import WorkspaceBoundary
from ohtui.sdk.tools.gemini.base import WorkspaceExecutor
from ohtui.sdk.tools.gemini.list_directory.definition import (
    MAX_ENTRIES,
    FileEntry,
    ListDirectoryAction,
    ListDirectoryObservation,
)
from ohtui.sdk.tools.glob.walk import SearchPathError, search_root

DEPTH = 2


class ListDirectoryExecutor(WorkspaceExecutor):
    """Lists a folder (and, recursively, two levels of subfolders)."""

    def __call__(
        self, action: ListDirectoryAction, conversation: object = None
    ) -> ListDirectoryObservation:
        """List the folder; failures come back as error observations."""
        boundary = self.files.boundary
        path = self.files.resolve(action.dir_path)
        if not path.exists():
            return _error(f"Error: Directory not found: {path}. Check the path.")
        if not path.is_dir():
            return _error(f"Error: Path is not a directory: {path}. Read files with read_file.")
        try:
            root = search_root(action.dir_path, self.workspace_root, boundary)
        except SearchPathError as exc:
            return _error(f"Error: {exc}")
        entries: list[FileEntry] = []
        truncated = _list(root, DEPTH if action.recursive else 1, entries, boundary)
        text = f"Listed directory: {root} ({len(entries)} entries"
        text += f", truncated to {MAX_ENTRIES})" if truncated else ")"
        if entries:
            text += "\n" + "\n".join(_line(entry, root) for entry in entries)
        return ListDirectoryObservation.from_text(
            text,
            dir_path=str(root),
            entries=entries,
            total_count=len(entries),
            is_truncated=truncated,
        )


def _error(text: str) -> ListDirectoryObservation:
    return ListDirectoryObservation.from_text(text, is_error=True)


def _list(folder: Path, depth: int, out: list[FileEntry], boundary: WorkspaceBoundary) -> bool:
    """Add the folder's entries (and its subfolders' down to `depth`) to `out`; whether the
    listing stopped at MAX_ENTRIES."""
    try:
        with os.scandir(folder) as found:
            listed = sorted(found, key=lambda e: e.name)
    except OSError:
        return False
    for entry in listed:
        if len(out) >= MAX_ENTRIES:
            return True
        try:
            status = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        is_folder = stat.S_ISDIR(status.st_mode)
        out.append(
            FileEntry(
                name=entry.name,
                path=entry.path,
                is_directory=is_folder,
                size=0 if is_folder else status.st_size,
                modified_time=datetime.fromtimestamp(status.st_mtime),
            )
        )
        deeper = is_folder and depth > 1 and boundary.check_read(entry.path) is None
        if deeper and _list(Path(entry.path), depth - 1, out, boundary):
            return True
    return False


def _line(entry: FileEntry, root: Path) -> str:
    relative = Path(entry.path).relative_to(root).as_posix()
    if entry.is_directory:
        return f"{relative}/"
    return f"{relative}  ({entry.size} bytes, {entry.modified_time:%Y-%m-%d %H:%M})"
