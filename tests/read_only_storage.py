"""A conversations folder nobody may write, for real: the command runs in bubblewrap with the
folder bound read-only (root, who runs the tests here, ignores file permissions)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from sandboxed_bash import require_bwrap

from ohtui.sdk import LLM, Agent, LocalConversation, Tool

TESTS = Path(__file__).resolve().parent


def save_conversation(conversations: Path, workspace: Path, text: str) -> str:
    """Save a conversation with one user message; its id."""
    llm = LLM(model="openai/test-model", api_key="sk-test", base_url="http://127.0.0.1:9/v1")
    conversation = LocalConversation(
        agent=Agent(llm=llm, tools=[Tool(name="terminal")]),
        workspace=workspace,
        persistence_dir=conversations,
        visualizer=None,
    )
    conversation.send_message(text)
    conversation_id = conversation.id.hex
    conversation.close()
    return conversation_id


def run_read_only(
    folder: Path, args: list[str], env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run `args` with `folder` read-only (everything else as it is)."""
    bwrap = require_bwrap()
    command = [bwrap, "--bind", "/", "/", "--ro-bind", str(folder), str(folder)]
    command += ["--dev", "/dev", "--proc", "/proc", *args]
    environment = {**os.environ, "PYTHONPATH": str(TESTS), **(env or {})}
    return subprocess.run(
        command, capture_output=True, text=True, env=environment, timeout=timeout, check=False
    )


def python(*args: str) -> list[str]:
    """This interpreter with `args`."""
    return [sys.executable, *args]
