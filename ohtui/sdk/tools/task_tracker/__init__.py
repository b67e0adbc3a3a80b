"""The `task_tracker` tool: a plan of tasks with statuses, saved with the conversation."""

from ohtui.sdk.tool.registry import register_tool
from ohtui.sdk.tools.task_tracker.definition import (
    TaskItem,
    TaskTrackerAction,
    TaskTrackerObservation,
    TaskTrackerTool,
)
from ohtui.sdk.tools.task_tracker.tracker import TaskTrackerExecutor

register_tool("task_tracker", TaskTrackerTool)

__all__ = [
    "TaskItem",
    "TaskTrackerAction",
    "TaskTrackerExecutor",
    "TaskTrackerObservation",
    "TaskTrackerTool",
]
