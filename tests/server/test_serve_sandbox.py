"""`ohtui serve` runs every conversation in the sandbox the settings ask for (`--sandbox`,
OHTUI_SANDBOX, `[sandbox]` in config.toml), as the TUI does, and says which one is in force:
in its start lines, in /server_info and in each conversation's info."""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from llm_server import ScriptedLLMServer
from sandboxed_bash import require_bwrap
from serve_helpers import create_payload, user_message
from server_process import ServerProcess

ESCAPE = "touch {outside}/escaped; echo inside > inside.txt; cat {key} && echo KEY-READ"


@pytest.fixture(scope="module", autouse=True)
def bwrap() -> None:
    require_bwrap()


def run_command(
    server: ServerProcess, llm: ScriptedLLMServer, workspace: Path, command: str
) -> tuple[dict[str, Any], str]:
    """A new conversation in `workspace` runs `command`; (its info, the command's output)."""
    llm.reply_tool_call("terminal", {"command": command, "security_risk": "LOW"})
    llm.reply_text("done")
    with server.client() as client:
        created = client.post("/api/conversations", json=create_payload(llm, workspace))
        assert created.status_code == 201, created.text
        cid = created.json()["id"]
        client.post(f"/api/conversations/{cid}/events", json=user_message("go", run=True))
        return wait_output(client, cid)


def wait_output(client: httpx.Client, cid: str) -> tuple[dict[str, Any], str]:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        info = client.get(f"/api/conversations/{cid}").json()
        if info["execution_status"] in ("finished", "error", "paused", "stuck"):
            events = client.get(f"/api/conversations/{cid}/events/search").json()["items"]
            observations = [e for e in events if e["kind"] == "ObservationEvent"]
            text = "".join(
                part.get("text", "")
                for event in observations
                for part in event["observation"]["content"]
            )
            return info, text
        time.sleep(0.1)
    raise AssertionError("the run did not end")


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    workspace = tmp_path / "ws"
    outside = tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    return workspace, outside


def escape(server: ServerProcess, llm: ScriptedLLMServer, places: tuple[Path, Path]) -> Any:
    workspace, outside = places
    key = server.data_dir / "server-secret.key"
    command = ESCAPE.format(outside=outside, key=key)
    return run_command(server, llm, workspace, command)


# --- the default: workspace-write -----------------------------------------------------


def test_a_served_command_cannot_write_outside_its_workspace(
    server: ServerProcess, llm_script: ScriptedLLMServer, places: tuple[Path, Path]
) -> None:
    """The issue's finding: a served conversation ran with no sandbox and wrote outside."""
    info, output = escape(server, llm_script, places)
    workspace, outside = places
    assert not (outside / "escaped").exists(), output
    assert (workspace / "inside.txt").read_text() == "inside\n"
    assert "KEY-READ" not in output  # the server's own secret is out of sight
    assert info["ohtui_sandbox"] == {"mode": "workspace-write", "network": False, "problem": None}


def test_the_server_says_which_sandbox(server: ServerProcess) -> None:
    info = httpx.get(server.url + "/server_info", timeout=120).json()
    assert info["ohtui_sandbox"]["mode"] == "workspace-write"
    assert info["ohtui_sandbox"]["network"] is False
    assert info["ohtui_sandbox"]["problem"] is None
    deadline = time.monotonic() + 30
    while "sandbox: workspace-write" not in server.log():
        assert time.monotonic() < deadline, server.log()
        time.sleep(0.1)


# --- other modes, by flag, variable and config.toml ----------------------------------


@pytest.fixture
def started(tmp_path: Path) -> Iterator[Any]:
    servers: list[ServerProcess] = []

    def start(*args: str, env: dict[str, str] | None = None, config: str = "") -> ServerProcess:
        data = tmp_path / f"data{len(servers)}"
        data.mkdir()
        if config:
            (data / "config").mkdir()
            (data / "config" / "config.toml").write_text(config)
        server = ServerProcess(data, args=args, env=env).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


def test_sandbox_off_on_purpose(
    started: Any, llm_script: ScriptedLLMServer, places: tuple[Path, Path]
) -> None:
    server = started("--sandbox", "off")
    info, _ = escape(server, llm_script, places)
    assert (places[1] / "escaped").exists()
    assert info["ohtui_sandbox"] == {"mode": "off", "network": True, "problem": None}
    assert "sandbox: off" in server.log()


