"""What the default policy does with a command the model rates LOW: ask, run because it is
undoable, or run because it only reads."""

from __future__ import annotations

from enum import Enum

from ohtui.sdk import (
    ActionEvent,
    ConfirmRisky,
    EnsembleSecurityAnalyzer,
    LLMSecurityAnalyzer,
    PatternSecurityAnalyzer,
    SecurityRisk,
)
from ohtui.sdk.llm import MessageToolCall
from ohtui.sdk.security.undo import changes_workspace
from ohtui.sdk.tools.terminal import TerminalAction


class Outcome(str, Enum):
    """What happens to the command."""

    ASKS = "asks"
    UNDOABLE = "runs, confined, after a checkpoint"
    READS = "runs, shown to only read"


DEFAULT_POLICY = ConfirmRisky(threshold=SecurityRisk.MEDIUM)


def outcome(command: str, workspace: str, *, undoable: bool) -> Outcome:
    """The default policy's answer for `command` rated LOW by the model."""
    action = ActionEvent(
        action=TerminalAction(command=command),
        tool_name="terminal",
        tool_call_id="c1",
        tool_call=MessageToolCall(id="c1", name="terminal", arguments="{}"),
        llm_response_id="r1",
        security_risk=SecurityRisk.LOW,
    )
    analyzer = EnsembleSecurityAnalyzer(
        analyzers=[LLMSecurityAnalyzer(), PatternSecurityAnalyzer()]
    ).with_workspace(workspace)
    risk = analyzer.with_undo(undoable).assess(action).risk
    if DEFAULT_POLICY.should_confirm(risk):
        return Outcome.ASKS
    return Outcome.UNDOABLE if changes_workspace(action, False) else Outcome.READS
