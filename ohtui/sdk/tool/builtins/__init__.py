"""Tools every agent has: `finish` ends the run, `think` records a thought."""

from ohtui.sdk.tool.builtins.finish import FinishAction, FinishObservation, FinishTool
from ohtui.sdk.tool.builtins.think import ThinkAction, ThinkObservation, ThinkTool

BUILT_IN_TOOLS = (FinishTool, ThinkTool)

__all__ = [
    "BUILT_IN_TOOLS",
    "FinishAction",
    "FinishObservation",
    "FinishTool",
    "ThinkAction",
    "ThinkObservation",
    "ThinkTool",
]
