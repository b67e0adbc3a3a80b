"""The safety installed on a conversation: its risk analyzers, its confirmation policy and its
approval rules, in the user's terms (policies, rule drafts and rows).

`policy_for` decides, once for every front end, which policy a conversation opens with. The
engine is imported on first use: the TUI loads this module with its session, which must not
import the engine on the UI thread."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from ohtui.settings.choices import ConfirmationPolicy, RuleScope

if TYPE_CHECKING:
    from ohtui.sdk import (
        ActionEvent,
        ApprovalRulesPolicy,
        BaseConversation,
        ConfirmationPolicyBase,
    )
    from ohtui.settings.approval_rules import ApprovalRuleStore
    from ohtui.settings.profile import Profile


@dataclass(frozen=True)
class RuleDraft:
    """An approval rule being proposed or edited: tool plus command prefix or path glob."""

    tool: str
    command_prefix: str | None = None
    path_glob: str | None = None
    scope: RuleScope = RuleScope.SESSION

    def __post_init__(self) -> None:
        object.__setattr__(self, "scope", RuleScope(self.scope))  # also from plain text

    def describe(self) -> str:
        """E.g. "terminal commands starting with `git status`"."""
        if self.command_prefix:
            return f"{self.tool} commands starting with `{self.command_prefix}`"
        if self.path_glob:
            return f"{self.tool} on paths matching `{self.path_glob}`"
        return f"every {self.tool} action"


@dataclass(frozen=True)
class RuleRow:
    """A saved approval rule, as the rules list shows it."""

    rule_id: str
    description: str
    scope: RuleScope
    decision: Literal["allow", "deny"] = "allow"

    def __post_init__(self) -> None:
        object.__setattr__(self, "scope", RuleScope(self.scope))  # also from plain text


def install_safety(
    conversation: BaseConversation, policy: ConfirmationPolicy, store: ApprovalRuleStore | None
) -> str | None:
    """Rate actions with the model and pattern rules; apply `policy` with the conversation's
    rules and the saved ones. Returns a problem to tell."""
    from ohtui.sdk import (
        ApprovalRulesPolicy,
        EnsembleSecurityAnalyzer,
        LLMSecurityAnalyzer,
        PatternSecurityAnalyzer,
    )

    conversation.set_security_analyzer(
        EnsembleSecurityAnalyzer(analyzers=[LLMSecurityAnalyzer(), PatternSecurityAnalyzer()])
    )
    current = conversation.state.confirmation_policy
    rules = current.rules if isinstance(current, ApprovalRulesPolicy) else []
    rules_policy = ApprovalRulesPolicy(rules=rules, fallback=policy.to_engine())
    if store is not None:
        # Lasting rules come from the store as they are now, not as the conversation saw them.
        lasting = store.rules_for(conversation.workspace.working_dir)
        rules_policy = rules_policy.with_scope("user", lasting).with_scope("workspace", lasting)
    conversation.set_confirmation_policy(rules_policy)
    return store.problem if store is not None else None


def policy_for(
    profile: Profile, resumed: bool, saved: ConfirmationPolicyBase
) -> ConfirmationPolicy:
    """The policy a conversation opens with: a resumed one keeps the policy it was saved with
    (`saved`), unless this run chose one (`--confirm`, OHTUI_CONFIRM); a new one takes the
    settings'."""
    if resumed and ("confirmation", "policy") not in profile.overrides:
        return ConfirmationPolicy.from_engine(saved)
    return profile.settings.confirmation.policy


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

    def add_rule(self, draft: RuleDraft, decision: Literal["allow", "deny"] = "allow") -> None:
        """Add an approval rule (lasting ones are saved in the store too); a "deny" rule
        rejects the actions it covers without asking."""
        from ohtui.sdk import ApprovalRule

        workspace = self.conversation.workspace.working_dir
        rule = ApprovalRule(
            tool=draft.tool,
            command_prefix=draft.command_prefix,
            path_glob=draft.path_glob,
            decision=decision,
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
        return ApprovalRulesPolicy(rules=rules, fallback=policy.to_engine())


def policy_of(conversation: BaseConversation) -> ConfirmationPolicy:
    """The conversation's confirmation policy, in the user's terms (a rules policy: its
    fallback)."""
    return ConfirmationPolicy.from_engine(conversation.state.confirmation_policy)


def actions_needing_approval(conversation: BaseConversation) -> list[tuple[ActionEvent, str]]:
    """The waiting actions the policy would not allow by themselves, or the terminal could
    not vouch for, each with why (a batch waits as one; its harmless actions still run).
    All of them when none stands out."""
    from ohtui.sdk import ConversationState
    from ohtui.sdk.agent.vouching import was_unvouched

    state = conversation.state
    working_dir = conversation.workspace.working_dir
    pending = ConversationState.get_unmatched_actions(state.active_branch())
    policy = state.confirmation_policy
    needing: list[tuple[ActionEvent, str]] = []
    for action in pending:
        if was_unvouched(action):
            needing.append((action, "the terminal could not vouch for it"))
            continue
        decision = policy.decide(action, working_dir)
        if decision.verdict != "allow":
            needing.append((action, decision.reason or f"risk {action.security_risk.value}"))
    return needing or [(a, f"risk {a.security_risk.value}") for a in pending]
