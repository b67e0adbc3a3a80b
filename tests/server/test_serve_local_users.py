"""A server that made its own key lets this user's own programs here in without it, and
nothing else: not a program in a sandbox (another mount namespace), not when a key was
given on purpose."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from server_process import ServerProcess

from ohtui.server.peer import LocalUsers, _address


@pytest.fixture(scope="module")
def keyless(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path_factory.mktemp("serve-keyless"), key=None).start()
    try:
        yield process
    finally:
        process.stop()


def test_this_users_program_needs_no_key(keyless: ServerProcess) -> None:
    response = httpx.get(keyless.url + "/api/conversations/count", timeout=30)
    assert response.status_code == 200, response.text
    assert response.json() == 0
    # The key the server keeps still works, and a wrong one is not needed here either.
    stored = (keyless.data_dir / "server-session.key").read_text().strip()
    keyed = httpx.get(
        keyless.url + "/api/conversations/count",
        headers={"X-Session-API-Key": stored},
        timeout=30,
    )
    assert keyed.status_code == 200


def test_a_browser_request_needs_the_key(keyless: ServerProcess) -> None:
    url = keyless.url + "/api/conversations/count"
    for headers in ({"Origin": keyless.url}, {"Sec-Fetch-Site": "none"}):
        assert httpx.get(url, headers=headers, timeout=30).status_code == 401, headers


def test_a_page_whose_name_resolves_here_needs_the_key(keyless: ServerProcess) -> None:
    """DNS rebinding: a web page's own name made to resolve to 127.0.0.1 reaches the server
    from this user's browser, Host naming the page; an old browser sends no Sec-Fetch-*."""
    url = keyless.url + "/api/conversations/count"
    for host in ("evil.example", "evil.example:8000", "127.0.0.1.evil.example", "10.0.0.1"):
        response = httpx.get(url, headers={"Host": host}, timeout=30)
        assert response.status_code in (401, 403), host
    for host in (
        "localhost",
        "127.0.0.1",
        f"127.0.0.1:{keyless.port}",
        f"localhost:{keyless.port}",
    ):
        assert httpx.get(url, headers={"Host": host}, timeout=30).status_code == 200, host


def test_a_program_in_a_sandbox_is_refused(keyless: ServerProcess) -> None:
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    # The network shared (as the sandbox's opt-in network does), the mounts its own.
    script = (
        "import httpx; "
        f"print(httpx.get('{keyless.url}/api/conversations/count', timeout=30).status_code)"
    )
    done = subprocess.run(
        [
            "bwrap",
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--tmpfs",
            "/tmp",
            sys.executable,
            "-c",
            script,
        ],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    if done.returncode != 0 and "bwrap" in done.stderr:
        pytest.skip(f"bubblewrap cannot start here: {done.stderr.strip()}")
    assert done.stdout.strip() == "401", done.stderr


def test_a_key_given_on_purpose_is_the_only_way_in(server: ServerProcess) -> None:
    response = httpx.get(server.url + "/api/conversations/count", timeout=30)
    assert response.status_code == 401
    assert "X-Session-API-Key" in response.json()["detail"]


def test_what_cannot_be_told_is_refused() -> None:
    users = LocalUsers()
    assert not users.admits(None, ("127.0.0.1", 80))
    assert not users.admits(("10.0.0.8", 5000), ("127.0.0.1", 80))
    assert not users.admits(("not an address", 1), ("127.0.0.1", 80))
    # A loopback connection that does not exist is not found in /proc.
    assert not users.admits(("127.0.0.1", 1), ("127.0.0.1", 2))


def test_proc_addresses_are_read_in_host_byte_order() -> None:
    if sys.byteorder != "little":
        pytest.skip("the sample is from a little-endian machine")
    address, port = _address("0100007F:1F90")
    assert (str(address), port) == ("127.0.0.1", 8080)
    mapped, _ = _address("0000000000000000FFFF00000100007F:0050")
    assert str(mapped) == "127.0.0.1"
    six, _ = _address("00000000000000000000000001000000:0050")
    assert str(six) == "::1"


def test_the_server_log_says_so(keyless: ServerProcess) -> None:
    assert "outside the sandbox, need no key" in keyless.log()
    assert Path(keyless.data_dir / "server-session.key").exists()
