"""The `apply_patch` tool: file edits as one patch (the format GPT-5 models use)."""

from ohtui.sdk.tool.registry import register_tool
from ohtui.sdk.tools.apply_patch.definition import (
    ApplyPatchAction,
    ApplyPatchExecutor,
    ApplyPatchObservation,
    ApplyPatchTool,
)

register_tool(ApplyPatchTool.name, ApplyPatchTool)

__all__ = ["ApplyPatchAction", "ApplyPatchExecutor", "ApplyPatchObservation", "ApplyPatchTool"]
