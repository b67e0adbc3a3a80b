"""Client-defined tools: the spec's schema reaches the model verbatim, a call is checked
against it and acknowledged, the callbacks see the ActionEvent, and a resumed conversation
builds the tool again from what it saved."""

from __future__ import annotations

from pathlib import Path

import pytest
from llm_server import ScriptedLLMServer
from pydantic import SecretStr, ValidationError

from ohtui.sdk import LLM, Agent, Conversation, Tool
from ohtui.sdk.event import ActionEvent, ObservationEvent
from ohtui.sdk.event.llm_convertible.observation import AgentErrorEvent
from ohtui.sdk.tool import ClientToolSpec
from ohtui.sdk.tool.client_tool import (
    ACKNOWLEDGMENT,
    ClientTool,
    ClientToolAction,
    ClientToolRegistrationError,
    register_client_tools,
)

NOTIFY = ClientToolSpec(
    name="show_notification",
    description="Show a banner.",
    parameters={
        "type": "object",
        "properties": {
            "message": {"type": "string"},
            "level": {"type": "string", "enum": ["info", "warning", "error"]},
        },
        "required": ["message", "level"],
        "additionalProperties": False,
    },
)


def _agent(llm_server: ScriptedLLMServer) -> Agent:
    llm = LLM(
        model="openai/test-model",
        base_url=llm_server.base_url,
        api_key=SecretStr("sk-test"),
        num_retries=0,
        usage_id="agent",
    )
    return Agent(llm=llm, tools=[Tool(name="terminal")])


def test_a_client_tool_call_is_acknowledged_and_seen_by_the_callbacks(
    llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    llm_server.reply_tool_call("show_notification", {"message": "3 files", "level": "info"})
    llm_server.reply_text("done")
    seen: list[ActionEvent] = []
    conversation = Conversation(
        agent=_agent(llm_server),
        workspace=str(tmp_path),
        callbacks=[lambda e: seen.append(e) if isinstance(e, ActionEvent) else None],
        client_tools=[NOTIFY],
        visualizer=None,
    )
    try:
        conversation.send_message("notify me")
        conversation.run()
        events = list(conversation.state.events)
    finally:
        conversation.close()
    tools = {t["function"]["name"]: t["function"] for t in llm_server.requests[0]["tools"]}
    schema = tools["show_notification"]["parameters"]
    assert schema["properties"]["level"]["enum"] == ["info", "warning", "error"]
    assert schema["additionalProperties"] is False
    assert [e.tool_name for e in seen] == ["show_notification"]
    action = seen[0].action
    assert isinstance(action, ClientToolAction)
    assert action.arguments == {"message": "3 files", "level": "info"}
    observation = next(e for e in events if isinstance(e, ObservationEvent))
    assert observation.observation.text == ACKNOWLEDGMENT


def test_arguments_outside_the_schema_go_back_to_the_model_as_an_error(
    llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    llm_server.reply_tool_call("show_notification", {"message": "x", "level": "loud"})
    llm_server.reply_text("sorry")
    conversation = Conversation(
        agent=_agent(llm_server), workspace=str(tmp_path), client_tools=[NOTIFY], visualizer=None
    )
    try:
        conversation.send_message("notify me")
        conversation.run()
        errors = [e for e in conversation.state.events if isinstance(e, AgentErrorEvent)]
    finally:
        conversation.close()
    assert errors and "level" in errors[0].error and "loud" in errors[0].error


def test_a_resumed_conversation_builds_the_client_tool_again(
    llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    first = Conversation(
        agent=_agent(llm_server),
        workspace=str(tmp_path),
        persistence_dir=str(store),
        client_tools=[NOTIFY],
        visualizer=None,
    )
    conversation_id = first.id
    saved_tools = [t.name for t in first.agent.tools]
    first.close()
    llm_server.reply_tool_call("show_notification", {"message": "again", "level": "warning"})
    llm_server.reply_text("ok")
    agent = _agent(llm_server).model_copy(update={"tools": first.agent.tools})
    resumed = Conversation(
        agent=agent,
        workspace=str(tmp_path),
        persistence_dir=str(store),
        conversation_id=conversation_id,
        visualizer=None,
    )
    try:
        resumed.send_message("again")
        resumed.run()
        acks = [
            e
            for e in resumed.state.events
            if isinstance(e, ObservationEvent) and e.tool_name == "show_notification"
        ]
    finally:
        resumed.close()
    assert "show_notification" in saved_tools
    assert acks and acks[0].observation.text == ACKNOWLEDGMENT


def test_bad_specs_are_refused_with_a_sentence() -> None:
    with pytest.raises(ValidationError, match="object JSON schema"):
        ClientToolSpec(name="x", description="d", parameters={"type": "string"})
    with pytest.raises(ClientToolRegistrationError, match="more than once"):
        register_client_tools([NOTIFY, NOTIFY])
    terminal = ClientToolSpec(name="terminal", description="clash")
    with pytest.raises(ClientToolRegistrationError, match="name of another tool"):
        register_client_tools([terminal])
    with pytest.raises(ValueError, match="spec="):
        ClientTool.create(spec=42)
