"""MCP servers in the real app: the .mcp.json trust dialog, /mcp, tool calls shown with their
server's name, and approving a tool that is not read-only."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
from chat_helpers import (
    SIZE,
    USAGE,
    action_cells,
    cell_text,
    chat_ready,
    screen_text,
    status,
    submit,
    tool_message_texts,
)
from llm_server import Reply, ScriptedLLMServer, ToolCall
from mcp_servers import mcp_children, ours, time_server

import ohtui.tui.app as app_module
from ohtui.tui.app import OhtuiApp
from ohtui.tui.options import AppOptions
from ohtui.tui.screens.approval import ApprovalScreen
from ohtui.tui.screens.mcp import MCPScreen
from ohtui.tui.screens.trust import TrustScreen

pytestmark = pytest.mark.anyio


def with_servers(config_file: Path, servers: dict[str, dict[str, Any]]) -> None:
    """Add [mcp.servers.NAME] tables to the test's config.toml."""
    import tomli_w

    text = config_file.read_text(encoding="utf-8")
    config_file.write_text(text + "\n" + tomli_w.dumps({"mcp": {"servers": servers}}))


def servers_ready(app: OhtuiApp, count: int) -> bool:
    session = app.chat.session if app.chat is not None else None
    if session is None:
        return False
    servers = session.mcp_servers()
    return len(servers) == count and all(s.status.settled for s in servers)


def asking(app: OhtuiApp) -> bool:
    """A dialog is up over the chat (the trust dialog, at the start)."""
    return app.chat is not None and app.screen is not app.chat


async def trust(pilot: Any, wait: Any) -> None:
    """Press Trust in the dialog (from Cancel, where it starts), once it may be pressed."""
    from textual.widgets import Button

    def ready() -> bool:
        buttons = pilot.app.screen.query("#confirm")
        return bool(buttons) and not buttons.first(Button).disabled

    await wait(pilot, ready, what="Trust to be enabled")
    await pilot.press("left", "enter")


def dialog_text(app: OhtuiApp) -> str:
    """The text of every Static of the screen on top, unwrapped."""
    from textual.widgets import Static

    return "\n".join(str(w.render()) for w in app.screen.query(Static))


def call_tool_ending(suffix: str, arguments: dict[str, Any]) -> Any:
    """A scripted reply calling the offered tool whose name ends with `suffix` (whatever the
    server's part of the name is)."""

    def reply(body: dict[str, Any]) -> Reply:
        names = [t["function"]["name"] for t in body.get("tools", [])]
        name = next(n for n in names if n.endswith(suffix))
        return Reply(tool_calls=(ToolCall(name, json.dumps(arguments)),), usage=USAGE)

    return reply


async def test_trust_dialog_lists_the_commands_and_trusting_starts_them(
    app_options: AppOptions, project: Path, wait: Any
) -> None:
    calc = ours("--name", "calc")
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"calc": calc}}))
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: isinstance(app.screen, TrustScreen), what="the trust dialog")
        shown = dialog_text(app)
        assert "Trust the MCP servers of this workspace's .mcp.json?" in shown
        assert "mcp_test_server.py --name calc" in shown
        await trust(pilot, wait)
        await wait(pilot, lambda: chat_ready(app), what="the conversation", timeout=60)
        await wait(pilot, lambda: servers_ready(app, 1), what="the server", timeout=60)
        [server] = app.chat.session.mcp_servers() if app.chat else []
        assert server.name == "calc" and server.summary == "ready, 6 tools"


async def test_declining_trust_starts_nothing_and_is_asked_again(
    app_options: AppOptions, project: Path, wait: Any
) -> None:
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"calc": ours()}}))
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: isinstance(app.screen, TrustScreen), what="the trust dialog")
        await pilot.press("escape")
        await wait(pilot, lambda: chat_ready(app), what="the conversation", timeout=60)
        assert app.chat is not None and app.chat.session.mcp_servers() == []


