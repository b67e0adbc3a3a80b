"""`ohtui acp` driven by the agent-client-protocol package's client: a streamed reply, tool
calls with their updates, and a saved conversation loaded again."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from acp import RequestError
from acp.schema import (
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)
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


def test_tool_calls_carry_kind_locations_diffs_and_the_plan_and_thoughts_stream(
    env: dict[str, str], home: Path, llm_server: ScriptedLLMServer
) -> None:
    project = home / "project"
    (project / "spec.txt").write_text("the spec\n", encoding="utf-8")
    create = {
        "command": "create",
        "path": "notes.md",
        "file_text": "hello\n",
        "security_risk": "LOW",
    }
    llm_server.reply_tool_call("file_editor", create, reasoning="I will write the notes.")
    tasks = [{"title": "Write notes", "status": "done"}, {"title": "Review", "status": "todo"}]
    llm_server.reply_tool_call("task_tracker", {"command": "plan", "task_list": tasks})
    llm_server.reply_text("Done.")
    prompt = [
        TextContentBlock(type="text", text="Write notes from"),
        ResourceContentBlock(
            type="resource_link", name="spec.txt", uri=f"file://{project}/spec.txt"
        ),
        EmbeddedResourceContentBlock(
            type="resource",
            resource=TextResourceContents(uri=f"file://{project}/extra.md", text="extra context"),
        ),
    ]
    image = [ImageContentBlock(type="image", data="iVBORw0KGgo=", mime_type="image/png")]

    async def scenario() -> None:
        async with running({**env, "OHTUI_CONFIRM": "never"}, project) as agent:
            await agent.initialize()
            session = await agent.new_session(project)
            with pytest.raises(RequestError) as refused:
                await agent.connection.prompt(session_id=session, prompt=image)
            assert refused.value.code == -32602
            assert "does not read images" in str(refused.value)
            response = await agent.connection.prompt(session_id=session, prompt=prompt)
            await agent.client.settle()
            assert response.stop_reason == "end_turn"
            client = agent.client
            assert client.text("agent_thought_chunk") == "I will write the notes."
            edit, plan_call = client.of_kind("tool_call")
            assert edit.kind == "edit" and edit.title == "Create notes.md"
            assert edit.locations[0].path == str(project / "notes.md")
            (diff,) = edit.content
            assert diff.type == "diff" and diff.new_text == "hello\n" and diff.old_text is None
            assert plan_call.kind == "think"
            statuses = [(u.tool_call_id, u.status) for u in client.of_kind("tool_call_update")]
            assert statuses == [
                (edit.tool_call_id, "in_progress"),
                (edit.tool_call_id, "completed"),
                (plan_call.tool_call_id, "in_progress"),
                (plan_call.tool_call_id, "completed"),
            ]
            (plan,) = client.of_kind("plan")
            assert [(e.content, e.status) for e in plan.entries] == [
                ("Write notes", "completed"),
                ("Review", "pending"),
            ]
            assert client.text() == "Done."

    asyncio.run(scenario())
    assert (project / "notes.md").read_text() == "hello\n"
    user = json.dumps(llm_server.requests[0]["messages"][-1])
    assert "spec.txt" in user and f"{project}/spec.txt" in user
    assert "<context ref=" in user and "extra context" in user
