"""A terminal call as the agent records it, for tests that rate or decide on one."""

from __future__ import annotations

from ohtui.sdk import ActionEvent, SecurityRisk
from ohtui.sdk.llm import MessageToolCall
from ohtui.sdk.tools.terminal import TerminalAction


def terminal_call(command: str, risk: SecurityRisk = SecurityRisk.LOW) -> ActionEvent:
    """The ActionEvent of a `terminal` call running `command`, rated `risk` by the model."""
    return ActionEvent(
        action=TerminalAction(command=command),
        tool_name="terminal",
        tool_call_id="c1",
        tool_call=MessageToolCall(id="c1", name="terminal", arguments="{}"),
        llm_response_id="r1",
        security_risk=risk,
    )
