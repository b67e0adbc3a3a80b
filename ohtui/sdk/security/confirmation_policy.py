"""Confirmation policies: which actions wait for the user before they run."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from pydantic import ConfigDict, field_validator

from ohtui.sdk.security.risk import SecurityRisk
from ohtui.sdk.utils.models import DiscriminatedUnionMixin

if TYPE_CHECKING:
    from ohtui.sdk.event.llm_convertible.action import ActionEvent
    from ohtui.sdk.security.approval_rules import ApprovalRule

Verdict = Literal["allow", "deny", "confirm"]


@dataclass(frozen=True, slots=True)
class ConfirmationDecision:
    """What to do with one action: run it, reject it, or ask the user."""

    verdict: Verdict
    reason: str = ""
    rule: ApprovalRule | None = None


class ConfirmationPolicyBase(DiscriminatedUnionMixin, ABC):
    """Decides, from an action's risk, whether the user must confirm it."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    @abstractmethod
    def should_confirm(self, risk: SecurityRisk = SecurityRisk.UNKNOWN) -> bool:
        """Whether an action of this risk waits for the user."""

    @property
    def is_active(self) -> bool:
        """Whether this policy may ever ask the user (NeverConfirm never does)."""
        return True

    def decide(self, action: ActionEvent, working_dir: str) -> ConfirmationDecision:
        """The decision for one action; policies with rules look beyond the risk."""
        if self.should_confirm(action.security_risk):
            return ConfirmationDecision("confirm", f"risk {action.security_risk.value}")
        return ConfirmationDecision("allow")


class AlwaysConfirm(ConfirmationPolicyBase):
    """Every action waits for the user."""

    def should_confirm(self, risk: SecurityRisk = SecurityRisk.UNKNOWN) -> bool:
        """Always."""
        return True


class NeverConfirm(ConfirmationPolicyBase):
    """No action waits; confirmation mode is off."""

    def should_confirm(self, risk: SecurityRisk = SecurityRisk.UNKNOWN) -> bool:
        """Never."""
        return False

    @property
    def is_active(self) -> bool:
        """Never active."""
        return False


class ConfirmRisky(ConfirmationPolicyBase):
    """Actions at or above `threshold` wait; UNKNOWN ones wait if `confirm_unknown`."""

    threshold: SecurityRisk = SecurityRisk.HIGH
    confirm_unknown: bool = True

    @field_validator("threshold")
    @classmethod
    def _known_threshold(cls, value: SecurityRisk) -> SecurityRisk:
        if value is SecurityRisk.UNKNOWN:
            raise ValueError("the threshold must be LOW, MEDIUM or HIGH, not UNKNOWN")
        return value

    def should_confirm(self, risk: SecurityRisk = SecurityRisk.UNKNOWN) -> bool:
        """Confirm when risk >= threshold (inclusive), or when unknown and confirm_unknown."""
        if risk is SecurityRisk.UNKNOWN:
            return self.confirm_unknown
        return risk >= self.threshold
