"""MCP settings: both JSON forms, both transports, and errors naming the server and field."""

from __future__ import annotations

import pytest

from ohtui.sdk.mcp import MCPConfigError, parse_servers


def test_mcp_servers_form_and_bare_form_read_alike() -> None:
    spec = {"command": "uvx", "args": ["mcp-server-time"], "env": {"K": "v"}, "cwd": "sub"}
    wrapped = parse_servers({"mcpServers": {"time": spec}})
    bare = parse_servers({"time": spec})
    assert wrapped == bare
    time = wrapped["time"]
    assert (time.transport, time.command, time.args, time.env, time.cwd) == (
        "stdio",
        "uvx",
        ("mcp-server-time",),
        {"K": "v"},
        "sub",
    )
    assert time.enabled and time.timeout == 300 and time.startup_timeout == 30


def test_http_servers_and_transport_inference() -> None:
    servers = parse_servers(
        {
            "a": {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer x"}},
            "b": {"url": "https://host/sse"},
            "c": {"url": "https://host/mcp", "type": "streamable-http", "timeout": 5000},
            "d": {"url": "https://host/mcp", "transport": "sse", "enabled": False},
        }
    )
    assert servers["a"].transport == "http"
    assert servers["a"].headers == {"Authorization": "Bearer x"}
    assert servers["b"].transport == "sse"
    assert servers["c"].transport == "http" and servers["c"].timeout == 5.0
    assert servers["d"].transport == "sse" and not servers["d"].enabled


def test_unknown_fields_are_kept_and_ignored() -> None:
    assert parse_servers({"x": {"command": "x", "alwaysAllow": ["y"]}})["x"].command == "x"


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ({"transport": "stdio"}, ["'bad'", "`command`", "missing"]),
        ({"transport": "http"}, ["'bad'", "`url`", "missing"]),
        ({"url": "ftp://host/x"}, ["'bad'", "`url`", "http://"]),
        ({"command": "x", "args": "one two"}, ["'bad'", "`args`", "list"]),
        ({"command": "x", "env": {"K": ["v"]}}, ["'bad'", "`env.K`", "string"]),
        ({"command": "x", "timeout": -1}, ["'bad'", "`timeout`", "milliseconds"]),
        ({"command": "x", "enabled": "yes"}, ["'bad'", "`enabled`", "true or false"]),
        ({"url": "http://h/mcp", "transport": "ws"}, ["'bad'", "`transport`", "stdio"]),
        ({}, ["'bad'", "`command`", "`url`"]),
    ],
)
def test_errors_name_the_server_and_the_field(spec: dict[str, object], words: list[str]) -> None:
    with pytest.raises(MCPConfigError) as caught:
        parse_servers({"mcpServers": {"bad": spec}}, where=".mcp.json")
    message = str(caught.value)
    assert ".mcp.json" in message
    for word in words:
        assert word in message


def test_mcp_servers_must_be_an_object() -> None:
    with pytest.raises(MCPConfigError, match="mcpServers"):
        parse_servers({"mcpServers": ["time"]})


def test_tool_names_carry_their_server_and_fit_every_llm_api() -> None:
    import re

    from ohtui.sdk.mcp.definition import mcp_tool_name

    assert mcp_tool_name("github", "create_issue") == "github_create_issue"  # as OpenHands names
    allowed = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
    odd = [("my.srv", "get"), ("my_srv", "get"), ("s", "a/b"), ("s", "a.b"), ("x" * 60, "y" * 60)]
    names = [mcp_tool_name(server, tool) for server, tool in odd]
    assert all(allowed.match(name) for name in names), names
    assert len(set(names)) == len(names)  # what differs stays apart
    assert names[0].startswith("my_srv_get_") and names[1] == "my_srv_get"
    assert names == [mcp_tool_name(server, tool) for server, tool in odd]  # the same every time
