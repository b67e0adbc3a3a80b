"""Whatever ends `ohtui serve` (its terminal closing: SIGHUP; a service manager: SIGTERM;
Ctrl+C: SIGINT; SIGKILL), every process a served command started ends with it, and what the
conversation did is saved. Sandbox on and off."""

from __future__ import annotations

import random
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import psutil
import pytest
from llm_server import ScriptedLLMServer
from sandboxed_bash import require_bwrap
from serve_helpers import create_payload, user_message
from server_process import ServerProcess

pytestmark = pytest.mark.slow

SECONDS = 3
"""How long the command's parts sleep before writing their markers."""


def command(workspace: Path, token: str) -> str:
    """Writes `started`, then after SECONDS three markers: from itself, a background job and
    a process it detached (a new session) -- unless it is stopped first."""
    sleep = f"sleep {token}"
    return (
        f"touch {workspace}/started; "
        f"({sleep}; touch {workspace}/marker-background) & "
        f"setsid sh -c '{sleep}; touch {workspace}/marker-detached' & "
        f"nohup sh -c '{sleep}; touch {workspace}/marker-nohup' >/dev/null 2>&1 & "
        f"{sleep}; touch {workspace}/marker-foreground"
    )


def leftovers(token: str) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["cmdline"]):
        cmdline = " ".join(process.info["cmdline"] or [])
        if token in cmdline:
            found.append(process)
    return found


@pytest.fixture
def sandbox_mode(request: pytest.FixtureRequest) -> str:
    mode = str(request.param)
    if mode != "off":
        require_bwrap()
    return mode


