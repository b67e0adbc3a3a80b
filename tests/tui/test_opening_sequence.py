"""The opening sequence in the real app: what a new user sees first when the workspace, the
config file or the data folder is not as expected."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from chat_helpers import chat_ready, screen_text, status
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
