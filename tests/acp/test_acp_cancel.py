"""Stopping over ACP: session/cancel stops a running command and all it started, as Ctrl+C
in the TUI; the end of stdin ends the process and everything it started."""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path

import psutil
from acp_client import running
from llm_server import ScriptedLLMServer


def leftovers(token: str) -> list[psutil.Process]:
    """Processes whose command line holds `token` (a command the agent started)."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        with contextlib.suppress(psutil.Error):
            if any(token in part for part in process.info["cmdline"] or ()):
                found.append(process)
    return found


async def until(condition: object, what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


def test_cancel_kills_the_running_command_and_what_it_started(
    env: dict[str, str], home: Path, llm_server: ScriptedLLMServer
) -> None:
    project = home / "project"
    token = "2.718"
    line = f"touch started; (sleep {token}; touch child-marker) & sleep {token}; touch marker"
    llm_server.reply_tool_call("terminal", {"command": line, "security_risk": "LOW"})
    llm_server.reply_text("Fine, stopped.")

    async def scenario() -> None:
        async with running({**env, "OHTUI_CONFIRM": "never"}, project) as agent:
            await agent.initialize()
            session = await agent.new_session(project)
            turn = asyncio.ensure_future(agent.prompt(session, "run it"))
            await until((project / "started").exists, "the command to start")
            began = time.monotonic()
            await agent.connection.cancel(session_id=session)
            async with asyncio.timeout(10):
                response = await turn
            assert response.stop_reason == "cancelled"
            await until(lambda: not leftovers(token), "the command's processes to end", 10)
            await asyncio.sleep(max(0.0, float(token) + 0.5 - (time.monotonic() - began)))
            assert not (project / "marker").exists()
            assert not (project / "child-marker").exists()
            again = await agent.prompt(session, "go on")  # the session is usable after
            assert again.stop_reason == "end_turn"
            assert "Fine, stopped." in agent.client.text()

    asyncio.run(scenario())


def test_the_end_of_stdin_ends_the_process_and_all_it_started(
    env: dict[str, str], home: Path, llm_server: ScriptedLLMServer
) -> None:
    project = home / "project"
    token = "31.4159"
    line = f"touch started; sleep {token}; touch marker"
    llm_server.reply_tool_call("terminal", {"command": line, "security_risk": "LOW"})

    async def scenario() -> None:
        async with running({**env, "OHTUI_CONFIRM": "never"}, project) as agent:
            await agent.initialize()
            session = await agent.new_session(project)
            turn = asyncio.ensure_future(agent.prompt(session, "run it"))
            await until((project / "started").exists, "the command to start")
            # `started` is written before bash has forked `sleep`: wait for the sleep itself.
            await until(lambda: bool(leftovers(token)), "the sleep to start")
        # `running` closed stdin and saw the process exit 0 by itself.
        turn.cancel()
        with contextlib.suppress(BaseException):
            await turn
        await until(lambda: not leftovers(token), "the command's processes to end", 10)
        assert not (project / "marker").exists()

    asyncio.run(scenario())
