"""Security analyzers: rate each action's risk, and say why."""

from __future__ import annotations

import logging
import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, final

from pydantic import ConfigDict, Field, SerializeAsAny

from ohtui.sdk.security.risk import SecurityRisk
from ohtui.sdk.utils.models import DiscriminatedUnionMixin

if TYPE_CHECKING:
    from ohtui.sdk.event.base import Event
    from ohtui.sdk.event.llm_convertible.action import ActionEvent

logger = logging.getLogger(__name__)

_RANK = {SecurityRisk.LOW: 1, SecurityRisk.MEDIUM: 2, SecurityRisk.HIGH: 3}
_FROZEN = ConfigDict(frozen=True)
"""Our own analyzers live in the conversation's state: changing one must go through it."""


@dataclass(frozen=True, slots=True)
class RiskAssessment:
    """A risk with its reason and the analyzer that gave it."""

    risk: SecurityRisk
    reason: str | None = None
    analyzer: str = ""

    @property
    def explanation(self) -> str:
        """ "Analyzer: reason" for display (just the reason when several analyzers gave it)."""
        if self.reason and self.analyzer:
            return f"{self.analyzer}: {self.reason}"
        return self.reason or self.analyzer


class SecurityAnalyzerBase(DiscriminatedUnionMixin, ABC):
    """Rates actions before they run.

    Subclasses implement `security_risk` (the SDK's name) or `analyze` (ohtui's older name):
    either is enough, as each delegates to the other, and a class implementing neither
    cannot be created. They may also implement `explain`.
    """

    # A field typed with this base class writes the subclass's own fields too (pydantic
    # 2.13+), so an analyzer survives JSON in any model that holds one.
    model_config = ConfigDict(defer_build=True, extra="forbid", polymorphic_serialization=True)

    @abstractmethod
    def security_risk(self, action: ActionEvent) -> SecurityRisk:
        """The action's risk."""
        if type(self).analyze is SecurityAnalyzerBase.analyze:
            raise NotImplementedError(f"{type(self).__name__} does not implement security_risk")
        return self.analyze(action)

    def analyze(self, action: ActionEvent) -> SecurityRisk:
        """The action's risk (ohtui's older name for `security_risk`)."""
        if type(self).security_risk is SecurityAnalyzerBase.security_risk:
            raise NotImplementedError(f"{type(self).__name__} does not implement analyze")
        return self.security_risk(action)

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        if cls.analyze is not SecurityAnalyzerBase.analyze:
            # Written against ohtui's older name: `security_risk` delegates to it.
            cls.__abstractmethods__ = cls.__abstractmethods__ - {"security_risk"}

    def explain(self, action: ActionEvent) -> str | None:
        """Why the action got its risk (None when there is nothing to say)."""
        return None

    @property
    def name(self) -> str:
        """How the analyzer is named in explanations: words, never a class name on screen."""
        words = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+", type(self).__name__)
        return " ".join(w if w.isupper() else w.lower() for w in words)

    @property
    def wants_model_rating(self) -> bool:
        """Whether tools must ask the model for a `security_risk` argument."""
        return False

    def with_workspace(self, working_dir: str) -> SecurityAnalyzerBase:
        """This analyzer for a workspace (analyzers that judge paths need it)."""
        return self

    def with_undo(self, undoable: bool) -> SecurityAnalyzerBase:
        """This analyzer for an action that is (or is not) confined and undoable: the sandbox
        confines it to the workspace and a checkpoint is taken right before it runs."""
        return self

    @final
    def assess(self, action: ActionEvent) -> RiskAssessment:
        """Risk and reason; an analyzer that fails counts as HIGH (and is logged)."""
        try:
            return self._assess(action)
        except Exception as exc:  # a broken analyzer must fail safe
            logger.exception("security analyzer %s failed on %s", self.name, action.tool_name)
            reason = f"the analyzer failed ({exc or 'no message'}; see the log)"
            return RiskAssessment(SecurityRisk.HIGH, reason, self.name)

    def analyze_event(self, event: Event) -> SecurityRisk | None:
        """The risk of an action event (a failing analyzer: HIGH); None for other events."""
        from ohtui.sdk.event.llm_convertible.action import ActionEvent

        return self.assess(event).risk if isinstance(event, ActionEvent) else None

    def analyze_pending_actions(
        self, pending_actions: Sequence[ActionEvent]
    ) -> list[tuple[ActionEvent, SecurityRisk]]:
        """Each action with its risk, in order; one the analyzer fails on is HIGH."""
        return [(action, self.assess(action).risk) for action in pending_actions]

    def _assess(self, action: ActionEvent) -> RiskAssessment:
        return RiskAssessment(self.security_risk(action), self.explain(action), self.name)


