"""RunStatus: the engine's execution statuses plus the UI's own, each with its label."""

from __future__ import annotations

import pytest

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


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("width", "shown", "hidden"),
    [
        (120, ["⇄ 127.0.0.1:8000", "sandbox unknown", "confirm risky"], []),
        (60, ["⇄ 127.0.0.1:8000", "confirm risky"], ["sandbox unknown"]),
    ],
)
async def test_a_remote_bar_shows_the_server_the_sandbox_and_above_all_the_policy(
    width: int, shown: list[str], hidden: list[str]
) -> None:
    """A server's sandbox is shown beside it; on a narrow terminal it gives way first: the
    policy in force is never cut off."""
    from textual.app import App, ComposeResult

    from ohtui.settings.choices import ConfirmationPolicy
    from ohtui.tui.widgets.status_bar import StatusBar

    class Bar(App[None]):
        def compose(self) -> ComposeResult:
            yield StatusBar(lambda: 0.0)

    app = Bar()
    async with app.run_test(size=(width, 1)):
        bar = app.query_one(StatusBar)
        bar.status = RunStatus.WAITING_FOR_CONFIRMATION
        bar.model = "openai/test-model"
        bar.server, bar.sandbox = "127.0.0.1:8000", "unknown"
        bar.policy = ConfirmationPolicy.RISKY
        plain = bar.render().plain
        assert len(plain) <= width
        assert all(piece in plain for piece in shown), plain
        assert not any(piece in plain for piece in hidden), plain
