"""Fixtures for `ohtui serve` tests: a server subprocess and OpenHands-shaped payloads."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from llm_server import ScriptedLLMServer
from server_process import ServerProcess


@pytest.fixture(scope="module")
def module_llm() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as server:
        yield server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path_factory.mktemp("serve")).start()
    try:
        yield process
    finally:
        process.stop()


@pytest.fixture
def llm_script(module_llm: ScriptedLLMServer) -> Iterator[ScriptedLLMServer]:
    """The module's scripted LLM, its script emptied after each test."""
    yield module_llm
    with module_llm._lock:
        module_llm._script.clear()
    module_llm.set_default(None)
