"""FileEditorExecutor: runs file_editor commands against the workspace, with per-file undo."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ohtui.sdk.tool.tool import ToolExecutor
from ohtui.sdk.tools.file_editor.definition import FileEditorAction, FileEditorObservation
from ohtui.sdk.tools.file_editor.fileio import (
    FileEditorError,
    TextFile,
    check_regular,
    create_file,
    nearest_existing_parent,
    read_bytes,
    read_text_file,
    replace_bytes,
    split_lines,
)
from ohtui.sdk.tools.file_editor.matching import find_unique
from ohtui.sdk.tools.file_editor.render import list_directory, numbered, unified_diff
from ohtui.sdk.utils.text import plural

if TYPE_CHECKING:
    from ohtui.sdk.sandbox import Sandbox

logger = logging.getLogger(__name__)

MAX_UNDO_PER_FILE = 20
"""Older states are dropped: each one may hold a whole file of up to 10 MB."""

SNIPPET_CONTEXT = 4


class FileEditorExecutor(ToolExecutor[FileEditorAction, FileEditorObservation]):
    """Views and edits files; remembers each file's previous contents for `undo_edit`."""

    def __init__(
        self, working_dir: str, sandbox: Callable[[], Sandbox | None] | None = None
    ) -> None:
        """`sandbox`: the conversation's current sandbox; its boundary holds here too."""
        self.working_dir = Path(working_dir)
        self._sandbox_of = sandbox or (lambda: None)
        # Previous bytes of each edited path, newest last; None means the file did not exist.
        self._history: dict[Path, list[bytes | None]] = {}
        self._lock = threading.Lock()

    def __call__(
        self, action: FileEditorAction, conversation: object = None
    ) -> FileEditorObservation:
        """Run the command; failures come back as error observations, never as exceptions."""
        path = self.resolve(action.path)
        refused = self._outside_sandbox(action.command, path)
        if refused is not None:
            return self._error(action, path, refused)
        try:
            with self._lock:
                return self._run(action, path)
        except FileEditorError as exc:
            return self._error(action, path, str(exc))
        except OSError as exc:
            return self._error(
                action, path, f"Could not {action.command} {path}: {exc.strerror or exc}."
            )
        except Exception as exc:  # the model must get an answer even if the editor has a bug
            logger.exception("file_editor failed on %s", path)
            return self._error(
                action, path, f"Unexpected error during {action.command} of {path}: {exc!r}."
            )

    def _outside_sandbox(self, command: str, path: Path) -> str | None:
        """Why the sandbox refuses this command on `path`, as the model should read it."""
        sandbox = self._sandbox_of()
        if sandbox is None:
            return None
        problem = sandbox.check_read(str(path))
        if problem is None and command != "view":
            problem = sandbox.check_write(str(path))
        if problem is None:
            return None
        return (
            f"The sandbox refused to {command} {path}: {problem}. Nothing was changed. If the "
            "task needs it, ask the user to allow it (they can change the sandbox with /sandbox)."
        )

    def resolve(self, raw: str) -> Path:
        """`raw` as an absolute path: `~` expanded, relative paths taken from the workspace."""
        path = Path(os.path.expanduser(raw.strip()))
        if not path.is_absolute():
            path = self.working_dir / path
        return Path(os.path.normpath(path))

    def _run(self, action: FileEditorAction, path: Path) -> FileEditorObservation:
        if not action.path.strip():
            raise FileEditorError("`path` is empty. Pass the file or directory to work on.")
        match action.command:
            case "view":
                return self._view(action, path)
            case "create":
                return self._create(action, path)
            case "str_replace":
                return self._str_replace(action, path)
            case "insert":
                return self._insert(action, path)
            case "undo_edit":
                return self._undo(action, path)

    # --- commands ---------------------------------------------------------------------------

    def _view(self, action: FileEditorAction, path: Path) -> FileEditorObservation:
        if path.is_dir():
            if action.view_range is not None:
                raise FileEditorError(
                    f"{path} is a directory; view_range only applies to files. "
                    "Drop view_range to list the directory."
                )
            return self._ok(action, path, list_directory(path), prev_exist=True)
        lines = split_lines(read_text_file(path).text)
        if action.view_range is None:
            if not lines:
                return self._ok(action, path, f"{path} is empty.", prev_exist=True)
            body = numbered(lines)
            header = f"{path} ({plural(len(lines), 'line')}):"
        else:
            start, end = _check_view_range(action.view_range, len(lines))
            body = numbered(lines[start - 1 : end], first=start)
            header = f"{path}, lines {start}-{end} of {len(lines)}:"
        return self._ok(action, path, f"{header}\n{body}", prev_exist=True)

    def _create(self, action: FileEditorAction, path: Path) -> FileEditorObservation:
        if action.file_text is None:
            raise FileEditorError("`create` needs `file_text`: the content of the new file.")
        if path.is_dir():
            raise FileEditorError(f"{path} is an existing directory; choose a file path.")
        if os.path.lexists(path):
            check_regular(path)  # a link loop, a dangling link or a device says what it is
            raise FileEditorError(
                f"{path} already exists, so create would overwrite it. To change it, use "
                "str_replace or insert (view it first to see the current content)."
            )
        path.parent.mkdir(parents=True, exist_ok=True)
        create_file(path, action.file_text.encode("utf-8"))
        self._remember(path, None)
        text = action.file_text.replace("\r\n", "\n")
        return self._ok(
            action,
            path,
            f"Created {path} ({plural(len(split_lines(text)), 'line')}).",
            prev_exist=False,
            diff=unified_diff(None, text, self._label(path)),
        )

    def _str_replace(self, action: FileEditorAction, path: Path) -> FileEditorObservation:
        if not action.old_str:
            raise FileEditorError(
                "`str_replace` needs a non-empty `old_str`: the exact text to replace. "
                "To add text without replacing any, use insert."
            )
        file = _read_for_edit(path)
        old_str = file.normalise(action.old_str)
        new_str = file.normalise(action.new_str or "")
        if old_str == new_str:
            raise FileEditorError(
                "`old_str` and `new_str` are the same, so nothing would change. "
                "Pass the new text in `new_str`."
            )
        index = find_unique(file.text, old_str, path)
        new_text = file.text[:index] + new_str + file.text[index + len(old_str) :]
        first = file.text.count("\n", 0, index) + 1
        return self._write_edit(
            action, path, file, new_text, first=first, added_newlines=new_str.count("\n")
        )

    def _insert(self, action: FileEditorAction, path: Path) -> FileEditorObservation:
        if action.insert_line is None:
            raise FileEditorError(
                "`insert` needs `insert_line`: the line after which to insert (0 = the top)."
            )
        if not action.new_str:
            raise FileEditorError("`insert` needs a non-empty `new_str`: the text to insert.")
        file = _read_for_edit(path)
        total = len(split_lines(file.text))
        line = action.insert_line
        if not 0 <= line <= total:
            raise FileEditorError(
                f"insert_line {line} is out of range: {path} has {total} lines, so insert_line "
                f"must be between 0 (the top) and {total} (the end)."
            )
        new_str = file.normalise(action.new_str)
        offset = _line_offset(file.text, line)
        if offset == len(file.text) and file.text and not file.text.endswith("\n"):
            # The last line has no newline: give it one and leave the file's end as it was.
            block = "\n" + new_str.removesuffix("\n")
        else:
            block = new_str if new_str.endswith("\n") else new_str + "\n"
        new_text = file.text[:offset] + block + file.text[offset:]
        return self._write_edit(
            action,
            path,
            file,
            new_text,
            first=line + 1,
            added_newlines=new_str.removesuffix("\n").count("\n"),
        )

    def _undo(self, action: FileEditorAction, path: Path) -> FileEditorObservation:
        stack = self._history.get(path)
        if not stack:
            raise FileEditorError(f"There is no edit to undo for {path} in this session.")
        previous = stack[-1]
        # Whatever now sits at the path must be a regular file (or nothing) before it is
        # replaced: undo never writes into a pipe or device swapped in since the edit.
        current = read_bytes(path) if os.path.lexists(path) else None
        current_text = _lenient_text(current)
        label = self._label(path)
        if previous is None:
            if current is not None:
                path.unlink()
            stack.pop()
            return self._ok(
                action,
                path,
                f"Undid the creation of {path}: the file has been deleted.",
                prev_exist=current is not None,
                diff=unified_diff(current_text, None, label),
            )
        if current is None:
            create_file(path, previous)
        else:
            replace_bytes(path, previous)
        stack.pop()
        restored = _lenient_text(previous) or ""
        lines = split_lines(restored)
        return self._ok(
            action,
            path,
            f"Undid the last edit of {path}. It now reads ({plural(len(lines), 'line')}):\n"
            + numbered(lines),
            prev_exist=current is not None,
            diff=unified_diff(current_text, restored, label),
        )

    # --- helpers ----------------------------------------------------------------------------

    def _write_edit(
        self,
        action: FileEditorAction,
        path: Path,
        file: TextFile,
        new_text: str,
        *,
        first: int,
        added_newlines: int,
    ) -> FileEditorObservation:
        """Write the edit, remember the old bytes for undo and show the edited region."""
        replace_bytes(path, file.encode(new_text))
        self._remember(path, file.raw)
        lines = split_lines(new_text)
        diff = unified_diff(file.text, new_text, self._label(path))
        if not lines:
            return self._ok(action, path, f"Edited {path}; it is now empty.", diff=diff)
        start = max(1, first - SNIPPET_CONTEXT)
        end = min(len(lines), first + added_newlines + SNIPPET_CONTEXT)
        snippet = numbered(lines[start - 1 : end], first=start)
        message = (
            f"Edited {path}. Snippet of the result (lines {start}-{end} of {len(lines)}):\n"
            f"{snippet}\n"
            "Check that the change is what you intended; undo_edit reverts it."
        )
        return self._ok(action, path, message, diff=diff)

    def _remember(self, path: Path, previous: bytes | None) -> None:
        stack = self._history.setdefault(path, [])
        stack.append(previous)
        del stack[:-MAX_UNDO_PER_FILE]

    def _label(self, path: Path) -> str:
        try:
            return path.relative_to(self.working_dir).as_posix()
        except ValueError:
            return path.as_posix().lstrip("/")

    def _ok(
        self,
        action: FileEditorAction,
        path: Path,
        text: str,
        prev_exist: bool = True,
        diff: str | None = None,
    ) -> FileEditorObservation:
        return FileEditorObservation.from_text(
            text, command=action.command, path=str(path), prev_exist=prev_exist, diff=diff
        )

    def _error(self, action: FileEditorAction, path: Path, text: str) -> FileEditorObservation:
        return FileEditorObservation.from_text(
            text,
            is_error=True,
            command=action.command,
            path=str(path),
            prev_exist=os.path.exists(path),
        )


