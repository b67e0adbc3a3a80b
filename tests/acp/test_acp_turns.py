"""`ohtui acp` driven by the agent-client-protocol package's client: a streamed reply, tool
calls with their updates, and a saved conversation loaded again."""

from __future__ import annotations

import asyncio
from pathlib import Path

from acp_client import running
from llm_server import ScriptedLLMServer


def test_a_prompt_streams_the_reply_chunk_by_chunk_and_ends_the_turn(
    env: dict[str, str], home: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.reply_text(
        "Hello from ohtui, streamed.", chunks=["Hello ", "from ", "ohtui", ", streamed."]
    )

    async def scenario() -> None:
        async with running(env, home / "project") as agent:
            init = await agent.initialize()
            assert init.protocol_version == 1
            assert init.agent_capabilities.load_session is True
            assert init.agent_capabilities.prompt_capabilities.embedded_context is True
            assert init.agent_capabilities.mcp_capabilities.http is True
            session_id = await agent.new_session(home / "project")
            response = await agent.prompt(session_id, "Say hello")
            assert response.stop_reason == "end_turn"
            chunks = agent.client.of_kind("agent_message_chunk")
            assert [c.content.text for c in chunks] == ["Hello ", "from ", "ohtui", ", streamed."]
            assert all(sid == session_id for _, sid, _ in agent.client.updates)

    asyncio.run(scenario())
    user = [m for m in llm_server.requests[0]["messages"] if m["role"] == "user"]
    assert "Say hello" in str(user[-1]["content"])
