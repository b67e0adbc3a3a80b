"""Approval rules tried as an attacker would: allow rules talked around, deny rules dodged.

Each try is checked twice: the rules policy must not wave it through (or must deny it),
and, run for real inside bubblewrap, it must actually do what it aimed at; so the corpus
stays honest about which tries are real.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sandboxed_bash import Sandbox
from shell_corpus import ALLOW_BYPASSES, ALLOW_RULES, ALLOWED, DANGEROUS, DENY_DODGES

from ohtui.sdk import (
    ActionEvent,
    AlwaysConfirm,
    ApprovalRule,
    ApprovalRulesPolicy,
    ConfirmRisky,
    EnsembleSecurityAnalyzer,
    LLMSecurityAnalyzer,
    MessageToolCall,
    NeverConfirm,
    PatternSecurityAnalyzer,
    SecurityRisk,
)
from ohtui.sdk.tools.terminal import TerminalAction

WS = "/work/project"


def terminal(command: str, risk: SecurityRisk = SecurityRisk.LOW) -> ActionEvent:
    return ActionEvent(
        action=TerminalAction(command=command),
        tool_name="terminal",
        tool_call_id="c1",
        tool_call=MessageToolCall(id="c1", name="terminal", arguments="{}"),
        llm_response_id="r1",
        security_risk=risk,
    )


def allow_policy(fallback: object = None) -> ApprovalRulesPolicy:
    rules = [ApprovalRule(tool="terminal", command_prefix=p) for p in ALLOW_RULES]
    return ApprovalRulesPolicy(rules=rules, fallback=fallback or AlwaysConfirm())


def deny_rm() -> ApprovalRulesPolicy:
    rules = [ApprovalRule(tool="terminal", command_prefix=p) for p in ALLOW_RULES]
    rules.append(ApprovalRule(tool="terminal", command_prefix="rm", decision="deny"))
    return ApprovalRulesPolicy(rules=rules, fallback=NeverConfirm())


@pytest.mark.parametrize("command", ALLOW_BYPASSES)
def test_allow_rules_never_cover_a_bypass(command: str) -> None:
    decision = allow_policy().decide(terminal(command), WS)
    assert decision.verdict != "allow", decision.reason


@pytest.mark.parametrize("command", DENY_DODGES)
def test_deny_rule_catches_every_dodge(command: str) -> None:
    decision = deny_rm().decide(terminal(command), WS)
    assert decision.verdict == "deny", command


@pytest.mark.parametrize("command", ALLOWED)
def test_allow_rules_still_cover_plain_commands(command: str) -> None:
    decision = allow_policy().decide(terminal(command), WS)
    assert decision.verdict == "allow", decision.reason


@pytest.mark.parametrize("command", ["ls -la rmdir", "echo rm", "grep -r rm src", "git log rm"])
def test_deny_rule_leaves_mentions_alone(command: str) -> None:
    assert deny_rm().decide(terminal(command), WS).verdict == "allow"


def test_write_and_exec_options_ask_even_under_an_allow_rule() -> None:
    decision = allow_policy(ConfirmRisky()).decide(terminal("find . -delete"), WS)
    assert decision.verdict == "confirm"
    assert "-delete" in decision.reason
    under_never = allow_policy(NeverConfirm()).decide(terminal("sort -o out.txt in.txt"), WS)
    assert under_never.verdict == "allow"  # "never ask" means never, rules or not


@pytest.mark.parametrize("command", DANGEROUS)
def test_dangerous_commands_ask_although_the_model_says_low(command: str) -> None:
    analyzer = EnsembleSecurityAnalyzer(
        analyzers=[LLMSecurityAnalyzer(), PatternSecurityAnalyzer(workspace=WS)]
    )
    action = terminal(command, SecurityRisk.LOW)
    assessment = analyzer.assess(action)
    assert assessment.risk in (SecurityRisk.MEDIUM, SecurityRisk.HIGH), assessment
    rated = action.model_copy(update={"security_risk": assessment.risk})
    policy = ApprovalRulesPolicy(fallback=ConfirmRisky(threshold=SecurityRisk.MEDIUM))
    assert policy.decide(rated, WS).verdict == "confirm"


# --- ground truth: the tries do what they aim at ----------------------------------------------


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Sandbox:
    return Sandbox(Path(tmp_path_factory.mktemp("sandbox")))


def test_most_allow_tries_really_run_other_code(sandbox: Sandbox) -> None:
    ran = [c for c in ALLOW_BYPASSES if sandbox.run(c).changed]
    assert len(ran) >= 100, set(ALLOW_BYPASSES) - set(ran)


def test_deny_tries_really_run_rm(sandbox: Sandbox) -> None:
    ran = [c for c in DENY_DODGES if any(r.startswith("rm ") for r in sandbox.run(c).recorded)]
    assert len(ran) >= 80, set(DENY_DODGES) - set(ran)


def test_whatever_runs_rm_is_denied(sandbox: Sandbox) -> None:
    """The deny rule's promise, checked against bash itself over every line we have."""
    for command in {*ALLOW_BYPASSES, *DENY_DODGES, *ALLOWED, *DANGEROUS}:
        if any(r.startswith("rm ") for r in sandbox.run(command).recorded):
            assert deny_rm().decide(terminal(command), WS).verdict == "deny", command


def test_allowed_commands_change_nothing(sandbox: Sandbox) -> None:
    for command in ALLOWED:
        outcome = sandbox.run(command)
        assert not outcome.changed and not outcome.recorded, (command, outcome)
