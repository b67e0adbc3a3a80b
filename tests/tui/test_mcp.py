"""MCP servers in the real app: the .mcp.json trust dialog, /mcp, tool calls shown with their
server's name, and approving a tool that is not read-only."""

from __future__ import annotations

import contextlib
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
from llm_server import ScriptedLLMServer
from mcp_servers import mcp_children, ours, time_server

import ohtui.tui.app as app_module
from ohtui.tui.app import OhtuiApp
from ohtui.tui.options import AppOptions
from ohtui.tui.screens.approval import ApprovalScreen
from ohtui.tui.screens.confirm import ConfirmScreen
from ohtui.tui.screens.mcp import MCPScreen

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


async def test_trust_dialog_lists_the_commands_and_trusting_starts_them(
    app_options: AppOptions, project: Path, wait: Any
) -> None:
    calc = ours("--name", "calc")
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"calc": calc}}))
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the trust dialog")
        shown = screen_text(app)
        assert "Trust .mcp.json of this workspace?" in shown
        assert "mcp_test_server.py --name calc" in shown
        await pilot.press("left", "enter")  # from Cancel to Trust
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
        await wait(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the trust dialog")
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
    llm_server.reply_tool_call("convert_time", arguments, usage=USAGE)
    llm_server.reply_tool_call("sleep", {"seconds": 0.1}, usage=USAGE)
    llm_server.reply_text("Done.", usage=USAGE)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation", timeout=60)
        await submit(pilot, "what time is it in Tokyo?")
        await wait(
            pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the approval", timeout=60
        )
        # convert_time is read-only: it ran without asking, and shows its server's name.
        converted = action_cells(app, "convert_time")[0]
        text = cell_text(converted)
        assert "time convert_time" in text and '"Asia/Tokyo"' in text
        assert '"timezone": "UTC"' in text  # the result's first lines
        modal = app.screen
        assert isinstance(modal, ApprovalScreen)
        assert [row.action.tool for row in modal.rows] == ["sleep"]
        assert "calc/sleep" in screen_text(app)
        await pilot.press("y")
        await wait(pilot, lambda: status(app) == "finished", what="the run", timeout=60)
        slept = cell_text(action_cells(app, "sleep")[0])
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
        await wait(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the trust dialog")
        await pilot.press("left", "enter")
        await wait(pilot, lambda: chat_ready(app), what="the conversation", timeout=60)
        assert app.chat is not None
        # /mcp, and a server's change arriving in the same moment, before the screen composed
        app.chat.open_mcp()
        app.chat.on_mcp_changed(msg.McpChanged())
        await wait(pilot, lambda: servers_ready(app, 1), what="the server", timeout=60)
        await wait(
            pilot, lambda: "● calc  ready, 6 tools" in screen_text(app), what="/mcp showing it"
        )
