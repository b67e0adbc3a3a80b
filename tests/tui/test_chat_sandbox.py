"""The sandbox in the app: the status bar shows it, /sandbox switches it, the approval modal
lets one command run outside it, and a machine without bubblewrap is told so."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from chat_helpers import SIZE, USAGE, action_cells, cell_text, chat_ready, status, submit
from llm_server import ScriptedLLMServer
from sandboxed_bash import require_bwrap

from ohtui.sdk.sandbox import probe
from ohtui.tui.app import OhtuiApp
from ohtui.tui.options import AppOptions
from ohtui.tui.screens.approval import ApprovalScreen
from ohtui.tui.screens.sandbox_picker import SandboxPickerScreen

pytestmark = pytest.mark.anyio


def sandbox_badge(app: OhtuiApp) -> str:
    return app.chat.status_bar.render().plain  # type: ignore[attr-defined]


async def test_the_status_bar_shows_the_sandbox_and_slash_sandbox_switches_it(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any, tmp_path: Path
) -> None:
    require_bwrap()
    app_options.policy = "never"
    outside = tmp_path / "outside.txt"  # under /tmp: private inside the sandbox
    llm_server.reply_tool_call("terminal", {"command": f"echo 1 > {outside}"}, usage=USAGE)
    llm_server.reply_text("Tried.", usage=USAGE)
    llm_server.reply_tool_call("terminal", {"command": f"echo 2 > {outside}"}, usage=USAGE)
    llm_server.reply_text("Done.", usage=USAGE)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        assert "sandbox: workspace-write" in sandbox_badge(app)
        await submit(pilot, "write it")
        await wait(pilot, lambda: status(app) == "finished", what="the first run")
        assert not outside.exists()

        await submit(pilot, "/sandbox")
        if not isinstance(app.screen, SandboxPickerScreen):
            await pilot.press("enter")  # the first Enter completed the command's name
        await wait(pilot, lambda: isinstance(app.screen, SandboxPickerScreen), what="the picker")
        await pilot.press("down", "down", "enter")
        await wait(pilot, lambda: "no sandbox" in sandbox_badge(app), what="the switch")
        await submit(pilot, "again")
        await wait(pilot, outside.exists, what="the unconfined write")
        assert outside.read_text() == "2\n"


async def test_o_runs_one_command_outside_the_sandbox(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any, tmp_path: Path
) -> None:
    require_bwrap()
    app_options.policy = "always"
    outside = tmp_path / "approved.txt"
    llm_server.reply_tool_call("terminal", {"command": f"echo yes > {outside}"}, usage=USAGE)
    llm_server.reply_text("Written.", usage=USAGE)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        await submit(pilot, "write outside")
        await wait(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the modal")
        assert "o outside sandbox" in app.screen.query_one("#legend").plain  # type: ignore[attr-defined]
        await pilot.press("o")
        await wait(pilot, lambda: status(app) == "finished", what="the run")
        assert outside.read_text() == "yes\n"
        assert "outside the sandbox" in cell_text(action_cells(app, "terminal")[0])


async def test_o_is_offered_for_an_edit_only_the_sandbox_refuses_and_writes_it(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any, project: Path
) -> None:
    """An edit inside a writable workspace: nothing to run outside, no `o`. In read-only
    mode the sandbox refuses the same edit: `o` is offered and writes the file."""
    require_bwrap()
    app_options.policy = "always"
    app_options.sandbox = "read-only"
    create = {"command": "create", "path": "notes.txt", "file_text": "approved\n"}
    llm_server.reply_tool_call("file_editor", create, usage=USAGE)
    llm_server.reply_text("Written.", usage=USAGE)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        await submit(pilot, "write notes")
        await wait(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the modal")
        screen = app.screen
        assert isinstance(screen, ApprovalScreen)
        assert screen.check_action("approve_outside", ()) is True
        await pilot.press("o")
        await wait(pilot, lambda: status(app) == "finished", what="the run")
        assert (project / "notes.txt").read_text() == "approved\n"


async def test_no_o_for_an_edit_the_sandbox_allows(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any, project: Path
) -> None:
    require_bwrap()
    app_options.policy = "always"
    create = {"command": "create", "path": "notes.txt", "file_text": "inside\n"}
    llm_server.reply_tool_call("file_editor", create, usage=USAGE)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        await submit(pilot, "write notes")
        await wait(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the modal")
        screen = app.screen
        assert isinstance(screen, ApprovalScreen)
        assert not screen.check_action("approve_outside", ())
        await pilot.press("o")  # does nothing: the edit waits, unapproved
        await pilot.pause(0.3)
        assert isinstance(app.screen, ApprovalScreen) and not (project / "notes.txt").exists()


async def test_without_bubblewrap_the_app_says_so_and_runs_unconfined(
    app_options: AppOptions,
    llm_server: ScriptedLLMServer,
    wait: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    probe.cache_clear()
    monkeypatch.setenv("PATH", "/nonexistent")
    notes: list[str] = []
    app = OhtuiApp(app_options)
    original = app.notify

    def notify(message: str, *args: Any, **kwargs: Any) -> None:
        notes.append(message)
        original(message, *args, **kwargs)

    monkeypatch.setattr(app, "notify", notify)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
            await wait(pilot, lambda: "no sandbox" in sandbox_badge(app), what="the badge")
            await wait(
                pilot,
                lambda: any("bubblewrap (bwrap) is not installed" in n for n in notes),
                what="the notice",
            )
    finally:
        probe.cache_clear()
    [notice] = [n for n in notes if "bubblewrap" in n]
    assert "install bubblewrap" in notice
