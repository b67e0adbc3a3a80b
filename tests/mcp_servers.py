"""Real MCP servers for the tests: ours (tests/mcp_test_server.py) over stdio or streamable
HTTP on 127.0.0.1, and mcp-server-time / mcp-server-git from PyPI over stdio."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

TEST_SERVER = str(Path(__file__).with_name("mcp_test_server.py"))


def ours(*args: str, **extra: Any) -> dict[str, Any]:
    """Settings (mcpServers form) for our test server over stdio."""
    return {"command": sys.executable, "args": [TEST_SERVER, *args], **extra}


def time_server(**extra: Any) -> dict[str, Any]:
    """Settings for mcp-server-time over stdio, in UTC."""
    return {
        "command": sys.executable,
        "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"],
        **extra,
    }


def git_server(repository: Path, **extra: Any) -> dict[str, Any]:
    """Settings for mcp-server-git over stdio, on `repository`."""
    return {
        "command": sys.executable,
        "args": ["-m", "mcp_server_git", "--repository", str(repository)],
        **extra,
    }


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def http_server(name: str = "ohtui-test-http", port: int | None = None) -> Iterator[str]:
    """Our test server over streamable HTTP on 127.0.0.1 (on `port`, or a free one); yields
    its URL (…/mcp)."""
    port = port or free_port()
    process = subprocess.Popen(
        [sys.executable, TEST_SERVER, "--http", str(port), "--name", name],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                time.sleep(0.05)
        else:
            raise RuntimeError("the HTTP test server did not start")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(10)


def children() -> list[Any]:
    """This process's live descendants (zombies included: they are leftovers too)."""
    import psutil

    out = []
    for child in psutil.Process(os.getpid()).children(recursive=True):
        try:
            out.append(child) if child.is_running() else None
        except psutil.NoSuchProcess:
            continue
    return out


def mcp_children() -> list[Any]:
    """Descendants that are MCP servers started by a test."""
    import psutil

    found = []
    for child in children():
        try:
            line = " ".join(child.cmdline())
        except (psutil.NoSuchProcess, psutil.ZombieProcess):
            found.append(child)  # a zombie: a child nobody waited for
            continue
        ours = any(n in line for n in ("mcp_test_server", "mcp_server_time", "mcp_server_git"))
        if ours and "--http" not in line:  # the HTTP fixture's own server is not the client's
            found.append(child)
    return found
