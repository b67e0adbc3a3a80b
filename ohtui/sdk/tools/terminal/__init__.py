"""The built-in `terminal` tool: bash commands in a persistent shell per conversation."""

from ohtui.sdk.tool.registry import register_tool
from ohtui.sdk.tools.terminal.definition import TerminalTool, terminal_description
from ohtui.sdk.tools.terminal.executor import TerminalExecutor
from ohtui.sdk.tools.terminal.schema import TerminalAction, TerminalObservation
from ohtui.sdk.tools.terminal.session import BashSession, RunResult, SessionClosedError

register_tool("terminal", TerminalTool)

__all__ = [
    "BashSession",
    "RunResult",
    "SessionClosedError",
    "TerminalAction",
    "TerminalExecutor",
    "TerminalObservation",
    "TerminalTool",
    "terminal_description",
]