@pytest.mark.parametrize(
    ("args", "env", "config"),
    [
        (("--sandbox", "read-only"), {}, ""),
        ((), {"OHTUI_SANDBOX": "read-only"}, ""),
        ((), {}, '[sandbox]\nmode = "read-only"\n'),
        (("--sandbox", "read-only"), {"OHTUI_SANDBOX": "off"}, '[sandbox]\nmode = "off"\n'),
    ],
    ids=["flag", "variable", "config", "flag-wins"],
)
def test_read_only_from_every_setting(
    started: Any,
    llm_script: ScriptedLLMServer,
    places: tuple[Path, Path],
    args: tuple[str, ...],
    env: dict[str, str],
    config: str,
) -> None:
    server = started(*args, env=env, config=config)
    info, _ = escape(server, llm_script, places)
    assert not (places[1] / "escaped").exists()
    assert not (places[0] / "inside.txt").exists()
    assert info["ohtui_sandbox"] == {"mode": "read-only", "network": False, "problem": None}
    assert httpx.get(server.url + "/server_info").json()["ohtui_sandbox"]["mode"] == "read-only"


def test_without_bubblewrap_it_says_why(
    started: Any, llm_script: ScriptedLLMServer, places: tuple[Path, Path], tmp_path: Path
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "sh", "touch", "cat", "env"):
        found = shutil.which(tool)
        assert found
        (bin_dir / tool).symlink_to(found)
    server = started(env={"PATH": str(bin_dir)})
    info, _ = escape(server, llm_script, places)
    assert info["ohtui_sandbox"]["mode"] == "off"
    assert "bubblewrap" in info["ohtui_sandbox"]["problem"]
    server_info = httpx.get(server.url + "/server_info").json()["ohtui_sandbox"]
    assert "bubblewrap" in server_info["problem"]
    assert "sandbox: OFF" in server.log() and "bubblewrap" in server.log()
    # A client opening a conversation there is told why, not only shown "off".
    from ohtui.opening import Target, start
    from ohtui.settings.profile import Profile

    config = tmp_path / "client.toml"
    config.write_text(
        f'[llm]\nmodel = "openai/test-model"\nbase_url = "{llm_script.base_url}"\n'
        f'[server]\nurl = "{server.url}"\n',
        encoding="utf-8",
    )
    environ = {"OHTUI_SERVER_API_KEY": server.key or ""}
    profile = Profile(config, {}, use_keyring=False, environ=environ).load()
    opened = start(profile, places[0], tmp_path / "client-data", Target())
    try:
        [notice] = [n for n in opened.notices if "without a sandbox" in n]
        assert "bubblewrap" in notice
    finally:
        opened.conversation.close()


@pytest.mark.parametrize(
    ("args", "env", "words"),
    [
        (("--sandbox", "none"), {}, "--sandbox"),
        ((), {"OHTUI_SANDBOX": "nope"}, "OHTUI_SANDBOX"),
    ],
)
def test_a_bad_sandbox_setting_stops_the_start(
    tmp_path: Path, args: tuple[str, ...], env: dict[str, str], words: str
) -> None:
    server = ServerProcess(tmp_path, args=args, env=env)
    server.start(wait=False)
    assert server.process is not None
    assert server.process.wait(60) == 2
    assert words in server.log() and "Traceback" not in server.log()


# --- resumed conversations ------------------------------------------------------------


def test_a_conversation_restored_after_a_restart_is_sandboxed(
    tmp_path: Path, llm_script: ScriptedLLMServer, places: tuple[Path, Path]
) -> None:
    """Made on a server with the sandbox off, resumed on one with the default: the setting
    in force now rules."""
    workspace, outside = places
    data = tmp_path / "data"
    data.mkdir()
    first = ServerProcess(data, args=("--sandbox", "off")).start()
    try:
        with first.client() as client:
            cid = client.post("/api/conversations", json=create_payload(llm_script, workspace))
            cid = cid.json()["id"]
    finally:
        first.stop()
    second = ServerProcess(data).start()
    try:
        llm_script.reply_tool_call(
            "terminal", {"command": f"touch {outside}/escaped", "security_risk": "LOW"}
        )
        llm_script.reply_text("done")
        with second.client() as client:
            client.post(f"/api/conversations/{cid}/events", json=user_message("go", run=True))
            info, _ = wait_output(client, cid)
        assert not (outside / "escaped").exists()
        assert info["ohtui_sandbox"]["mode"] == "workspace-write"
    finally:
        second.stop()


