"""Fixtures for the sandbox's walls: a scratch tree outside /tmp (the sandbox replaces /tmp
with a private one, so what must stay out of reach has to live elsewhere), a fake home and
a project in it, and a shell in the sandbox."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from sandbox_shell import scratch_root
from sandboxed_bash import require_bwrap

SCRATCH = scratch_root()


@pytest.fixture(autouse=True)
def bwrap() -> None:
    require_bwrap()


@pytest.fixture
def outside_tmp() -> Iterator[Path]:
    """A scratch directory outside /tmp, short enough for socket paths (108 bytes)."""
    SCRATCH.mkdir(parents=True, exist_ok=True)
    path = Path(tempfile.mkdtemp(dir=SCRATCH, prefix="w"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def home(outside_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = outside_tmp / "home"
    path.mkdir()
    monkeypatch.setenv("HOME", str(path))
    return path


@pytest.fixture
def project(home: Path) -> Path:
    path = home / "app"
    path.mkdir()
    return path


@pytest.fixture
def socket_gone_before_start(outside_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The next sandbox is made to cover a socket that is gone by the time bubblewrap
    starts (listed, then removed: another program's); later ones list only what is there.
    Returns the list of listings made, one entry each."""
    from ohtui.sdk.sandbox import sockets

    ghost = str(outside_tmp / "gone.sock")
    listed, is_socket = sockets.listening_paths, sockets.is_socket
    calls: list[int] = []

    def listening_paths() -> list[str]:
        calls.append(1)
        return [*listed(), ghost] if len(calls) == 1 else list(listed())

    monkeypatch.setattr(sockets, "listening_paths", listening_paths)
    monkeypatch.setattr(sockets, "is_socket", lambda path: path == ghost or is_socket(path))
    return calls