@pytest.fixture
def running(
    tmp_path: Path, llm_server: ScriptedLLMServer, sandbox_mode: str
) -> Iterator[tuple[ServerProcess, str, Path, str]]:
    """A server whose conversation runs `command` right now: (server, id, workspace, token)."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    token = f"{SECONDS}.{random.randrange(10**6, 10**7)}"
    server = ServerProcess(tmp_path, args=("--sandbox", sandbox_mode)).start()
    try:
        with server.client() as client:
            cid = client.post(
                "/api/conversations", json=create_payload(llm_server, workspace)
            ).json()["id"]
            llm_server.reply_tool_call(
                "terminal", {"command": command(workspace, token), "security_risk": "LOW"}
            )
            llm_server.set_default(None)
            client.post(f"/api/conversations/{cid}/events", json=user_message("go", run=True))
            deadline = time.monotonic() + 120
            while not (workspace / "started").exists() or len(leftovers(token)) < 4:
                assert time.monotonic() < deadline, server.log()
                time.sleep(0.05)
        yield server, cid, workspace, token
    finally:
        server.kill()
        for process in leftovers(token):
            process.kill()


def nothing_left(workspace: Path, token: str, since: float) -> None:
    """No process of the command is left; none of its markers appears, even after its sleeps
    would have ended."""
    deadline = time.monotonic() + 10
    while leftovers(token) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert leftovers(token) == [], [p.info["cmdline"] for p in leftovers(token)]
    time.sleep(max(0.0, since + SECONDS + 1.5 - time.monotonic()))
    assert sorted(p.name for p in workspace.glob("marker-*")) == []


MODES = ["workspace-write", "off"]


@pytest.mark.parametrize(
    ("signum", "sandbox_mode"),
    # Each signal once, each mode at least once: they share one way out.
    [
        (signal.SIGHUP, "workspace-write"),
        (signal.SIGTERM, "off"),
        (signal.SIGINT, "workspace-write"),
    ],
    indirect=["sandbox_mode"],
)
def test_a_signal_stops_the_commands_and_saves(
    running: tuple[ServerProcess, str, Path, str],
    signum: signal.Signals,
    llm_server: ScriptedLLMServer,
) -> None:
    server, cid, workspace, token = running
    assert server.process is not None
    sent = time.monotonic()
    server.process.send_signal(signum)
    code = server.process.wait(30)
    nothing_left(workspace, token, sent)
    assert code == 0, server.log()  # it stopped as asked, not killed by the signal
    assert "closing 1 conversation" in server.log()
    if signum != signal.SIGTERM:
        return  # one way out for the three: what it saved is checked once, below
    # What happened is saved, the command told as stopped: the conversation waits, paused.
    again = ServerProcess(server.data_dir, port=server.port).start()
    try:
        with again.client() as client:
            info = client.get(f"/api/conversations/{cid}").json()
            events = client.get(f"/api/conversations/{cid}/events/search").json()["items"]
        assert info["execution_status"] == "paused"
        kinds = [e["kind"] for e in events]
        assert kinds[:3] == ["SystemPromptEvent", "MessageEvent", "ActionEvent"]
        observation = events[3]
        assert observation["kind"] == "ObservationEvent", kinds
        assert "interrupted before it finished" not in str(observation)
    finally:
        again.stop()


@pytest.mark.parametrize("sandbox_mode", MODES, indirect=True)
def test_sigkill_of_the_server_ends_its_commands(
    running: tuple[ServerProcess, str, Path, str],
) -> None:
    server, _, workspace, token = running
    sent = time.monotonic()
    server.kill()
    nothing_left(workspace, token, sent)


@pytest.mark.parametrize("sandbox_mode", ["off"], indirect=True)
def test_a_signal_with_a_client_attached(
    running: tuple[ServerProcess, str, Path, str],
) -> None:
    """A subscribed socket and a keep-alive connection do not hold the shutdown up while the
    command runs on."""
    from serve_helpers import Frames
    from server_process import TEST_KEY

    server, cid, workspace, token = running
    frames = Frames(f"{server.ws_url}/sockets/events/{cid}", TEST_KEY)
    client = httpx.Client(base_url=server.url, headers=server.headers)
    try:
        client.get("/alive")
        frames.wait_for(lambda f: True)
        assert server.process is not None
        sent = time.monotonic()
        server.process.send_signal(signal.SIGTERM)
        assert server.process.wait(30) == 0
        assert time.monotonic() - sent < SECONDS
        assert frames.wait_closed() is not None
        nothing_left(workspace, token, sent)
    finally:
        client.close()
        frames.close()


def test_under_nohup_a_hangup_is_ignored(tmp_path: Path) -> None:
    """`nohup ohtui serve &` asked to outlive the terminal: SIGHUP leaves it serving."""
    server = ServerProcess(tmp_path)
    server.command = [
        sys.executable,
        "-c",
        "import signal, sys, runpy; signal.signal(signal.SIGHUP, signal.SIG_IGN); "
        "sys.argv = ['ohtui', *sys.argv[1:]]; runpy.run_module('ohtui', run_name='__main__')",
    ]
    server.start()
    try:
        assert server.process is not None
        server.process.send_signal(signal.SIGHUP)
        time.sleep(1.0)
        assert server.process.poll() is None
        assert httpx.get(server.url + "/alive").status_code == 200
        server.process.send_signal(signal.SIGTERM)
        assert server.process.wait(30) == 0
    finally:
        server.kill()


def test_requests_during_the_stop_are_refused(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    """While the conversations close (a command that ignores SIGTERM holds it up), a client
    still connected gets 503 with a sentence: nothing reopens or creates a conversation
    that no one would close, and no 500 from a closed store."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    token = f"30.{random.randrange(10**6, 10**7)}"
    server = ServerProcess(tmp_path, args=("--sandbox", "off")).start()
    client = server.client()
    try:
        idle = client.post("/api/conversations", json=create_payload(llm_server, workspace))
        busy = client.post("/api/conversations", json=create_payload(llm_server, workspace))
        idle_id, busy_id = idle.json()["id"], busy.json()["id"]
        stubborn = f"trap '' TERM; touch {workspace}/started; sleep {token}"
        llm_server.reply_tool_call("terminal", {"command": stubborn, "security_risk": "LOW"})
        llm_server.set_default(None)
        client.post(f"/api/conversations/{busy_id}/events", json=user_message("go", run=True))
        deadline = time.monotonic() + 60
        while not leftovers(token):
            assert time.monotonic() < deadline, server.log()
            time.sleep(0.05)
        assert server.process is not None
        # A connection idle past the server's keep-alive is closed, and a stopping server
        # takes no new one: use it just before the signal.
        assert client.get(f"/api/conversations/{idle_id}").status_code == 200
        server.process.send_signal(signal.SIGTERM)
        while "stopping: closing" not in server.log():
            time.sleep(0.01)
        statuses = []
        payload = create_payload(llm_server, workspace)
        while server.process.poll() is None and len(statuses) < 200:
            try:
                got = client.get(f"/api/conversations/{idle_id}")
                made = client.post("/api/conversations", json=payload)
            except httpx.HTTPError:
                break
            statuses += [got.status_code, made.status_code]
            details = {got.json().get("detail", ""), made.json().get("detail", "")}
            assert all("stopping" in detail for detail in details), details
        assert statuses and set(statuses) == {503}, statuses
        assert server.process.wait(30) == 0
    finally:
        client.close()
        server.kill()
        for process in leftovers(token):
            process.kill()
