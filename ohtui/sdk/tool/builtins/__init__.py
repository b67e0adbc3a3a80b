"""Built-in tools: every agent has `finish` (ends the run) and `think` (records a thought)
unless told otherwise; `switch_llm` (another saved LLM profile) only when asked for."""

from ohtui.sdk.tool.builtins.finish import FinishAction, FinishObservation, FinishTool
from ohtui.sdk.tool.builtins.switch_llm import (
    SwitchLLMAction,
    SwitchLLMObservation,
    SwitchLLMTool,
)
from ohtui.sdk.tool.builtins.think import ThinkAction, ThinkObservation, ThinkTool

BUILT_IN_TOOLS = (FinishTool, ThinkTool, SwitchLLMTool)
"""Every built-in tool an agent may name in `include_default_tools`."""
DEFAULT_BUILT_IN_TOOLS = (FinishTool, ThinkTool)
"""The built-in tools an agent has when it names none."""

__all__ = [
    "BUILT_IN_TOOLS",
    "DEFAULT_BUILT_IN_TOOLS",
    "FinishAction",
    "FinishObservation",
    "FinishTool",
    "SwitchLLMAction",
    "SwitchLLMObservation",
    "SwitchLLMTool",
    "ThinkAction",
    "ThinkObservation",
    "ThinkTool",
]