class LLMSecurityAnalyzer(SecurityAnalyzerBase):
    """Uses the model's own rating: every tool that is not read-only asks it for one."""

    model_config = _FROZEN

    @property
    def name(self) -> str:
        """Shown as "the model"."""
        return "the model"

    def security_risk(self, action: ActionEvent) -> SecurityRisk:
        """The `security_risk` the model gave with the call."""
        return action.security_risk

    def explain(self, action: ActionEvent) -> str | None:
        """What the model said."""
        if action.security_risk is SecurityRisk.UNKNOWN:
            return "the model gave no rating"
        return f"rated {action.security_risk.value}"

    @property
    def wants_model_rating(self) -> bool:
        """Yes: this analyzer is the model's rating."""
        return True


class EnsembleSecurityAnalyzer(SecurityAnalyzerBase):
    """The highest risk any member gives, so one careless rating cannot lower it.

    A member that cannot rate (UNKNOWN) is passed over unless all are; with
    `propagate_unknown`, one such member makes the whole rating UNKNOWN.
    """

    model_config = _FROZEN

    analyzers: list[SerializeAsAny[SecurityAnalyzerBase]] = Field(min_length=1)
    propagate_unknown: bool = False

    def security_risk(self, action: ActionEvent) -> SecurityRisk:
        """The highest known risk among the members (see the class for UNKNOWN)."""
        return self._assess(action).risk

    def _assess(self, action: ActionEvent) -> RiskAssessment:
        assessments = [a.assess(action) for a in self.analyzers]
        known = [a for a in assessments if a.risk is not SecurityRisk.UNKNOWN]
        if not known:
            # What the rules said, then what the model said: "no rule matched; the model gave
            # no rating". No analyzer name: the reasons are the members', not the ensemble's.
            members = sorted(
                zip(self.analyzers, assessments, strict=True),
                key=lambda pair: pair[0].wants_model_rating,
            )
            reasons = [a.reason for _, a in members if a.reason]
            reason = "; ".join(dict.fromkeys(reasons)) or "no analyzer could rate it"
            return RiskAssessment(SecurityRisk.UNKNOWN, reason)
        if self.propagate_unknown and len(known) < len(assessments):
            silent = ", ".join(a.analyzer for a in assessments if a.risk is SecurityRisk.UNKNOWN)
            return RiskAssessment(SecurityRisk.UNKNOWN, f"{silent} could not rate it", self.name)
        top = max(known, key=lambda a: _RANK[a.risk])
        reason = top.reason or "no reason given"
        lower = [a for a in known if _RANK[a.risk] < _RANK[top.risk]]
        if lower:
            reason += "; overrules " + ", ".join(f"{a.analyzer} ({a.risk.value})" for a in lower)
        return RiskAssessment(top.risk, reason, top.analyzer)

    @property
    def wants_model_rating(self) -> bool:
        """Whether any member needs the model's rating."""
        return any(a.wants_model_rating for a in self.analyzers)

    def with_workspace(self, working_dir: str) -> EnsembleSecurityAnalyzer:
        """Every member bound to the workspace."""
        return self.model_copy(
            update={"analyzers": [a.with_workspace(working_dir) for a in self.analyzers]}
        )

    def with_undo(self, undoable: bool) -> EnsembleSecurityAnalyzer:
        """Every member told whether the action is confined and undoable."""
        members = [a.with_undo(undoable) for a in self.analyzers]
        if all(new is old for new, old in zip(members, self.analyzers, strict=True)):
            return self
        return self.model_copy(update={"analyzers": members})
