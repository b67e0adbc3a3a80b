"""A plugin in the real app: asked for before anything of it runs, used once trusted, left
out when not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from chat_helpers import USAGE, chat_ready, status, submit
from llm_server import ScriptedLLMServer
from textual.widgets import Button, Static

from ohtui.tui.app import OhtuiApp
from ohtui.tui.options import AppOptions

pytestmark = pytest.mark.anyio


@pytest.fixture
def plugin(tmp_path: Path, config_file: Path) -> Path:
    """A plugin whose hook writes `log` in the workspace on every message, set in config.toml."""
    root = tmp_path / "plugins" / "logger"
    (root / "hooks").mkdir(parents=True)
    hooks = {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo ran >> log"}]}]}
    (root / "hooks" / "hooks.json").write_text(json.dumps({"hooks": hooks}))
    text = config_file.read_text()
    config_file.write_text(f"[agent]\nplugins = [{json.dumps(str(root))}]\n" + text)
    return root


def asking(app: OhtuiApp) -> bool:
    return app.chat is not None and app.screen is not app.chat


def dialog_text(app: OhtuiApp) -> str:
    return "\n".join(str(w.render()) for w in app.screen.query(Static))


async def answer(pilot: Any, wait: Any, trust: bool) -> None:
    def ready() -> bool:
        buttons = pilot.app.screen.query("#confirm")
        return bool(buttons) and not buttons.first(Button).disabled

    await wait(pilot, ready, what="the dialog's buttons")
    await pilot.press(*(["left", "enter"] if trust else ["escape"]))


@pytest.mark.parametrize("trust", [True, False])
async def test_a_plugin_is_asked_for_before_its_hooks_run(
    app_options: AppOptions,
    plugin: Path,
    project: Path,
    llm_server: ScriptedLLMServer,
    wait: Any,
    trust: bool,
) -> None:
    llm_server.reply_text("Hi.", usage=USAGE)
    app = OhtuiApp(app_options)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait(pilot, lambda: asking(app), what="the plugin's trust dialog")
        shown = dialog_text(app)
        assert "Trust the plugin logger?" in shown
        assert "UserPromptSubmit: $ echo ran >> log" in shown
        assert not (project / "log").exists()
        await answer(pilot, wait, trust)
        await wait(pilot, lambda: chat_ready(app), what="the conversation", timeout=60)
        await submit(pilot, "hello")
        await wait(pilot, lambda: status(app) == "finished", what="the run", timeout=60)
    assert (project / "log").exists() is trust
