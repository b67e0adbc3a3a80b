"""`ohtui serve` on the command line: refused settings, help, what it imports."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from server_process import ServerProcess

from ohtui.server.auth import AuthConfigError, check_bind, is_loopback, session_key

HEAVY = ("starlette", "uvicorn", "websockets")


def run_ohtui(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("OHTUI_")}
    return subprocess.run(
        [sys.executable, "-m", "ohtui", *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
        env={**base, **(env or {})},
    )


def test_non_loopback_bind_without_a_key_is_refused(tmp_path: Path) -> None:
    result = run_ohtui("serve", "--host", "0.0.0.0", env={"OHTUI_DATA_DIR": str(tmp_path)})
    assert result.returncode == 2
    assert "refusing to listen on 0.0.0.0 without a session API key" in result.stderr
    assert "OHTUI_SERVER_API_KEY" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "conversations").exists()  # refused before touching anything


def test_api_key_env_must_be_set(tmp_path: Path) -> None:
    result = run_ohtui("serve", "--api-key-env", "MY_KEY", env={"OHTUI_DATA_DIR": str(tmp_path)})
    assert result.returncode == 2
    assert "--api-key-env names MY_KEY, but MY_KEY is not set" in result.stderr


def test_key_from_the_named_variable(tmp_path: Path) -> None:
    server = ServerProcess(
        tmp_path, key=None, args=("--api-key-env", "MY_KEY"), env={"MY_KEY": "named-key-123"}
    ).start()
    try:
        url = server.url + "/api/conversations/count"
        assert httpx.get(url).status_code == 401
        keyed = httpx.get(url, headers={"X-Session-API-Key": "named-key-123"}, timeout=120)
        assert keyed.json() == 0  # (the first /api answer waits for the engine to load)
    finally:
        server.stop()


def test_loopback_without_a_key_makes_one(tmp_path: Path) -> None:
    """Never open: the key made on first start is the one it asks for."""
    server = ServerProcess(tmp_path, key=None).start()
    try:
        url = server.url + "/api/conversations/count"
        browser = {"Origin": server.url}  # a page: never let in as this user's program
        assert httpx.get(url, headers=browser, timeout=120).status_code == 401
        key = (tmp_path / "server-session.key").read_text().strip()
        assert httpx.get(url, headers={"X-Session-API-Key": key}).json() == 0
    finally:
        server.stop()


def test_bind_rules() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.2")
    check_bind("0.0.0.0", "a-key", "K")  # a key makes any bind fine
    with pytest.raises(AuthConfigError):
        check_bind("::", None, "K")
    assert session_key({"OHTUI_SERVER_API_KEY": " k "}, None) == "k"
    assert session_key({}, None) is None


def test_serve_help_and_the_main_help() -> None:
    serve_help = run_ohtui("serve", "--help")
    assert serve_help.returncode == 0
    for option in ("--host", "--port", "--api-key-env", "OHTUI_SERVER_API_KEY"):
        assert option in serve_help.stdout
    main_help = run_ohtui("--help")
    assert "ohtui serve" in main_help.stdout


@pytest.mark.parametrize(
    "code",
    [
        "import ohtui.cli, sys; sys.argv = ['ohtui', '--help']\ntry:\n ohtui.cli.main()\n"
        "except SystemExit:\n pass",
        "import ohtui.sdk",
        "from ohtui.sdk import LLM, Agent, Conversation, Tool",
    ],
)
def test_server_libraries_are_not_imported_elsewhere(code: str) -> None:
    probe = (
        code
        + "\nimport sys\nprint(sorted(m for m in sys.modules if m.split('.')[0] in "
        + repr(HEAVY)
        + "))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], check=False, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]"


def test_ready_within_a_second_of_cpu(tmp_path: Path) -> None:
    """/ready answers once the server listens, before the engine loads: well under a second
    of CPU (wall time depends on the machine's load; bench/server.py prints it). Bytecode
    cached first, as after a user's first run."""
    import ohtui

    package = str(Path(ohtui.__file__).parent)
    subprocess.run([sys.executable, "-m", "compileall", "-q", package], check=True)
    server = ServerProcess(tmp_path).start()
    try:
        assert server.cpu_seconds() < 1.0
    finally:
        server.stop()


def test_a_port_in_use_is_a_sentence(tmp_path: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_ohtui("serve", "--port", str(port), env={"OHTUI_DATA_DIR": str(tmp_path)})
    assert result.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}: Address already in use" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_request_path_cannot_drive_the_server_s_terminal(tmp_path: Path) -> None:
    """Any client (a web page too) chooses the path the server logs: its escapes are shown,
    never written to the terminal as they are."""
    server = ServerProcess(tmp_path).start()
    try:
        for path in ("/api/%1b]0;pwned%07", "/%1b[2J%1b]52;c;eA==%07", "/%c2%9b2J%e2%80%ae"):
            httpx.get(server.url + path, timeout=120)
            httpx.get(server.url + path, headers=server.headers, timeout=120)
    finally:
        server.stop()
    log = server.log_path.read_bytes().decode("utf-8")
    assert "/api/␛]0;pwned␇" in log and "/␛[2J␛]52;c;eA==␇" in log
    assert not {"\x1b", "\x07", "\x9b", "\u202e"} & set(log)
