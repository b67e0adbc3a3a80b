"""PlanningFileEditorExecutor: ohtui's file editor, allowed to change only the plan file."""

from __future__ import annotations

from ohtui.sdk.tool.tool import ToolExecutor
from ohtui.sdk.tools.file_editor.confined import SandboxOf
from ohtui.sdk.tools.file_editor.editor import FileEditorExecutor
from ohtui.sdk.tools.planning_file_editor.definition import (
    PlanningFileEditorAction,
    PlanningFileEditorObservation,
)


class PlanningFileEditorExecutor(
    ToolExecutor[PlanningFileEditorAction, PlanningFileEditorObservation]
):
    """Views any file; creates, edits and undoes only the plan file."""

    def __init__(self, workspace_root: str, plan_path: str, sandbox: SandboxOf | None = None):
        """`plan_path`: the absolute path of the only file it may change."""
        self.plan_path = plan_path
        self.file_editor_executor = FileEditorExecutor(
            workspace_root, sandbox=sandbox, allowed_edits_files=[plan_path]
        )

    def __call__(
        self, action: PlanningFileEditorAction, conversation: object = None
    ) -> PlanningFileEditorObservation:
        """Run the command through the file editor; the result in this tool's type."""
        result = self.file_editor_executor(action)
        return PlanningFileEditorObservation.model_validate(result.model_dump(exclude={"kind"}))
