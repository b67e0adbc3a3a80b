"""SVG snapshots of the chat screen's states, driven through the real app and engine.

Every reply is scripted with the same usage (the status bar shows the context used), the clock
is frozen and the conversation id fixed (see conftest.py); each snapshot is taken once the run
has settled, unless the state is a mid-run one, and after clearing notifications (their
timeouts would race the screenshot).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from chat_helpers import (
    USAGE,
    action_cells,
    cells,
    chat_ready,
    run_over,
    screen_text,
    status,
    submit,
)
from llm_server import ScriptedLLMServer

from ohtui.tui.app import OhtuiApp
from ohtui.tui.options import AppOptions
from ohtui.tui.screens.approval import ApprovalScreen
from ohtui.tui.screens.reject_reason import RejectReasonScreen
from ohtui.tui.widgets.cells import UserCell
from ohtui.tui.widgets.status_bar import StatusBar

SIZE = (100, 30)
PLAN = """\
Here is the plan:

- read `parser.py`
- fix the off-by-one in `tokens()`
- run the tests

```python
def tokens(text):
    return text.split()
```"""


async def settle(pilot: Any) -> None:
    """Drop notifications (they expire on timers), stop cursors blinking (the phase would
    depend on timing), and let the screen settle."""
    app = pilot.app
    app.clear_notifications()
    for screen in {app.chat, app.screen}:
        for widget in screen.query("TextArea, Input"):
            widget.cursor_blink = False
    await pilot.pause(0.1)
    await pilot.wait_for_scheduled_animations()


async def open_chat(pilot: Any, wait: Any) -> None:
    """Wait for the conversation to open."""
    await wait(pilot, lambda: chat_ready(pilot.app), what="the conversation to open")


async def run_to(pilot: Any, wait: Any, text: str, end: str = "finished") -> None:
    """Send a message and wait until the run reaches `end`."""
    await submit(pilot, text)
    await wait(pilot, lambda: status(pilot.app) == end, what=f"status {end}")
    await wait(pilot, lambda: run_over(pilot.app), what="the run's end", timeout=5)


def test_empty_chat(snap_compare: Any, app_options: AppOptions, wait: Any) -> None:
    async def ready(pilot: Any) -> None:
        await wait(
            pilot,
            lambda: pilot.app.screen.query_one(StatusBar).status == "idle",
            what="the conversation to open",
        )
        await settle(pilot)

    assert snap_compare(OhtuiApp(app_options), terminal_size=(100, 30), run_before=ready)


def test_every_event_kind(
    snap_compare: Any,
    app_options: AppOptions,
    project: Path,
    llm_server: ScriptedLLMServer,
    wait: Any,
) -> None:
    """User message, agent Markdown (list, code), terminal output, file edit diff, task
    checklist, think, a rejected action with its reason, an agent error, the pause notice and
    the finish message; taller than the others so that all of it is on screen."""
    (project / "parser.py").write_text("def tokens(text):\n    return text.split(' ')\n")
    llm_server.reply_text(PLAN, usage=USAGE)
    llm_server.reply_tool_calls(
        [
            ("terminal", {"command": "echo tests: 3 failed", "security_risk": "LOW"}),
            (
                "file_editor",
                {
                    "command": "str_replace",
                    "path": "parser.py",
                    "old_str": "text.split(' ')",
                    "new_str": "text.split()",
                    "security_risk": "LOW",
                },
            ),
            (
                "task_tracker",
                {
                    "command": "plan",
                    "task_list": [
                        {"title": "read parser.py", "status": "done"},
                        {"title": "fix tokens()", "status": "in_progress"},
                        {"title": "run the tests"},
                    ],
                    "security_risk": "LOW",
                },
            ),
            ("terminal", {"command": "rm -rf ~/old-build"}),
        ],
        usage=USAGE,
    )
    llm_server.reply_tool_call("think", {"thought": "The split was the bug."}, usage=USAGE)
    llm_server.reply_tool_call("run_tests", {"path": "tests"}, delay=0.6, usage=USAGE)
    llm_server.reply_tool_call(
        "finish", {"message": "Fixed `tokens()`: it splits on any whitespace now."}, usage=USAGE
    )

    async def run_before(pilot: Any) -> None:
        app = pilot.app
        await open_chat(pilot, wait)
        await run_to(pilot, wait, "How do we fix the parser?")
        await submit(pilot, "Go ahead.")
        await wait(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the modal")
        await pilot.press("space", "down", "space", "down", "space", "down", "space", "space")
        await pilot.press("enter")
        await wait(pilot, lambda: isinstance(app.screen, RejectReasonScreen), what="the reason")
        app.screen.query_one("Input").value = "keep the old build"
        await pilot.press("enter")
        await wait(pilot, lambda: len(llm_server.requests) == 4, what="the unknown tool call")
        await pilot.press("escape")  # pause after this step
        await wait(pilot, lambda: status(app) == "paused", what="the pause")
        await run_to(pilot, wait, "Wrap up.")
        await settle(pilot)

    app = OhtuiApp(app_options)
    assert snap_compare(app, terminal_size=(100, 50), run_before=run_before)


def test_streaming_in_progress(
    snap_compare: Any, app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    """A reply whose later chunks are seconds away: the first ones are on screen."""
    chunks = ["Looking at the parser first:\n\n", "the bug is in `tokens()`", " and more."]
    llm_server.reply_text("".join(chunks), chunks=chunks, chunk_delay=1.5, usage=USAGE)

    async def run_before(pilot: Any) -> None:
        await open_chat(pilot, wait)
        await submit(pilot, "Why do the tests fail?")
        await wait(
            pilot, lambda: "Looking at the parser first" in screen_text(pilot.app), what="text"
        )
        await settle(pilot)

    app = OhtuiApp(app_options)
    try:
        assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
    finally:
        close_session(app)


def test_approval_modal_with_a_high_risk_command_and_a_diff(
    snap_compare: Any, app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    """The modal over the chat: `rm -rf ~/some/dir` rated HIGH, and the highlighted file edit
    showing the diff it would make."""
    app_options.policy = "always"
    llm_server.reply_tool_calls(
        [
            ("terminal", {"command": "rm -rf ~/some/dir"}),
            (
                "file_editor",
                {
                    "command": "str_replace",
                    "path": "src/app.py",
                    "old_str": "import os\nprint('old')\n",
                    "new_str": "import os\nprint('new')\n",
                    "security_risk": "MEDIUM",
                },
            ),
        ],
        text="I will clean up and fix the print.",
        usage=USAGE,
    )

    async def run_before(pilot: Any) -> None:
        app = pilot.app
        await open_chat(pilot, wait)
        await submit(pilot, "Clean up and fix app.py")
        await wait(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the modal")
        await pilot.press("down")
        await settle(pilot)
        assert app.screen.highlighted_action.tool == "file_editor"

    app = OhtuiApp(app_options)
    try:
        assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
    finally:
        close_session(app)


def test_rejected_action_with_its_reason(
    snap_compare: Any, app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app_options.policy = "always"
    llm_server.reply_tool_call("terminal", {"command": "rm -rf build"}, usage=USAGE)
    llm_server.reply_text("Understood: I left `build/` alone.", usage=USAGE)

    async def run_before(pilot: Any) -> None:
        app = pilot.app
        await open_chat(pilot, wait)
        await submit(pilot, "Start from a clean build.")
        await wait(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the modal")
        await pilot.press("n")
        await wait(pilot, lambda: isinstance(app.screen, RejectReasonScreen), what="the reason")
        app.screen.query_one("Input").value = "keep the build directory"
        await pilot.press("enter")
        await wait(pilot, lambda: status(app) == "finished", what="the run to finish")
        await wait(pilot, lambda: run_over(pilot.app), what="the run's end", timeout=5)
        await settle(pilot)

    assert snap_compare(OhtuiApp(app_options), terminal_size=SIZE, run_before=run_before)


def test_llm_error(
    snap_compare: Any,
    app_options: AppOptions,
    llm_server: ScriptedLLMServer,
    wait: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A 401 from the provider. The endpoint comes from the environment rather than the
    options, so that the error text does not hold the server's random port."""
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("OPENAI_API_BASE", llm_server.base_url)
    app_options.base_url = None
    llm_server.reply_error(401)

    async def run_before(pilot: Any) -> None:
        await open_chat(pilot, wait)
        await run_to(pilot, wait, "Hello?", end="error")
        await settle(pilot)

    assert snap_compare(OhtuiApp(app_options), terminal_size=SIZE, run_before=run_before)
    assert len(llm_server.requests) == 1


