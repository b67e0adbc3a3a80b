"""The SDK's typed MCP settings (`MCPServer` and its credentials) and `filter_tools_regex`:
an agent given them runs a real MCP server and is offered only the tools the regex keeps."""

from __future__ import annotations

import base64
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from llm_server import ScriptedLLMServer
from pydantic import SecretStr, ValidationError

from ohtui.sdk import (
    LLM,
    Agent,
    ConversationExecutionStatus,
    LocalConversation,
    ObservationEvent,
    Tool,
)
from ohtui.sdk.mcp import MCPConfigError, MCPServer, parse_server
from ohtui.sdk.mcp.server_config import MCPBasicAuthCredential, MCPOAuthAuthCredential

TIME_ARGS = ["-m", "mcp_server_time", "--local-timezone", "UTC"]


@pytest.fixture
def conversation(llm: LLM, workspace: Path) -> Iterator[Any]:
    made: list[LocalConversation] = []

    def build(agent: Agent) -> LocalConversation:
        made.append(LocalConversation(agent=agent, workspace=workspace, visualizer=None))
        return made[-1]

    yield build
    for conv in made:
        conv.close()


def test_an_mcp_server_model_runs_and_the_regex_filters_its_tools(
    llm: LLM, llm_server: ScriptedLLMServer, conversation: Any
) -> None:
    agent = Agent(
        llm=llm,
        tools=[Tool(name="terminal")],
        mcp_config={"time": MCPServer(command=sys.executable, args=TIME_ARGS)},
        filter_tools_regex="^time_convert.*$",
    )
    assert agent.mcp_config["time"]["command"] == sys.executable  # kept as its settings
    conv = conversation(agent)
    arguments = {"source_timezone": "UTC", "time": "09:30", "target_timezone": "Asia/Tokyo"}
    llm_server.reply_tool_call("time_convert_time", arguments)
    llm_server.reply_text("18:30 in Tokyo.")
    conv.send_message("What is 09:30 UTC in Tokyo?")
    conv.run()
    offered = {t["function"]["name"] for t in llm_server.requests[0]["tools"]}
    # The server's other tool and the terminal are filtered out; built-ins always stay.
    assert offered == {"time_convert_time", "finish", "think"}
    assert conv.state.execution_status is ConversationExecutionStatus.FINISHED
    [observation] = [e for e in conv.state.events if isinstance(e, ObservationEvent)]
    assert "18:30" in observation.observation.text


def test_the_mcp_servers_wrapper_form_is_accepted(llm: LLM) -> None:
    agent = Agent(llm=llm, mcp_config={"mcpServers": {"t": {"command": "uvx", "args": ["x"]}}})
    assert agent.mcp_config == {"t": {"command": "uvx", "args": ["x"]}}


def test_a_bad_regex_is_refused_when_the_agent_is_made(llm: LLM) -> None:
    with pytest.raises(ValidationError, match="filter_tools_regex '\\(' is not a regular"):
        Agent(llm=llm, filter_tools_regex="(")


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({}, "needs 'command'"),
        ({"transport": "stdio", "url": "http://x"}, "stdio MCP server needs 'command'"),
        ({"transport": "sse", "command": "x"}, "sse MCP server needs 'url'"),
        ({"command": "x", "shell": True}, "Extra inputs are not permitted"),
        (
            {
                "url": "http://x",
                "headers": {"Authorization": "a"},
                "auth": {"strategy": "bearer", "value": "t"},
            },
            "cannot be combined with an 'Authorization' header",
        ),
    ],
)
def test_incomplete_or_contradictory_servers_are_refused(
    fields: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        MCPServer(**fields)


def test_settings_carry_secrets_in_clear_and_credentials_as_headers() -> None:
    server = MCPServer(
        url="https://mcp.example/mcp",
        headers={"X-Team": SecretStr("blue")},
        auth=MCPBasicAuthCredential(strategy="basic", username="u", password=SecretStr("p")),
        timeout=5000,
    )
    settings = server.to_settings()
    basic = base64.b64encode(b"u:p").decode()
    assert settings["headers"] == {"X-Team": "blue", "Authorization": f"Basic {basic}"}
    assert "**" not in repr(settings)
    spec = parse_server("remote", settings)
    assert spec.headers["Authorization"] == f"Basic {basic}"
    assert spec.timeout == 5.0  # milliseconds, as in .mcp.json
    stdio = MCPServer(command="srv", env={"TOKEN": SecretStr("s3")}).to_settings()
    assert parse_server("local", stdio).env == {"TOKEN": "s3"}
    bearer = MCPServer(url="https://m/mcp", auth={"strategy": "bearer", "value": "tok"})
    assert parse_server("b", bearer.to_settings()).headers == {"Authorization": "Bearer tok"}


def test_an_oauth_server_fails_with_what_to_do_instead() -> None:
    server = MCPServer(url="https://m/mcp", auth=MCPOAuthAuthCredential(strategy="oauth2"))
    with pytest.raises(MCPConfigError, match="OAuth login, which ohtui does not do"):
        parse_server("notion", server.to_settings())
