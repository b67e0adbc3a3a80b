"""The opening sequence in the real app: what a new user sees first when the workspace, the
config file or the data folder is not as expected."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from chat_helpers import SIZE, chat_ready, screen_text, status
from llm_server import ScriptedLLMServer

from ohtui.tui.app import OhtuiApp
from ohtui.tui.options import AppOptions

pytestmark = pytest.mark.anyio

WIDE = (240, 30)
"""Wide enough that a message with a temporary path fits on one line."""


async def test_a_workspace_that_does_not_exist_is_named_and_not_created(
    app_options: AppOptions, tmp_path: Path, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    missing = tmp_path / "projet"
    app = OhtuiApp(replace(app_options, workspace=missing))
    async with app.run_test(size=WIDE, notifications=True) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the opening to fail")
        assert status(app) == "error"
        await wait(
            pilot,
            lambda: f"The workspace folder '{missing}' does not exist" in screen_text(app),
            what="the error on screen",
        )
    assert not missing.exists()
    assert llm_server.requests == []


@pytest.mark.parametrize("answer", ["escape", "s"])
async def test_an_invalid_config_without_a_model_shows_the_problem_before_the_welcome_form(
    app_options: AppOptions, wait: Any, answer: str
) -> None:
    """The problem comes first; however it is closed, the first-run form follows (once)."""
    from ohtui.tui.screens.config_problem import ConfigProblemScreen
    from ohtui.tui.screens.settings import SettingsScreen

    assert app_options.config_file is not None
    app_options.config_file.write_text('[llm]\ntemperature = "hot"\n', encoding="utf-8")
    app = OhtuiApp(replace(app_options, model=None, base_url=None, api_key=None))
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: status(app) == "setup", what="the setup status")
        await wait(pilot, lambda: isinstance(app.screen, ConfigProblemScreen), what="the problem")
        await pilot.pause(0.2)
        assert isinstance(app.screen, ConfigProblemScreen)  # nothing covers it
        assert not any(isinstance(s, SettingsScreen) for s in app.screen_stack)
        await pilot.press(answer)
        await wait(pilot, lambda: isinstance(app.screen, SettingsScreen), what="the form")
        screen = app.screen
        assert isinstance(screen, SettingsScreen) and screen.first_run
        assert sum(isinstance(s, SettingsScreen) for s in app.screen_stack) == 1
