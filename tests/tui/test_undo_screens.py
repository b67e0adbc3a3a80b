"""/undo and /checkpoints in the real app: a scripted run changes a file, the preview shows
the file and its diff, Enter restores it on disk, Esc leaves it; the restore's cell comes back
when the conversation is resumed."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from chat_helpers import SIZE, USAGE, cell_text, cells, chat_ready, screen_text, status, submit
from llm_server import ScriptedLLMServer

from ohtui.tui.app import OhtuiApp
from ohtui.tui.options import AppOptions
from ohtui.tui.screens.checkpoints import EMPTY_TEXT, CheckpointsScreen
from ohtui.tui.screens.restore import RestoreScreen
from ohtui.tui.widgets.checkpoint_cells import RestoreCell

pytestmark = pytest.mark.anyio


def script_writes(server: ScriptedLLMServer, *commands: str) -> None:
    """One terminal call per command, then a final answer."""
    for command in commands:
        server.reply_tool_call("terminal", {"command": command}, usage=USAGE)
    server.reply_text("Done.", usage=USAGE)


async def run_writes(app: OhtuiApp, pilot: Any, wait: Any) -> None:
    """Open the chat and run the scripted task to its end."""
    await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
    await submit(pilot, "write it")
    await wait(pilot, lambda: status(app) == "finished", what="the run to finish")


async def preview(app: OhtuiApp, pilot: Any, wait: Any, command: str) -> RestoreScreen:
    """Type a command that opens the restore preview; the preview."""
    await submit(pilot, command)
    await wait(pilot, lambda: isinstance(app.screen, RestoreScreen), what="the preview")
    await pilot.pause(0.05)
    assert isinstance(app.screen, RestoreScreen)
    return app.screen


async def test_undo_previews_the_file_and_its_diff_and_enter_restores_it(
    app_options: AppOptions, project: Path, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app_options.policy = "never"
    (project / "a.txt").write_text("old\n", encoding="utf-8")
    script_writes(llm_server, "echo hi > a.txt")
    app = OhtuiApp(app_options)
    async with app.run_test(size=(120, 40)) as pilot:
        await run_writes(app, pilot, wait)
        assert (project / "a.txt").read_text(encoding="utf-8") == "hi\n"
        screen = await preview(app, pilot, wait, "/undo")
        assert [(c.path, c.status) for c in screen.preview.changes] == [("a.txt", "modified")]
        shown = screen_text(app)
        assert "before: echo hi > a.txt" in shown
        assert "M a.txt" in shown and "modified" in shown
        assert "-hi" in shown and "+old" in shown  # the diff: from now back to the checkpoint
        assert "enter/y restore" in shown and "esc/n cancel" in shown
        await pilot.press("enter")
        await wait(pilot, lambda: bool(cells(app, RestoreCell)), what="the restore's cell")
        assert (project / "a.txt").read_text(encoding="utf-8") == "old\n"
        cell = cells(app, RestoreCell)[0]
        assert cell_text(cell).startswith(
            "↶ Restored the workspace to before: echo hi > a.txt: 1 file changed"
        )
        cell.focus()
        await pilot.press("enter")
        assert "  M a.txt  modified" in cell_text(cell)
        assert any("Restored the workspace" in str(n.message) for n in app._notifications)


async def test_escape_cancels_the_undo_and_leaves_the_file(
    app_options: AppOptions, project: Path, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app_options.policy = "never"
    script_writes(llm_server, "echo hi > a.txt")
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await run_writes(app, pilot, wait)
        screen = await preview(app, pilot, wait, "/undo")
        assert [(c.path, c.status) for c in screen.preview.changes] == [("a.txt", "deleted")]
        await pilot.press("escape")
        assert not isinstance(app.screen, RestoreScreen)
        await pilot.pause(0.3)
        assert (project / "a.txt").read_text(encoding="utf-8") == "hi\n"
        assert cells(app, RestoreCell) == []


async def test_nothing_to_undo_says_so(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        await submit(pilot, "/undo")
        await wait(pilot, lambda: bool(app._notifications), what="a notification", timeout=5)
        texts = [str(n.message) for n in app._notifications]
        assert texts == ["Nothing to undo: no action has changed the workspace."]
        assert not isinstance(app.screen, RestoreScreen)
        await submit(pilot, "/checkpoints")
        await wait(pilot, lambda: isinstance(app.screen, CheckpointsScreen), what="the list")
        assert " ".join(EMPTY_TEXT.split()[:6]) in " ".join(screen_text(app).split())
        await pilot.press("escape")
        assert not isinstance(app.screen, CheckpointsScreen)
    assert llm_server.requests == []


async def test_checkpoints_lists_newest_first_and_restores_the_chosen_one(
    app_options: AppOptions, project: Path, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app_options.policy = "never"
    (project / "a.txt").write_text("one\n", encoding="utf-8")
    script_writes(llm_server, "echo two > a.txt", "echo three > a.txt")
    app = OhtuiApp(app_options)
    async with app.run_test(size=(120, 40)) as pilot:
        await run_writes(app, pilot, wait)
        await submit(pilot, "/checkpoints")
        await wait(pilot, lambda: isinstance(app.screen, CheckpointsScreen), what="the list")
        listing = app.screen
        assert isinstance(listing, CheckpointsScreen)
        assert [row.label for row in listing.checkpoints] == [
            "echo three > a.txt",
            "echo two > a.txt",
        ]
        shown = screen_text(app)
        assert shown.index("before: echo three") < shown.index("before: echo two")
        assert "← /undo" in shown
        await pilot.press("down", "enter")  # the older one: before `echo two`
        await wait(pilot, lambda: isinstance(app.screen, RestoreScreen), what="the preview")
        screen = app.screen
        assert isinstance(screen, RestoreScreen)
        assert screen.preview.checkpoint.label == "echo two > a.txt"
        assert "-three" in screen_text(app) and "+one" in screen_text(app)
        await pilot.press("y")
        await wait(pilot, lambda: bool(cells(app, RestoreCell)), what="the restore's cell")
        assert (project / "a.txt").read_text(encoding="utf-8") == "one\n"
        # The restore is undoable: the list now starts with the checkpoint taken before it.
        await submit(pilot, "/checkpoints")
        await wait(pilot, lambda: isinstance(app.screen, CheckpointsScreen), what="the list")
        listing = app.screen
        assert isinstance(listing, CheckpointsScreen)
        first = listing.checkpoints[0]
        assert first.before_restore and first.before.startswith("before the restore to before")
        assert "↶ taken before a restore" in screen_text(app)


async def test_the_restore_cell_comes_back_on_resume(
    app_options: AppOptions, project: Path, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app_options.policy = "never"
    script_writes(llm_server, "echo hi > a.txt")
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await run_writes(app, pilot, wait)
        await preview(app, pilot, wait, "/undo")
        await pilot.press("enter")
        await wait(pilot, lambda: bool(cells(app, RestoreCell)), what="the restore's cell")
    assert not (project / "a.txt").exists()
    resumed = OhtuiApp(
        replace(app_options, resume_id=app_options.conversation_id, conversation_id=None)
    )
    async with resumed.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(resumed), what="the conversation to reopen")
        await wait(pilot, lambda: bool(cells(resumed, RestoreCell)), what="the restore's cell")
        text = cell_text(cells(resumed, RestoreCell)[0])
        assert text.startswith("↶ Restored the workspace to before: echo hi > a.txt: 1 file")
        assert "No checkpoint" not in screen_text(resumed)
        await submit(pilot, "/undo")  # the only action is undone already
        await wait(pilot, lambda: bool(resumed._notifications), what="a notice", timeout=5)
        [notice] = [str(n.message) for n in resumed._notifications]
        assert notice.startswith("Nothing more to undo: every action's changes are undone.")


async def test_undo_while_the_agent_runs_says_to_stop_it_first(
    app_options: AppOptions, project: Path, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app_options.policy = "never"
    llm_server.reply_tool_call("terminal", {"command": "echo hi > a.txt"}, usage=USAGE)
    llm_server.reply_text("Done.", usage=USAGE, delay=1.5)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        await submit(pilot, "write it")
        await wait(pilot, (project / "a.txt").exists, what="the command")
        assert status(app) == "running"
        await submit(pilot, "/undo")
        await wait(pilot, lambda: bool(app._notifications), what="a notice", timeout=5)
        texts = [str(n.message) for n in app._notifications]
        assert "The agent is running: stop it (Ctrl+C) or let it finish" in texts[-1]
        assert not isinstance(app.screen, RestoreScreen)
        await wait(pilot, lambda: status(app) == "finished", what="the run to finish")
    assert (project / "a.txt").read_text(encoding="utf-8") == "hi\n"
