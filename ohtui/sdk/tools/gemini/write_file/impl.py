"""WriteFileExecutor: writes through the file editor's confined handles."""

from __future__ import annotations

from ohtui.sdk.tools.file_editor.fileio import FileEditorError
from ohtui.sdk.tools.gemini.base import WorkspaceExecutor, failure
from ohtui.sdk.tools.gemini.write_file.definition import WriteFileAction, WriteFileObservation


class WriteFileExecutor(WorkspaceExecutor):
    """Creates a file of the workspace, or replaces its content."""

    def __call__(
        self, action: WriteFileAction, conversation: object = None
    ) -> WriteFileObservation:
        """Write the file; failures come back as error observations."""
        path = self.files.resolve(action.file_path)
        try:
            is_new = not self.files.exists(path)
            old = None if is_new else self.files.read(path).text
            self.files.write(path, action.content)
        except (FileEditorError, OSError) as exc:
            return WriteFileObservation.from_text(failure("write", path, exc), is_error=True)
        verb = "Created" if is_new else "Updated"
        return WriteFileObservation.from_text(
            f"{verb} file: {path}",
            file_path=str(path),
            is_new_file=is_new,
            old_content=old,
            new_content=action.content,
        )
