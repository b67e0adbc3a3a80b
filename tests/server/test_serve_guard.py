"""`ohtui serve` refuses what a web page could send it: a foreign Host (DNS rebinding), a
foreign Origin, a body that is not JSON; and it is never open without a session key.

The attacker here is any page the user's browser opens: it can post a "simple" form
(`text/plain`, no preflight) to http://127.0.0.1:PORT, or rebind its own name to 127.0.0.1
and talk to the server as its own origin. Each wall is tried on its own (with the key, so
only that wall stands between the request and the server), and all of them together
(without the key, as a page would be)."""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from llm_server import ScriptedLLMServer
from serve_helpers import Frames, create_payload, user_message
from server_process import ServerProcess

KEY_FILE = "server-session.key"


@pytest.fixture(scope="module")
def keyless(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """`ohtui serve` started as a user would: no session key given."""
    process = ServerProcess(tmp_path_factory.mktemp("keyless"), key=None).start()
    try:
        yield process
    finally:
        process.stop()


def generated_key(server: ServerProcess) -> str:
    return (server.data_dir / KEY_FILE).read_text(encoding="utf-8").strip()


def keyed(server: ServerProcess) -> dict[str, str]:
    return {"X-Session-API-Key": generated_key(server)}


def attack_payload(llm: ScriptedLLMServer, workspace: Path, marker: Path) -> bytes:
    """A conversation that runs `touch marker` at once, as a page would post it."""
    llm.reply_tool_call("terminal", {"command": f"touch {marker}", "security_risk": "LOW"})
    llm.reply_text("done")
    payload = create_payload(llm, workspace, initial_message=user_message("go", run=True))
    return json.dumps(payload).encode()


def nothing_ran(llm: ScriptedLLMServer, marker: Path) -> None:
    time.sleep(1.0)  # a run would have asked the LLM by now
    assert llm.pending() == 2, "the LLM was asked: a conversation ran"
    assert not marker.exists()


# --- the attack, as a browser sends it ----------------------------------------


def browser_attacks(port: int) -> list[dict[str, str]]:
    """Headers of requests a web page can make the browser send (no key: it has none)."""
    here = f"127.0.0.1:{port}"
    return [
        # a cross-site form (enctype=text/plain) or fetch(no-cors) from evil.example
        {"Host": here, "Origin": "http://evil.example", "Content-Type": "text/plain"},
        {
            "Host": here,
            "Origin": "https://evil.example",
            "Content-Type": "text/plain;charset=UTF-8",
            "Sec-Fetch-Site": "cross-site",
        },
        {
            "Host": here,
            "Origin": "http://evil.example",
            "Content-Type": "application/x-www-form-urlencoded",
        },
        {"Host": here, "Origin": "null", "Content-Type": "text/plain"},  # sandboxed iframe
        # DNS rebinding: evil.example now resolves to 127.0.0.1, the page is same-origin
        {
            "Host": f"evil.example:{port}",
            "Origin": f"http://evil.example:{port}",
            "Content-Type": "application/json",
        },
        {"Host": f"evil.example:{port}", "Content-Type": "text/plain"},
        # a page on another local port (a dev server the attacker controls)
        {"Host": here, "Origin": "http://127.0.0.1:3000", "Content-Type": "text/plain"},
    ]


@pytest.mark.parametrize("attack", range(7))
def test_a_web_page_cannot_start_a_conversation(
    keyless: ServerProcess, llm_script: ScriptedLLMServer, tmp_path: Path, attack: int
) -> None:
    marker = tmp_path / "pwned"
    headers = browser_attacks(keyless.port)[attack]
    body = attack_payload(llm_script, tmp_path, marker)
    response = httpx.post(keyless.url + "/api/conversations", content=body, headers=headers)
    assert response.status_code in (401, 403, 415), response.text
    assert "detail" in response.json()
    nothing_ran(llm_script, marker)


BROWSER = {"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "cors"}
"""What a browser adds to a page's request: a page needs the key, even this user's."""


def test_the_server_is_never_open(keyless: ServerProcess, llm_script: ScriptedLLMServer) -> None:
    """Without a key given, one is made: a request without it is refused unless it comes
    from this user's own program here (test_serve_local_users.py), and a browser's never
    counts as one."""
    response = httpx.get(keyless.url + "/api/conversations/count", headers=BROWSER, timeout=120)
    assert response.status_code == 401
    assert "X-Session-API-Key" in response.json()["detail"]
    with_key = httpx.get(keyless.url + "/api/conversations/count", headers=keyed(keyless))
    assert with_key.status_code == 200


# --- each wall on its own (the key given) ---------------------------------------------


@pytest.mark.parametrize(
    "host",
    [
        "evil.example",
        "evil.example:{port}",
        "localhost.evil.example:{port}",
        "127.0.0.1.evil.example:{port}",
        "127.0.0.1:{port}@evil.example",
        "evil.example#@127.0.0.1:{port}",
        "127.0.0.1:{port}.evil.example",
        "",
    ],
)
def test_a_foreign_host_is_refused(keyless: ServerProcess, host: str) -> None:
    headers = {**keyed(keyless), "Host": host.format(port=keyless.port)}
    for path in ("/api/conversations/count", "/alive", "/server_info"):
        response = httpx.get(keyless.url + path, headers=headers)
        assert response.status_code in (400, 403), (path, host, response.text)
        if response.status_code == 403:
            assert "Host" in response.json()["detail"]


@pytest.mark.parametrize(
    "host",
    ["127.0.0.1:{port}", "localhost:{port}", "LOCALHOST:{port}", "localhost.:{port}", "127.0.0.1"],
)
def test_the_names_it_answers_as(keyless: ServerProcess, host: str) -> None:
    headers = {**keyed(keyless), "Host": host.format(port=keyless.port)}
    response = httpx.get(keyless.url + "/api/conversations/count", headers=headers, timeout=120)
    assert response.status_code == 200, response.text


@pytest.mark.parametrize(
    "origin",
    [
        "http://evil.example",
        "null",
        "http://localhost:1",
        "http://127.0.0.1:{other}",
        "https://127.0.0.1:{port}.evil.example",
        "file://",
        "http://127.0.0.1:{port}, http://evil.example",
    ],
)
def test_a_foreign_origin_is_refused(keyless: ServerProcess, origin: str) -> None:
    origin = origin.format(port=keyless.port, other=keyless.port + 1)
    headers = {**keyed(keyless), "Origin": origin}
    response = httpx.get(keyless.url + "/api/conversations/count", headers=headers)
    assert response.status_code == 403, (origin, response.text)
    assert "Origin" in response.json()["detail"]


def test_the_same_origin_is_fine(keyless: ServerProcess) -> None:
    headers = {**keyed(keyless), "Origin": keyless.url}
    response = httpx.get(keyless.url + "/api/conversations/count", headers=headers, timeout=120)
    assert response.status_code == 200


@pytest.mark.parametrize("site", ["cross-site", "same-site"])
def test_a_cross_site_fetch_without_origin_is_refused(keyless: ServerProcess, site: str) -> None:
    headers = {**keyed(keyless), "Sec-Fetch-Site": site}
    response = httpx.get(keyless.url + "/api/conversations/count", headers=headers)
    assert response.status_code == 403


@pytest.mark.parametrize(
    "content_type",
    [
        "text/plain",
        "text/plain; charset=utf-8",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "text/json",
        "application/jsonx",
        "application/json-patch+json",
        "application/json, text/plain",
        "",
        None,
    ],
)
def test_only_json_bodies(
    keyless: ServerProcess, llm_script: ScriptedLLMServer, tmp_path: Path, content_type: str | None
) -> None:
    marker = tmp_path / "pwned"
    body = attack_payload(llm_script, tmp_path, marker)
    headers = keyed(keyless)
    if content_type is not None:
        headers["Content-Type"] = content_type
    response = httpx.post(keyless.url + "/api/conversations", content=body, headers=headers)
    assert response.status_code == 415, (content_type, response.text)
    assert "application/json" in response.json()["detail"]
    nothing_ran(llm_script, marker)


@pytest.mark.parametrize(
    "content_type", ["application/json", "Application/JSON; charset=UTF-8", "application/json;"]
)
def test_json_in_any_spelling_is_accepted(
    keyless: ServerProcess, llm_script: ScriptedLLMServer, tmp_path: Path, content_type: str
) -> None:
    body = json.dumps(create_payload(llm_script, tmp_path)).encode()
    headers = {**keyed(keyless), "Content-Type": content_type}
    response = httpx.post(
        keyless.url + "/api/conversations", content=body, headers=headers, timeout=120
    )
    assert response.status_code == 201, response.text


def test_a_post_without_a_body_needs_no_content_type(
    keyless: ServerProcess, llm_script: ScriptedLLMServer, tmp_path: Path
) -> None:
    """The OpenHands client posts /run, /pause and /interrupt bare."""
    with httpx.Client(base_url=keyless.url, headers=keyed(keyless), timeout=120) as client:
        cid = client.post("/api/conversations", json=create_payload(llm_script, tmp_path)).json()[
            "id"
        ]
        assert client.post(f"/api/conversations/{cid}/pause").status_code == 200


def test_a_compressed_body_is_refused_unread(keyless: ServerProcess) -> None:
    """A gzip bomb: 1 MB that would inflate to a gigabyte. Nothing decodes it."""
    import gzip

    # A gzip body may hold many members; one member of 1 MiB of spaces, repeated 1024 times.
    member = gzip.compress(b" " * (1 << 20), compresslevel=9)
    bomb = gzip.compress(b"[") + member * 1024 + gzip.compress(b"]")
    assert len(bomb) < 2 << 20
    headers = {**keyed(keyless), "Content-Type": "application/json", "Content-Encoding": "gzip"}
    response = httpx.post(keyless.url + "/api/conversations", content=bomb, headers=headers)
    assert response.status_code == 415
    assert "Content-Encoding" in response.json()["detail"]


# --- the event socket -----------------------------------------------------------------


def socket_close(server: ServerProcess, cid: str, headers: dict[str, str]) -> Any:
    """How the upgrade ends: the refused status, or the first frame."""
    from websockets.exceptions import InvalidStatus
    from websockets.sync.client import connect

    try:
        with connect(
            f"{server.ws_url}/sockets/events/{cid}", additional_headers=headers, open_timeout=10
        ) as socket:
            socket.send(json.dumps({"type": "auth", "session_api_key": generated_key(server)}))
            return json.loads(socket.recv(timeout=10))
    except InvalidStatus as exc:
        return exc.response.status_code


def raw_upgrade(server: ServerProcess, cid: str, headers: dict[str, str]) -> tuple[int, str]:
    """The status and body of a WebSocket upgrade sent with exactly these headers (a
    client library would add its own Host)."""
    import socket

    lines = [
        f"GET /sockets/events/{cid} HTTP/1.1",
        *(f"{name}: {value}" for name, value in headers.items()),
        "Upgrade: websocket",
        "Connection: Upgrade",
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
        "Sec-WebSocket-Version: 13",
    ]
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        answer = b""
        while b"\r\n\r\n" not in answer or (
            not answer.startswith(b"HTTP/1.1 101") and not answer.rstrip().endswith(b"}")
        ):
            data = sock.recv(65536)
            if not data:
                break
            answer += data
    status = int(answer.split(b" ", 2)[1])
    return status, answer.split(b"\r\n\r\n", 1)[1].decode(errors="replace")


@pytest.fixture(scope="module")
def socket_conversation(keyless: ServerProcess, module_llm: ScriptedLLMServer) -> str:
    workspace = keyless.data_dir / "ws"
    workspace.mkdir(exist_ok=True)
    response = httpx.post(
        keyless.url + "/api/conversations",
        json=create_payload(module_llm, workspace),
        headers=keyed(keyless),
        timeout=120,
    )
    return str(response.json()["id"])


@pytest.mark.parametrize(
    "headers",
    [
        {"Host": "127.0.0.1:{port}", "Origin": "http://evil.example"},
        {"Host": "127.0.0.1:{port}", "Origin": "null"},
        {"Host": "127.0.0.1:{port}", "Origin": "http://localhost:{port}"},
        {"Host": "evil.example"},
        {"Host": "evil.example:{port}", "Origin": "http://evil.example:{port}"},
    ],
)
def test_a_web_page_cannot_open_the_event_socket(
    keyless: ServerProcess, socket_conversation: str, headers: dict[str, str]
) -> None:
    headers = {k: v.format(port=keyless.port) for k, v in headers.items()}
    status, body = raw_upgrade(keyless, socket_conversation, headers)
    assert status == 403, body
    assert "Origin" in body or "Host" in body
    plain = {"Host": f"127.0.0.1:{keyless.port}"}
    assert raw_upgrade(keyless, socket_conversation, plain)[0] == 101


def test_the_event_socket_without_origin_works(
    keyless: ServerProcess, socket_conversation: str
) -> None:
    first = socket_close(keyless, socket_conversation, {})
    assert first["key"] == "full_state"
    same = socket_close(keyless, socket_conversation, {"Origin": keyless.url})
    assert same["key"] == "full_state"


def test_the_socket_without_the_key_is_refused(
    keyless: ServerProcess, socket_conversation: str
) -> None:
    frames = Frames(f"{keyless.ws_url}/sockets/events/{socket_conversation}", None, headers=BROWSER)
    frames.send(user_message("hi"))
    assert frames.wait_closed() == 4001


# --- the generated key ----------------------------------------------------------------


def test_the_key_is_made_once_private_and_said_where(keyless: ServerProcess) -> None:
    path = keyless.data_dir / KEY_FILE
    mode = stat.S_IMODE(path.stat().st_mode)
    assert mode == 0o600, oct(mode)
    assert path.stat().st_uid == os.getuid()
    key = generated_key(keyless)
    assert len(key) >= 32
    log = keyless.log()
    assert str(path) in log
    assert "X-Session-API-Key" in log
    assert key not in log


def test_the_same_key_after_a_restart(tmp_path: Path) -> None:
    first = ServerProcess(tmp_path, key=None).start()
    first.stop()
    key = (tmp_path / KEY_FILE).read_text().strip()
    second = ServerProcess(tmp_path, key=None).start()
    try:
        response = httpx.get(
            second.url + "/api/conversations/count",
            headers={"X-Session-API-Key": key},
            timeout=120,
        )
        assert response.status_code == 200
    finally:
        second.stop()


def test_a_key_file_others_can_read_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / KEY_FILE
    path.write_text("leaked-key-0123456789abcdef0123456789\n")
    path.chmod(0o644)
    server = ServerProcess(tmp_path, key=None).start()
    try:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        key = path.read_text().strip()
        assert key != "leaked-key-0123456789abcdef0123456789"
        leaked = {"X-Session-API-Key": "leaked-key-0123456789abcdef0123456789", **BROWSER}
        assert httpx.get(server.url + "/api/conversations/count", headers=leaked).status_code == 401
    finally:
        server.stop()


def test_a_given_key_writes_no_file(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path).start()  # OHTUI_SERVER_API_KEY set
    try:
        assert not (tmp_path / KEY_FILE).exists()
        assert "OHTUI_SERVER_API_KEY" in server.log()
    finally:
        server.stop()


def run_client(server: ServerProcess, llm: ScriptedLLMServer, home: Path, data_dir: Path) -> Any:
    """`ohtui -p` against `server`, with no key given and no keyring."""
    import subprocess
    import sys

    workspace = home / "ws"
    workspace.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("OHTUI_")}
    env.update(
        OHTUI_DATA_DIR=str(data_dir),
        OHTUI_CONFIG=str(home / "config.toml"),
        OHTUI_LOG_DIR=str(home / "logs"),
        OHTUI_MODEL="openai/test-model",
        OHTUI_BASE_URL=llm.base_url,
        OHTUI_API_KEY="sk-test",
        DBUS_SESSION_BUS_ADDRESS="unix:path=/nonexistent/ohtui-test-bus",
        LITELLM_LOCAL_MODEL_COST_MAP="True",
    )
    return subprocess.run(
        [sys.executable, "-m", "ohtui", "-p", "Say hello", "--server", server.url],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def test_ohtui_on_this_machine_finds_the_key(
    keyless: ServerProcess, llm_script: ScriptedLLMServer, tmp_path: Path
) -> None:
    """`ohtui --server http://127.0.0.1:PORT` still just works for the same user."""
    llm_script.reply_text("Hello from the served agent.")
    result = run_client(keyless, llm_script, tmp_path, keyless.data_dir)
    assert result.returncode == 0, result.stderr
    assert "Hello from the served agent." in result.stdout


def test_ohtui_without_the_key_file_is_let_in_as_this_user(
    keyless: ServerProcess, llm_script: ScriptedLLMServer, tmp_path: Path
) -> None:
    """No key file to read (another data dir): this user's own program is let in anyway."""
    llm_script.reply_text("Hello without the key file.")
    result = run_client(keyless, llm_script, tmp_path, tmp_path / "other-data")
    assert result.returncode == 0, result.stderr
    assert "Hello without the key file." in result.stdout


# --- tries of the same classes, not designed around -----------------------------------


@pytest.mark.parametrize(
    ("host", "allowed"),
    [
        ("0.0.0.0:{port}", False),  # "0.0.0.0 day": browsers send it to loopback
        ("2130706433:{port}", False),  # 127.0.0.1 as one number
        ("127.1:{port}", False),
        ("0x7f.0.0.1:{port}", False),
        ("[::ffff:127.0.0.1]:{port}", True),  # a literal address is never a rebound name
        ("[::1]:{port}", True),
        ("LocalHost.:{port}", True),
        ("127.0.0.1 :{port}", False),
        ("127.0.0.1:{port}:{port}", False),
        ("127.0.0.1:99999", False),
    ],
)
def test_more_hosts(keyless: ServerProcess, host: str, allowed: bool) -> None:
    headers = {**keyed(keyless), "Host": host.format(port=keyless.port)}
    response = httpx.get(keyless.url + "/api/conversations/count", headers=headers, timeout=120)
    assert (response.status_code == 200) is allowed, (host, response.text)


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        ("HTTP://127.0.0.1:{port}", True),  # the same origin, however spelled
        ("http://localhost:{port}", False),  # another origin, though the same server
        ("http://127.0.0.1:{port}/", False),  # browsers send no path: not an origin
        ("ws://127.0.0.1:{port}", True),
        ("http://user@127.0.0.1:{port}", False),
        ("chrome-extension://abcdef", False),
    ],
)
def test_more_origins(keyless: ServerProcess, origin: str, allowed: bool) -> None:
    headers = {**keyed(keyless), "Origin": origin.format(port=keyless.port)}
    response = httpx.get(keyless.url + "/api/conversations/count", headers=headers, timeout=120)
    assert (response.status_code == 200) is allowed, (origin, response.text)


