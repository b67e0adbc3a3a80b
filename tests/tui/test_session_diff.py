"""/diff in the real app: a scripted agent changes files over two turns (checkpoints taken
before each command); the diff screen lists the files it changed with their added and
removed lines, draws the chosen file's hunks with the approval dialog's renderer, moves
between files by key, starts from a chosen message, and says plainly when nothing changed.
On `ohtui serve` the diff comes from the server's checkpoints."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from chat_helpers import USAGE, cell_text, cells, chat_ready, run_over, status, submit
from llm_server import ScriptedLLMServer
from server.server_process import TEST_KEY, ServerProcess
from textual.widgets import OptionList, Static

from ohtui.tui.app import OhtuiApp
from ohtui.tui.options import AppOptions
from ohtui.tui.render import diff_content
from ohtui.tui.screens.diff import DiffScreen, hunks

pytestmark = pytest.mark.anyio

SIZE = (120, 40)
TURNS = (
    ("write the notes", "printf 'one\\ntwo\\n' > notes.txt && rm old.txt"),
    ("fix the app", "printf 'print(2)\\n' > app.py && printf 'x\\000y' > data.bin"),
)


def script_turn(server: ScriptedLLMServer, command: str, answer: str) -> None:
    server.reply_tool_call("terminal", {"command": command}, usage=USAGE)
    server.reply_text(answer, usage=USAGE)


async def run_turns(app: OhtuiApp, pilot: Any, wait: Any, server: ScriptedLLMServer) -> None:
    await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
    for message, command in TURNS:
        script_turn(server, command, f"Done: {message}.")
        await submit(pilot, message)
        await wait(pilot, lambda: status(app) == "finished", what=f"the turn {message!r}")
        await wait(
            pilot,
            lambda m=message: any(f"Done: {m}." in cell_text(c) for c in cells(app)),
            what="its answer",
        )
        await wait(pilot, lambda: run_over(app), what="the run's end", timeout=5)


def seed(project: Path) -> None:
    (project / "app.py").write_text("print(1)\n", encoding="utf-8")
    (project / "old.txt").write_text("gone soon\n", encoding="utf-8")


async def open_diff(app: OhtuiApp, pilot: Any, wait: Any, command: str = "/diff") -> DiffScreen:
    await submit(pilot, command)
    await wait(pilot, lambda: isinstance(app.screen, DiffScreen), what="the diff screen")
    screen = app.screen
    assert isinstance(screen, DiffScreen)
    await wait(pilot, lambda: screen.diff is not None or bool(screen.message), what="the diff")
    return screen


def shown(screen: DiffScreen, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


def rows(screen: DiffScreen) -> list[str]:
    files = screen.query_one("#files", OptionList)
    return [str(files.get_option_at_index(i).prompt) for i in range(files.option_count)]


async def test_the_diff_lists_the_agents_changes_and_draws_them_as_approval_does(
    app_options: AppOptions, project: Path, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    seed(project)
    app_options.policy = "never"
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await run_turns(app, pilot, wait, llm_server)
        screen = await open_diff(app, pilot, wait)
        assert screen.diff is not None
        assert screen.diff.source.value == "checkpoints"
        found = {(p.path, p.status, p.added, p.removed, p.binary) for p in screen.diff.files}
        assert found == {
            ("app.py", "modified", 1, 1, False),
            ("data.bin", "added", 0, 0, True),
            ("notes.txt", "added", 2, 0, False),
            ("old.txt", "deleted", 0, 1, False),
        }
        assert "4 files changed · +3 -2" in shown(screen, "#summary")
        assert "From checkpoints" in shown(screen, "#summary")
        assert [r.split()[:2] for r in rows(screen)] == [
            ["M", "app.py"], ["A", "data.bin"], ["A", "notes.txt"], ["D", "old.txt"]
        ]  # fmt: skip
        first = screen.diff.files[0]
        assert screen.query_one("#hunk-text", Static).visual == hunks(first)
        assert str(hunks(first)) == str(
            diff_content("--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-print(1)\n+print(2)", 3000)
        )
        assert "app.py" in shown(screen, "#file-heading")
        await pilot.press("n")
        assert screen.current == 1 and "data.bin" in shown(screen, "#file-heading")
        assert "Binary files /dev/null and b/data.bin differ" in str(hunks(screen.diff.files[1]))
        await pilot.press("n", "n", "n")
        assert screen.current == 3 and "old.txt" in shown(screen, "#file-heading")
        await pilot.press("p")
        assert screen.current == 2
        await pilot.press("escape")
        await wait(pilot, lambda: not isinstance(app.screen, DiffScreen), what="the screen closed")
