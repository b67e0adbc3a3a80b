"""ConversationSafety: a conversation's risk analysis, confirmation policy and approval rules,
in the UI's terms (policy names, rule drafts and rows). The engine is imported on first use:
this module loads with the session, which must not import it on the UI thread."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ohtui.opening import fallback_policy, policy_name
from ohtui.settings.choices import ConfirmationPolicy, RuleScope
from ohtui.tui.approval_types import RuleDraft, RuleRow

if TYPE_CHECKING:
    from ohtui.sdk import ApprovalRulesPolicy, BaseConversation
    from ohtui.settings.approval_rules import ApprovalRuleStore


REFUSED_KIND = 422
"""What an agent server answers a policy of a kind it does not know (approval rules)."""


class ConversationSafety:
    """Reads and changes how one conversation decides which actions wait for the user."""

    def __init__(self, conversation: BaseConversation, store: ApprovalRuleStore | None) -> None:
        self.conversation = conversation
        self.store = store

    @property
    def policy(self) -> ConfirmationPolicy:
        """The current confirmation policy."""
        return policy_of(self.conversation)

    def set_policy(self, policy: ConfirmationPolicy) -> None:
        """Switch the policy, keeping the rules; on an agent server that takes no rules
        (OpenHands'), the plain policy (it had no rules there either)."""
        from ohtui.sdk import RemoteServerError

        rules_policy = self._rules_policy(policy)
        try:
            self.conversation.set_confirmation_policy(rules_policy)
        except RemoteServerError as exc:
            if exc.status_code != REFUSED_KIND or rules_policy.rules:
                raise
            self.conversation.set_confirmation_policy(rules_policy.fallback)

    def add_rule(self, draft: RuleDraft) -> None:
        """Add an approval rule (lasting ones are saved in the store too)."""
        from ohtui.sdk import ApprovalRule

        workspace = self.conversation.workspace.working_dir
        rule = ApprovalRule(
            tool=draft.tool,
            command_prefix=draft.command_prefix,
            path_glob=draft.path_glob,
            scope=draft.scope.value,
            workspace=workspace if draft.scope is RuleScope.WORKSPACE else None,
        )
        self.conversation.set_confirmation_policy(self._rules_policy(self.policy).with_rule(rule))
        if self.store is not None:
            self.store.add(rule)

    def rows(self) -> list[RuleRow]:
        """The rules in force, as the rules list shows them."""
        return [
            RuleRow(
                r.id,
                RuleDraft(r.tool, r.command_prefix, r.path_glob).describe(),
                RuleScope(r.scope),
                r.decision,
            )
            for r in self._rules_policy(self.policy).rules
        ]

    def remove_rules(self, rule_ids: list[str]) -> None:
        """Remove rules by id, from the conversation and the store."""
        policy = self._rules_policy(self.policy)
        for rule_id in rule_ids:
            policy = policy.without_rule(rule_id)
        self.conversation.set_confirmation_policy(policy)
        if self.store is not None:
            self.store.remove(rule_ids)

    def _rules_policy(self, policy: ConfirmationPolicy) -> ApprovalRulesPolicy:
        """The conversation's rules under `policy`."""
        from ohtui.sdk import ApprovalRulesPolicy

        current = self.conversation.state.confirmation_policy
        rules = current.rules if isinstance(current, ApprovalRulesPolicy) else []
        return ApprovalRulesPolicy(rules=rules, fallback=fallback_policy(policy))


def policy_of(conversation: BaseConversation) -> ConfirmationPolicy:
    """The conversation's confirmation policy, in the user's terms (a rules policy: its
    fallback)."""
    return ConfirmationPolicy(policy_name(conversation.state.confirmation_policy))