async def test_servers_start_only_once_the_first_frame_has_been_idle(
    app_options: AppOptions, config_file: Path, wait: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(app_module, "MCP_START_AFTER", 1.5)
    with_servers(config_file, {"calc": ours("--name", "held-back")})

    def started() -> bool:  # (the servers of earlier tests may still be ending)
        lines = []
        for child in mcp_children():
            with contextlib.suppress(psutil.Error):
                lines.append(" ".join(child.cmdline()))
        return any("held-back" in line for line in lines)

    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        painted = time.monotonic()  # the first frame is on screen here
        await wait(pilot, lambda: chat_ready(app), what="the conversation", timeout=60)
        assert time.monotonic() - painted < 1.2, "the conversation opened too late to tell"
        assert app.chat is not None
        assert [s.summary for s in app.chat.session.mcp_servers()] == ["starting"]
        assert not started()
        await wait(pilot, started, what="the server's process", timeout=10)
        assert time.monotonic() - painted >= 1.5 * 0.9
        await wait(pilot, lambda: servers_ready(app, 1), what="the server", timeout=60)


async def test_mcp_screen_lists_status_tools_and_toggles(
    app_options: AppOptions, config_file: Path, wait: Any
) -> None:
    with_servers(config_file, {"time": time_server(), "broken": ours("--crash-on-start")})
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation", timeout=60)
        await wait(pilot, lambda: servers_ready(app, 2), what="the servers", timeout=60)
        await submit(pilot, "/mcp")
        await wait(pilot, lambda: isinstance(app.screen, MCPScreen), what="the /mcp screen")
        shown = screen_text(app)
        assert "● time  ready, 2 tools" in shown
        assert "convert_time (read-only)" in shown
        assert "✗ broken  failed" in shown
        assert "fatal: cannot open the database" in shown
        await pilot.press("space")  # time is highlighted first: off
        await wait(pilot, lambda: "○ time  disabled" in screen_text(app), what="time off")
        await pilot.press("space")
        await wait(pilot, lambda: "● time  ready" in screen_text(app), what="time on", timeout=60)
        await pilot.press("escape")
        assert not isinstance(app.screen, MCPScreen)


async def test_a_call_shows_its_server_and_a_non_read_only_tool_waits_for_approval(
    app_options: AppOptions, config_file: Path, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    with_servers(config_file, {"time": time_server(), "calc": ours("--name", "calc")})
    arguments = {"source_timezone": "UTC", "time": "09:30", "target_timezone": "Asia/Tokyo"}
    llm_server.reply_tool_call("time_convert_time", arguments, usage=USAGE)
    llm_server.reply_tool_call("calc_sleep", {"seconds": 0.1}, usage=USAGE)
    llm_server.reply_text("Done.", usage=USAGE)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation", timeout=60)
        await submit(pilot, "what time is it in Tokyo?")
        await wait(
            pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the approval", timeout=60
        )
        # convert_time is read-only: it ran without asking, and shows its server's name.
        converted = action_cells(app, "time_convert_time")[0]
        text = cell_text(converted)
        assert "time convert_time" in text and '"Asia/Tokyo"' in text
        assert '"timezone": "UTC"' in text  # the result's first lines
        modal = app.screen
        assert isinstance(modal, ApprovalScreen)
        assert [row.action.tool for row in modal.rows] == ["calc_sleep"]
        assert "calc/sleep" in screen_text(app)
        await pilot.press("y")
        await wait(pilot, lambda: status(app) == "finished", what="the run", timeout=60)
        slept = cell_text(action_cells(app, "calc_sleep")[0])
        assert "calc sleep" in slept and "slept 0.1" in slept
        assert "18:30" in tool_message_texts(llm_server.requests[1])[0]


FIRST_FRAME_SCRIPT = """
import asyncio, sys
from pathlib import Path
from ohtui.tui.app import OhtuiApp
from ohtui.tui.options import AppOptions

seen = {}

import ohtui.tui.app as app_module

class App(OhtuiApp):
    CSS_PATH = str(Path(app_module.__file__).parent / "ohtui.tcss")

    def on_mount(self) -> None:
        self.call_after_refresh(lambda: seen.setdefault("first frame", "mcp" in sys.modules))

async def main() -> None:
    tmp = Path(sys.argv[1])
    options = AppOptions(
        workspace=tmp, history_file=tmp / "history.jsonl", persistence_dir=tmp / "c",
        config_file=tmp / "config.toml", model="openai/test-model",
        base_url="http://127.0.0.1:9/v1", api_key="sk-test",
    )
    app = App(options)
    async with app.run_test(size=(80, 24)) as pilot:
        for _ in range(600):
            await pilot.pause(0.1)
            servers = app.chat.session.mcp_servers() if app.chat else []
            if servers and all(s.status.settled for s in servers):
                break
        print("FIRST-FRAME", seen.get("first frame"))
        print("LATER", "mcp" in sys.modules, [s.summary for s in servers])

asyncio.run(main())
"""


def test_first_frame_does_not_import_mcp_and_servers_start_after(
    tmp_path: Path, config_file: Path
) -> None:
    import subprocess
    import sys

    with_servers(config_file, {"time": time_server(), "calc": ours()})
    (tmp_path / "config.toml").write_text(config_file.read_text())
    script = tmp_path / "first_frame.py"
    script.write_text(FIRST_FRAME_SCRIPT)
    out = subprocess.run(
        [sys.executable, str(script), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    assert "FIRST-FRAME False" in out
    assert "LATER True ['ready, 2 tools', 'ready, 6 tools']" in out


async def test_mcp_opened_right_after_trusting_takes_a_change_before_it_has_mounted(
    app_options: AppOptions, project: Path, wait: Any
) -> None:
    from ohtui.tui import messages as msg

    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"calc": ours()}}))
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: asking(app), what="the trust dialog")
        await trust(pilot, wait)
        await wait(pilot, lambda: chat_ready(app), what="the conversation", timeout=60)
        assert app.chat is not None
        # /mcp, and a server's change arriving in the same moment, before the screen composed
        app.open_mcp()
        app.chat.on_mcp_changed(msg.McpChanged())
        await wait(pilot, lambda: servers_ready(app, 1), what="the server", timeout=60)
        await wait(
            pilot, lambda: "● calc  ready, 6 tools" in screen_text(app), what="/mcp showing it"
        )


