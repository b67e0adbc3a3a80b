"""What the default policy does with a command the model rates LOW: ask, run because it is
undoable, or run because it only reads."""

from __future__ import annotations

from enum import Enum

from terminal_actions import terminal_call

from ohtui.sdk import (
    ConfirmRisky,
    EnsembleSecurityAnalyzer,
    LLMSecurityAnalyzer,
    PatternSecurityAnalyzer,
    SecurityRisk,
)
from ohtui.sdk.security.undo import changes_workspace


class Outcome(str, Enum):
    """What happens to the command."""

    ASKS = "asks"
    UNDOABLE = "runs, confined, after a checkpoint"
    READS = "runs, shown to only read"


DEFAULT_POLICY = ConfirmRisky(threshold=SecurityRisk.MEDIUM)


def outcome(command: str, workspace: str, *, undoable: bool) -> Outcome:
    """The default policy's answer for `command` rated LOW by the model."""
    action = terminal_call(command)
    analyzer = EnsembleSecurityAnalyzer(
        analyzers=[LLMSecurityAnalyzer(), PatternSecurityAnalyzer()]
    ).with_workspace(workspace)
    risk = analyzer.with_undo(undoable).assess(action).risk
    if DEFAULT_POLICY.should_confirm(risk):
        return Outcome.ASKS
    return Outcome.UNDOABLE if changes_workspace(action, False) else Outcome.READS