def test_paused(
    snap_compare: Any, app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app_options.policy = "never"
    llm_server.reply_tool_call("terminal", {"command": "echo step one"}, delay=0.8, usage=USAGE)

    async def run_before(pilot: Any) -> None:
        await open_chat(pilot, wait)
        await submit(pilot, "Run the migration, step by step.")
        await wait(pilot, lambda: len(llm_server.requests) == 1, what="the LLM call")
        await pilot.press("escape")
        await wait(pilot, lambda: status(pilot.app) == "paused", what="the pause")
        await wait(pilot, lambda: run_over(pilot.app), what="the run's end", timeout=5)
        await settle(pilot)

    assert snap_compare(OhtuiApp(app_options), terminal_size=SIZE, run_before=run_before)


def test_queued_message(
    snap_compare: Any, app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    """A command runs; a message sent meanwhile waits for the next step."""
    app_options.policy = "never"
    llm_server.reply_tool_call("terminal", {"command": "sleep 20"}, usage=USAGE)

    async def run_before(pilot: Any) -> None:
        app = pilot.app
        await open_chat(pilot, wait)
        await submit(pilot, "Run the slow tests.")
        await wait(pilot, lambda: bool(action_cells(app)), what="the command")
        await submit(pilot, "Then update the changelog.")
        await wait(
            pilot, lambda: any(c.queued for c in cells(app, UserCell)), what="the queued cell"
        )
        await settle(pilot)

    app = OhtuiApp(app_options)
    try:
        assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
    finally:
        close_session(app)


def test_narrow_terminal(
    snap_compare: Any, app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    """60x20: a few cells; the status bar drops its least useful parts."""
    app_options.policy = "never"
    llm_server.reply_tool_call(
        "terminal", {"command": "printf 'a.txt\\nb.txt\\n'"}, text="Listing.", usage=USAGE
    )
    llm_server.reply_text("Two files: `a.txt` and `b.txt`.", usage=USAGE)

    async def run_before(pilot: Any) -> None:
        await open_chat(pilot, wait)
        await run_to(pilot, wait, "Which files are there?")
        await settle(pilot)

    assert snap_compare(OhtuiApp(app_options), terminal_size=(60, 20), run_before=run_before)


def close_session(app: OhtuiApp) -> None:
    """Stop what a mid-run snapshot left running (the app exited without quitting)."""
    if app.chat is not None:
        app.shutdown()


def test_condensed_history_and_the_context_meter(
    snap_compare: Any,
    app_options: AppOptions,
    config_file: Path,
    llm_server: ScriptedLLMServer,
    wait: Any,
) -> None:
    """A /condense made one quiet line (collapsed); the meter shows context against a known
    window, not near the threshold."""
    with config_file.open("a", encoding="utf-8") as file:
        file.write("[context]\nmax_size = 10\nkeep_first = 1\nmax_input_tokens = 200000\n")
    for number in range(4):
        llm_server.reply_text(f"Hello {number}.", usage=USAGE)
    llm_server.reply_text("The user said hello four times; the agent answered each time.")
    llm_server.reply_text("Ready.", usage=USAGE)

    async def run_before(pilot: Any) -> None:
        from ohtui.tui.widgets.context_cells import CondensationCell

        await open_chat(pilot, wait)
        for number in range(4):
            await submit(pilot, f"hi {number}")
            # (the first call imports litellm: slow on a loaded machine)
            await wait(pilot, lambda: status(pilot.app) == "finished", timeout=60, what="reply")
        await submit(pilot, "/condense")
        await pilot.press("enter")  # the first Enter took the menu's "/condense "
        await wait(pilot, lambda: bool(cells(pilot.app, CondensationCell)), what="the line")
        await run_to(pilot, wait, "go on")  # the meter shows the scripted count again
        await settle(pilot)

    assert snap_compare(OhtuiApp(app_options), terminal_size=SIZE, run_before=run_before)


def test_context_meter_near_the_threshold(
    snap_compare: Any,
    app_options: AppOptions,
    config_file: Path,
    llm_server: ScriptedLLMServer,
    wait: Any,
) -> None:
    """90k of a 200k window with a 0.5 threshold: past 80 % of the trigger, amber."""
    with config_file.open("a", encoding="utf-8") as file:
        file.write("[context]\nthreshold = 0.5\nmax_input_tokens = 200000\n")
    llm_server.reply_text("Done.", usage={"prompt_tokens": 89_000, "completion_tokens": 1000})

    async def run_before(pilot: Any) -> None:
        await open_chat(pilot, wait)
        await submit(pilot, "Read the whole repository.")
        await wait(pilot, lambda: status(pilot.app) == "finished", timeout=60, what="reply")
        await settle(pilot)

    assert snap_compare(OhtuiApp(app_options), terminal_size=SIZE, run_before=run_before)


def test_mcp_screen(
    snap_compare: Any, app_options: AppOptions, config_file: Path, tmp_path: Path, wait: Any
) -> None:
    import sys

    import tomli_w

    from ohtui.tui.screens.mcp import MCPScreen

    # A launcher of a fixed name: the screen shows the program's name, not the interpreter's.
    launcher = tmp_path / "mcp-server-time"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m mcp_server_time "$@"\n')
    launcher.chmod(0o755)
    servers = {
        "time": {"command": str(launcher), "args": ["--local-timezone", "UTC"]},
        "tracker": {"command": "ohtui-no-such-mcp-server", "args": ["--stdio"]},
        "fetch": {"command": "uvx", "args": ["mcp-server-fetch"], "enabled": False},
    }
    text = config_file.read_text(encoding="utf-8")
    config_file.write_text(text + "\n" + tomli_w.dumps({"mcp": {"servers": servers}}))

    def settled(pilot: Any) -> bool:
        chat = pilot.app.chat
        found = chat.session.mcp_servers() if chat is not None else []
        return len(found) == 3 and all(s.status.settled for s in found)

    def warned(pilot: Any) -> bool:
        return any("tracker" in str(note.message) for note in pilot.app._notifications)

    async def shown(pilot: Any) -> None:
        await open_chat(pilot, wait)
        await wait(pilot, lambda: settled(pilot), what="the MCP servers", timeout=60)
        # The failed server's toast times out: on a loaded machine it may be gone already.
        await wait(pilot, lambda: warned(pilot), what="the failed server's warning")
        pilot.app.clear_notifications()
        await submit(pilot, "/mcp")
        await wait(pilot, lambda: isinstance(pilot.app.screen, MCPScreen), what="/mcp")
        await settle(pilot)

    assert snap_compare(OhtuiApp(app_options), terminal_size=SIZE, run_before=shown)


@pytest.mark.parametrize("size", [(120, 40), (60, 20)])
def test_mcp_trust_dialog(
    snap_compare: Any, app_options: AppOptions, project: Path, wait: Any, size: tuple[int, int]
) -> None:
    import json

    (project / "server.js").write_text("// the server\n")
    servers = {
        "issues": {
            "command": "node",
            "args": ["server.js", "--label", "two words"],
            "env": {"GITHUB_TOKEN": "${GH_PAT}", "LOG_LEVEL": "warn"},
        },
        "search": {"url": "https://search.example/mcp", "headers": {"X-Key": "${SEARCH_KEY}"}},
    }
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))

    async def asked(pilot: Any) -> None:
        await wait(pilot, lambda: pilot.app.screen is not pilot.app.chat, what="the dialog")
        await settle(pilot)

    app = OhtuiApp(app_options)
    app.profile.secrets.set_user_secrets({"GH_PAT": "ghp-never-shown"})
    assert snap_compare(app, terminal_size=size, run_before=asked)
