"""The session key `ohtui serve` makes and keeps on this machine, and who ohtui's own client
hands it to: a server on loopback that this user runs, never a port another user took."""

from __future__ import annotations

import os
import shutil
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ohtui.settings.local_server import (
    is_loopback,
    listener_is_ours,
    local_session_key,
    read_key_file,
    stored_session_key,
)


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("OHTUI_DATA_DIR", str(tmp_path / "data"))
    return tmp_path / "data"


@pytest.fixture
def listening() -> Iterator[int]:
    """A port this user listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield int(sock.getsockname()[1])


def test_a_key_is_made_private_once(tmp_path: Path) -> None:
    path = tmp_path / "data" / "server-session.key"
    key, made = stored_session_key(path)
    assert made and len(key) >= 40
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stored_session_key(path) == (key, False)


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660, 0o602])
def test_a_key_others_could_read_or_write_is_replaced(tmp_path: Path, mode: int) -> None:
    path = tmp_path / "server-session.key"
    path.write_text("old-key-that-others-may-know\n")
    path.chmod(mode)
    assert read_key_file(path) is None
    key, made = stored_session_key(path)
    assert made and key != "old-key-that-others-may-know"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_linked_key_file_is_replaced_not_followed(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.txt"
    target.write_text("someone else's file\n")
    target.chmod(0o600)
    path = tmp_path / "server-session.key"
    path.symlink_to(target)
    assert read_key_file(path) is None
    _, made = stored_session_key(path)
    assert made and not path.is_symlink()
    assert target.read_text() == "someone else's file\n"


def test_an_empty_key_file_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / "server-session.key"
    path.write_text("  \n")
    path.chmod(0o600)
    key, made = stored_session_key(path)
    assert made and key.strip()


def test_loopback_names() -> None:
    for host in ("127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost", "LOCALHOST", "localhost."):
        assert is_loopback(host), host
    for host in ("0.0.0.0", "10.0.0.1", "localhost.evil.example", "127.0.0.1.nip.io", "::"):
        assert not is_loopback(host), host


def test_the_listener_must_be_ours(listening: int) -> None:
    assert listener_is_ours(listening)
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    assert not listener_is_ours(port)  # nothing listens there


def test_the_local_key_goes_to_our_loopback_server_only(data_dir: Path, listening: int) -> None:
    key, _ = stored_session_key(data_dir / "server-session.key")
    assert local_session_key(f"http://127.0.0.1:{listening}") == key
    assert local_session_key(f"http://localhost:{listening}/") == key
    for url in (
        f"http://10.1.2.3:{listening}",
        f"http://127.0.0.1.evil.example:{listening}",
        f"http://localhost.evil.example:{listening}",
        f"http://evil.example:{listening}@127.0.0.1:1",
        "http://127.0.0.1:1",
        "http://127.0.0.1:notaport",
        "not a url",
    ):
        assert local_session_key(url) is None, url


def test_no_key_file_no_key(data_dir: Path, listening: int) -> None:
    assert local_session_key(f"http://127.0.0.1:{listening}") is None


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to listen as another user")
def test_a_port_another_user_took_never_gets_the_key(data_dir: Path) -> None:
    stored_session_key(data_dir / "server-session.key")
    python = shutil.which("python3", path="/usr/bin:/bin") or sys.executable
    squatter = subprocess.Popen(
        [
            python,
            "-c",
            "import socket, sys, time\n"
            "s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()\n"
            "print(s.getsockname()[1], flush=True); time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        text=True,
        user=65534,
        cwd="/",
    )
    try:
        assert squatter.stdout is not None
        port = int(squatter.stdout.readline())
        time.sleep(0.05)
        assert not listener_is_ours(port)
        assert local_session_key(f"http://127.0.0.1:{port}") is None
    finally:
        squatter.kill()
        squatter.wait()
