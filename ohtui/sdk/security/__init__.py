"""Risk levels, confirmation policies, approval rules and security analyzers.

The analyzers that read commands, and the approval rules, load when one of their names is
first used, or when a saved analyzer or policy of theirs is read back: a conversation that
uses none never imports them.
"""

from typing import TYPE_CHECKING

from ohtui.sdk.security.analyzer import (
    EnsembleSecurityAnalyzer,
    LLMSecurityAnalyzer,
    RiskAssessment,
    SecurityAnalyzerBase,
)
from ohtui.sdk.security.confirmation_policy import (
    AlwaysConfirm,
    ConfirmationDecision,
    ConfirmationPolicyBase,
    ConfirmRisky,
    NeverConfirm,
)
from ohtui.sdk.security.risk import SecurityRisk
from ohtui.sdk.utils.lazy import lazy_exports
from ohtui.sdk.utils.models import register_kind_loader

if TYPE_CHECKING:
    from ohtui.sdk.security.approval_rules import (
        ApprovalRule,
        ApprovalRulesPolicy,
        RuleDecision,
        RuleScope,
    )
    from ohtui.sdk.security.pattern_analyzer import PatternSecurityAnalyzer
    from ohtui.sdk.security.policy_rails import PolicyRailSecurityAnalyzer
    from ohtui.sdk.security.rule_suggestion import RuleSuggestion, suggest_rules

_LAZY_HOMES = {
    "ApprovalRule": "ohtui.sdk.security.approval_rules",
    "ApprovalRulesPolicy": "ohtui.sdk.security.approval_rules",
    "RuleDecision": "ohtui.sdk.security.approval_rules",
    "RuleScope": "ohtui.sdk.security.approval_rules",
    "PatternSecurityAnalyzer": "ohtui.sdk.security.pattern_analyzer",
    "PolicyRailSecurityAnalyzer": "ohtui.sdk.security.policy_rails",
    "RuleSuggestion": "ohtui.sdk.security.rule_suggestion",
    "suggest_rules": "ohtui.sdk.security.rule_suggestion",
}

__getattr__ = lazy_exports(__name__, _LAZY_HOMES)


def _import_analyzers() -> None:
    # A saved state names an analyzer or the rules policy by kind before anything has
    # imported it; load them so it can be read back.
    import ohtui.sdk.security.approval_rules
    import ohtui.sdk.security.pattern_analyzer  # noqa: F401  (and the policy rails)


register_kind_loader(_import_analyzers)

__all__ = [
    "AlwaysConfirm",
    "ApprovalRule",
    "ApprovalRulesPolicy",
    "ConfirmRisky",
    "ConfirmationDecision",
    "ConfirmationPolicyBase",
    "EnsembleSecurityAnalyzer",
    "LLMSecurityAnalyzer",
    "NeverConfirm",
    "PatternSecurityAnalyzer",
    "PolicyRailSecurityAnalyzer",
    "RiskAssessment",
    "RuleDecision",
    "RuleScope",
    "RuleSuggestion",
    "SecurityAnalyzerBase",
    "SecurityRisk",
    "suggest_rules",
]
