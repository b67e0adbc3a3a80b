"""Persistent memory: the MEMORY.md indexes read at a conversation's start, and the prompt."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ohtui.sdk import LLM, Agent, AgentContext, LocalConversation, SystemPromptEvent
from ohtui.sdk.context import load_memory
from ohtui.sdk.context.memory import MEMORY_INDEX_RELPATH, TRUNCATED


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("HOME", str(path))
    return path


def write_index(root: Path, text: str) -> Path:
    path = root / MEMORY_INDEX_RELPATH
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content)
    return content or ""


def test_no_index_no_memory_and_the_user_tier_comes_first(home: Path, workspace: Path) -> None:
    assert load_memory(workspace) is None
    write_index(workspace, "  \n")  # blank: nothing to say
    assert load_memory(workspace) is None
    write_index(workspace, "- We use uv.")
    write_index(home, "- The user likes short answers.")
    assert load_memory(workspace) == (
        f"# User memory (~/{MEMORY_INDEX_RELPATH})\n- The user likes short answers.\n\n"
        f"# Project memory ({MEMORY_INDEX_RELPATH})\n- We use uv."
    )


def test_over_budget_each_tier_keeps_its_newest_whole_lines(home: Path, workspace: Path) -> None:
    write_index(home, "u-old\nu-new")
    write_index(workspace, "\n".join(f"project line {i:03}" for i in range(100)))
    memory = load_memory(workspace, char_budget=400)
    assert memory is not None
    assert len(memory) <= 400
    assert "u-old\nu-new" in memory  # the short tier fits whole, its spare share goes on
    project = memory.split(f"# Project memory ({MEMORY_INDEX_RELPATH})\n")[1]
    lines = project.splitlines()
    assert lines[0] == TRUNCATED
    assert lines[-1] == "project line 099"
    assert all(line.startswith("project line ") for line in lines[1:])  # no cut lines


def test_a_conversation_loads_memory_into_its_dynamic_context(
    home: Path, workspace: Path, llm: LLM, llm_server: Any, persistence_dir: Path
) -> None:
    write_index(workspace, "- Python deps: uv, never pip.")
    llm_server.reply_text("uv.")
    context = AgentContext(load_memory=True)
    assert context.memory_context is None  # read when a conversation starts, not before
    conversation = LocalConversation(
        agent=Agent(llm=llm, agent_context=context),
        workspace=workspace,
        persistence_dir=persistence_dir,
        visualizer=None,
    )
    conversation.send_message("Which tool for Python deps?")
    conversation.run()
    [event] = [e for e in conversation.state.events if isinstance(e, SystemPromptEvent)]
    assert event.dynamic_context is not None
    assert "<MEMORY_CONTEXT>" in event.dynamic_context.text
    assert "- Python deps: uv, never pip." in event.dynamic_context.text
    assert "<MEMORY>" in event.system_prompt.text  # how to keep it: in the static prompt
    sent = text_of(llm_server.requests[0]["messages"][0])
    assert "- Python deps: uv, never pip." in sent
    # Never saved with the agent: it is read again at each start.
    assert "never pip" not in conversation.state.agent.model_dump_json()
    conversation.close()


def test_without_load_memory_the_index_is_not_read(
    home: Path, workspace: Path, llm: LLM, llm_server: Any
) -> None:
    write_index(workspace, "- secret plans")
    llm_server.reply_text("Hi.")
    conversation = LocalConversation(
        agent=Agent(llm=llm, agent_context=AgentContext()), workspace=workspace, visualizer=None
    )
    conversation.send_message("hi")
    conversation.run()
    sent = text_of(llm_server.requests[0]["messages"][0])
    assert "secret plans" not in sent and "<MEMORY" not in sent
    conversation.close()
