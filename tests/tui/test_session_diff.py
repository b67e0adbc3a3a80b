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
from sandboxed_bash import require_bwrap
from server.server_process import TEST_KEY, ServerProcess
from textual.widgets import OptionList, Static

from ohtui.tui.app import OhtuiApp
from ohtui.tui.options import AppOptions
from ohtui.tui.render import diff_content
from ohtui.tui.screens.diff import DiffScreen
from ohtui.tui.screens.help import HelpScreen

pytestmark = pytest.mark.anyio

SIZE = (120, 40)
TURNS = (
    ("write the notes", "printf 'one\\ntwo\\n' > notes.txt && rm old.txt"),
    ("fix the app", "printf 'print(2)\\n' > app.py && printf 'x\\000y' > data.bin"),
)


def script_turn(server: ScriptedLLMServer, command: str, answer: str) -> None:
    server.reply_tool_call("terminal", {"command": command}, usage=USAGE)
    server.reply_text(answer, usage=USAGE)


async def run_turns(
    app: OhtuiApp, pilot: Any, wait: Any, server: ScriptedLLMServer, opening: float = 20.0
) -> None:
    """Open the chat (`opening`: seconds it may take) and run the two turns."""
    await wait(pilot, lambda: chat_ready(app), what="the conversation to open", timeout=opening)
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


def drawn(screen: DiffScreen) -> list[Any]:
    """What the hunks' view shows, part by part."""
    return [part.visual for part in screen.query("#hunks Static").results(Static)]


def rows(screen: DiffScreen) -> list[str]:
    files = screen.query_one("#files", OptionList)
    return [str(files.get_option_at_index(i).prompt) for i in range(files.option_count)]


@pytest.mark.parametrize("sandbox", ["workspace-write", "off"])
async def test_the_diff_lists_the_agents_changes_and_draws_them_as_approval_does(
    app_options: AppOptions,
    project: Path,
    llm_server: ScriptedLLMServer,
    wait: Any,
    sandbox: str,
) -> None:
    if sandbox != "off":
        require_bwrap()
    seed(project)
    app_options.policy = "never"
    app_options.sandbox = sandbox
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
        # Drawn as the approval dialog draws a diff (git's own header lines left out).
        approval = diff_content("--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-print(1)\n+print(2)")
        assert drawn(screen) == [approval]
        assert "app.py" in shown(screen, "#file-heading")
        await pilot.press("n")
        assert screen.current == 1 and "data.bin" in shown(screen, "#file-heading")
        assert [str(part) for part in drawn(screen)] == [
            "new file mode 100644\nBinary files /dev/null and b/data.bin differ"
        ]
        await pilot.press("n", "n", "n")
        assert screen.current == 3 and "old.txt" in shown(screen, "#file-heading")
        await pilot.press("p")
        assert screen.current == 2
        await pilot.press("escape")
        await wait(pilot, lambda: not isinstance(app.screen, DiffScreen), what="the screen closed")
        assert (project / "app.py").read_text(encoding="utf-8") == "print(2)\n"  # untouched


async def test_since_a_message_by_number_and_by_choosing_it(
    app_options: AppOptions, project: Path, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    seed(project)
    app_options.policy = "never"
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await run_turns(app, pilot, wait, llm_server)
        screen = await open_diff(app, pilot, wait, "/diff 2")
        await wait(pilot, lambda: screen.since is not None, what="message 2 found")
        await wait(pilot, lambda: screen.diff is not None, what="the diff since it")
        assert screen.diff is not None
        assert [(p.path, p.status) for p in screen.diff.files] == [
            ("app.py", "modified"),
            ("data.bin", "added"),
        ]
        assert shown(screen, "#title") == "Changes since message 2: fix the app"
        # m: choose where the diff starts; the conversation's start shows all four files.
        await pilot.press("m")
        since = screen.query_one("#since", OptionList)
        await wait(pilot, lambda: since.option_count == 3, what="the messages listed")
        prompts = [str(since.get_option_at_index(i).prompt) for i in range(3)]
        assert prompts[0] == "the conversation began"
        assert "fix the app" in prompts[1] and "write the notes" in prompts[2]
        assert since.highlighted == 1  # where the diff starts now
        await pilot.press("escape")  # back to the diff, unchanged
        assert not screen.picking and screen.diff is not None and len(screen.diff.files) == 2
        await pilot.press("m", "up", "enter")
        await wait(pilot, lambda: screen.diff is not None, what="the whole diff")
        assert screen.since is None and len(screen.diff.files) == 4
        assert shown(screen, "#title") == "Changes since the conversation began"


async def test_no_changes_are_said_plainly(
    app_options: AppOptions, project: Path, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    seed(project)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        screen = await open_diff(app, pilot, wait)
        assert screen.diff is not None and screen.diff.files == []
        assert shown(screen, "#summary") == "No changes (from checkpoints)."
        assert [str(part) for part in drawn(screen)] == [
            "The agent has not changed the workspace in this conversation."
        ]
        assert not screen.query_one("#files").display
        await pilot.press("n")  # no file to go to: nothing happens, nothing fails
        assert isinstance(app.screen, DiffScreen)


async def test_listed_in_help_pick_first_and_a_bad_argument_says_what_to_give(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        await submit(pilot, "/help")
        await wait(pilot, lambda: isinstance(app.screen, HelpScreen), what="/help")
        listed = [str(s.render()) for s in app.screen.query(".key").results(Static)]
        assert "/diff" in listed
        await pilot.press("escape")
        await submit(pilot, "/diff pick")  # the messages first: here only the start
        await wait(pilot, lambda: isinstance(app.screen, DiffScreen), what="the diff screen")
        assert isinstance(app.screen, DiffScreen)
        screen = app.screen
        since = screen.query_one("#since", OptionList)
        await wait(pilot, lambda: screen.turns == [], what="the (no) messages read")
        assert screen.picking and since.option_count == 1
        await pilot.press("escape")  # nothing shown yet: Esc closes
        await wait(pilot, lambda: not isinstance(app.screen, DiffScreen), what="closed")
        await submit(pilot, "/diff yesterday")
        await pilot.pause()
        assert not isinstance(app.screen, DiffScreen)
        said = [n.message for n in app._notifications]
        assert any("/diff yesterday: give nothing" in text for text in said), said


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[ServerProcess]:
    data = tmp_path / "serve-data"
    data.mkdir()
    process = ServerProcess(data).start()
    try:
        yield process
    finally:
        process.stop()


async def test_on_a_server_the_diff_comes_from_its_checkpoints(
    app_options: AppOptions,
    project: Path,
    llm_server: ScriptedLLMServer,
    serve: ServerProcess,
    wait: Any,
) -> None:
    seed(project)
    options = replace(
        app_options,
        server=serve.url,
        environ={"OHTUI_SERVER_API_KEY": TEST_KEY},
        conversation_id=None,
        policy="never",
    )
    app = OhtuiApp(options)
    async with app.run_test(size=SIZE) as pilot:
        # A server process starts first: on a loaded machine that takes a while.
        await run_turns(app, pilot, wait, llm_server, opening=60.0)
        screen = await open_diff(app, pilot, wait)
        assert screen.diff is not None, screen.message
        assert screen.diff.source.value == "checkpoints"
        assert [(p.path, p.status, p.added, p.removed) for p in screen.diff.files] == [
            ("app.py", "modified", 1, 1),
            ("data.bin", "added", 0, 0),
            ("notes.txt", "added", 2, 0),
            ("old.txt", "deleted", 0, 1),
        ]