def test_two_origin_headers_are_refused(keyless: ServerProcess) -> None:
    headers = [
        ("X-Session-API-Key", generated_key(keyless)),
        ("Origin", keyless.url),
        ("Origin", "http://evil.example"),
    ]
    response = httpx.get(keyless.url + "/api/conversations/count", headers=headers)
    assert response.status_code == 403


def test_a_preflight_gets_no_cors_grant(keyless: ServerProcess) -> None:
    response = httpx.options(
        keyless.url + "/api/conversations",
        headers={
            "Origin": "http://evil.example",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type,x-session-api-key",
        },
    )
    assert response.status_code == 403
    assert not any(name.lower().startswith("access-control-") for name in response.headers)


def test_an_empty_form_post_to_run_is_refused(
    keyless: ServerProcess, socket_conversation: str
) -> None:
    """A form with no fields still says text/plain: no run of a known conversation."""
    response = httpx.post(
        f"{keyless.url}/api/conversations/{socket_conversation}/run",
        headers={**keyed(keyless), "Content-Type": "text/plain", "Content-Length": "0"},
    )
    assert response.status_code == 415


def test_a_cross_site_socket_without_origin_is_refused(
    keyless: ServerProcess, socket_conversation: str
) -> None:
    headers = {"Host": f"127.0.0.1:{keyless.port}", "Sec-Fetch-Site": "cross-site"}
    assert raw_upgrade(keyless, socket_conversation, headers)[0] == 403


