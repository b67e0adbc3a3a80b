"""`ohtui -p` against an agent server (`--server`, or [server] url): the fake server replays
a recorded OpenHands turn; nothing is stored locally."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_agent_server import FakeAgentServer
from llm_server import ScriptedLLMServer

from ohtui.cli import main


@pytest.fixture
def fake() -> Iterator[FakeAgentServer]:
    with FakeAgentServer() as server:
        server.frame_delay = 0.0
        yield server


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_keyring: None) -> Path:
    for name in ("OHTUI_MODEL", "OHTUI_BASE_URL", "OPENAI_API_KEY", "OHTUI_CONFIRM"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OHTUI_CONFIG", str(tmp_path / "config.toml"))
    monkeypatch.setenv("OHTUI_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("OHTUI_LOG_DIR", str(tmp_path / "logs"))
    monkeypatch.setenv("OHTUI_MODEL", "openai/test-model")
    monkeypatch.setenv("OHTUI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OHTUI_API_KEY", "sk-test")
    monkeypatch.setenv("OHTUI_SERVER_API_KEY", "fake-key")
    workspace = tmp_path / "project"
    workspace.mkdir()
    monkeypatch.chdir(workspace)
    return tmp_path


def test_headless_run_on_a_server(
    fake: FakeAgentServer, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["-p", "Say hello", "--server", fake.url])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out == "Hello from the agent.\n"
    sent = [b for m, p, b in fake.requests if p.endswith("/events")]
    assert sent[0]["content"][0]["text"] == "Say hello"
    created = next(b for m, p, b in fake.requests if p == "/api/conversations")
    assert created["workspace"]["working_dir"] == str(home / "project")
    assert created["agent"]["llm"]["api_key"] == "sk-test"
    assert not (home / "data" / "conversations").exists()  # kept on the server only


def test_json_lines_from_a_server(
    fake: FakeAgentServer, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (home / "config.toml").write_text(f'[server]\nurl = "{fake.url}"\n', encoding="utf-8")
    code = main(["-p", "Say hello", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    kinds = [json.loads(line)["kind"] for line in out.splitlines()]
    assert kinds[0] == "HeadlessRun"
    assert "MessageEvent" in kinds


def test_a_refused_key_is_one_sentence(
    fake: FakeAgentServer,
    home: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OHTUI_SERVER_API_KEY", "wrong")
    code = main(["-p", "Say hello", "--server", fake.url])
    out, err = capsys.readouterr()
    assert code == 3  # configuration
    assert out == ""
    assert f"The agent server at 127.0.0.1:{fake.port} refused the session API key" in err
    assert "Traceback" not in err


def test_an_unreachable_server_is_one_sentence(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from peer_agent_server import free_port

    port = free_port()
    code = main(["-p", "Say hello", "--server", f"127.0.0.1:{port}"])
    out, err = capsys.readouterr()
    assert out == ""
    assert code == 3
    assert err.startswith(f"ohtui: Cannot reach the agent server at 127.0.0.1:{port}")
    assert "unexpected" not in err


def test_undo_on_a_server_restores_its_workspace(
    home: Path,
    llm_server: ScriptedLLMServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from server.server_process import TEST_KEY, ServerProcess

    monkeypatch.setenv("OHTUI_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("OHTUI_SERVER_API_KEY", TEST_KEY)
    served = ServerProcess(home / "serve").start()
    try:
        url = served.url
        write = {"command": "echo x > a.txt", "security_risk": "LOW"}
        llm_server.reply_tool_call("terminal", write)
        llm_server.reply_tool_call("finish", {"message": "Wrote it."})
        assert main(["-p", "write a.txt", "--server", url]) == 0, capsys.readouterr().err
        capsys.readouterr()
        assert (home / "project" / "a.txt").read_text() == "x\n"

        assert main(["--checkpoints", "--continue", "--server", url]) == 0
        out, err = capsys.readouterr()
        assert out.startswith("* ") and out.rstrip().endswith("echo x > a.txt"), err

        assert main(["--undo", "--continue", "--server", url]) == 0
        out, err = capsys.readouterr()
        assert out.splitlines()[0] == "deleted   a.txt", err
        assert "before `echo x > a.txt`" in out
        assert not (home / "project" / "a.txt").exists()

        assert main(["--undo", "--continue", "--server", url, "--json"]) == 7
        out, err = capsys.readouterr()
        assert out == "" and "nothing to undo" in err
    finally:
        served.stop()


def test_undo_on_a_server_that_keeps_no_checkpoints_exits_3(
    fake: FakeAgentServer, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["-p", "Say hello", "--server", fake.url]) == 0
    capsys.readouterr()
    code = main(["--undo", "--continue", "--server", fake.url])
    out, err = capsys.readouterr()
    assert code == 3 and out == ""
    assert "cannot undo: this server keeps no checkpoints" in err
    assert "Traceback" not in err