def test_the_sandbox_is_in_force_before_an_initial_message_runs(
    server: ServerProcess, llm_script: ScriptedLLMServer, places: tuple[Path, Path]
) -> None:
    workspace, outside = places
    llm_script.reply_tool_call(
        "terminal", {"command": f"touch {outside}/escaped", "security_risk": "LOW"}
    )
    llm_script.reply_text("done")
    payload = create_payload(llm_script, workspace, initial_message=user_message("go", True))
    with server.client() as client:
        cid = client.post("/api/conversations", json=payload).json()["id"]
        wait_output(client, cid)
    assert not (outside / "escaped").exists()


def test_help_names_the_flag() -> None:
    import subprocess

    result = subprocess.run(
        [sys.executable, "-m", "ohtui", "serve", "--help"],
        capture_output=True,
        text=True,
        check=False,
        env={k: v for k, v in os.environ.items() if not k.startswith("OHTUI_")},
    )
    assert "--sandbox" in result.stdout and "--root" in result.stdout


# --- tries of the same classes, not designed around -----------------------------------


def test_what_a_payload_could_run_outside_the_sandbox_is_not_run(
    server: ServerProcess, llm_script: ScriptedLLMServer, places: tuple[Path, Path]
) -> None:
    """An MCP server, hooks, plugins, tool modules: a client may send them all; none of
    them is started by the server (they would run outside the sandbox)."""
    workspace, outside = places
    touch = ["sh", "-c", f"touch {outside}/ran"]
    payload = create_payload(llm_script, workspace)
    payload["agent"]["mcp_config"] = {
        "mcpServers": {"evil": {"command": touch[0], "args": touch[1:]}}
    }
    payload["hook_config"] = {
        "pre_tool_use": [{"matcher": "*", "hooks": [{"command": " ".join(touch)}]}]
    }
    payload["plugins"] = [{"source": str(outside)}]
    payload["tool_module_qualnames"] = {"terminal": "os"}
    llm_script.reply_tool_call("terminal", {"command": "echo hi", "security_risk": "LOW"})
    llm_script.reply_text("done")
    payload["initial_message"] = user_message("go", run=True)
    with server.client() as client:
        response = client.post("/api/conversations", json=payload)
        assert response.status_code == 201, response.text
        _, output = wait_output(client, response.json()["id"])
    assert "hi" in output
    assert not (outside / "ran").exists()


def test_the_file_editor_is_held_too(
    server: ServerProcess, llm_script: ScriptedLLMServer, places: tuple[Path, Path]
) -> None:
    workspace, outside = places
    llm_script.reply_tool_call(
        "file_editor",
        {"command": "create", "path": str(outside / "edited.txt"), "file_text": "x\n"},
    )
    llm_script.reply_text("done")
    payload = create_payload(llm_script, workspace)
    payload["agent"]["tools"] = [{"name": "file_editor", "params": {}}]
    with server.client() as client:
        cid = client.post("/api/conversations", json=payload).json()["id"]
        client.post(f"/api/conversations/{cid}/events", json=user_message("go", run=True))
        wait_output(client, cid)
    assert not (outside / "edited.txt").exists()


def test_a_shell_named_by_the_client_still_starts_in_the_sandbox(
    server: ServerProcess, llm_script: ScriptedLLMServer, places: tuple[Path, Path]
) -> None:
    workspace, outside = places
    payload = create_payload(llm_script, workspace)
    payload["agent"]["tools"] = [{"name": "terminal", "params": {"shell": "/bin/sh"}}]
    llm_script.reply_tool_call(
        "terminal", {"command": f"touch {outside}/escaped", "security_risk": "LOW"}
    )
    llm_script.reply_text("done")
    with server.client() as client:
        cid = client.post("/api/conversations", json=payload).json()["id"]
        client.post(f"/api/conversations/{cid}/events", json=user_message("go", run=True))
        wait_output(client, cid)
    assert not (outside / "escaped").exists()
