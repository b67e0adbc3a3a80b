"""RunStatus: the engine's execution statuses plus the UI's own, each with its label."""

from __future__ import annotations

from ohtui.sdk import ConversationExecutionStatus
from ohtui.tui.status import RunStatus


def test_every_engine_status_has_a_run_status_that_agrees_on_terminal() -> None:
    for engine_status in ConversationExecutionStatus:
        status = RunStatus(engine_status.value)
        assert status.is_terminal() == engine_status.is_terminal(), engine_status


def test_the_ui_statuses_are_not_the_engines() -> None:
    engine_values = {s.value for s in ConversationExecutionStatus}
    ours = [s for s in RunStatus if s.value not in engine_values]
    assert ours == [RunStatus.OPENING, RunStatus.SETUP, RunStatus.READ_ONLY]
    assert not any(s.is_terminal() for s in ours)


def test_each_status_carries_its_label_and_style() -> None:
    assert RunStatus.IDLE.label == "ready"
    assert RunStatus.WAITING_FOR_CONFIRMATION.label == "waiting for approval"
    assert RunStatus.OPENING.label == "opening…"
    assert RunStatus.SETUP.label == "choose a model in /settings"
    assert all(s.label and s.style for s in RunStatus)
    assert RunStatus.RUNNING == "running"
