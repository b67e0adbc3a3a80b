"""The analyzer base class as code written against the SDK uses it.

A custom analyzer implements `security_risk` (the SDK's name) or `analyze` (ohtui's older
name); either one is enough, callers may use either, and one that implements neither cannot
be created. Ensembles combine members, optionally letting one UNKNOWN decide.
"""

from __future__ import annotations

import pytest
from pydantic import Field

from ohtui.sdk import (
    ActionEvent,
    EnsembleSecurityAnalyzer,
    MessageToolCall,
    SecurityAnalyzerBase,
    SecurityRisk,
)
from ohtui.sdk.event import PauseEvent

LOW, MEDIUM, HIGH, UNKNOWN = (
    SecurityRisk.LOW,
    SecurityRisk.MEDIUM,
    SecurityRisk.HIGH,
    SecurityRisk.UNKNOWN,
)


class SdkStyleAnalyzerForContractTests(SecurityAnalyzerBase):
    """Written against the SDK: implements `security_risk` and counts its calls."""

    risk: SecurityRisk = MEDIUM
    calls: int = 0

    def security_risk(self, action: ActionEvent) -> SecurityRisk:
        self.calls += 1
        return self.risk


class OhtuiStyleAnalyzerForContractTests(SecurityAnalyzerBase):
    """Written against ohtui's older name: implements `analyze` only."""

    risk: SecurityRisk = HIGH

    def analyze(self, action: ActionEvent) -> SecurityRisk:
        return self.risk


class FailsOnSomeForContractTests(SecurityAnalyzerBase):
    """Raises for one command, rates the rest LOW."""

    seen: list[str] = Field(default_factory=list)

    def security_risk(self, action: ActionEvent) -> SecurityRisk:
        self.seen.append(action.tool_call.arguments)
        if "boom" in action.tool_call.arguments:
            raise RuntimeError("cannot rate this one")
        return LOW


class CallsUpForContractTests(SecurityAnalyzerBase):
    """Implements `security_risk` by calling the base class's own (a careless subclass)."""

    def security_risk(self, action: ActionEvent) -> SecurityRisk:
        return super().security_risk(action)


def call(arguments: str = '{"command": "ls"}') -> ActionEvent:
    return ActionEvent(
        tool_name="some_tool",
        tool_call_id="c1",
        tool_call=MessageToolCall(id="c1", name="some_tool", arguments=arguments),
        llm_response_id="r1",
    )


def test_an_sdk_style_analyzer_answers_every_entry_point() -> None:
    analyzer = SdkStyleAnalyzerForContractTests()
    assert analyzer.security_risk(call()) is MEDIUM
    assert analyzer.analyze(call()) is MEDIUM
    assessment = analyzer.assess(call())
    assert assessment.risk is MEDIUM
    # Named in words on screen, not by its class name.
    assert assessment.analyzer == "sdk style analyzer for contract tests"
    assert analyzer.calls == 3  # a stateful analyzer may keep counters


def test_an_ohtui_style_analyzer_answers_every_entry_point() -> None:
    analyzer = OhtuiStyleAnalyzerForContractTests()
    assert analyzer.analyze(call()) is HIGH
    assert analyzer.security_risk(call()) is HIGH
    assert analyzer.assess(call()).risk is HIGH


def test_an_analyzer_implementing_neither_cannot_be_created() -> None:
    class RatesNothingForContractTests(SecurityAnalyzerBase):
        pass

    with pytest.raises(TypeError, match="abstract"):
        RatesNothingForContractTests()


def test_calling_up_to_the_base_fails_instead_of_recursing() -> None:
    analyzer = CallsUpForContractTests()
    with pytest.raises(NotImplementedError, match="CallsUpForContractTests"):
        analyzer.security_risk(call())
    assessment = analyzer.assess(call())  # the safe entry point: a failure is HIGH
    assert assessment.risk is HIGH
    assert "does not implement security_risk" in (assessment.reason or "")


def test_analyze_event_rates_actions_and_skips_other_events() -> None:
    analyzer = SdkStyleAnalyzerForContractTests(risk=LOW)
    assert analyzer.analyze_event(call()) is LOW
    assert analyzer.analyze_event(PauseEvent()) is None
    assert analyzer.calls == 1


def test_pending_actions_are_rated_in_order_and_a_failure_is_high() -> None:
    analyzer = FailsOnSomeForContractTests()
    events = [call('{"command": "a"}'), call('{"command": "boom"}'), call('{"command": "c"}')]
    rated = analyzer.analyze_pending_actions(events)
    assert rated == [(events[0], LOW), (events[1], HIGH), (events[2], LOW)]
    assert len(analyzer.seen) == 3
    assert analyzer.analyze_pending_actions([]) == []


@pytest.mark.parametrize(
    ("risks", "propagate", "expected"),
    [
        ([UNKNOWN, LOW], False, LOW),
        ([UNKNOWN, LOW], True, UNKNOWN),
        ([UNKNOWN, HIGH], True, UNKNOWN),
        ([LOW, HIGH], True, HIGH),
        ([UNKNOWN, UNKNOWN], False, UNKNOWN),
    ],
)
def test_ensemble_can_let_one_unknown_decide(
    risks: list[SecurityRisk], propagate: bool, expected: SecurityRisk
) -> None:
    ensemble = EnsembleSecurityAnalyzer(
        analyzers=[SdkStyleAnalyzerForContractTests(risk=r) for r in risks],
        propagate_unknown=propagate,
    )
    assert ensemble.security_risk(call()) is expected


def test_ensemble_names_the_member_that_could_not_rate() -> None:
    ensemble = EnsembleSecurityAnalyzer(
        analyzers=[
            SdkStyleAnalyzerForContractTests(risk=UNKNOWN),
            OhtuiStyleAnalyzerForContractTests(risk=LOW),
        ],
        propagate_unknown=True,
    )
    assessment = ensemble.assess(call())
    assert assessment.risk is UNKNOWN
    assert "sdk style analyzer for contract tests could not rate it" in (assessment.reason or "")


def test_propagate_unknown_survives_json() -> None:
    ensemble = EnsembleSecurityAnalyzer(
        analyzers=[OhtuiStyleAnalyzerForContractTests()], propagate_unknown=True
    )
    restored = SecurityAnalyzerBase.model_validate_json(ensemble.model_dump_json())
    assert isinstance(restored, EnsembleSecurityAnalyzer)
    assert restored.propagate_unknown is True
    assert restored == ensemble


def test_an_analyzer_in_any_model_keeps_its_kind_and_fields() -> None:
    from pydantic import BaseModel

    class Holder(BaseModel):
        analyzer: SecurityAnalyzerBase

    held = Holder(
        analyzer=EnsembleSecurityAnalyzer(
            analyzers=[OhtuiStyleAnalyzerForContractTests(risk=MEDIUM)], propagate_unknown=True
        )
    )
    restored = Holder.model_validate_json(held.model_dump_json())
    assert restored.analyzer == held.analyzer
