"""FileEditorExecutor: runs file_editor commands against the workspace, with per-file undo."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING

from ohtui.sdk.tool.tool import ToolExecutor
from ohtui.sdk.tools.file_editor.actions import FileEditorAction, FileEditorObservation
from ohtui.sdk.tools.file_editor.confined import WorkspaceBoundary
from ohtui.sdk.tools.file_editor.fileio import (
    FileEditorError,
    TextFile,
    check_regular,
    nearest_existing_parent,
    parse_text,
    split_lines,
)
from ohtui.sdk.tools.file_editor.handles import (
    Boundary,
    Opened,
    OutOfBoundsError,
    create,
    opened,
    remove,
)
from ohtui.sdk.tools.file_editor.matching import find_unique
from ohtui.sdk.tools.file_editor.render import list_directory, numbered, unified_diff
from ohtui.sdk.utils.text import plural

if TYPE_CHECKING:
    from ohtui.sdk.conversation.impl.local_conversation import LocalConversation
    from ohtui.sdk.sandbox import Sandbox

logger = logging.getLogger(__name__)

MAX_UNDO_PER_FILE = 20
"""Older states are dropped: each one may hold a whole file of up to 10 MB."""

SNIPPET_CONTEXT = 4


class FileEditorExecutor(ToolExecutor[FileEditorAction, FileEditorObservation]):
    """Views and edits files; remembers each file's previous contents for `undo_edit`."""

    def __init__(
        self,
        working_dir: str,
        sandbox: Callable[[], Sandbox | None] | None = None,
        allowed_edits_files: Sequence[str] | None = None,
    ) -> None:
        """`sandbox`: the conversation's current sandbox; its boundary holds here too.
        `allowed_edits_files`: when given, the only files it may change (absolute paths,
        their links resolved now: a link put in their place later leads nowhere); it still
        views any file."""
        self.working_dir = Path(working_dir)
        self._sandbox_of = sandbox or (lambda: None)
        self.allowed_edits_files = (
            None
            if allowed_edits_files is None
            else [os.path.realpath(p) for p in allowed_edits_files]
        )
        # Previous bytes of each edited path, newest last; None means the file did not exist.
        self._history: dict[Path, list[bytes | None]] = {}
        self._lock = threading.Lock()

    def __call__(
        self, action: FileEditorAction, conversation: LocalConversation | None = None
    ) -> FileEditorObservation:
        """Run the command; failures come back as error observations, never as exceptions."""
        path = self.resolve(action.path)
        sandbox = self._sandbox_of()
        if sandbox is not None and _approved_outside(conversation):
            sandbox = sandbox.unconfined()
        boundary: Boundary | None = sandbox
        if self.allowed_edits_files is not None:
            if action.command != "view" and not self._may_edit(path):
                return self._error(action, path, self._not_allowed(action.command, path))
            # Checked again where the file really is, so no link leads an edit elsewhere.
            boundary = WorkspaceBoundary(
                str(self.working_dir),
                sandbox,
                read_anywhere=True,
                writable=self.allowed_edits_files,
            )
        try:
            with self._lock:
                return self._run(action, path, boundary)
        except OutOfBoundsError as exc:
            return self._error(action, path, _refusal(action.command, path, str(exc), sandbox))
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

    def _may_edit(self, path: Path) -> bool:
        return os.path.realpath(path) in (self.allowed_edits_files or [])

    def _not_allowed(self, command: str, path: Path) -> str:
        allowed = ", ".join(self.allowed_edits_files or []) or "no file"
        return (
            f"This editor may only change {allowed}; it cannot {command} {path}. Nothing was "
            "changed. View files freely, and write what you found into the allowed file."
        )

    def resolve(self, raw: str) -> Path:
        """`raw` as an absolute path: `~` expanded, relative paths taken from the workspace."""
        path = Path(os.path.expanduser(raw.strip()))
        if not path.is_absolute():
            path = self.working_dir / path
        return Path(os.path.normpath(path))

    def _run(
        self, action: FileEditorAction, path: Path, boundary: Boundary | None
    ) -> FileEditorObservation:
        if not action.path.strip():
            raise FileEditorError("`path` is empty. Pass the file or directory to work on.")
        match action.command:
            case "view":
                return self._view(action, path, boundary)
            case "create":
                return self._create(action, path, boundary)
            case "str_replace":
                return self._str_replace(action, path, boundary)
            case "insert":
                return self._insert(action, path, boundary)
            case "undo_edit":
                return self._undo(action, path, boundary)

    # --- commands ---------------------------------------------------------------------------

    def _view(
        self, action: FileEditorAction, path: Path, boundary: Boundary | None
    ) -> FileEditorObservation:
        with opened(path, boundary) as target:
            if target.is_folder:
                if action.view_range is not None:
                    raise FileEditorError(
                        f"{path} is a directory; view_range only applies to files. "
                        "Drop view_range to list the directory."
                    )
                with target.listing() as fd:
                    listing = list_directory(path, fd=fd, enter=target.subfolder)
                return self._ok(action, path, listing, prev_exist=True)
            lines = split_lines(parse_text(target.read(), path).text)
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

    def _create(
        self, action: FileEditorAction, path: Path, boundary: Boundary | None
    ) -> FileEditorObservation:
        if action.file_text is None:
            raise FileEditorError("`create` needs `file_text`: the content of the new file.")
        if path.is_dir():
            raise FileEditorError(f"{path} is an existing directory; choose a file path.")
        if os.path.lexists(path):
            check_regular(path)  # a link loop, a dangling link or a device says what it is
            raise _exists(path)
        try:
            create(path, action.file_text.encode("utf-8"), boundary, parents=True)
        except FileExistsError:
            raise _exists(path) from None
        self._remember(path, None)
        text = action.file_text.replace("\r\n", "\n")
        return self._ok(
            action,
            path,
            f"Created {path} ({plural(len(split_lines(text)), 'line')}).",
            prev_exist=False,
            diff=unified_diff(None, text, self._label(path)),
        )

    def _str_replace(
        self, action: FileEditorAction, path: Path, boundary: Boundary | None
    ) -> FileEditorObservation:
        if not action.old_str:
            raise FileEditorError(
                "`str_replace` needs a non-empty `old_str`: the exact text to replace. "
                "To add text without replacing any, use insert."
            )
        with _editing(path, boundary) as target:
            return self._replace(action, target, action.old_str)

    def _replace(
        self, action: FileEditorAction, target: Opened, old_str: str
    ) -> FileEditorObservation:
        path = target.path
        file = parse_text(target.read(), path)
        old_str = file.normalise(old_str)
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
            action, target, file, new_text, first=first, added_newlines=new_str.count("\n")
        )

    def _insert(
        self, action: FileEditorAction, path: Path, boundary: Boundary | None
    ) -> FileEditorObservation:
        if action.insert_line is None:
            raise FileEditorError(
                "`insert` needs `insert_line`: the line after which to insert (0 = the top)."
            )
        if not action.new_str:
            raise FileEditorError("`insert` needs a non-empty `new_str`: the text to insert.")
        with _editing(path, boundary) as target:
            return self._insert_into(action, target, action.insert_line, action.new_str)

    def _insert_into(
        self, action: FileEditorAction, target: Opened, line: int, new_str: str
    ) -> FileEditorObservation:
        path = target.path
        file = parse_text(target.read(), path)
        total = len(split_lines(file.text))
        if not 0 <= line <= total:
            raise FileEditorError(
                f"insert_line {line} is out of range: {path} has {total} lines, so insert_line "
                f"must be between 0 (the top) and {total} (the end)."
            )
        new_str = file.normalise(new_str)
        offset = _line_offset(file.text, line)
        if offset == len(file.text) and file.text and not file.text.endswith("\n"):
            # The last line has no newline: give it one and leave the file's end as it was.
            block = "\n" + new_str.removesuffix("\n")
        else:
            block = new_str if new_str.endswith("\n") else new_str + "\n"
        new_text = file.text[:offset] + block + file.text[offset:]
        return self._write_edit(
            action,
            target,
            file,
            new_text,
            first=line + 1,
            added_newlines=new_str.removesuffix("\n").count("\n"),
        )

    def _undo(
        self, action: FileEditorAction, path: Path, boundary: Boundary | None
    ) -> FileEditorObservation:
        stack = self._history.get(path)
        if not stack:
            raise FileEditorError(f"There is no edit to undo for {path} in this session.")
        previous = stack[-1]
        # Whatever now sits at the path must be a regular file (or nothing) before it is
        # replaced: undo never writes into a pipe or device swapped in since the edit.
        current = None
        if os.path.lexists(path):
            with opened(path, boundary, write=previous is not None) as target:
                current = target.read()
                if previous is not None:
                    target.write(previous)
        elif previous is not None:
            create(path, previous, boundary, parents=False)
        current_text = _lenient_text(current)
        label = self._label(path)
        if previous is None:
            if current is not None:
                remove(path, boundary)
            stack.pop()
            return self._ok(
                action,
                path,
                f"Undid the creation of {path}: the file has been deleted.",
                prev_exist=current is not None,
                diff=unified_diff(current_text, None, label),
            )
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
        target: Opened,
        file: TextFile,
        new_text: str,
        *,
        first: int,
        added_newlines: int,
    ) -> FileEditorObservation:
        """Write the edit, remember the old bytes for undo and show the edited region."""
        path = target.path
        target.write(file.encode(new_text))
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


