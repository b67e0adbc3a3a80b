"""Tests for SecurityRisk ordering, the confirmation policies, and the conversation's flags."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from ohtui.sdk import (
    LLM,
    ActionEvent,
    Agent,
    AlwaysConfirm,
    ApprovalRule,
    ApprovalRulesPolicy,
    ConfirmationPolicyBase,
    ConfirmRisky,
    Conversation,
    LLMSecurityAnalyzer,
    LocalConversation,
    MessageToolCall,
    NeverConfirm,
    SecurityRisk,
    Tool,
)
from ohtui.sdk.tools.terminal import TerminalAction

LOW, MEDIUM, HIGH, UNKNOWN = (
    SecurityRisk.LOW,
    SecurityRisk.MEDIUM,
    SecurityRisk.HIGH,
    SecurityRisk.UNKNOWN,
)
KNOWN = [LOW, MEDIUM, HIGH]
Factory = Callable[..., LocalConversation]


@pytest.fixture
def make_conversation(llm: LLM, workspace: Path, persistence_dir: Path) -> Iterator[Factory]:
    """Build conversations (a fresh Agent each) and close them all at the end."""
    made: list[LocalConversation] = []

    def make(**kwargs: Any) -> LocalConversation:
        agent = Agent(llm=llm, tools=[Tool(name="terminal"), Tool(name="file_editor")])
        conv = Conversation(
            agent=agent,
            workspace=workspace,
            persistence_dir=persistence_dir,
            visualizer=None,
            **kwargs,
        )
        made.append(conv)
        return conv

    yield make
    for conv in made:
        conv.close()


def terminal_action(command: str, risk: SecurityRisk = UNKNOWN) -> ActionEvent:
    return ActionEvent(
        action=TerminalAction(command=command),
        tool_name="terminal",
        tool_call_id="c1",
        tool_call=MessageToolCall(id="c1", name="terminal", arguments="{}"),
        llm_response_id="r1",
        security_risk=risk,
    )


# --- SecurityRisk ---------------------------------------------------------------------


def test_known_risks_are_ordered() -> None:
    assert LOW < MEDIUM < HIGH
    assert HIGH > MEDIUM > LOW
    assert not HIGH < LOW
    assert not LOW >= MEDIUM
    assert sorted([HIGH, LOW, MEDIUM]) == [LOW, MEDIUM, HIGH]
    assert max(KNOWN) is HIGH


@pytest.mark.parametrize(("a", "b"), list(itertools.product(KNOWN, KNOWN)))
def test_ordering_matches_rank(a: SecurityRisk, b: SecurityRisk) -> None:
    ra, rb = KNOWN.index(a), KNOWN.index(b)
    assert (a < b) == (ra < rb)
    assert (a <= b) == (ra <= rb)
    assert (a > b) == (ra > rb)
    assert (a >= b) == (ra >= rb)


@pytest.mark.parametrize("other", [*KNOWN, UNKNOWN])
@pytest.mark.parametrize(
    "compare",
    [
        lambda a, b: a < b,
        lambda a, b: a <= b,
        lambda a, b: a > b,
        lambda a, b: a >= b,
    ],
    ids=["lt", "le", "gt", "ge"],
)
def test_comparing_with_unknown_raises(
    compare: Callable[[SecurityRisk, SecurityRisk], bool], other: SecurityRisk
) -> None:
    with pytest.raises(ValueError, match="UNKNOWN"):
        compare(UNKNOWN, other)
    with pytest.raises(ValueError, match="UNKNOWN"):
        compare(other, UNKNOWN)


def test_sorting_with_unknown_raises() -> None:
    with pytest.raises(ValueError):
        sorted([HIGH, UNKNOWN, LOW])


def test_equality_with_unknown_is_allowed() -> None:
    assert SecurityRisk("UNKNOWN") == UNKNOWN
    assert UNKNOWN != LOW


def test_comparing_with_a_non_risk_raises_type_error() -> None:
    with pytest.raises(TypeError):
        _ = LOW < 3  # type: ignore[operator]


def test_is_riskier() -> None:
    assert HIGH.is_riskier(MEDIUM)
    assert MEDIUM.is_riskier(MEDIUM)
    assert not MEDIUM.is_riskier(MEDIUM, reflexive=False)
    assert not LOW.is_riskier(MEDIUM)
    with pytest.raises(ValueError):
        UNKNOWN.is_riskier(LOW)


def test_risk_values_and_str() -> None:
    assert [r.value for r in SecurityRisk] == ["UNKNOWN", "LOW", "MEDIUM", "HIGH"]
    assert str(HIGH) == "HIGH"


def test_each_risk_has_a_rich_colour_that_its_badge_uses() -> None:
    from rich.color import Color

    colours = {risk: risk.get_color() for risk in SecurityRisk}
    assert colours == {UNKNOWN: "white", LOW: "green", MEDIUM: "yellow", HIGH: "red"}
    for colour in colours.values():
        Color.parse(colour)  # a name rich understands
    assert "red" in str(HIGH.visualize.style)


# --- policies ---------------------------------------------------------------------------


@pytest.mark.parametrize("risk", [*KNOWN, UNKNOWN])
def test_always_and_never_confirm(risk: SecurityRisk) -> None:
    assert AlwaysConfirm().should_confirm(risk) is True
    assert NeverConfirm().should_confirm(risk) is False


def test_confirm_risky_defaults() -> None:
    policy = ConfirmRisky()
    assert policy.threshold is HIGH
    assert policy.confirm_unknown is True
    assert policy.should_confirm(HIGH)
    assert not policy.should_confirm(MEDIUM)
    assert not policy.should_confirm(LOW)
    assert policy.should_confirm(UNKNOWN)
    assert policy.should_confirm()  # no risk given: UNKNOWN


@pytest.mark.parametrize("threshold", [UNKNOWN, "UNKNOWN"])
def test_unknown_threshold_is_refused(threshold: Any) -> None:
    with pytest.raises(ValidationError, match="threshold"):
        ConfirmRisky(threshold=threshold)


@pytest.mark.parametrize(
    ("threshold", "confirmed"),
    [
        (LOW, {LOW, MEDIUM, HIGH}),
        (MEDIUM, {MEDIUM, HIGH}),
        (HIGH, {HIGH}),
    ],
)
def test_confirm_risky_threshold_is_inclusive(
    threshold: SecurityRisk, confirmed: set[SecurityRisk]
) -> None:
    policy = ConfirmRisky(threshold=threshold)
    assert {r for r in KNOWN if policy.should_confirm(r)} == confirmed


def test_confirm_unknown_false_lets_unknown_through() -> None:
    policy = ConfirmRisky(threshold=LOW, confirm_unknown=False)
    assert not policy.should_confirm(UNKNOWN)
    assert policy.should_confirm(LOW)


def test_policies_are_frozen() -> None:
    policy = ConfirmRisky()
    with pytest.raises(ValidationError):
        policy.threshold = LOW  # type: ignore[misc]


def test_decide_uses_the_action_risk() -> None:
    policy = ConfirmRisky(threshold=MEDIUM)
    wait = policy.decide(terminal_action("x", MEDIUM), "/ws")
    assert wait.verdict == "confirm"
    assert "MEDIUM" in wait.reason
    assert policy.decide(terminal_action("x", LOW), "/ws").verdict == "allow"
    assert AlwaysConfirm().decide(terminal_action("x", LOW), "/ws").verdict == "confirm"
    assert NeverConfirm().decide(terminal_action("x", HIGH), "/ws").verdict == "allow"


def test_is_active() -> None:
    assert AlwaysConfirm().is_active
    assert ConfirmRisky().is_active
    assert ApprovalRulesPolicy().is_active
    assert not NeverConfirm().is_active


@pytest.mark.parametrize(
    "policy",
    [
        AlwaysConfirm(),
        NeverConfirm(),
        ConfirmRisky(threshold=MEDIUM, confirm_unknown=False),
        ApprovalRulesPolicy(
            rules=[ApprovalRule(tool="terminal", command_prefix="git status")],
            fallback=ConfirmRisky(threshold=LOW),
        ),
    ],
    ids=["always", "never", "risky", "rules"],
)
def test_policy_json_round_trip(policy: ConfirmationPolicyBase) -> None:
    restored = ConfirmationPolicyBase.model_validate_json(policy.model_dump_json())
    assert type(restored) is type(policy)
    assert restored == policy


# --- the conversation -------------------------------------------------------------------


def test_new_conversation_never_confirms(make_conversation: Factory) -> None:
    conv = make_conversation()
    assert isinstance(conv.state.confirmation_policy, NeverConfirm)
    assert conv.state.security_analyzer is None
    assert conv.confirmation_policy_active is False
    assert conv.is_confirmation_mode_active is False


@pytest.mark.parametrize(
    ("policy", "analyzer", "policy_active", "mode_active"),
    [
        (NeverConfirm(), None, False, False),
        (NeverConfirm(), LLMSecurityAnalyzer(), False, False),
        (AlwaysConfirm(), None, True, False),
        (AlwaysConfirm(), LLMSecurityAnalyzer(), True, True),
        (ConfirmRisky(), None, True, False),
        (ConfirmRisky(), LLMSecurityAnalyzer(), True, True),
        (ApprovalRulesPolicy(), LLMSecurityAnalyzer(), True, True),
    ],
)
def test_confirmation_flags(
    make_conversation: Factory,
    policy: ConfirmationPolicyBase,
    analyzer: LLMSecurityAnalyzer | None,
    policy_active: bool,
    mode_active: bool,
) -> None:
    conv = make_conversation()
    conv.set_confirmation_policy(policy)
    conv.set_security_analyzer(analyzer)
    assert conv.confirmation_policy_active is policy_active
    assert conv.is_confirmation_mode_active is mode_active


def test_removing_the_analyzer_turns_confirmation_mode_off(make_conversation: Factory) -> None:
    conv = make_conversation()
    conv.set_confirmation_policy(AlwaysConfirm())
    conv.set_security_analyzer(LLMSecurityAnalyzer())
    assert conv.is_confirmation_mode_active
    conv.set_security_analyzer(None)
    assert conv.state.security_analyzer is None
    assert not conv.is_confirmation_mode_active
    assert conv.confirmation_policy_active


@pytest.mark.parametrize(
    "policy",
    [
        AlwaysConfirm(),
        ConfirmRisky(threshold=MEDIUM, confirm_unknown=False),
        ConfirmRisky(threshold=LOW),
        ApprovalRulesPolicy(
            rules=[
                ApprovalRule(tool="terminal", command_prefix="git status", scope="user"),
                ApprovalRule(tool="terminal", command_prefix="rm", decision="deny"),
            ],
            fallback=ConfirmRisky(threshold=MEDIUM, confirm_unknown=False),
            allow_up_to=LOW,
        ),
    ],
    ids=["always", "risky-medium", "risky-low", "rules"],
)
def test_policy_survives_resume(make_conversation: Factory, policy: ConfirmationPolicyBase) -> None:
    conv = make_conversation()
    conv.set_confirmation_policy(policy)
    conv.close()
    resumed = make_conversation(conversation_id=conv.id)
    restored = resumed.state.confirmation_policy
    assert type(restored) is type(policy)
    assert restored == policy
    assert resumed.confirmation_policy_active


def test_policy_change_is_saved_after_resume(make_conversation: Factory) -> None:
    conv = make_conversation()
    conv.set_confirmation_policy(AlwaysConfirm())
    conv.close()
    second = make_conversation(conversation_id=conv.id)
    second.set_confirmation_policy(NeverConfirm())
    second.close()
    third = make_conversation(conversation_id=conv.id)
    assert isinstance(third.state.confirmation_policy, NeverConfirm)
    assert not third.confirmation_policy_active
