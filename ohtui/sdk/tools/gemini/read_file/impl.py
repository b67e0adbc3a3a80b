"""ReadFileExecutor: reads through the file editor's confined handles."""

from __future__ import annotations

from ohtui.sdk.tools.file_editor.fileio import FileEditorError, split_lines
from ohtui.sdk.tools.gemini.base import WorkspaceExecutor
from ohtui.sdk.tools.gemini.read_file.definition import (
    MAX_LINES_PER_READ,
    ReadFileAction,
    ReadFileObservation,
)


class ReadFileExecutor(WorkspaceExecutor):
    """Reads a text file of the workspace, a page of numbered lines at a time."""

    def __call__(self, action: ReadFileAction, conversation: object = None) -> ReadFileObservation:
        """Read the lines asked for; failures come back as error observations."""
        path = self.files.resolve(action.file_path)
        if not self.files.exists(path):
            return _error(
                f"Error: File not found: {path}. Check the path (list_directory shows what "
                "is there).",
                str(path),
            )
        try:
            lines = split_lines(self.files.read(path).text)
        except (FileEditorError, OSError) as exc:
            return _error(f"Error: {_reason(exc)}", str(path))
        total = len(lines)
        start = action.offset or 0
        if start and start >= total:
            return _error(
                f"Error: Offset {start} is beyond file length ({total} lines). Pass an offset "
                f"below {total}.",
                str(path),
            )
        limit = action.limit or MAX_LINES_PER_READ
        end = min(start + limit, total)
        shown = "".join(
            f"{number:6d}  {line}\n" for number, line in enumerate(lines[start:end], start + 1)
        )
        truncated = end < total
        header = f"Read file: {path}"
        if truncated:
            header += (
                f" (showing lines {start + 1}-{end} of {total}). To read more, use: "
                f"read_file(file_path='{action.file_path}', offset={end}, limit={limit})"
            )
        elif not total:
            header += " (the file is empty)"
        return ReadFileObservation.from_text(
            f"{header}\n\n{shown}",
            file_path=str(path),
            file_content=shown,
            is_truncated=truncated,
            lines_shown=(start + 1, end) if truncated else None,
            total_lines=total,
        )


def _reason(exc: Exception) -> str:
    if isinstance(exc, OSError):
        return f"{exc.strerror or exc} ({exc.filename or 'the file'})"
    return str(exc)


def _error(text: str, path: str) -> ReadFileObservation:
    return ReadFileObservation.from_text(text, is_error=True, file_path=path)
