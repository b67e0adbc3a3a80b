"""Whether the terminal vouches for a command its policy would run without asking.

An allow rule, or the proof that a line only reads, judged the command line as the analyzer
read it; the live shell may run something else (see `TerminalExecutor.vouch`). When it
cannot vouch, the action waits for the user, with the reason, under any policy that asks at
all, unless the action is confined and undoable (then it runs after a checkpoint, whatever
the shell makes of it).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ohtui.sdk.security.confirmation_policy import ConfirmationPolicyBase

if TYPE_CHECKING:
    from ohtui.sdk.conversation.state import ConversationState
    from ohtui.sdk.event.llm_convertible.action import ActionEvent
    from ohtui.sdk.tool.tool import ToolDefinition

TERMINAL = "terminal"
UNVOUCHED = "it would run unasked, but "


def was_unvouched(action: ActionEvent) -> bool:
    """Whether the action waited because the terminal could not vouch for it (its reason
    says so), whatever an allow rule would decide on its own."""
    return (action.security_risk_reason or "").startswith(UNVOUCHED)


def asks_at_all(policy: ConfirmationPolicyBase) -> bool:
    """Whether `policy` ever waits for the user (rules over a never-asking fallback do not)."""
    # The rules load on first use: a conversation that never made a rules policy has none.
    rules = sys.modules.get("ohtui.sdk.security.approval_rules")
    if rules is not None and isinstance(policy, rules.ApprovalRulesPolicy):
        return policy.is_active and asks_at_all(policy.fallback)
    return policy.is_active


def unvouched(
    tools: Mapping[str, ToolDefinition], state: ConversationState, action: ActionEvent
) -> str | None:
    """Why a terminal action the policy allows must still wait; None when it need not."""
    if action.tool_name != TERMINAL:
        return None
    from ohtui.sdk.tools.terminal import TerminalAction, TerminalExecutor

    tool = tools.get(TERMINAL)
    executor = tool.executor if tool is not None else None
    command = action.action
    if action.tool_name != TERMINAL or not isinstance(command, TerminalAction):
        return None
    if not isinstance(executor, TerminalExecutor) or command.reset:
        return None
    policy = state.confirmation_policy
    if not asks_at_all(policy):
        return None
    if policy.decide(action, state.workspace.working_dir).verdict != "allow":
        return None
    reason = executor.vouch(command.command)
    return UNVOUCHED + reason if reason else None