def test_allow_host_and_a_wildcard_bind(tmp_path: Path) -> None:
    """Bound to every address (a key given), the server answers as any address, this
    machine's name and the names --allow-host adds; never as a foreign name."""
    import socket

    server = ServerProcess(
        tmp_path, args=("--host", "0.0.0.0", "--allow-host", "devbox.example")
    ).start()
    try:
        port = server.port
        for host, status in (
            (f"devbox.example:{port}", 200),
            (f"DEVBOX.example.:{port}", 200),
            (f"{socket.gethostname()}:{port}", 200),
            (f"192.0.2.7:{port}", 200),
            (f"evil.example:{port}", 403),
            (f"devbox.example.evil.example:{port}", 403),
        ):
            response = httpx.get(
                server.url + "/api/conversations/count",
                headers={**server.headers, "Host": host},
                timeout=120,
            )
            assert response.status_code == status, (host, response.text)
    finally:
        server.stop()


SQUATTER = """
import socket, sys
server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", int(sys.argv[1])))
server.listen()
print("listening", flush=True)
while True:
    conn, _ = server.accept()
    conn.settimeout(2)
    try:
        with open(sys.argv[2], "ab") as log:
            log.write(conn.recv(65536))
    except OSError:
        pass
    conn.close()
"""


SYSTEM_PYTHON = "/usr/bin/python3"
"""One another user may run (the test's own may live in root's home)."""


