"""The MCP client manager against real servers: ours over stdio and streamable HTTP,
mcp-server-time and mcp-server-git from PyPI. Statements 3-6 of the notes."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_servers import free_port, git_server, http_server, mcp_children, ours, time_server

from ohtui.sdk.mcp import MCPClientManager, ServerStatus, parse_servers


@pytest.fixture
def make() -> Iterator[Any]:
    """Build and start a manager from mcpServers settings; closed after the test."""
    made: list[MCPClientManager] = []

    def build(servers: dict[str, Any], **kwargs: Any) -> MCPClientManager:
        manager = MCPClientManager(parse_servers(servers), **kwargs)
        made.append(manager)
        manager.start()
        assert manager.wait_settled(60)
        return manager

    yield build
    for manager in made:
        manager.close()


def status(manager: MCPClientManager) -> dict[str, str]:
    return {s.name: s.summary for s in manager.servers()}


def test_stdio_server_tools_and_calls(make: Any) -> None:
    manager = make({"t": ours()})
    [info] = manager.servers()
    assert info.status is ServerStatus.READY
    tools = {t.name: t for t in info.tools}
    assert set(tools) >= {"add", "fail", "sleep", "echo"}
    assert tools["add"].read_only and not tools["sleep"].read_only
    assert tools["add"].input_schema["required"] == ["a", "b"]
    added = manager.call("t", "add", {"a": 2, "b": 3})
    assert (added.text, added.is_error, added.server, added.tool) == ("5", False, "t", "add")
    failed = manager.call("t", "fail", {"msg": "boom"})
    assert failed.is_error and "boom" in failed.text


def test_streamable_http_server(make: Any) -> None:
    with http_server() as url:
        manager = make({"web": {"url": url}})
        assert status(manager) == {"web": "ready, 6 tools"}
        assert manager.call("web", "add", {"a": 40, "b": 2}).text == "42"
        failed = manager.call("web", "fail", {"msg": "boom"})
        assert failed.is_error and "Error executing tool fail: boom" in failed.text


def test_an_http_server_that_restarted_and_forgot_the_session_is_joined_again(make: Any) -> None:
    port = free_port()
    with http_server(port=port) as url:
        manager = make({"web": {"url": url}})
        assert manager.call("web", "add", {"a": 1, "b": 2}).text == "3"
    with http_server(port=port):  # a new process: the session id it gave is unknown now
        first = manager.call("web", "add", {"a": 2, "b": 2})
        assert first.is_error and "call again" in first.text, first.text
        assert manager.wait_settled(30)
        assert status(manager) == {"web": "ready, 6 tools"}
        assert manager.call("web", "add", {"a": 40, "b": 2}).text == "42"


def test_reference_servers_time_and_git(make: Any, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    manager = make({"time": time_server(), "git": git_server(repo)})
    infos = {s.name: s for s in manager.servers()}
    assert {t.name for t in infos["time"].tools} == {"get_current_time", "convert_time"}
    assert all(t.read_only for t in infos["time"].tools)
    git_tools = {t.name: t for t in infos["git"].tools}
    assert "git_status" in git_tools and "git_commit" in git_tools
    assert not git_tools["git_commit"].read_only
    converted = manager.call(
        "time",
        "convert_time",
        {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"},
    )
    assert not converted.is_error and "Asia/Tokyo" in converted.text
    bad = manager.call("time", "convert_time", {"time": "12:00"})
    assert bad.is_error
    unknown = manager.call("time", "no_such_tool", {})
    assert unknown.is_error and "no_such_tool" in unknown.text
    assert "branch" in manager.call("git", "git_status", {"repo_path": str(repo)}).text.lower()


def test_a_server_that_fails_to_start_is_reported_with_its_stderr(make: Any) -> None:
    manager = make(
        {
            "good": ours(),
            "crashing": ours("--crash-on-start"),
            "missing": {"command": "ohtui-no-such-program-here"},
        }
    )
    infos = {s.name: s for s in manager.servers()}
    assert infos["good"].status is ServerStatus.READY
    assert infos["crashing"].status is ServerStatus.FAILED
    assert "fatal: cannot open the database" in (infos["crashing"].error or "")
    assert infos["missing"].status is ServerStatus.FAILED
    assert "ohtui-no-such-program-here" in (infos["missing"].error or "")
    assert "not found" in (infos["missing"].error or "")
    refused = manager.call("crashing", "add", {"a": 1, "b": 2})
    assert refused.is_error and "not available" in refused.text


def test_a_server_that_never_initializes_times_out(make: Any) -> None:
    silent = {"command": sys.executable, "args": ["-c", "import time; time.sleep(60)"]}
    started = time.monotonic()
    manager = make({"silent": {**silent, "startupTimeout": 1500}, "t": ours()})
    assert time.monotonic() - started < 20
    infos = {s.name: s for s in manager.servers()}
    assert infos["silent"].status is ServerStatus.FAILED
    assert "did not answer `initialize` within 1.5 s" in (infos["silent"].error or "")
    assert infos["t"].status is ServerStatus.READY


def test_tools_of_the_same_name_on_two_servers_are_both_offered_by_server(make: Any) -> None:
    # A workspace's server with the user's tool names can shadow nothing: names carry servers.
    manager = make({"repo": ours("--name", "repo", sandboxed=True), "mine": ours()})
    assert status(manager) == {"repo": "ready, 6 tools", "mine": "ready, 6 tools"}
    named = {t.name: (t.server, t.tool) for t in manager.tool_definitions()}
    assert named["mine_add"] == ("mine", "add") and named["repo_add"] == ("repo", "add")
    assert "add" not in named
    assert manager.call("mine", "add", {"a": 1, "b": 2}).server == "mine"


def test_a_name_two_servers_would_share_fails_the_workspace_one_naming_both(make: Any) -> None:
    # calc + x_add and calc_x + add are both called calc_x_add: the user's server keeps it,
    # though the workspace's comes first in the settings.
    manager = make({"calc": ours("--tool-prefix", "x_", sandboxed=True), "calc_x": ours()})
    infos = {s.name: s for s in manager.servers()}
    assert infos["calc_x"].status is ServerStatus.READY
    assert infos["calc"].status is ServerStatus.FAILED
    error = infos["calc"].error or ""
    assert "'x_add' would be called calc_x_add" in error and "'calc_x'" in error
    assert {t.server for t in manager.tool_definitions()} == {"calc_x"}


def test_a_workspace_server_ready_first_never_offers_a_name_a_user_server_may_take() -> None:
    # The user's calc_x starts 2 s late: until it is ready, the workspace's calc (ready at
    # once) must not be offered calc_x_add, which the model could call as the user's tool.
    mine = ours()
    late = {"command": "/bin/sh", "args": ["-c", 'sleep 2; exec "$0" "$@"', mine["command"]]}
    late["args"] += mine["args"]
    repo = ours("--tool-prefix", "x_", sandboxed=True)
    manager = MCPClientManager(parse_servers({"calc": repo, "calc_x": late}))
    try:
        manager.start()
        deadline = time.monotonic() + 30
        while status(manager)["calc"] != "ready, 6 tools":
            assert time.monotonic() < deadline, status(manager)
            time.sleep(0.05)
        assert status(manager)["calc_x"] == "starting"
        assert manager.tool_definitions() == []
        assert manager.wait_settled(30)
        infos = {s.name: s for s in manager.servers()}
        assert infos["calc"].status is ServerStatus.FAILED
        assert {t.server for t in manager.tool_definitions()} == {"calc_x"}
    finally:
        manager.close()


def test_a_tool_named_like_an_agent_tool_is_refused(make: Any) -> None:
    manager = make({"t": ours()})
    manager.reserve(["t_add", "terminal"])
    [info] = manager.servers()
    assert info.status is ServerStatus.FAILED and "ohtui's own tools" in (info.error or "")


def test_call_timeout_becomes_an_error_observation(make: Any) -> None:
    manager = make({"t": ours(timeout=500)})
    started = time.monotonic()
    slow = manager.call("t", "sleep", {"seconds": 5})
    assert time.monotonic() - started < 3
    assert slow.is_error and "timed out after 0.5 s" in slow.text
    assert manager.call("t", "add", {"a": 1, "b": 1}).text == "2"  # the session goes on


def test_cancel_calls_interrupts_an_in_flight_call(make: Any) -> None:
    manager = make({"t": ours()})
    threading.Timer(0.3, manager.cancel_calls).start()
    started = time.monotonic()
    result = manager.call("t", "sleep", {"seconds": 10})
    assert time.monotonic() - started < 3
    assert result.is_error and "interrupted" in result.text
    assert manager.call("t", "add", {"a": 1, "b": 1}).text == "2"


def test_a_crashed_server_is_reconnected_once(make: Any) -> None:
    manager = make({"t": ours()})
    crashed = manager.call("t", "crash", {})
    assert crashed.is_error and "lost" in crashed.text and "reconnecting" in crashed.text
    assert manager.wait_settled(30)
    assert manager.call("t", "add", {"a": 2, "b": 2}).text == "4"


def test_disable_and_enable_for_the_session(make: Any) -> None:
    manager = make({"t": ours(), "off": ours("--name", "off", enabled=False)})
    assert status(manager)["off"] == "disabled"
    manager.set_enabled("t", False)
    refused = manager.call("t", "add", {"a": 1, "b": 2})
    assert refused.is_error and "disabled for this session" in refused.text
    manager.set_enabled("t", True)
    assert manager.wait_settled(30)
    assert manager.call("t", "add", {"a": 1, "b": 2}).text == "3"


def test_close_leaves_no_child_process(make: Any) -> None:
    manager = make({"a": ours(), "b": time_server()})
    assert len(mcp_children()) >= 2
    manager.close()
    deadline = time.monotonic() + 5
    while mcp_children() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert mcp_children() == []


def test_secrets_in_env_are_filled_in_and_missing_ones_reported(make: Any) -> None:
    values = {"TOKEN": "s3cr3t"}
    manager = make(
        {
            "ok": ours(env={"API_TOKEN": "${TOKEN}"}),
            "missing": ours("--name", "m", env={"API_TOKEN": "$NOPE"}),
        },
        secret=values.get,
    )
    infos = {s.name: s for s in manager.servers()}
    assert infos["ok"].status is ServerStatus.READY
    assert infos["missing"].status is ServerStatus.FAILED
    assert "`env.API_TOKEN`" in (infos["missing"].error or "")
    assert "'NOPE'" in (infos["missing"].error or "")


def test_invalid_settings_are_listed_as_failed() -> None:
    manager = MCPClientManager({}, errors={"bad": "MCP server 'bad': `command` is missing"})
    [info] = manager.servers()
    assert info.status is ServerStatus.FAILED and "`command`" in info.summary
    manager.close()


def test_a_server_without_cwd_never_runs_a_module_the_workspace_shadows(
    make: Any, tmp_path: Path
) -> None:
    # `python -m mcp_server_time` started in the workspace would import the agent's file.
    workspace = tmp_path / "project"
    workspace.mkdir()
    marker = tmp_path / "ran-unconfined"
    (workspace / "mcp_server_time.py").write_text(f"open({str(marker)!r}, 'w')\n")
    manager = make({"time": time_server()}, working_dir=str(workspace))
    assert status(manager) == {"time": "ready, 2 tools"}
    assert not marker.exists()
