"""Fixtures for the `ohtui acp` tests: a home of its own and the scripted model."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp_client import environment
from llm_server import ScriptedLLMServer


@pytest.fixture
def home(tmp_path: Path, no_keyring: None) -> Path:
    """Config, data and logs under tmp, and a project folder to work in."""
    (tmp_path / "config.toml").write_text('[ui]\ntheme = "nord"\n', encoding="utf-8")
    (tmp_path / "project").mkdir()
    return tmp_path


@pytest.fixture
def env(home: Path, llm_server: ScriptedLLMServer) -> dict[str, str]:
    """The environment `ohtui acp` runs in (no keyring, the scripted model)."""
    return environment(home, llm_server.base_url)
