"""Structured output (`response_schema`): a tool spec's schema adds fields the model must
fill, split off the call, validated, and read back typed; the default preset's finish tool
takes one. Conversations run against the scripted OpenAI-compatible server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from llm_server import ScriptedLLMServer
from pydantic import BaseModel, Field

from ohtui.sdk import (
    LLM,
    ActionEvent,
    Agent,
    AgentErrorEvent,
    Conversation,
    Tool,
    register_tool,
)
from ohtui.sdk.tool.builtins import FinishTool
from ohtui.sdk.tool.response_schema import ResponseSchemaError
from ohtui.sdk.tools.preset import get_default_agent


class Rationale(BaseModel):
    purpose: str = Field(description="Why the command runs.")


class Point(BaseModel):
    x: int
    y: int


class Facts(BaseModel):
    description: str
    facts: list[str]
    origin: Point | None = None


register_tool("FinishTool", FinishTool)


def schema_agent(llm: LLM) -> Agent:
    return Agent(
        llm=llm,
        tools=[
            Tool(name="terminal", params={"response_schema": Rationale}),
            Tool(name="FinishTool", params={"response_schema": Facts}),
        ],
        include_default_tools=["ThinkTool"],
    )


def offered(request: dict[str, Any], name: str) -> dict[str, Any]:
    for tool in request["tools"]:
        if tool["function"]["name"] == name:
            parameters: dict[str, Any] = tool["function"]["parameters"]
            return parameters
    raise AssertionError(f"{name} not offered")


def test_the_model_fills_the_schemas_and_the_caller_reads_them_typed(
    llm: LLM, llm_server: ScriptedLLMServer, workspace: Path, persistence_dir: Path
) -> None:
    llm_server.reply_tool_call("terminal", {"command": "echo hi", "purpose": "greet"})
    llm_server.reply_tool_call(
        "finish",
        {
            "message": "done",
            "description": "a test",
            "facts": ["a", "b"],
            "origin": {"x": 1, "y": 2},
        },
    )
    agent = schema_agent(llm)
    conv = Conversation(
        agent=agent, workspace=workspace, persistence_dir=persistence_dir, visualizer=None
    )
    try:
        conv.send_message("go")
        conv.run()
        terminal = offered(llm_server.requests[0], "terminal")
        assert "purpose" in terminal["properties"] and "purpose" in terminal["required"]
        finish = offered(llm_server.requests[0], "finish")
        # the nested model is written out in place: no $ref the tool's schema cannot resolve
        assert finish["properties"]["origin"]["anyOf"][0]["properties"]["x"]["type"] == "integer"
        assert "$defs" not in json.dumps(finish)
        events = list(conv.state.events)
        [command] = [e for e in events if isinstance(e, ActionEvent) and e.tool_name == "terminal"]
        assert command.action is not None and command.action.command == "echo hi"  # type: ignore[attr-defined]
        rationale = agent.tools_map["terminal"].parse_response(command.action)
        assert rationale == Rationale(purpose="greet")
        facts = agent.tools_map["finish"].parse_last_response(events)
        assert facts == Facts(description="a test", facts=["a", "b"], origin=Point(x=1, y=2))
    finally:
        conv.close()


def test_output_not_matching_the_schema_goes_back_to_the_model(
    llm: LLM, llm_server: ScriptedLLMServer, workspace: Path, persistence_dir: Path
) -> None:
    llm_server.reply_tool_call("terminal", {"command": "echo hi"})  # no purpose
    llm_server.reply_text("giving up")
    conv = Conversation(
        agent=schema_agent(llm),
        workspace=workspace,
        persistence_dir=persistence_dir,
        visualizer=None,
    )
    try:
        conv.send_message("go")
        conv.run()
        [error] = [e for e in conv.state.events if isinstance(e, AgentErrorEvent)]
        assert "purpose" in error.error and "response_schema" in error.error
    finally:
        conv.close()


def test_a_json_schema_works_and_specs_save_a_model_as_json() -> None:
    spec = Tool(name="FinishTool", params={"response_schema": Facts})
    saved = spec.model_dump(mode="json")
    assert saved["params"]["response_schema"]["title"] == "Facts"
    json_schema = {
        "type": "object",
        "properties": {"answer": {"type": "integer"}},
        "required": ["answer"],
    }
    tool = FinishTool().set_response_schema(json_schema)
    action = tool.action_from_arguments({"message": "m", "answer": 42})
    assert action.structured_output == {"answer": 42}
    assert tool.parse_response(action) == {"answer": 42}
    with pytest.raises(ValueError, match="answer"):
        tool.action_from_arguments({"message": "m", "answer": "many"})


@pytest.mark.parametrize(
    ("schema", "match"),
    [
        ({"type": "object", "properties": {"summary": {"type": "string"}}}, "reserved"),
        ({"type": "object", "properties": {"message": {"type": "string"}}}, "collide"),
        ({"type": "array"}, "JSON object"),
        ({"type": "object", "properties": {}}, "named properties"),
        ({"type": "object", "properties": {"a": {"type": 7}}}, "not a valid JSON schema"),
        ("Facts", "pydantic model class or a JSON schema"),
    ],
)
def test_unusable_schemas_are_refused_saying_why(schema: Any, match: str) -> None:
    with pytest.raises(ResponseSchemaError, match=match):
        FinishTool().set_response_schema(schema)


def test_default_agent_takes_a_finish_schema(llm: LLM) -> None:
    agent = get_default_agent(llm, cli_mode=True, finish_tool_response_schema=Facts)
    assert "FinishTool" not in agent.include_default_tools
    assert agent.tools[-1] == Tool(name="FinishTool", params={"response_schema": Facts})
