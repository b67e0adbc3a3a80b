"""Shared pytest fixtures: the scripted LLM server and engine objects pointed at it."""

from __future__ import annotations

import gc
import os
import signal
from collections.abc import Iterator
from pathlib import Path

# litellm must never reach the network for its price list, whichever test imports it first.
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

import pytest
from llm_server import ScriptedLLMServer
from secret_service import SecretService, private_keyring, redetect

from ohtui.sdk import LLM


def pytest_configure(config: pytest.Config) -> None:
    """The processes the tests start see a hangup as a terminal delivers it. Run under
    `nohup` (SIGHUP ignored, and inherited by every process started), the suite failed its
    hangup tests: ohtui, `ohtui serve` and `ohtui -p` started so keep running through a
    hangup, as they must (tests/server/test_serve_signals.py sets that up on purpose)."""
    if signal.getsignal(signal.SIGHUP) is signal.SIG_IGN:
        signal.signal(signal.SIGHUP, signal.SIG_DFL)


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collecting imported (litellm, Textual, the engine, every test module) lives as long
    as this process: frozen out of the garbage collector's full passes, as ohtui's programs
    freeze litellm's import (`ohtui.long_lived`). Each full pass walked ~450,000 objects of
    it (~300 ms): a tenth of the CPU of the engine's tests."""
    gc.collect()
    gc.freeze()


@pytest.fixture
def llm_server() -> Iterator[ScriptedLLMServer]:
    """A scripted OpenAI-compatible LLM server on 127.0.0.1 (a fresh port per test)."""
    server = ScriptedLLMServer()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def llm(llm_server: ScriptedLLMServer) -> LLM:
    """An LLM talking to the scripted server through litellm, without retries."""
    return LLM(
        model="openai/test-model",
        base_url=llm_server.base_url,
        api_key="sk-test",
        num_retries=0,
        timeout=10,
    )


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An empty workspace directory."""
    path = tmp_path / "workspace"
    path.mkdir()
    return path


@pytest.fixture
def persistence_dir(tmp_path: Path) -> Path:
    """A base directory for saved conversations (created on first use)."""
    return tmp_path / "conversations"


@pytest.fixture
def os_keyring(monkeypatch: pytest.MonkeyPatch) -> Iterator[SecretService]:
    """The OS keyring, for this test: a private gnome-keyring on a private D-Bus bus."""
    with private_keyring(monkeypatch) as service:
        yield service


@pytest.fixture
def no_keyring(monkeypatch: pytest.MonkeyPatch) -> None:
    """No OS keyring at all (as on a headless server without a Secret Service)."""
    redetect(monkeypatch, {"DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/ohtui-test-bus"})
