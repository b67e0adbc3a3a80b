"""A sandboxed MCP server (a project's, say) runs in the same sandbox as the agent's shell,
not a weaker one: no abstract socket with the network shared, no variable naming a hidden
socket, a TMPDIR it can write with the workspace directly in /tmp.

Each server is our test server over stdio, started by the MCP SDK in real bubblewrap; each
check is what a hostile server would try.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_servers import ours

from ohtui.sdk.mcp import MCPClientManager, ServerStatus, parse_servers
from ohtui.sdk.sandbox import Sandbox, SandboxConfig, landlock


@pytest.fixture
def serve() -> Iterator[Any]:
    """Start a sandboxed test server in `workspace`'s sandbox; closed after the test."""
    made: list[MCPClientManager] = []

    def start(workspace: Path, env: dict[str, str] | None = None, **config: Any) -> Any:
        sandbox = Sandbox(SandboxConfig.model_validate(config), str(workspace))
        spec = ours("--write-tool", "--reach-tool", sandboxed=True, env=env or {})
        manager = MCPClientManager(
            parse_servers({"s": spec}), working_dir=str(workspace), sandbox=lambda: sandbox
        )
        made.append(manager)
        manager.start()
        assert manager.wait_settled(60)
        [info] = manager.servers()
        assert info.status is ServerStatus.READY, info.error
        return lambda tool, **args: manager.call("s", tool, args).text

    yield start
    for manager in made:
        manager.close()


@pytest.fixture
def abstract_socket() -> Iterator[str]:
    """An abstract Unix socket listening outside the sandbox (as X11's), by its `@` name."""
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(f"\0ohtui-mcp-test-{os.getpid()}")
    sock.listen()
    yield "@" + sock.getsockname()[1:].decode()
    sock.close()


def test_a_server_with_the_network_shared_reaches_no_abstract_socket(
    serve: Any, project: Path, abstract_socket: str
) -> None:
    if landlock.abi_version() < landlock.SCOPE_ABI:
        pytest.skip("this kernel has no Landlock scopes (Linux 6.12+)")
    call = serve(project, network=True)
    assert call("reach", address=abstract_socket).startswith("not reached")


def test_a_server_gets_no_variable_naming_a_hidden_socket(
    serve: Any, project: Path, outside_tmp: Path
) -> None:
    runtime = outside_tmp / "run"
    runtime.mkdir(mode=0o700)
    agent = socket.socket(socket.AF_UNIX)
    agent.bind(str(runtime / "ssh-agent.sock"))
    agent.listen()
    try:
        # The project's settings hand the server the user's agent and session bus.
        call = serve(
            project,
            env={
                "SSH_AUTH_SOCK": str(runtime / "ssh-agent.sock"),
                "DBUS_SESSION_BUS_ADDRESS": f"unix:path={runtime}/bus,guid=1",
                "XDG_RUNTIME_DIR": str(runtime),
            },
        )
        seen = [
            call("getenv", name=name)
            for name in ("SSH_AUTH_SOCK", "DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR")
        ]
        reached = call("reach", address=str(runtime / "ssh-agent.sock"))
    finally:
        agent.close()
    assert seen == ["(unset)"] * 3
    assert reached.startswith("not reached")


@pytest.fixture
def in_tmp() -> Iterator[Path]:
    """A workspace directly in /tmp, as `cd /tmp && mkdir proj && ohtui` makes."""
    path = Path(tempfile.mkdtemp(prefix="ohtui-ws-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_a_server_in_a_workspace_directly_in_tmp_can_write_its_temp_files(
    serve: Any, in_tmp: Path
) -> None:
    call = serve(in_tmp)
    temp = call("getenv", name="TMPDIR")
    assert temp != "(unset)"
    assert call("write", path=f"{temp}/scratch", text="x") == f"wrote {temp}/scratch"


# --- a server trusted to run confined never runs unconfined --------------------------------


@pytest.fixture
def manager_for() -> Iterator[Any]:
    """A started manager of one sandboxed test server, `s`, in the sandbox `current()` gives."""
    made: list[MCPClientManager] = []

    def start(workspace: Path, current: Any) -> MCPClientManager:
        manager = MCPClientManager(
            parse_servers({"s": ours(sandboxed=True)}),
            working_dir=str(workspace),
            sandbox=current,
        )
        made.append(manager)
        manager.start()
        assert manager.wait_settled(60)
        return manager

    yield start
    for manager in made:
        manager.close()


def test_a_sandboxed_server_is_not_started_with_the_sandbox_off(
    manager_for: Any, project: Path
) -> None:
    off = Sandbox(SandboxConfig(mode="off"), str(project))
    manager = manager_for(project, lambda: off)
    [info] = manager.servers()
    assert info.status is ServerStatus.FAILED
    assert "runs only in the sandbox" in info.summary and "/sandbox" in (info.error or "")
    manager.set_enabled("s", True)  # /mcp: turned on again, still refused
    assert manager.wait_settled(60)
    [info] = manager.servers()
    assert info.status is ServerStatus.FAILED and "sandbox is off" in (info.error or "")


def test_a_reconnect_after_the_sandbox_was_turned_off_does_not_run_unconfined(
    manager_for: Any, project: Path
) -> None:
    sandboxes = [Sandbox(SandboxConfig(), str(project))]
    manager = manager_for(project, lambda: sandboxes[-1])
    [info] = manager.servers()
    assert info.status is ServerStatus.READY and info.confined
    sandboxes.append(Sandbox(SandboxConfig(mode="off"), str(project)))
    manager.call("s", "crash", {})  # the session is lost: ohtui reconnects once
    deadline = time.monotonic() + 60
    while manager.servers()[0].status is not ServerStatus.FAILED:
        assert time.monotonic() < deadline, manager.servers()
        time.sleep(0.1)
    [info] = manager.servers()
    assert "sandbox is off" in (info.error or ""), info


def test_a_socket_gone_before_the_sandbox_is_set_up_costs_one_start(
    serve: Any, project: Path, socket_gone_before_start: list[int]
) -> None:
    """As for the agent's shell: a socket listed, then gone before bubblewrap covers it,
    fails that one start of the server, not the server."""
    call = serve(project)
    assert call("write", path="started.txt", text="yes")
    assert (project / "started.txt").read_text() == "yes" and len(socket_gone_before_start) == 2
