"""Approvals: the actions waiting for the user, the user's decisions on them, and the
conversation's confirmation policy and approval rules."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from ohtui.opening.safety import ConversationSafety, RuleRow, install_safety, policy_for, policy_of
from ohtui.settings.choices import ConfirmationPolicy
from ohtui.tui import messages as msg
from ohtui.tui.approval_types import ApprovalDecision, PendingActionView
from ohtui.tui.session.words import describe

if TYPE_CHECKING:
    from ohtui.sdk import BaseConversation
    from ohtui.settings.approval_rules import ApprovalRuleStore
    from ohtui.settings.profile import Profile
    from ohtui.tui.session.link import Link

logger = logging.getLogger(__name__)


class Approvals:
    """Decides, with the user, which of one conversation's actions run."""

    def __init__(
        self,
        link: Link,
        store: ApprovalRuleStore | None,
        chosen: ConfirmationPolicy | None,
        start_run: Callable[[], None],
    ) -> None:
        """`store`: the lasting rules; `chosen`: the policy the app was started with (shown
        until the conversation opens); `start_run`: run on once a decision is applied."""
        self._link = link
        self.store = store
        self._chosen = chosen
        self._start_run = start_run
        self.safety: ConversationSafety | None = None
        """The conversation's safety (None until it opens, and when it is read-only)."""
        self.rejects_all_only = False
        """Whether the agent server can only reject all waiting actions at once."""

    def watch(self, conversation: BaseConversation) -> None:
        """Change `conversation`'s policy and rules from here on (installed as it opened)."""
        self.safety = ConversationSafety(conversation, self.store)

    def install(self, conversation: BaseConversation, profile: Profile, resumed: bool) -> None:
        """Rate actions and apply the policy (saved or chosen, see `policy_for`) to a
        conversation the app's factory opened."""
        self.watch(conversation)
        policy = policy_for(profile, resumed, conversation.state.confirmation_policy)
        problem = install_safety(conversation, policy, self.store)
        if problem:
            self._link.post(msg.Notice(problem, "warning"))

    @property
    def policy(self) -> ConfirmationPolicy:
        """The current confirmation policy."""
        if self.safety is not None:
            return self.safety.policy
        if self._link.conversation is not None:  # read-only: the one it was saved with
            return policy_of(self._link.conversation)
        return self._chosen or ConfirmationPolicy.RISKY

    def pending_views(self) -> list[PendingActionView]:
        """The actions waiting for approval, as the modal shows them."""
        from ohtui.tui.pending import pending_views

        conversation = self._link.conversation
        if conversation is None:
            return []
        return pending_views(conversation)

    def decide(self, decision: ApprovalDecision) -> None:
        """Apply the user's approval decision, then run on."""
        self._link.spawn(lambda: self._decide(decision), "ohtui-decide")

    def _decide(self, decision: ApprovalDecision) -> None:
        conversation = self._link.conversation
        if conversation is None:
            return
        try:
            assert self.safety is not None
            if decision.policy:
                self.safety.set_policy(decision.policy)
                self._link.post(msg.PolicyChanged(self.safety.policy))
            for rule in decision.rules:
                self.safety.add_rule(rule)
            if decision.rejected:
                reason = decision.reason or "The user rejected this action."
                conversation.reject_pending_actions(reason, action_ids=decision.rejected)
            if decision.outside_sandbox:
                conversation.approve_outside_sandbox(decision.outside_sandbox)
        except Exception as exc:  # shown to the user; nothing ran
            logger.exception("applying the approval decision failed")
            self._link.post(msg.SessionFailed(describe(exc)))
            return
        self._start_run()

    def set_policy(self, policy: ConfirmationPolicy) -> None:
        """Switch the confirmation policy, keeping the rules."""
        safety = self.safety
        if safety is None:
            return

        def switch() -> None:
            try:
                safety.set_policy(policy)
            except Exception as exc:  # told; the policy in force stays as it was
                logger.exception("changing the confirmation policy failed")
                self._link.post(msg.Notice(f"The policy was not changed: {describe(exc)}", "error"))
            self._link.post(msg.PolicyChanged(safety.policy))  # the one in force, whatever happened

        self._link.spawn(switch, "ohtui-policy")

    def rules(self) -> list[RuleRow]:
        """The approval rules in force."""
        return self.safety.rows() if self.safety is not None else []

    def remove_rules(self, rule_ids: list[str]) -> None:
        """Remove approval rules by id."""
        if self.safety is not None:
            self.safety.remove_rules(rule_ids)


def rejects_all_only(conversation: BaseConversation) -> bool:
    """Whether `conversation` runs on an agent server that can only reject all waiting
    actions at once (OpenHands'); blocks while the server is asked."""
    from ohtui.sdk import RemoteConversation

    return (
        isinstance(conversation, RemoteConversation) and not conversation.supports_partial_rejection
    )
