"""Start the real openhands-agent-server (1.58, from a peer venv) on loopback, for interop.

Used by the opt-in `peer` tests and by `scripts/record-agent-server.py`. The peer venv is
built by `scripts/peer-agent-server.sh`; point `OHTUI_PEER_PYTHON` at its python.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

PEER_ENV = "OHTUI_PEER_PYTHON"
PEER_URL_ENV = "OHTUI_PEER_URL"
"""Optional: the URL of a peer server started already (its key in OHTUI_PEER_KEY), reused
instead of starting one (it takes 20 s to start, minutes on a loaded machine)."""
READY_TIMEOUT = 300.0


@dataclass
class PeerServer:
    """A running peer agent server."""

    url: str
    api_key: str
    workspace: Path
    log: Path
    restarter: Callable[[], None] | None = field(default=None, repr=False)

    def restart(self) -> None:
        """Stop the server and start it again on the same port, with the same folders (its
        conversations are resumed from disk). Skips the test for a reused server."""
        if self.restarter is None:
            import pytest

            pytest.skip(f"the peer server at {self.url} was started elsewhere")
        self.restarter()


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def peer_agent_server(python: str, api_key: str = "peer-key-123") -> Iterator[PeerServer]:
    """Run `python -m openhands.agent_server` on a free port until the block ends (or use
    the one at OHTUI_PEER_URL)."""
    with tempfile.TemporaryDirectory(prefix="ohtui-peer-") as scratch:
        root = Path(scratch)
        workspace = root / "workspace"
        workspace.mkdir()
        if os.environ.get(PEER_URL_ENV):
            key = os.environ.get("OHTUI_PEER_KEY", api_key)
            yield PeerServer(os.environ[PEER_URL_ENV], key, workspace, root / "server.log")
            return
        config = root / "config.json"
        config.write_text(
            json.dumps(
                {
                    "session_api_keys": [api_key],
                    "conversations_path": str(root / "conversations"),
                    "workspace_path": str(workspace),
                }
            )
        )
        port = free_port()
        env = {
            **os.environ,
            "OPENHANDS_AGENT_SERVER_CONFIG_PATH": str(config),
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "OH_ENABLE_VSCODE": "false",
            "OPENHANDS_SUPPRESS_BANNER": "1",
        }
        log = root / "server.log"
        command = [
            python,
            "-m",
            "openhands.agent_server",
            "--host",
            "127.0.0.1",
            "--port",
            f"{port}",
        ]
        url = f"http://127.0.0.1:{port}"
        processes = [_start(command, root, env, log)]

        def restart() -> None:
            _stop(processes[-1])
            processes.append(_start(command, root, env, log))
            _wait_ready(url, processes[-1], log)

        try:
            _wait_ready(url, processes[-1], log)
            yield PeerServer(url, api_key, workspace, log, restart)
        finally:
            _stop(processes[-1])


def _start(
    command: list[str], root: Path, env: dict[str, str], log: Path
) -> subprocess.Popen[bytes]:
    with log.open("a") as out:
        return subprocess.Popen(command, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT)


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _wait_ready(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the peer agent server exited:\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(f"{url}/ready", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise RuntimeError(
        f"the peer agent server was not ready in {READY_TIMEOUT:g} s:\n{log.read_text()[-3000:]}"
    )