@pytest.mark.skipif(
    os.getuid() != 0 or not os.access(SYSTEM_PYTHON, os.X_OK),
    reason="another user's listener needs root and /usr/bin/python3 to start",
)
def test_a_port_another_user_took_never_gets_the_key(
    llm_script: ScriptedLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The user's server stops while a client is attached; another user's program takes
    its port. The client's reconnects and requests must not hand it the key."""
    import subprocess

    from ohtui.opening import Target, start
    from ohtui.sdk.conversation.impl.rest import RemoteConnectionError
    from ohtui.settings.profile import Profile

    server = ServerProcess(tmp_path / "data", key=None).start()
    monkeypatch.setenv("OHTUI_DATA_DIR", str(server.data_dir))
    config = tmp_path / "client.toml"
    config.write_text(
        f'[llm]\nmodel = "openai/test-model"\nbase_url = "{llm_script.base_url}"\n'
        f'[server]\nurl = "{server.url}"\n',
        encoding="utf-8",
    )
    workspace = tmp_path / "ws"
    workspace.mkdir()
    profile = Profile(config, {}, use_keyring=False, environ={}).load()
    assert profile.server_key(server.url).source == "local server"
    opened = start(profile, workspace, tmp_path / "client-data", Target())
    conversation = opened.conversation
    key = generated_key(server)
    import shutil
    import tempfile

    squat = Path(tempfile.mkdtemp(prefix="ohtui-squat-"))  # where that user can write
    squat.chmod(0o777)
    loot = squat / "received"
    squatter = None
    try:
        server.stop()
        nobody = 65534
        squatter = subprocess.Popen(
            [SYSTEM_PYTHON, "-c", SQUATTER, str(server.port), str(loot)],
            stdout=subprocess.PIPE,
            user=nobody,
            group=nobody,
        )
        assert squatter.stdout is not None and squatter.stdout.readline() == b"listening\n"
        with pytest.raises(RemoteConnectionError) as refused:
            conversation.send_message("are you there?")
        time.sleep(3)  # the event socket's reconnects (backoff from 0.5 s in tests)
    finally:
        conversation.close()
        if squatter is not None:
            squatter.kill()
            squatter.wait(5)
    received = loot.read_bytes() if loot.exists() else b""
    shutil.rmtree(squat, ignore_errors=True)
    assert key.encode() not in received, received[:300]
    assert "nothing of yours listens on port" in str(refused.value)
