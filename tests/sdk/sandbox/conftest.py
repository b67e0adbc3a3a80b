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