async def test_the_trust_dialog_shows_args_env_and_the_secrets_they_receive(
    app_options: AppOptions, project: Path, wait: Any
) -> None:
    calc = ours("--name", "my calc", "fake\nline", env={"GITHUB_TOKEN": "${GH_PAT}", "MODE": "x"})
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"calc": calc}}))
    app = OhtuiApp(app_options)
    app.profile.secrets.set_user_secrets({"GH_PAT": "ghp-value-never-shown"})
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: asking(app), what="the trust dialog")
        shown = dialog_text(app)
        assert "mcp_test_server.py --name 'my calc' $'fake\\nline'" in shown
        assert "env GITHUB_TOKEN='${GH_PAT}'  ← your secret GH_PAT" in shown
        assert "env MODE=x" in shown
        assert "ghp-value-never-shown" not in shown
        await pilot.press("escape")


async def test_a_changed_server_script_asks_again_and_says_what_changed(
    app_options: AppOptions, project: Path, tmp_path: Path, wait: Any
) -> None:
    options = dataclasses.replace(app_options, mcp_trust_file=tmp_path / "data" / "trust.json")
    script = project / "server.py"
    script.write_text(
        f"import runpy\nrunpy.run_path({str(ours()['args'][0])!r}, run_name='__main__')\n"
    )
    server = {"command": ours()["command"], "args": ["server.py"]}
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"calc": server}}))
    app = OhtuiApp(options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: asking(app), what="the trust dialog")
        await trust(pilot, wait)
        await wait(pilot, lambda: servers_ready(app, 1), what="the server", timeout=60)
        app.quit_now()
    # Between two runs, the agent rewrites the script the trusted file names.
    marker = tmp_path / "pwned"
    script.write_text(f"open({str(marker)!r}, 'w')\n" + script.read_text())
    again = OhtuiApp(dataclasses.replace(options, conversation_id=None))
    async with again.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: asking(again), what="the trust dialog, again", timeout=60)
        shown = dialog_text(again)
        assert "Changed since you trusted it:" in shown and "calc: server.py changed" in shown
        await pilot.press("escape")
        await wait(pilot, lambda: chat_ready(again), what="the conversation", timeout=60)
        assert again.chat is not None and again.chat.session.mcp_servers() == []
    assert not marker.exists()  # the edited script never ran


async def test_a_trusted_project_server_runs_in_the_sandbox(
    app_options: AppOptions, project: Path, tmp_path: Path, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"calc": ours("--write-tool")}}))
    outside, inside = tmp_path / "outside.txt", project / "inside.txt"
    llm_server.reply_with(call_tool_ending("write", {"path": str(inside), "text": "in"}))
    llm_server.reply_with(call_tool_ending("write", {"path": str(outside), "text": "out"}))
    llm_server.reply_text("Done.", usage=USAGE)
    app = OhtuiApp(dataclasses.replace(app_options, policy="never"))
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: asking(app), what="the trust dialog")
        await trust(pilot, wait)
        await wait(pilot, lambda: chat_ready(app), what="the conversation", timeout=60)
        await submit(pilot, "write both")
        await wait(pilot, lambda: status(app) == "finished", what="the run", timeout=60)
    assert inside.read_text() == "in"  # the server ran, in the workspace
    assert not outside.exists()  # and could write nothing outside it


async def test_trust_waits_until_all_that_would_run_has_been_shown(
    app_options: AppOptions, project: Path, wait: Any
) -> None:
    from textual.widgets import Button

    servers = {f"s{i}": {"command": "node", "args": [f"server{i}.js"]} for i in range(12)}
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    app = OhtuiApp(app_options)
    async with app.run_test(size=(60, 20)) as pilot:
        await wait(pilot, lambda: asking(app), what="the trust dialog")
        await pilot.pause(0.2)
        confirm = app.screen.query_one("#confirm", Button)
        assert confirm.disabled and "s11:" not in screen_text(app)
        await pilot.press(*["pagedown"] * 6)
        await wait(pilot, lambda: not confirm.disabled, what="Trust enabled at the end")
        assert "s11: runs" in screen_text(app)
        await pilot.press("escape")


async def test_mcp_screen_keeps_its_legend_on_a_small_terminal(
    app_options: AppOptions, config_file: Path, wait: Any
) -> None:
    with_servers(config_file, {"calc": ours("--name", "calc"), "time": time_server()})
    app = OhtuiApp(app_options)
    async with app.run_test(size=(60, 20)) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation", timeout=60)
        await wait(pilot, lambda: servers_ready(app, 2), what="the servers", timeout=60)
        await submit(pilot, "/mcp")
        await wait(pilot, lambda: isinstance(app.screen, MCPScreen), what="the /mcp screen")
        await pilot.pause(0.3)
        assert "space/enter turn on or off" in screen_text(app)
        assert app.screen.query_one("#legend").region.bottom <= 20
