"""The `planning_file_editor` tool: views any file, changes only the plan (PLAN.md)."""

from ohtui.sdk.tool.registry import register_tool
from ohtui.sdk.tools.planning_file_editor.definition import (
    PlanningFileEditorAction,
    PlanningFileEditorObservation,
    PlanningFileEditorTool,
)
from ohtui.sdk.tools.planning_file_editor.impl import PlanningFileEditorExecutor

register_tool(PlanningFileEditorTool.name, PlanningFileEditorTool)

__all__ = [
    "PlanningFileEditorAction",
    "PlanningFileEditorExecutor",
    "PlanningFileEditorObservation",
    "PlanningFileEditorTool",
]
