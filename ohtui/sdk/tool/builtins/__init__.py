"""Built-in tools: every agent has `finish` (ends the run) and `think` (records a thought)
unless told otherwise; `switch_llm` (another saved LLM profile) only when asked for."""

from ohtui.sdk.tool.builtins.finish import FinishAction, FinishObservation, FinishTool
from ohtui.sdk.tool.builtins.switch_llm import (
    SwitchLLMAction,
    SwitchLLMObservation,
    SwitchLLMTool,
)
from ohtui.sdk.tool.builtins.think import ThinkAction, ThinkObservation, ThinkTool

BUILT_IN_TOOLS = (FinishTool, ThinkTool)
"""The built-in tools an agent has when it names none (the SDK's meaning of the name)."""
DEFAULT_BUILT_IN_TOOLS = BUILT_IN_TOOLS
OPTIONAL_BUILT_IN_TOOLS = (SwitchLLMTool,)
"""Built-in tools an agent has only when `include_default_tools` names them."""
BUILT_IN_TOOL_CLASSES = {
    tool.__name__: tool for tool in (*BUILT_IN_TOOLS, *OPTIONAL_BUILT_IN_TOOLS)
}
"""Every built-in tool an agent may name in `include_default_tools`, by class name."""

__all__ = [
    "BUILT_IN_TOOLS",
    "BUILT_IN_TOOL_CLASSES",
    "DEFAULT_BUILT_IN_TOOLS",
    "OPTIONAL_BUILT_IN_TOOLS",
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
