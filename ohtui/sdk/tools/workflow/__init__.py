"""The workflow tool: a model-written script that coordinates sub-agents."""

from ohtui.sdk.tools.workflow.definition import (
    WorkflowAction,
    WorkflowObservation,
    WorkflowTool,
    WorkflowToolSet,
)
from ohtui.sdk.tools.workflow.impl import WorkflowContext, WorkflowExecutor
from ohtui.sdk.tools.workflow.script import WorkflowScriptError

__all__ = [
    "WorkflowAction",
    "WorkflowContext",
    "WorkflowExecutor",
    "WorkflowObservation",
    "WorkflowScriptError",
    "WorkflowTool",
    "WorkflowToolSet",
]