def _editing(path: Path, boundary: Boundary | None) -> AbstractContextManager[Opened]:
    """The file to edit, open; a missing one gets a hint to create it instead."""
    if not os.path.lexists(path):
        raise FileEditorError(
            f"The file {path} does not exist. Check the path (view the directory "
            f"{nearest_existing_parent(path)} to see what is there), or use create to make "
            "a new file."
        )
    return opened(path, boundary, write=True)


def _exists(path: Path) -> FileEditorError:
    return FileEditorError(
        f"{path} already exists, so create would overwrite it. To change it, use "
        "str_replace or insert (view it first to see the current content)."
    )


def _approved_outside(conversation: LocalConversation | None) -> bool:
    """Whether the user approved the action running now to run outside the sandbox (`o` in
    the approval dialog): its edit then goes where the sandbox alone would refuse it."""
    from ohtui.sdk.tool.context import running_action_id

    return (
        conversation is not None
        and conversation.state.runs_outside_sandbox(running_action_id.get()) is True
    )


def _refusal(command: str, path: Path, problem: str, sandbox: Sandbox | None) -> str:
    """Why the boundary refuses this command on `path`, as the model should read it."""
    if sandbox is not None and sandbox.active:
        return (
            f"The sandbox refused to {command} {path}: {problem}. Nothing was changed. If the "
            "task needs it, ask the user to allow it (they can change the sandbox with /sandbox)."
        )
    return f"The editor refused to {command} {path}: {problem}. Nothing was changed."


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
