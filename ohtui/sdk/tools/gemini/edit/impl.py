"""EditExecutor: find-and-replace through the file editor's confined handles."""

from __future__ import annotations

from ohtui.sdk.tools.file_editor.fileio import FileEditorError
from ohtui.sdk.tools.gemini.base import WorkspaceExecutor, failure
from ohtui.sdk.tools.gemini.edit.definition import EditAction, EditObservation


class EditError(Exception):
    """The edit cannot be made as asked; the message says why and what to do."""


class EditExecutor(WorkspaceExecutor):
    """Replaces text in a file of the workspace, or creates a file."""

    def __call__(self, action: EditAction, conversation: object = None) -> EditObservation:
        """Make the edit; failures come back as error observations."""
        path = self.files.resolve(action.file_path)
        try:
            if action.old_string == "":
                return self._create(action, str(path))
            return self._replace(action, str(path))
        except EditError as exc:
            return EditObservation.from_text(
                f"Error: {exc} Nothing was changed.", is_error=True, file_path=str(path)
            )
        except (FileEditorError, OSError) as exc:
            return EditObservation.from_text(
                failure("edit", path, exc), is_error=True, file_path=str(path)
            )

    def _create(self, action: EditAction, raw: str) -> EditObservation:
        path = self.files.resolve(raw)
        if self.files.exists(path):
            raise EditError(
                f"Cannot create {path}: it already exists. Pass the text to replace in "
                "old_string, or use write_file to replace the whole file."
            )
        self.files.write(path, action.new_string)
        return EditObservation.from_text(
            f"Created new file: {path}",
            file_path=str(path),
            is_new_file=True,
            replacements_made=1,
            new_content=action.new_string,
        )

    def _replace(self, action: EditAction, raw: str) -> EditObservation:
        path = self.files.resolve(raw)
        if not self.files.exists(path):
            raise EditError(
                f"File not found: {path}. Check the path, or pass an empty old_string to "
                "create the file."
            )
        file = self.files.read(path)
        old_string = file.normalise(action.old_string)
        new_string = file.normalise(action.new_string)
        if old_string == new_string:
            raise EditError("old_string and new_string are identical, so nothing would change.")
        found = file.text.count(old_string)
        if found == 0:
            raise EditError(
                f"Could not find the string to replace: 0 occurrences in {path}. Read the "
                "file to copy the exact text."
            )
        if found != action.expected_replacements:
            raise EditError(
                f"Expected {action.expected_replacements} occurrence(s) but found {found} in "
                f"{path}. Add context to old_string to single one out, or set "
                f"expected_replacements to {found} to replace them all."
            )
        new_text = file.text.replace(old_string, new_string)
        self.files.write(path, new_text, like=file)
        return EditObservation.from_text(
            f"Successfully edited {path} ({found} replacement(s))",
            file_path=str(path),
            replacements_made=found,
            old_content=file.text,
            new_content=new_text,
        )
