"""The actions waiting for approval, turned into the modal's plain view data."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ohtui.opening.safety import RuleDraft
from ohtui.tui.approval_types import PendingActionView
from ohtui.tui.render import action_summary, edit_preview

if TYPE_CHECKING:
    from ohtui.sdk import BaseConversation
    from ohtui.sdk.event import ActionEvent


def pending_views(conversation: BaseConversation) -> list[PendingActionView]:
    """One view per action the conversation waits on, with a suggested "always allow" rule."""
    from ohtui.sdk import ConversationState
    from ohtui.sdk.security import suggest_rules

    working_dir = conversation.workspace.working_dir
    views = []
    for action in ConversationState.get_unmatched_actions(conversation.state.active_branch()):
        summary, detail = action_summary(action)
        suggestion = suggest_rules(action, working_dir)
        views.append(
            PendingActionView(
                action_id=action.id,
                tool=action.tool_name,
                summary=summary,
                detail=detail,
                risk=action.security_risk.value,
                risk_reason=action.security_risk_reason or reported_reason(conversation, action),
                diff=edit_preview(action),
                suggested_rules=tuple(
                    RuleDraft(tool=r.tool, command_prefix=r.command_prefix, path_glob=r.path_glob)
                    for r in suggestion.rules
                ),
                no_rule_reason=suggestion.reason,
                sandboxed=conversation.outside_sandbox_matters(action),
            )
        )
    return views


def reported_reason(conversation: BaseConversation, action: ActionEvent) -> str | None:
    """Why an action was rated so, when the rating came without a reason (an OpenHands
    server sends none): what the analyzer the server reports goes by, where that can be
    told here, i.e. the model's own rating."""
    from ohtui.sdk import LLMSecurityAnalyzer

    analyzer = conversation.state.security_analyzer
    if isinstance(analyzer, LLMSecurityAnalyzer):
        return analyzer.assess(action).explanation
    return None