def _read_for_edit(path: Path) -> TextFile:
    """The file to edit; a missing one gets a hint to create it instead."""
    if not os.path.lexists(path):
        raise FileEditorError(
            f"The file {path} does not exist. Check the path (view the directory "
            f"{nearest_existing_parent(path)} to see what is there), or use create to make "
            "a new file."
        )
    return read_text_file(path)


def _check_view_range(view_range: list[int], total: int) -> tuple[int, int]:
    """The validated [start, end] of a view, with end -1 resolved to the last line."""
    if len(view_range) != 2:
        raise FileEditorError(
            f"view_range must be two numbers [start, end], got {view_range}. "
            "Example: [1, 50]; end -1 means to the end of the file."
        )
    start, end = view_range
    if total == 0:
        raise FileEditorError("The file is empty, so there are no lines to show. Drop view_range.")
    if not 1 <= start <= total:
        raise FileEditorError(
            f"view_range start {start} is out of range: the file has {total} lines, so start "
            f"must be between 1 and {total}."
        )
    if end == -1:
        return start, total
    if end < start:
        raise FileEditorError(
            f"view_range end {end} is before start {start}. Pass end >= start, or -1 for the end."
        )
    if end > total:
        raise FileEditorError(
            f"view_range end {end} is past the end: the file has {total} lines. "
            f"Use end {total} or -1."
        )
    return start, end


def _line_offset(text: str, line: int) -> int:
    """The index in `text` just after line `line` (0 = the start)."""
    offset = 0
    for _ in range(line):
        next_newline = text.find("\n", offset)
        if next_newline == -1:
            return len(text)
        offset = next_newline + 1
    return offset


def _lenient_text(raw: bytes | None) -> str | None:
    """Bytes as LF text for diffs, never failing: undo may face a file changed outside the tool."""
    if raw is None:
        return None
    return raw.decode("utf-8", errors="replace").removeprefix("\ufeff").replace("\r\n", "\n")
