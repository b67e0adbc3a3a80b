"""Built-in tools: terminal, file_editor, task_tracker; task, delegate and workflow (sub-agents).

The names upstream's `openhands.tools` exports are imported on first use, so that
`import ohtui.sdk.tools` stays light.
"""

from typing import TYPE_CHECKING

from ohtui.sdk.utils.lazy import lazy_exports

if TYPE_CHECKING:
    from ohtui.sdk.tools.delegate import DelegationVisualizer
    from ohtui.sdk.tools.file_editor import FileEditorTool
    from ohtui.sdk.tools.preset.builtin_agents import register_builtins_agents
    from ohtui.sdk.tools.preset.default import (
        get_default_agent,
        get_default_tools,
        register_default_tools,
    )
    from ohtui.sdk.tools.task import TaskToolSet
    from ohtui.sdk.tools.task_tracker import TaskTrackerTool
    from ohtui.sdk.tools.terminal import TerminalTool
    from ohtui.sdk.tools.workflow import WorkflowToolSet

__getattr__ = lazy_exports(
    __name__,
    {
        "DelegationVisualizer": "ohtui.sdk.tools.delegate",
        "FileEditorTool": "ohtui.sdk.tools.file_editor",
        "TaskToolSet": "ohtui.sdk.tools.task",
        "TaskTrackerTool": "ohtui.sdk.tools.task_tracker",
        "TerminalTool": "ohtui.sdk.tools.terminal",
        "WorkflowToolSet": "ohtui.sdk.tools.workflow",
        "get_default_agent": "ohtui.sdk.tools.preset.default",
        "get_default_tools": "ohtui.sdk.tools.preset.default",
        "register_builtins_agents": "ohtui.sdk.tools.preset.builtin_agents",
        "register_default_tools": "ohtui.sdk.tools.preset.default",
    },
)

__all__ = [
    "DelegationVisualizer",
    "FileEditorTool",
    "TaskToolSet",
    "TaskTrackerTool",
    "TerminalTool",
    "WorkflowToolSet",
    "get_default_agent",
    "get_default_tools",
    "register_builtins_agents",
    "register_default_tools",
]
