"""Sessions over ACP: a saved conversation loaded again (its history replayed as updates),
and MCP servers the client passes."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from acp.schema import McpServerStdio
from acp_client import running
from llm_server import ScriptedLLMServer
from mcp_servers import TEST_SERVER


def test_load_replays_a_saved_conversation_then_goes_on_with_it(
    env: dict[str, str], home: Path, llm_server: ScriptedLLMServer
) -> None:
    project = home / "project"
    llm_server.reply_tool_call("terminal", {"command": "echo 42 > n.txt", "security_risk": "LOW"})
    llm_server.reply_text("Noted 42.")
    llm_server.reply_text("It was 42.")
    never = {**env, "OHTUI_CONFIRM": "never"}

    async def first() -> str:
        async with running(never, project) as agent:
            await agent.initialize()
            session = await agent.new_session(project)
            await agent.prompt(session, "Remember 42")
            return session

    async def second(session: str) -> None:
        async with running(never, project) as agent:
            await agent.initialize()
            listed = await agent.connection.list_sessions(cwd=str(project))
            assert [s.session_id for s in listed.sessions] == [session]
            await agent.connection.load_session(
                cwd=str(project), session_id=session, mcp_servers=[]
            )
            await agent.client.settle()
            client = agent.client
            kinds = [u.session_update for _, _, u in client.updates]
            assert kinds[:2] == ["user_message_chunk", "tool_call"]
            assert "tool_call_update" in kinds and kinds[-1] == "agent_message_chunk"
            assert client.text("user_message_chunk") == "Remember 42"
            assert client.text() == "Noted 42."
            (call,) = client.of_kind("tool_call")
            assert call.title == "`echo 42 > n.txt`" and call.kind == "execute"
            begun, result = client.of_kind("tool_call_update")
            assert (begun.status, result.status) == ("in_progress", "completed")
            replayed = len(client.updates)
            response = await agent.prompt(session, "Which number?")
            assert response.stop_reason == "end_turn"
            assert (
                "".join(
                    u.content.text
                    for _, _, u in client.updates[replayed:]
                    if u.session_update == "agent_message_chunk"
                )
                == "It was 42."
            )

    session = asyncio.run(first())
    asyncio.run(second(session))
    history = json.dumps(llm_server.requests[-1]["messages"])
    assert "Remember 42" in history and "Noted 42." in history and "Which number?" in history


def test_an_mcp_server_the_client_passes_gives_the_agent_its_tools(
    env: dict[str, str], home: Path, llm_server: ScriptedLLMServer
) -> None:
    project = home / "project"
    llm_server.reply_tool_call("calc_add", {"a": 2, "b": 3})
    llm_server.reply_text("2 + 3 = 5.")
    server = McpServerStdio(
        name="calc", command=sys.executable, args=[TEST_SERVER, "--name", "calc"], env=[]
    )

    async def scenario() -> None:
        async with running({**env, "OHTUI_CONFIRM": "never"}, project) as agent:
            await agent.initialize()
            new = await agent.connection.new_session(cwd=str(project), mcp_servers=[server])
            response = await agent.prompt(new.session_id, "add 2 and 3")
            assert response.stop_reason == "end_turn"
            begun, result = agent.client.of_kind("tool_call_update")
            assert (begun.status, result.status) == ("in_progress", "completed")
            assert "5" in result.content[0].content.text

    asyncio.run(scenario())
    names = {t["function"]["name"] for t in llm_server.requests[0]["tools"]}
    assert "calc_add" in names
    results = [m for m in llm_server.requests[1]["messages"] if m["role"] == "tool"]
    assert "5" in json.dumps(results)
