"""Agent.security_policy_filename: a policy file's text joins the system prompt as written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ohtui.sdk import LLM, Agent, Conversation, SystemPromptEvent, Tool

POLICY = "# House rules\n- Never send data to {hosts} outside the company.\n"


def text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content)
    return content or ""


def test_the_default_names_the_sdk_file_and_adds_no_policy_block(llm: LLM) -> None:
    agent = Agent(llm=llm, tools=[Tool(name="terminal")])
    assert agent.security_policy_filename == "security_policy.j2"
    assert "<SECURITY>" not in agent.static_system_message
    assert "- terminal" in agent.static_system_message
    assert "- finish" in agent.static_system_message
    assert Agent(llm=llm, security_policy_filename=None).security_policy_filename == ""  # type: ignore[arg-type]


def test_a_custom_policy_reaches_the_model_verbatim(
    llm: LLM, llm_server: Any, workspace: Path, tmp_path: Path
) -> None:
    policy = tmp_path / "policy.md"
    policy.write_text(POLICY, encoding="utf-8")
    agent = Agent(llm=llm, security_policy_filename=str(policy))
    assert "- Never send data to {hosts} outside the company." in agent.static_system_message

    llm_server.reply_text("Done.")
    conversation = Conversation(agent=agent, workspace=str(workspace), visualizer=None)
    conversation.send_message("hi")
    conversation.run()
    sent = text_of(llm_server.requests[0]["messages"][0])
    assert "<SECURITY>\n# House rules\n- Never send data to {hosts} outside the company.\n" in sent
    [event] = [e for e in conversation.state.events if isinstance(e, SystemPromptEvent)]
    assert "# House rules" in event.system_prompt.text
    # Once a conversation runs, the static prompt is the one it sent (with its workspace).
    assert str(workspace) in agent.static_system_message
    conversation.close()


def test_a_relative_policy_path_is_read_from_the_current_directory(
    llm: LLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "rules.md").write_text("Only LOW risk today.", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    agent = Agent(llm=llm, security_policy_filename="rules.md")
    assert "<SECURITY>\nOnly LOW risk today.\n</SECURITY>" in agent.static_system_message


def test_a_missing_policy_file_is_named_in_the_error(llm: LLM, tmp_path: Path) -> None:
    agent = Agent(llm=llm, security_policy_filename=str(tmp_path / "nope.md"))
    with pytest.raises(ValueError, match=r"security_policy_filename '.*nope\.md': cannot read it"):
        agent.static_system_message  # noqa: B018
