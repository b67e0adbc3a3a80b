"""Risk levels, confirmation policies, approval rules and security analyzers."""

from ohtui.sdk.security.analyzer import (
    EnsembleSecurityAnalyzer,
    LLMSecurityAnalyzer,
    RiskAssessment,
    SecurityAnalyzerBase,
)
from ohtui.sdk.security.approval_rules import (
    ApprovalRule,
    ApprovalRulesPolicy,
    RuleDecision,
    RuleScope,
)
from ohtui.sdk.security.confirmation_policy import (
    AlwaysConfirm,
    ConfirmationDecision,
    ConfirmationPolicyBase,
    ConfirmRisky,
    NeverConfirm,
)
from ohtui.sdk.security.pattern_analyzer import PatternSecurityAnalyzer
from ohtui.sdk.security.policy_rails import PolicyRailSecurityAnalyzer
from ohtui.sdk.security.risk import SecurityRisk
from ohtui.sdk.security.rule_suggestion import RuleSuggestion, suggest_rules

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
